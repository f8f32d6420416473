"""The graph walk HippoRAG retrieves with: link the question to the graph, seed a Personalized PageRank walk,
rank passages. It lives in ``kg`` because more than one strategy walks this way (hipporag, and investigate's
first round and lead-seeded rounds); no strategy imports another.

Two linking modes:
- ``v2`` (HippoRAG 2, default): the question is matched against every fact by embedding; the top facts
  (optionally filtered by one LLM call) seed their phrases, weighted by fact score and divided by the number of
  passages mentioning the phrase (node specificity); a phrase the question names word for word (a name, a code)
  seeds like the best fact's (``question_mentions``: HippoRAG 1 links the question's entities by an LLM; this is
  the part a string match can do); every passage node also gets its min-max dense score, raised to
  ``dense_power``, times ``passage_weight``. A second walk (``feedback_weight``) starts from the same seeds plus
  every phrase of the first walk's best passage, so the documents one hop past the best match rise, as a reader
  follows the name the first document gives. Passages are ranked by their PPR mass (both walks' added).
- ``v1`` (HippoRAG 1, the seed article's method): an LLM names the question's entities; each links to its
  closest phrase node by embedding; phrase-only PPR; a passage scores the PPR mass of its phrases.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import scipy.sparse as sp

from core.contract import setting, settings_with
from core.types import Evidence, Explanation, Retrieval, Seed
from llm import Embedder, OpenAIClient, select_relevant

from .graph import KnowledgeGraph
from .paths import most_probable_paths
from .ppr import ENGINES
from .query import name_question_entities

LINKING_MODES = ("v2", "v1")


class LexicalIndex(Protocol):
    """What the walk's lexical prior reads (indexes.BM25Index is one; kg does not import indexes)."""
    ids: list[str]

    def scores(self, text: str) -> np.ndarray: ...   # every passage's score, in ``ids`` order

