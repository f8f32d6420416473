"""HippoRAG as lab strategies: its parameters and how it is built on the shared knowledge graph."""
from __future__ import annotations

from collections.abc import Mapping

from casebook.contract import BuildContext, Param, Strategy, Value
from kg import ENGINES, KNOWLEDGE_GRAPH

from .retriever import ChatModel, HippoConfig, HippoRAGRetriever

_D = HippoConfig()
DAMPING = Param("damping", _D.damping, "PPR damping: probability of following an edge at each step "
                "(nx.pagerank's alpha)", minimum=0.05, maximum=0.95, step=0.05)
ENGINE = Param("engine", _D.engine, "PageRank engine: sparse (CSR power iteration, fast), sparse32 "
               "(the same in float32, for very large graphs) or networkx (nx.pagerank itself, the reference)", choices=ENGINES)
EXPLAIN = Param("explain", _D.explain, "compute, for every retrieved passage, the most probable path from a seed")
V2_PARAMS = (
    Param("top_facts", _D.top_facts, "facts linked per query (the question and each expansion)", minimum=1,
          maximum=50),
    DAMPING,
    Param("passage_weight", _D.passage_weight, "how much each passage's own dense score seeds the walk",
          minimum=0.0, maximum=1.0, step=0.01),
    Param("dense_power", _D.dense_power, "raise each passage's min-max dense score to this power before it seeds "
          "the walk: above 1 the closest passages keep their share and the middling ones fade (1: linear, as in "
          "HippoRAG 2)", minimum=0.25, maximum=8.0, step=0.25),
    Param("question_mentions", _D.question_mentions, "phrases the question names word for word (names, codes, "
          "multi-word phrases) seed the walk like the best-linked fact's, as HippoRAG 1's question entities do"),
    Param("llm_filter", _D.llm_filter, "one LLM call keeps only the linked facts relevant to the question "
          "(runs only when the run has a chat model)", llm_step=True),
    Param("hub_penalty", _D.hub_penalty, "divide each passage's walk mass by its node strength to this power, so "
          "a passage linked to everything stops winning every question (0: off)", minimum=0.0, maximum=2.0,
          step=0.05),
    Param("feedback_weight", _D.feedback_weight, "a second walk, seeded also by every phrase of the first walk's "
          "best passages with this weight (over node specificity), reaches the documents one hop past the best "
          "match; the two walks' masses add up (0: off)", minimum=0.0, maximum=20.0, step=0.5),
    Param("feedback_passages", _D.feedback_passages, "how many of the first walk's best passages seed the second",
          minimum=1, maximum=10),
    ENGINE, EXPLAIN)


def _builder(linking: str):
    def build(ctx: BuildContext, params: Mapping[str, Value]) -> HippoRAGRetriever:
        graph = ctx.shared(KNOWLEDGE_GRAPH).graph
        chat = ChatModel(ctx.backend.client, ctx.backend.model) if ctx.backend else None
        return HippoRAGRetriever(graph, ctx.embedder, HippoConfig(linking=linking), chat=chat)
    return build


HIPPORAG = Strategy(
    "hipporag", "HippoRAG", "Facts linked by embedding seed a Personalized PageRank walk over the knowledge graph "
    "(HippoRAG 2 linking).", _builder("v2"), params=V2_PARAMS, uses_triples=True,
    products=(KNOWLEDGE_GRAPH,))
HIPPORAG_V1 = Strategy(
    "hipporag-v1", "HippoRAG v1", "An LLM names the question's entities; each links to its closest graph node; "
    "phrase-only PageRank (the seed article's method).", _builder("v1"), params=(DAMPING, ENGINE, EXPLAIN),
    needs_llm=True, uses_triples=True, products=(KNOWLEDGE_GRAPH,))
