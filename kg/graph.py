"""The knowledge graph: entity phrase nodes, passage nodes, relation, mention and synonymy edges, and its build.

Which phrases join (text mentions, synonymy, name variants) is decided in ``linking.py``; saving and loading in
``storage.py``.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx
import numpy as np

from core.types import Passage, Progress, ProgressUpdate
from llm import Embedder

from .linking import SYNONYM_THRESHOLD, SYNONYM_TOP_K, PhraseIndex, name_variant_pairs, synonym_pairs, text_mention_links
from .nlp import CO_OCCURRENCE
from .normalize import normalize_entity
from .ppr import ENGINES, FLOAT32_ABOVE_NNZ, PPRMatrix, PPRResult, networkx_pagerank

log = logging.getLogger(__name__)

EMBED_STAGES = ("embed entities", "embed facts", "embed passages")   # build_graph's progress stages, in order
EMBED_BLOCK = 2048   # texts per embedding call: a multiple of the local embedder's batch of 16
# Facts that join their two phrases in the walk but are not matched to questions, so they get no vector: "A appears
# with B" says nothing a question could match beyond the two names, which are nodes with vectors of their own. On
# spaCy's triples they are over half the facts and of their embedding time (2Wiki corpus: 43k of 79k, ~55 s). Vector
# Graph RAG, which stores every relation with a vector, gives them their two phrases' (all_fact_vectors). Kept by the
# speed rule over the development suite: benchmarks/results/edge_only_choice.json.
EDGE_ONLY_RELATIONS = frozenset({CO_OCCURRENCE})

@dataclass
class Fact:
    subject: int           # phrase index
    relation: str
    object: int            # phrase index
    passages: list[str]    # passage ids stating it

    def text(self, phrases: list[str]) -> str:
        return f"{phrases[self.subject]} {self.relation} {phrases[self.object]}"

    @property
    def edge_only(self) -> bool:
        """An edge of the walk with no vector of its own (EDGE_ONLY_RELATIONS)."""
        return self.relation in EDGE_ONLY_RELATIONS


@dataclass
class KnowledgeGraph:
    phrases: list[str]                  # display form of each phrase node (first surface form seen)
    phrase_keys: list[str]              # normalized form: the node's identity
    passage_ids: list[str]
    facts: list[Fact]                   # those with a vector first (fact_vectors row i is facts[i]), then edge-only ones
    phrase_passages: list[list[str]]    # passages mentioning each phrase (node specificity)
    synonyms: list[tuple[int, int, float]]
    phrase_vectors: np.ndarray
    fact_vectors: np.ndarray            # one row per matched fact: facts[:matched_facts]
    passage_vectors: np.ndarray
    embed_model: str
    meta: dict = field(default_factory=dict)
    _nx: nx.Graph | None = field(default=None, repr=False)
    _ppr: dict[str, PPRMatrix] = field(default_factory=dict, repr=False)   # by engine, built on first use
    _relations: dict | None = field(default=None, repr=False)
    _phrase_index: PhraseIndex | None = field(default=None, repr=False)
    _passage_phrases: dict[str, list[int]] | None = field(default=None, repr=False)
    _mention_counts: np.ndarray | None = field(default=None, repr=False)
    _passage_rows: dict[str, int] | None = field(default=None, repr=False)

    # Node numbering for PPR: phrases first, then passages.
    def passage_node(self, j: int) -> int:
        return len(self.phrases) + j

    @property
    def matched_facts(self) -> int:
        """How many facts (the first ones) have a vector and can be matched to a question."""
        return len(self.fact_vectors)

    def all_fact_vectors(self) -> np.ndarray:
        """A vector for every fact: the embedded ones, and for each edge-only fact the normalized sum of its two
        phrases' vectors (all such a fact says is the two names), made without a model call."""
        rest = self.facts[self.matched_facts:]
        if not rest:
            return self.fact_vectors
        both = self.phrase_vectors[[f.subject for f in rest]] + self.phrase_vectors[[f.object for f in rest]]
        both /= np.clip(np.linalg.norm(both, axis=1, keepdims=True), 1e-9, None)
        if not self.matched_facts:   # no embedded fact: fact_vectors is an empty (0, 1) block, not (0, dim)
            return both.astype(np.float32)
        return np.vstack([self.fact_vectors, both]).astype(np.float32)

    @property
    def n_nodes(self) -> int:
        return len(self.phrases) + len(self.passage_ids)

    def node_label(self, node: int) -> str:
        return self.phrases[node] if node < len(self.phrases) else self.passage_ids[node - len(self.phrases)]

    def relation_between(self, a: int, b: int) -> str:
        """The relation text on the edge a-b, read in the a -> b direction."""
        if self._relations is None:
            self._relations = {}
            for f in self.facts:
                self._relations.setdefault((f.subject, f.object), f.relation)
                self._relations.setdefault((f.object, f.subject), f"(is object of) {f.relation}")
        n = len(self.phrases)
        if a >= n or b >= n:
            return "mentioned in" if b >= n else "mentions"
        return self._relations.get((a, b), "similar to (synonymy)")

    def phrases_named_in(self, text: str) -> set[int]:
        """The specific phrases (names, codes, multi-word phrases) ``text`` names word for word."""
        if self._phrase_index is None:
            self._phrase_index = PhraseIndex(self.phrase_keys, self.phrases)
        return self._phrase_index.find(text)

    def phrases_of(self, passage_id: str) -> list[int]:
        """The phrases a passage is linked to (extracted from it or named in its text)."""
        if self._passage_phrases is None:
            self._passage_phrases = defaultdict(list)
            for i, pids in enumerate(self.phrase_passages):
                for pid in pids:
                    self._passage_phrases[pid].append(i)
        return self._passage_phrases.get(passage_id, [])

    def linked_passages(self, passage_id: str, avoid: Collection[int] = ()) -> list[str]:
        """The other passages sharing a phrase with ``passage_id``, the most specific link first: by the fewest
        passages their rarest shared phrase is linked to, then by the most phrases shared (a plate number or a
        street two statements name ties them closer than the house every statement names). Phrases in ``avoid``
        link nothing."""
        counts = self.mention_counts()
        links: dict[str, list[float]] = {}
        for i in self.phrases_of(passage_id):
            if i in avoid:
                continue
            for other in self.phrase_passages[i]:
                if other != passage_id:
                    links.setdefault(other, []).append(counts[i])
        return sorted(links, key=lambda pid: (min(links[pid]), -len(links[pid])))

    def link_phrase(self, a: str, b: str, avoid: Collection[int] = ()) -> str:
        """The phrase passages ``a`` and ``b`` are linked through (``linked_passages``' order: the one the fewest
        passages name), phrases in ``avoid`` aside; "" if they share none."""
        counts = self.mention_counts()
        shared = (set(self.phrases_of(a)) & set(self.phrases_of(b))) - set(avoid)
        return self.phrases[min(shared, key=lambda i: (counts[i], self.phrases[i]))] if shared else ""

    def passage_rows(self) -> dict[str, int]:
        """Each passage id's row (its place in ``passage_ids``; its node is ``passage_node(row)``), built once."""
        if self._passage_rows is None:
            self._passage_rows = {pid: j for j, pid in enumerate(self.passage_ids)}
        return self._passage_rows

    def mention_counts(self) -> np.ndarray:
        """How many passages each phrase is linked to (at least 1): the divisor of node specificity."""
        if self._mention_counts is None:
            self._mention_counts = np.array([max(1, len(p)) for p in self.phrase_passages], dtype=float)
        return self._mention_counts

    def node_kind(self, node: int) -> str:
        return "entity" if node < len(self.phrases) else "passage"

    def edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
        """Undirected weighted edges (rows, cols, weights, kinds) exactly as the walk sees them."""
        weights: dict[tuple[int, int], float] = defaultdict(float)
        kinds: dict[tuple[int, int], str] = {}
        for f in self.facts:
            if f.subject != f.object:
                key = (min(f.subject, f.object), max(f.subject, f.object))
                weights[key] += len(f.passages)  # subject-object edges weighted by how often they are stated
                kinds[key] = "relation"
        pindex = self.passage_rows()
        for i, pids in enumerate(self.phrase_passages):
            for pid in pids:
                key = (i, self.passage_node(pindex[pid]))
                weights[key] = 1.0
                kinds[key] = "mention"
        for a, b, sim in self.synonyms:
            key = (min(a, b), max(a, b))
            if key not in weights:
                weights[key] = sim
                kinds[key] = "synonym"
        keys = list(weights)
        rows = np.array([k[0] for k in keys], dtype=np.int64)
        cols = np.array([k[1] for k in keys], dtype=np.int64)
        return rows, cols, np.array([weights[k] for k in keys]), [kinds[k] for k in keys]

    @property
    def ppr(self) -> PPRMatrix:
        return self._matrix("sparse")

    def _matrix(self, engine: str) -> PPRMatrix:
        if engine not in self._ppr:
            rows, cols, w, _ = self.edges()
            self._ppr[engine] = PPRMatrix(self.n_nodes, rows, cols, w,
                                          dtype=np.float32 if engine == "sparse32" else np.float64)
        return self._ppr[engine]

    def engine_for(self, engine: str) -> str:
        """The engine "auto" means for this graph (FLOAT32_ABOVE_NNZ); any other engine as named."""
        if engine != "auto":
            return engine
        return "sparse32" if self.ppr.transition_t.nnz > FLOAT32_ABOVE_NNZ else "sparse"

    def pagerank(self, personalization: np.ndarray, damping: float, engine: str = "sparse",
                 tol: float | None = None) -> PPRResult:
        """Personalized PageRank over every node: ``sparse`` (CSR Chebyshev iteration in float64), ``sparse32``
        (float32: half the memory traffic, scores within ~1e-7) or ``networkx`` (nx.pagerank, the reference)."""
        engine = self.engine_for(engine)
        if engine in ("sparse", "sparse32"):
            return self._matrix(engine).run(personalization, damping=damping, tol=tol)
        if engine == "networkx":
            return networkx_pagerank(self.to_networkx(), personalization, damping=damping,
                                     tol=1e-10 if tol is None else tol)
        raise ValueError(f"PageRank engine must be one of {', '.join(ENGINES)}, not {engine!r}")

    def to_networkx(self) -> nx.Graph:
        """The graph as NetworkX: nodes are the walk's node numbers with ``label`` and ``kind``; edges carry
        ``weight``, ``kind`` (relation, mention, synonym) and ``relations`` (the fact texts behind them)."""
        if self._nx is not None:
            return self._nx
        g = nx.Graph()
        for n in range(self.n_nodes):
            g.add_node(n, label=self.node_label(n), kind=self.node_kind(n))
        rows, cols, w, kinds = self.edges()
        relations: dict[tuple[int, int], list[str]] = defaultdict(list)
        for f in self.facts:
            relations[(min(f.subject, f.object), max(f.subject, f.object))].append(f.text(self.phrases))
        for r, c, weight, kind in zip(rows.tolist(), cols.tolist(), w.tolist(), kinds, strict=True):
            g.add_edge(r, c, weight=float(weight), kind=kind, relations=relations.get((r, c), []))
        self._nx = g
        return g

    def write_graphml(self, path: Path) -> None:
        """Export for Gephi, yEd or Cytoscape (GraphML wants plain values: relation lists become "; "-joined)."""
        g = self.to_networkx().copy()
        for _, _, data in g.edges(data=True):
            data["relations"] = "; ".join(data["relations"])
        nx.write_graphml(g, path)

    def stats(self) -> dict:
        rows, _, _, kinds = self.edges()
        return {"entities": len(self.phrases), "passages": len(self.passage_ids), "facts": len(self.facts),
                "embedded_facts": self.matched_facts, "edges": len(rows), "relation_edges": kinds.count("relation"),
                "mention_edges": kinds.count("mention"), "synonym_edges": kinds.count("synonym")}


