"""Investigation as lab strategies: the loop with a language model reading, and the same loop following the walk."""
from __future__ import annotations

from collections.abc import Callable, Mapping

from core.contract import BuildContext, Strategy, Value, params_of
from indexes import BM25_INDEX
from kg import KNOWLEDGE_GRAPH
from kg.walk import HippoConfig, HippoRAGRetriever

from .readers import LLMReader, Reader, WalkReader
from .retriever import InvestigateRetriever, InvestigateSettings

PARAMS = params_of(InvestigateSettings)
# no reader to ask sub-questions or to judge what it read
WALK_PARAMS = tuple(p for p in PARAMS if p.name not in ("sub_questions", "set_aside"))


def build_with(reader_for: Callable[[BuildContext], Reader]) -> Callable[[BuildContext, Mapping[str, Value]],
                                                                           InvestigateRetriever]:
    """A build whose loop reads with ``reader_for(ctx)`` (benchmarks plug in an oracle reader this way)."""
    def build(ctx: BuildContext, params: Mapping[str, Value]) -> InvestigateRetriever:
        graph = ctx.shared(KNOWLEDGE_GRAPH).graph
        # The walk's own LLM fact filter stays off: the loop's reader is where the model reads.
        lexical = ctx.shared(BM25_INDEX)
        walker = HippoRAGRetriever(graph, ctx.embedder, HippoConfig(llm_filter=False), lexical=lexical)
        return InvestigateRetriever(graph, walker, lexical, ctx.case, reader_for(ctx))
    return build


def llm_reader(ctx: BuildContext) -> Reader:
    """The run's chat model as the reader."""
    if ctx.backend is None:
        raise ValueError("the investigate strategy reads with a chat model, and this run has none")
    return LLMReader(ctx.backend.client, ctx.backend.model)


INVESTIGATE = Strategy(
    "investigate", "Investigate", "Follows leads like a detective: the walk from the question, then a language model "
    "reads what was found and picks the leads (and sub-questions) the next walks start from.",
    build_with(llm_reader), params=PARAMS, needs_llm=True, uses_triples=True, products=(KNOWLEDGE_GRAPH, BM25_INDEX),
    extra_llm_calls=lambda values: int(values["steps"]) - 1)   # one read after every round but the last
INVESTIGATE_WALK = Strategy(
    "investigate-walk", "Investigate (walk reads)", "The same loop with no language model: each round follows the "
    "walk's best leads blindly, so the lab shows what reading adds.",
    build_with(lambda ctx: WalkReader()), params=WALK_PARAMS, uses_triples=True,
    products=(KNOWLEDGE_GRAPH, BM25_INDEX))