@dataclass(frozen=True)
class HippoConfig:
    """Query-time settings, every default decided on the development suite by its rule (benchmarks/choose.py: the
    suite's mean Recall@5 rises by at least 0.004 and no set falls by more than 0.02; `python benchmarks/choose.py
    --strategy hipporag --grid PARAM=...`, results/choose_hipporag_<param>.json, docs/tuning.md). This wave the
    rule added lexical_weight 0.05 (+0.010) and then link_confidence 4 (+0.021); at those, no other value of any
    parameter passes, so the older defaults stay. Each comment says what the last run of the rule measured.
    llm_filter, an LLM step, cannot run in the retrieval-only suite; the rule judged it on the two sets where it was
    measured with the embedded model (see its comment). engine and explain do not change a ranking."""
    linking: str = "v2"
    # facts linked per query (the question and each expansion statement); suite rule: 3 and 10 lower the mean
    top_facts: int = setting(5, "facts linked per query (the question and each expansion)", minimum=1, maximum=50)
    # suite rule: 0.3 and 0.7 lower the mean (2wiki_first20 -0.075, marlow_road -0.060)
    damping: float = setting(0.5, "PPR damping: probability of following an edge at each step (nx.pagerank's alpha)",
                             minimum=0.05, maximum=0.95, step=0.05)
    # scale of the passage nodes' min-max dense score in the reset vector; suite rule: 0.05 and 0.2 lower the mean
    passage_weight: float = setting(0.1, "how much each passage's own dense score seeds the walk", minimum=0.0,
                                    maximum=1.0, step=0.01)
    # 1 is HippoRAG 2's linear prior; see dense_prior. Suite rule: 2 and 4 lower the mean (1 did a run before)
    dense_power: float = setting(3.0, "raise each passage's min-max dense score to this power before it seeds the "
                                 "walk: above 1 the closest passages keep their share and the middling ones fade "
                                 "(1: linear, as in HippoRAG 2)", minimum=0.25, maximum=8.0, step=0.25)
    # suite rule: off lowers the mean by 0.021 (musique_train100 -0.075)
    question_mentions: bool = setting(True, "phrases the question names word for word (names, codes, multi-word "
                                      "phrases) seed the walk like the best-linked fact's, as HippoRAG 1's question "
                                      "entities do")
    # the rule on the sets measured with the embedded model (`python benchmarks/retrieval.py --llm-steps --no-cache
    # --strategies naive,hipporag,vector-graph --cases 2wiki_first20,purloined_pearl --out retrieval_llm`): on, R@5
    # is unchanged on both (0.925, 0.869) at 3.4-3.9 s a question: no rise, so off. Runs only with a chat model.
    llm_filter: bool = setting(False, "one LLM call keeps only the linked facts relevant to the question (runs only "
                               "when the run has a chat model)", llm_step=True)
    # suite rule: 4 raised the mean by 0.021 over off (every hand-written case and musique gain; generated -0.006);
    # at 4, off, 2, 3, 6 and 8 lower it
    link_confidence: float = setting(4.0, "scale the linked facts' seeds by the best fact's cosine to the question "
                                     "raised to this power, so a question no fact matches well (one that names "
                                     "nothing the passages share) leans on the passages' own scores (0: off)",
                                     minimum=0.0, maximum=16.0, step=0.5)
    # suite rule: 0.05 raised the mean by 0.010 over off; at 4 of link_confidence, off, 0.03 and 0.1 lower it
    lexical_weight: float = setting(0.05, "how much each passage's min-max BM25 score (the question's words, codes and "
                                    "names matched literally) seeds the walk beside its dense score, raised to "
                                    "dense_power as that is (0: off)", minimum=0.0, maximum=1.0, step=0.01)
    # suite rule: 0.25 lowers the mean by 0.011 (2wiki_q121_220 -0.043)
    hub_penalty: float = setting(0.0, "divide each passage's walk mass by its node strength to this power, so a "
                                 "passage linked to everything stops winning every question (0: off)", minimum=0.0,
                                 maximum=2.0, step=0.05)
    # suite rule: 0.1, 0.25, 0.5 lower the mean (marlow_road gains up to 0.11, the benchmarks lose up to 0.11)
    hub_lift: float = setting(0.0, "divide each passage's walk mass by its mass in a walk that starts from every "
                              "phrase alike (what any question reaches), to this power: a document that mentions "
                              "everything wins only where the question lifts it above that (0: off)", minimum=0.0,
                              maximum=1.0, step=0.05)
    # suite rule: 1 and 4 lower the mean (0, off, did a run before: -0.028)
    feedback_weight: float = setting(2.0, "a second walk, seeded also by every phrase of the first walk's best "
                                     "passages with this weight (over node specificity), reaches the documents one "
                                     "hop past the best match; the two walks' masses add up (0: off)", minimum=0.0,
                                     maximum=20.0, step=0.5)
    # how many of the first walk's best passages seed the second; suite rule: 2 and 3 lower the mean
    feedback_passages: int = setting(1, "how many of the first walk's best passages seed the second", minimum=1,
                                     maximum=10)
    engine: str = setting("auto", "PageRank engine: auto (sparse, or sparse32 for a graph over 400k transition "
                          "entries), sparse (CSR, Chebyshev iteration, fast), sparse32 (the same in "
                          "float32, for very large graphs) or networkx (nx.pagerank itself, the reference)",
                          choices=ENGINES)
    explain: bool = setting(True, "compute, for every retrieved passage, the most probable path from a seed")

    def __post_init__(self):
        if self.linking not in LINKING_MODES:
            raise ValueError(f"linking must be one of {LINKING_MODES}, not {self.linking!r}")
        if not 0.0 < self.damping < 1.0:
            raise ValueError(f"damping must be between 0 and 1 (exclusive), not {self.damping}")
        if self.dense_power <= 0:
            raise ValueError(f"dense_power must be positive, not {self.dense_power}")
        if self.feedback_weight < 0 or self.feedback_passages < 1:
            raise ValueError(f"feedback_weight must be >= 0 and feedback_passages >= 1, not {self.feedback_weight} "
                             f"and {self.feedback_passages}")
        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {self.engine!r}")


@dataclass
class Walk:
    retrieval: Retrieval
    mass: np.ndarray      # every node's walk mass (phrases, then passages); zeros when nothing seeded a walk


@dataclass
class ChatModel:
    client: OpenAIClient
    model: str