def build_graph(triples: Sequence[tuple[str, str, str, str]], passages: Sequence[Passage], embedder: Embedder, *,
                synonym_threshold: float = SYNONYM_THRESHOLD, synonym_top_k: int = SYNONYM_TOP_K,
                text_mentions: bool = True, progress: Progress | None = None) -> KnowledgeGraph:
    """Build from (passage id, subject, relation, object) tuples and embed phrases, facts and passages.

    With ``text_mentions`` a passage also links to every specific phrase of the graph its text mentions, not
    only to those the LLM extracted from it (a model that missed "long coat" in one report still joins it).
    """
    key_index: dict[str, int] = {}
    phrases: list[str] = []
    phrase_keys: list[str] = []
    phrase_passages: list[set[str]] = []
    fact_index: dict[tuple[int, str, int], Fact] = {}
    known = {p.id for p in passages}

    def phrase(surface: str) -> int | None:
        key = normalize_entity(surface)
        if not key:
            return None
        if key not in key_index:
            key_index[key] = len(phrases)
            phrases.append(" ".join(surface.split()))
            phrase_keys.append(key)
            phrase_passages.append(set())
        return key_index[key]

    for pid, s, r, o in triples:
        if pid not in known:
            continue
        si, oi = phrase(s), phrase(o)
        if si is None or oi is None:
            continue
        phrase_passages[si].add(pid)
        phrase_passages[oi].add(pid)
        relation = " ".join(r.split())
        fkey = (si, relation.casefold(), oi)
        fact = fact_index.setdefault(fkey, Fact(si, relation, oi, []))
        if pid not in fact.passages:
            fact.passages.append(pid)
    # Stable: facts to match first, in the order they came, then the edge-only ones.
    facts = sorted(fact_index.values(), key=lambda f: f.edge_only)
    matched = sum(not f.edge_only for f in facts)
    from_llm = sum(len(ps) for ps in phrase_passages)
    if text_mentions:
        for i, pids in text_mention_links(phrase_keys, phrases, passages).items():
            phrase_passages[i] |= pids
    mentions = {"llm": from_llm, "text": sum(len(ps) for ps in phrase_passages) - from_llm}

    entities_stage, facts_stage, passages_stage = EMBED_STAGES
    phrase_vectors = embed_blocks(embedder, entities_stage, phrases, progress)
    fact_vectors = embed_blocks(embedder, facts_stage, [f.text(phrases) for f in facts[:matched]], progress)
    passage_vectors = embed_blocks(embedder, passages_stage, [p.embedding_text for p in passages], progress)
    synonyms = synonym_pairs(phrase_vectors, phrase_keys, synonym_threshold, synonym_top_k)
    similar = {(a, b) for a, b, _ in synonyms}
    variants = [(a, b) for a, b in name_variant_pairs(phrase_keys, phrases) if (a, b) not in similar]
    synonyms += [(a, b, 1.0) for a, b in variants]   # one name, however far apart the embeddings put it
    return KnowledgeGraph(phrases=phrases, phrase_keys=phrase_keys, passage_ids=[p.id for p in passages],
                          facts=facts, phrase_passages=[sorted(s) for s in phrase_passages], synonyms=synonyms,
                          phrase_vectors=phrase_vectors, fact_vectors=fact_vectors, passage_vectors=passage_vectors,
                          embed_model=embedder.name,
                          meta={"synonym_threshold": synonym_threshold, "synonym_top_k": synonym_top_k,
                                "mention_edges_from": mentions, "name_variant_edges": len(variants)})


def embed_blocks(embedder: Embedder, stage: str, texts: list[str], progress: Progress | None) -> np.ndarray:
    """In blocks, so progress moves (and the cache commits) every EMBED_BLOCK texts; shortest first, as the
    embedder orders them itself, so its batches are the ones one call would make."""
    if progress:
        progress(ProgressUpdate(stage, 0, len(texts)))
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out: np.ndarray | None = None
    for start in range(0, len(order), EMBED_BLOCK):
        block = order[start:start + EMBED_BLOCK]
        vectors = np.asarray(embedder.embed([texts[i] for i in block]), dtype=np.float32)
        if out is None:
            out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
        out[block] = vectors
        if progress:
            progress(ProgressUpdate(stage, start + len(block), len(texts)))
    assert out is not None
    return out
