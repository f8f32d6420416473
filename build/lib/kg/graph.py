"""The knowledge graph: entity phrase nodes, passage nodes, relation, mention and synonymy edges.

Built once per (case fingerprint, triples source, extraction model, embedding model) and saved as JSON + NPZ
(no pickle), so loading a saved graph makes no LLM or embedding call.
"""
from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
import tempfile
import time
import zipfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx
import numpy as np

from core.types import Passage, Progress, ProgressUpdate
from llm import Embedder

from .normalize import normalize_entity
from .ppr import ENGINES, FLOAT32_ABOVE_NNZ, PPRMatrix, PPRResult, networkx_pagerank

log = logging.getLogger(__name__)

GRAPH_FORMAT = 7   # 4: no synonymy across numbers or genders; 5: text mentions; 6: name variants; 7: possessives
SYNONYM_THRESHOLD = 0.8
SYNONYM_TOP_K = 10
EMBED_STAGES = ("embed entities", "embed facts", "embed passages")   # build_graph's progress stages, in order
EMBED_BLOCK = 2048   # texts per embedding call: a multiple of the local embedder's batch of 16

@dataclass
class Fact:
    subject: int           # phrase index
    relation: str
    object: int            # phrase index
    passages: list[str]    # passage ids stating it

    def text(self, phrases: list[str]) -> str:
        return f"{phrases[self.subject]} {self.relation} {phrases[self.object]}"