class HippoRAGRetriever:
    def __init__(self, graph: KnowledgeGraph, embedder: Embedder, config: HippoConfig = HippoConfig(),
                 chat: ChatModel | None = None, lexical: LexicalIndex | None = None):
        if graph.embed_model != embedder.name:
            raise ValueError(f"graph was embedded with {graph.embed_model!r} but the embedder is {embedder.name!r}")
        if config.linking == "v1" and chat is None:
            raise ValueError("hipporag-v1 linking needs an LLM to name the question's entities")
        self.graph, self.embedder, self.config, self.chat, self.lexical = graph, embedder, config, chat, lexical
        self._incidence: sp.csr_matrix | None = None
        self._lexical_order: np.ndarray | None = None
        self._backgrounds: dict[float, np.ndarray] = {}

    # -- the query path ---------------------------------------------------------------------------
    def retrieve(self, question: str, top_k: int, expansions: Sequence[str] = (),
                 params: Mapping[str, object] | None = None) -> Retrieval:
        return self.walk(question, top_k, expansions, params).retrieval

    def walk(self, question: str, top_k: int, expansions: Sequence[str] = (),
             params: Mapping[str, object] | None = None) -> Walk:
        """The retrieval and every node's walk mass (zeros when nothing seeded a walk)."""
        g = self.graph
        cfg = settings_with(self.config, params)
        queries = [question.strip()] + [e.strip() for e in expansions if e.strip()]
        how = "v2: facts linked by embedding" if cfg.linking == "v2" else "v1: question entities named by the LLM"
        engine = g.engine_for(cfg.engine)
        ex = Explanation(method=f"Personalized PageRank mass (damping {cfg.damping}, {engine} engine) from "
                                f"seeds linked to the question ({how})", queries=queries)
        with ex.stage("embed"):
            q_vecs = self.embedder.embed(queries)
            dense = (g.passage_vectors @ q_vecs.T).max(axis=1) if len(g.passage_ids) else np.zeros(0)

        phrase_weights = self._link_v2(queries, q_vecs, cfg, ex) if cfg.linking == "v2" \
            else self._link_v1(question, ex)
        if phrase_weights is None or not phrase_weights.any():
            ex.fallback = ex.fallback or "no seed entity linked: ranked by dense similarity"
            ex.skip("ppr", "nothing to seed the walk")
            ranked = _top(dense, top_k)
            return Walk(Retrieval([(g.passage_ids[j], float(dense[j])) for j in ranked], ex), np.zeros(g.n_nodes))

        dense_seeded = cfg.linking == "v2" and cfg.passage_weight > 0 and len(dense) > 0
        lexical = cfg.linking == "v2" and cfg.lexical_weight > 0 and self.lexical is not None
        priors = [name for name, on in (("dense", dense_seeded), ("BM25", lexical)) if on]
        prior = f"; passages also seeded by their {' and '.join(priors)} score" if priors else ""
        with ex.stage("ppr", engine + prior):
            passage_reset = np.zeros(len(g.passage_ids))
            if dense_seeded:
                passage_reset = dense_prior(dense, cfg.passage_weight, cfg.dense_power)
            if lexical:
                passage_reset = passage_reset + self._lexical_prior(" ".join(queries), cfg)
            scores = g.pagerank(np.concatenate([phrase_weights, passage_reset]), cfg.damping, engine).scores
            if cfg.linking == "v2":
                passage_scores = scores[len(g.phrases):]
            else:
                passage_scores = self._phrase_to_passage() @ scores[:len(g.phrases)]
        seeds = phrase_weights
        if cfg.linking == "v2" and cfg.feedback_weight > 0:
            with ex.stage("feedback") as stage:
                best = _top(passage_scores, cfg.feedback_passages)
                extra = self._feedback_seeds(best, cfg.feedback_weight)
                added = np.flatnonzero(extra)
                named = ", ".join(g.phrases[i] for i in added[np.argsort(-extra[added], kind="stable")][:8])
                stage.why = f"a second walk, also seeded by the phrases of " \
                            f"{', '.join(g.passage_ids[j] for j in best)}: {named}"
                seeds = np.maximum(phrase_weights, extra)
                scores = scores + g.pagerank(np.concatenate([seeds, passage_reset]), cfg.damping, engine).scores
                passage_scores = scores[len(g.phrases):]
        elif cfg.linking == "v2":
            ex.skip("feedback", "turned off")
        if cfg.hub_penalty > 0:   # a passage linked to everything gets mass from any start: discount it
            strength = g.ppr.strength[len(g.phrases):]
            # A passage with no link at all (strength 0) is no hub: it is discounted like the least linked one,
            # not divided by ~0 into first place.
            passage_scores = passage_scores / _floored(strength) ** cfg.hub_penalty
        if cfg.hub_lift > 0:
            passage_scores = passage_scores / self._background(cfg.damping, engine) ** cfg.hub_lift
        ranked = _top(passage_scores, top_k)

        ex.seeds = [Seed(g.phrases[i], round(float(seeds[i]), 6)) for i in np.argsort(-seeds)[:20] if seeds[i] > 0]
        ex.node_scores = {g.node_label(n): round(float(scores[n]), 6) for n in _top(scores, 200) if scores[n] > 0}
        if cfg.explain:
            with ex.stage("explain"):
                paths = most_probable_paths(g, [g.passage_node(j) for j in ranked],
                                            np.nonzero(seeds)[0].tolist(), mass=scores)
                ex.paths = {g.passage_ids[j]: paths[g.passage_node(j)] for j in ranked}
        else:
            ex.skip("explain", "paths not requested")
        return Walk(Retrieval([(g.passage_ids[j], float(passage_scores[j])) for j in ranked], ex), scores)

    # -- linking ----------------------------------------------------------------------------------
    def _link_v2(self, queries: list[str], q_vecs: np.ndarray, cfg: HippoConfig,
                 ex: Explanation) -> np.ndarray | None:
        g = self.graph
        question = queries[0]
        if not g.matched_facts:
            ex.fallback = "the graph has no facts to match: ranked by dense similarity"
            return None
        named = sorted(set().union(*(g.phrases_named_in(q) for q in queries))) if cfg.question_mentions else []
        how = f"top {cfg.top_facts} facts per query by embedding" + (
            f"; named in the query: {', '.join(g.phrases[i] for i in named)}" if named else "")
        with ex.stage("link", how):
            per_query = g.fact_vectors @ q_vecs.T
            fact_sims = per_query.max(axis=1)
            # Each query (the question, then each expansion statement) links its own top facts.
            top = list(dict.fromkeys(i for col in per_query.T for i in _top(col, cfg.top_facts)))
            top.sort(key=lambda i: -fact_sims[i])
        kept = list(top)
        if not cfg.llm_filter:
            ex.skip("llm filter", "turned off")
        elif self.chat is None:
            ex.skip("llm filter", "no chat model in this run (retrieval only)")
        else:
            with ex.stage("llm filter", f"one call to {self.chat.model}", llm=True):
                kept = self._filter_facts(question, top)
        ex.evidence = [Evidence(g.facts[i].text(g.phrases), round(float(fact_sims[i]), 4), i in kept,
                                ", ".join(g.facts[i].passages)) for i in top]
        if not kept and not named:
            ex.fallback = "the LLM filter kept no fact: ranked by dense similarity"
            return None
        # Min-max over the linked facts (not all facts): the best linked fact weighs 1, the weakest ~0, so a
        # barely-related fifth fact cannot outweigh the two that match (measured: MuSiQue R@2 0.43 -> 0.49).
        norm = np.zeros_like(fact_sims)
        norm[top] = _minmax(fact_sims[top])
        weights = np.zeros(len(g.phrases))
        for i in kept:
            fact = g.facts[i]
            score = max(float(norm[i]), 1e-6)  # the lowest fact still counts a little
            for p in (fact.subject, fact.object):
                weights[p] = max(weights[p], score)
        if cfg.link_confidence > 0 and top:
            weights *= max(float(fact_sims[top[0]]), 0.0) ** cfg.link_confidence
        weights[named] = 1.0   # a phrase the query names is as sure a seed as the best-linked fact's
        return self._specificity(weights)

    def _link_v1(self, question: str, ex: Explanation) -> np.ndarray | None:
        g = self.graph
        chat = self._chat()
        with ex.stage("question ner", f"one call to {chat.model}", llm=True):
            entities = name_question_entities(chat.client, chat.model, question)
        if not entities or not g.phrases:
            ex.fallback = "no entity found in the question: ranked by dense similarity"
            return None
        with ex.stage("link", "each entity to its nearest graph node"):
            sims = self.embedder.embed(entities) @ g.phrase_vectors.T
            weights = np.zeros(len(g.phrases))
            for e, row in zip(entities, sims, strict=True):
                best = int(np.argmax(row))
                weights[best] = 1.0
                ex.evidence.append(Evidence(f"{e} -> {g.phrases[best]}", round(float(row[best]), 4), True,
                                            "question entity -> nearest node"))
        return self._specificity(weights)

    def _chat(self) -> ChatModel:
        if self.chat is None:
            raise RuntimeError("this step needs a chat model, and the retriever has none")
        return self.chat

    def _specificity(self, weights: np.ndarray) -> np.ndarray:
        """Divide each seed's weight by the number of passages mentioning it, so hubs do not flood the walk."""
        return weights / self.graph.mention_counts()

    def _filter_facts(self, question: str, candidates: list[int]) -> list[int]:
        g = self.graph
        chat = self._chat()
        chosen = select_relevant(chat.client, chat.model, question,
                                 [g.facts[i].text(g.phrases) for i in candidates], "fact", max_tokens=80)
        # An unreadable filter answer keeps every candidate rather than none.
        return list(candidates) if chosen is None else [candidates[n] for n in chosen]

    def _feedback_seeds(self, passages: list[int], weight: float) -> np.ndarray:
        """Seeds for the second walk: every phrase of the first walk's best ``passages``, ``weight`` divided by
        the number of passages mentioning it (node specificity, as for any seed)."""
        g = self.graph
        extra = np.zeros(len(g.phrases))
        for j in passages:
            extra[g.phrases_of(g.passage_ids[j])] = weight
        return self._specificity(extra)

    def _background(self, damping: float, engine: str) -> np.ndarray:
        """Each passage's mass in a walk seeded by every phrase alike, once per damping: what a question that names
        nothing in particular reaches (floored, so a passage no walk reaches is not divided by zero)."""
        if damping not in self._backgrounds:
            g = self.graph
            reset = np.concatenate([np.ones(len(g.phrases)), np.zeros(len(g.passage_ids))])
            mass = g.pagerank(reset if reset.any() else np.ones(g.n_nodes), damping, engine).scores[len(g.phrases):]
            self._backgrounds[damping] = _floored(mass)
        return self._backgrounds[damping]

    def _lexical_prior(self, text: str, cfg: HippoConfig) -> np.ndarray:
        """Each passage's min-max BM25 score for ``text``, to ``dense_power``, times ``lexical_weight``: zeros when
        no passage shares a word with it. Only called when the retriever has a lexical index."""
        assert self.lexical is not None
        g = self.graph
        prior = np.zeros(len(g.passage_ids))
        if self._lexical_order is None:   # where each of the index's passages sits in the graph (-1: not in it)
            at = g.passage_rows()
            self._lexical_order = np.array([at.get(pid, -1) for pid in self.lexical.ids], dtype=int)
        scores, order = self.lexical.scores(text), self._lexical_order
        prior[order[order >= 0]] = scores[order >= 0]
        return dense_prior(prior, cfg.lexical_weight, cfg.dense_power) if prior.max() > 0 else prior

    def _phrase_to_passage(self) -> sp.csr_matrix:
        if self._incidence is None:
            g = self.graph
            index = g.passage_rows()
            rows, cols = [], []
            for i, pids in enumerate(g.phrase_passages):
                for pid in pids:
                    rows.append(index[pid])
                    cols.append(i)
            self._incidence = sp.csr_matrix((np.ones(len(rows)), (rows, cols)),
                                            shape=(len(g.passage_ids), len(g.phrases)))
        return self._incidence


def dense_prior(dense: np.ndarray, weight: float, power: float) -> np.ndarray:
    """The passage nodes' share of the walk's start: min-max dense score to ``power``, times ``weight``.

    Every passage gets some, so with a linear score the many middling passages of a large corpus take most of
    the start mass away from the question's facts, and which ones win depends on the corpus size; a power above 1
    keeps the closest passages' prior and shrinks the middling tail (measured: BENCHMARKS.md, "dense_power").
    """
    return _minmax(dense) ** power * weight


def _floored(x: np.ndarray) -> np.ndarray:
    """``x`` with every entry at least its smallest positive one (1 when none is positive): a divisor that never
    sends a zero entry to first place."""
    positive = x[x > 0]
    return np.maximum(x, positive.min() if positive.size else 1.0)


def _top(scores: np.ndarray, k: int) -> list[int]:
    if len(scores) == 0 or k <= 0:
        return []
    k = min(k, len(scores))
    part = np.argpartition(-scores, k - 1)[:k]
    return [int(i) for i in part[np.argsort(-scores[part], kind="stable")]]


def _minmax(x: np.ndarray) -> np.ndarray:
    if len(x) == 0:
        return x
    lo, hi = float(x.min()), float(x.max())
    return np.ones_like(x, dtype=float) if hi - lo < 1e-12 else (x - lo) / (hi - lo)