@dataclass
class KnowledgeGraph:
    phrases: list[str]                  # display form of each phrase node (first surface form seen)
    phrase_keys: list[str]              # normalized form: the node's identity
    passage_ids: list[str]
    facts: list[Fact]
    phrase_passages: list[list[str]]    # passages mentioning each phrase (node specificity)
    synonyms: list[tuple[int, int, float]]
    phrase_vectors: np.ndarray
    fact_vectors: np.ndarray
    passage_vectors: np.ndarray
    embed_model: str
    meta: dict = field(default_factory=dict)
    _nx: nx.Graph | None = field(default=None, repr=False)
    _ppr: dict[str, PPRMatrix] = field(default_factory=dict, repr=False)   # by engine, built on first use
    _relations: dict | None = field(default=None, repr=False)
    _phrase_index: PhraseIndex | None = field(default=None, repr=False)
    _passage_phrases: dict[str, list[int]] | None = field(default=None, repr=False)
    _mention_counts: np.ndarray | None = field(default=None, repr=False)

    # Node numbering for PPR: phrases first, then passages.
    def passage_node(self, j: int) -> int:
        return len(self.phrases) + j

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
        pindex = {pid: j for j, pid in enumerate(self.passage_ids)}
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
        """Personalized PageRank over every node: ``sparse`` (CSR power iteration in float64), ``sparse32``
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
                "edges": len(rows), "relation_edges": kinds.count("relation"),
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
    facts = list(fact_index.values())
    from_llm = sum(len(ps) for ps in phrase_passages)
    if text_mentions:
        for i, pids in text_mention_links(phrase_keys, phrases, passages).items():
            phrase_passages[i] |= pids
    mentions = {"llm": from_llm, "text": sum(len(ps) for ps in phrase_passages) - from_llm}

    entities_stage, facts_stage, passages_stage = EMBED_STAGES
    phrase_vectors = embed_blocks(embedder, entities_stage, phrases, progress)
    fact_vectors = embed_blocks(embedder, facts_stage, [f.text(phrases) for f in facts], progress)
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


MENTION_MAX_SHARE = 0.05   # a phrase in more than this share of passages is too common to join them...
MENTION_MIN_LIMIT = 3      # ...but in a small case up to 3 may (5% of 19 is none; 8 helped lookups, cost sense-making)


class PhraseIndex:
    """The graph's specific phrases, found in any text by word-boundary match on the normalised words.

    Specific: two words or more, or one word written with a capital or a digit (a name, a code); "the accountant"
    or "rain" alone would match everywhere.
    """

    def __init__(self, keys: Sequence[str], surfaces: Sequence[str]):
        self.ids = {k: i for i, (k, surface) in enumerate(zip(keys, surfaces, strict=True))
                    if " " in k or any(ch.isdigit() for ch in k) or surface[:1].isupper()}
        # The lengths of the phrases starting with each word: a text position tries only those, not every length.
        self.lengths: dict[str, set[int]] = defaultdict(set)
        for k in self.ids:
            words = k.split()
            self.lengths[words[0]].add(len(words))

    def find(self, text: str) -> set[int]:
        """Indexes of the phrases ``text`` mentions."""
        found = set()
        for variant in {text, _POSSESSIVE_S.sub("", text)}:   # "Victoria Crane's car" names "Victoria Crane" too
            words = normalize_entity(variant).split()
            for start, word in enumerate(words):
                for n in self.lengths.get(word, ()):
                    i = self.ids.get(" ".join(words[start:start + n]))
                    if i is not None:
                        found.add(i)
        return found


def text_mention_links(keys: Sequence[str], surfaces: Sequence[str],
                       passages: Sequence[Passage]) -> dict[int, set[str]]:
    """Phrase index -> the passages whose text mentions it (``PhraseIndex``); a phrase found in more than
    MENTION_MAX_SHARE of the passages (and more than MENTION_MIN_LIMIT) links nothing."""
    index = PhraseIndex(keys, surfaces)
    found: dict[int, set[str]] = defaultdict(set)
    for p in passages:
        for i in index.find(p.text):
            found[i].add(p.id)
    limit = max(MENTION_MIN_LIMIT, int(MENTION_MAX_SHARE * len(passages)))
    return {i: pids for i, pids in found.items() if len(pids) <= limit}


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


def _ordered(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a <= b else (b, a)


def synonym_pairs(vectors: np.ndarray, keys: Sequence[str], threshold: float, top_k: int,
                  block: int = 2048) -> list[tuple[int, int, float]]:
    """Pairs (i < j) whose cosine is >= threshold, each phrase keeping at most its top_k neighbours.

    Vectorised in blocks of rows; no Python loop over pairs. Phrases made only of digits and
    punctuation (times, dates, amounts) get no synonymy edges: embeddings rate "8 pm" close to "9 15 pm".
    """
    n = len(vectors)
    if n < 2:
        return []
    eligible = np.array([any(ch.isalpha() for ch in k) for k in keys])
    pairs: dict[tuple[int, int], float] = {}
    k = min(top_k + 1, n)
    for start in range(0, n, block):
        sims = vectors[start:start + block] @ vectors.T
        rows = np.arange(sims.shape[0])
        sims[rows, rows + start] = -1.0                     # not your own neighbour
        sims[:, ~eligible] = -1.0
        sims[~eligible[start:start + block]] = -1.0
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        top_sims = np.take_along_axis(sims, top, axis=1)
        r_idx, c_idx = np.nonzero(top_sims >= threshold)
        for r, c in zip(r_idx.tolist(), c_idx.tolist(), strict=True):
            i, j = start + r, int(top[r, c])
            a, b = min(i, j), max(i, j)
            if (a, b) not in pairs and may_be_synonyms(keys[a], keys[b]):
                pairs[(a, b)] = float(top_sims[r, c])
    return [(a, b, s) for (a, b), s in sorted(pairs.items())]


_MALE, _FEMALE = {"mr", "sir", "lord", "mister"}, {"mrs", "ms", "miss", "madam", "lady", "mme"}
_HONORIFICS = _MALE | _FEMALE | {"dr", "prof", "professor"}
_POSSESSIVE = re.compile(r"^(.+?)['\u2019]s\b")
_POSSESSIVE_S = re.compile(r"(?<=\w)['\u2019]s\b")


def may_be_synonyms(a: str, b: str) -> bool:
    """False for phrases that embeddings put close but name different things: other numbers (times, dates,
    amounts: "9 45 pm" / "9 15 pm") or honorifics of another gender ("mr blackwood" / "mrs blackwood")."""
    numbers_a, numbers_b = re.findall(r"\d+", a), re.findall(r"\d+", b)
    if numbers_a and numbers_b and numbers_a != numbers_b:
        return False
    genders = [{g for g, words in (("m", _MALE), ("f", _FEMALE)) if words & set(k.split())} for k in (a, b)]
    return not (genders[0] and genders[1] and genders[0] != genders[1])


def _full_names_by_surname(keys: Sequence[str], surfaces: Sequence[str]) -> dict[str, list[int]]:
    """Surname -> the phrases that are a full name ending with it: two or three capitalised words, no honorific,
    no digit ("Victoria Crane", "Gideon J. Whitlock")."""
    out: dict[str, list[int]] = defaultdict(list)
    for i, (key, surface) in enumerate(zip(keys, surfaces, strict=True)):
        words, shown = key.split(), surface.split()
        if 2 <= len(words) <= 3 and words[0] not in _HONORIFICS and all(w[:1].isupper() for w in shown) \
                and not any(ch.isdigit() for ch in key):
            out[words[-1]].append(i)
    return out


def name_variant_pairs(keys: Sequence[str], surfaces: Sequence[str]) -> list[tuple[int, int]]:
    """Pairs (i < j) of phrases that name one person or thing in other words: an honorific and a surname
    ("Ms. Crane") and the one full name in the graph with that surname ("Victoria Crane"); a possessive
    ("Victoria Crane's car") and its owner, when the owner is a phrase written as a name."""
    index = {k: i for i, k in enumerate(keys)}
    by_surname = _full_names_by_surname(keys, surfaces)
    pairs = set()
    for i, (key, surface) in enumerate(zip(keys, surfaces, strict=True)):
        words = key.split()
        if len(words) == 2 and words[0] in _HONORIFICS and len(by_surname.get(words[1], ())) == 1:
            pairs.add(_ordered(i, by_surname[words[1]][0]))
        owner = _POSSESSIVE.match(surface)
        j = index.get(normalize_entity(owner.group(1))) if owner else None
        if j is not None and j != i and surfaces[j][:1].isupper():   # a named owner, not "the country's"
            pairs.add(_ordered(i, j))
    return sorted(pairs)


# -- saving and loading ----------------------------------------------------------------------------

BUILD_MODULES = ("build.py", "graph.py", "normalize.py", "openie.py", "nlp.py")   # what decides a graph's contents


@functools.cache
def build_code_digest(folder: Path = Path(__file__).parent) -> str:
    """A digest of the modules that decide what a graph holds (BUILD_MODULES in ``folder``), so a graph saved by
    other code (an older checkout, an experiment) is not loaded as this code's, even when nobody raised GRAPH_FORMAT.
    Editing them costs one rebuild: OpenIE replies and embeddings come back from the response cache."""
    digest = hashlib.sha256()
    for name in BUILD_MODULES:
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()[:16]


def graph_key(fingerprint: str, triples_source: str, extraction_model: str, embed_model: str, **params) -> str:
    """The saved graph's name: everything the build depends on, the build code and its module constants included,
    so a graph built by other code or with other thresholds is never loaded as this one."""
    constants = [SYNONYM_THRESHOLD, SYNONYM_TOP_K, MENTION_MAX_SHARE, MENTION_MIN_LIMIT]
    blob = json.dumps([GRAPH_FORMAT, build_code_digest(), constants, fingerprint, triples_source, extraction_model,
                       embed_model, params], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def save_graph(graph: KnowledgeGraph, folder: Path, key: str) -> None:
    """Write JSON + NPZ via temp files and renames: a crash never leaves a half-written graph behind."""
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"format": GRAPH_FORMAT, "phrases": graph.phrases, "phrase_keys": graph.phrase_keys,
           "passage_ids": graph.passage_ids, "phrase_passages": graph.phrase_passages,
           "facts": [[f.subject, f.relation, f.object, f.passages] for f in graph.facts],
           "synonyms": graph.synonyms, "embed_model": graph.embed_model, "meta": graph.meta}
    npz_tmp = _tmp(folder, ".npz")
    json_tmp = npz_tmp.with_suffix(".json.tmp")
    try:
        with open(npz_tmp, "wb") as fh:
            np.savez(fh, phrases=graph.phrase_vectors, facts=graph.fact_vectors, passages=graph.passage_vectors)
        with open(json_tmp, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, ensure_ascii=False)
        os.replace(npz_tmp, folder / f"{key}.npz")
        os.replace(json_tmp, folder / f"{key}.json")  # last: its presence means both files are complete
    finally:   # a full disk or a crash mid-write leaves no temp file behind
        npz_tmp.unlink(missing_ok=True)
        json_tmp.unlink(missing_ok=True)


def _inconsistency(g: KnowledgeGraph) -> str:
    """What makes a loaded graph unusable (counts or node numbers that do not match), or ''."""
    n_phrases = len(g.phrases)
    if not (len(g.phrase_keys) == len(g.phrase_passages) == n_phrases == len(g.phrase_vectors)):
        return "inconsistent: its entity lists and vectors differ in length"
    if len(g.facts) != len(g.fact_vectors) or len(g.passage_ids) != len(g.passage_vectors):
        return "inconsistent: its facts or passages do not match their vectors"
    if any(not (0 <= f.subject < n_phrases and 0 <= f.object < n_phrases) for f in g.facts) or any(
            not (0 <= a < n_phrases and 0 <= b < n_phrases) for a, b, _ in g.synonyms):
        return "inconsistent: a fact or synonym points past the entity list"
    known = set(g.passage_ids)
    if any(pid not in known for f in g.facts for pid in f.passages) or any(
            pid not in known for ps in g.phrase_passages for pid in ps):
        return "inconsistent: a fact or entity names a passage the graph does not have"
    return ""


def _tmp(folder: Path, suffix: str) -> Path:
    fd, name = tempfile.mkstemp(dir=folder, suffix=suffix + ".tmp")
    os.close(fd)
    return Path(name)


def load_graph(folder: Path, key: str, passage_ids: Sequence[str] | None = None) -> KnowledgeGraph | None:
    """The saved graph, or None if there is none (or it is unreadable, or built over other passages than
    ``passage_ids``, such as a file copied or linked from another case's: then it is rebuilt)."""
    jpath, npath = folder / f"{key}.json", folder / f"{key}.npz"
    if not (jpath.exists() and npath.exists()):
        return None
    started = time.perf_counter()
    try:
        doc = json.loads(jpath.read_text(encoding="utf-8"))
        if doc.get("format") != GRAPH_FORMAT:
            return None
        with np.load(npath, allow_pickle=False) as arrays:
            vectors = {k: arrays[k] for k in ("phrases", "facts", "passages")}
        graph = KnowledgeGraph(
            phrases=doc["phrases"], phrase_keys=doc["phrase_keys"], passage_ids=doc["passage_ids"],
            facts=[Fact(s, r, o, list(p)) for s, r, o, p in doc["facts"]], phrase_passages=doc["phrase_passages"],
            synonyms=[(a, b, s) for a, b, s in doc["synonyms"]], phrase_vectors=vectors["phrases"],
            fact_vectors=vectors["facts"], passage_vectors=vectors["passages"], embed_model=doc["embed_model"],
            meta=doc.get("meta", {}))
        problem = _inconsistency(graph)
        if not problem and passage_ids is not None and list(passage_ids) != graph.passage_ids:
            problem = "built over other passages than this case's (copied or linked from another case?)"
    except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, zipfile.BadZipFile) as exc:
        problem = f"unreadable ({type(exc).__name__}: {exc})"
    if problem:
        log.warning("the saved graph %s is %s; building it again", jpath, problem)
        return None
    log.info("loaded graph %s in %.0f ms", key, (time.perf_counter() - started) * 1000)
    return graph
