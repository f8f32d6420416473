"""Investigation as lab strategies: the loop with a language model reading, and the same loop following the walk."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from core.contract import BuildContext, Strategy, Value, params_of
from indexes import BM25_INDEX
from kg import KNOWLEDGE_GRAPH
from kg.walk import HippoConfig, HippoRAGRetriever
from llm import OpenAIClient

from .judge import Judge, PlaceJudge
from .readers import MAX_HOPS, HopReader, LLMReader, Namer, Reader, StepReader, SuspectNamer, WalkReader
from .retriever import InvestigateRetriever
from .settings import InvestigateSettings

PARAMS = params_of(InvestigateSettings)
# one way of reading (the walk's leads), no reader to ask sub-questions, to judge what it read, to restate it, to
# name a suspect or to weigh the places after it
LEADS_ONLY = ("reading", "sub_questions", "set_aside", "after_answer", "check_suspect", "hops", "judge_places",
              "judge_pool", "judge_margin")
LEADS = InvestigateSettings(reading="leads")   # the defaults of a loop whose only reader picks leads
# The blind loop at its best, so the page shows what reading adds over following the graph, not over the walk at
# settings chosen for a reader: of its looping configurations, trail merge with one lead and two rounds did best on
# the grid (seeds 100-115: 0.774) and by the suite rule (mean over the five choosing sets 0.644; rrf with two rounds
# 0.607; the reading loop's trail with three rounds 0.554). docs/investigate-choices.md has the commands.
WALK = replace(LEADS, merge="trail", leads=1, steps=2)
WALK_PARAMS = params_of(WALK, exclude=LEADS_ONLY)


def build_with(readers_for: Callable[[BuildContext], Mapping[str, Reader]],
               settings: InvestigateSettings | None = None,
               namer_for: Callable[[BuildContext], Namer] | None = None,
               hops_for: Callable[[BuildContext], HopReader] | None = None,
               judge_for: Callable[[BuildContext], Judge] | None = None) -> Callable[
                   [BuildContext, Mapping[str, Value]], InvestigateRetriever]:
    """A build whose loop reads with ``readers_for(ctx)``, a reader for each way of reading it offers (benchmarks
    plug in an oracle reader this way); ``settings``: the loop's defaults (a loop with only a leads reader reads
    leads); ``namer_for``: who names a suspect (None: no one does, so none is checked); ``hops_for``: who splits a
    question into hops; ``judge_for``: who weighs the places after the passages read (None: no one, they stay)."""
    def build(ctx: BuildContext, params: Mapping[str, Value]) -> InvestigateRetriever:
        graph = ctx.shared(KNOWLEDGE_GRAPH).graph
        # The walk's own LLM fact filter stays off: the loop's reader is where the model reads.
        lexical = ctx.shared(BM25_INDEX)
        walker = HippoRAGRetriever(graph, ctx.embedder, HippoConfig(llm_filter=False), lexical=lexical)
        return InvestigateRetriever(graph, walker, lexical, ctx.case, readers_for(ctx),
                                    settings or InvestigateSettings(), namer_for(ctx) if namer_for else None,
                                    hops_for(ctx) if hops_for else None, judge_for(ctx) if judge_for else None)
    return build


def leads_only(reader: Reader) -> Callable[[BuildContext], Mapping[str, Reader]]:
    """``reader`` as a loop's only way of reading: picking leads."""
    return lambda ctx: {"leads": reader}


def _chat(ctx: BuildContext) -> tuple[OpenAIClient, str]:
    if ctx.backend is None:
        raise ValueError("the investigate strategy reads with a chat model, and this run has none")
    return ctx.backend.client, ctx.backend.model


def llm_readers(ctx: BuildContext) -> dict[str, Reader]:
    """The run's chat model, reading either way."""
    client, model = _chat(ctx)
    return {"step": StepReader(client, model, ctx.shared(BM25_INDEX).tokens), "leads": LLMReader(client, model)}


def llm_namer(ctx: BuildContext) -> SuspectNamer:
    """The run's chat model, naming the suspect."""
    return SuspectNamer(*_chat(ctx))


def llm_hops(ctx: BuildContext) -> HopReader:
    """The run's chat model, splitting a question into hops and answering each."""
    return HopReader(*_chat(ctx))


def llm_judge(ctx: BuildContext) -> PlaceJudge:
    """The run's chat model, weighing the places after the passages read."""
    return PlaceJudge(*_chat(ctx))


def loop_calls(values: Mapping[str, Value], top_k: int | None) -> int:
    """The most LLM calls the loop makes for a question (``top_k`` None: at any k). The reading is the strategy itself,
    so none of them is an optional LLM step a retrieval-only run turns off."""
    steps, suspect = int(values["steps"]), int(values["check_suspect"] is True)
    splits = values["hops"] is True and (top_k is None or top_k > int(values["show"]))
    # a read after every round but the last; with hops, the split and then either an answer for each hop but the last
    # (MAX_HOPS calls in all) or, a question that does not split, the reads as before
    reads = suspect + (max(steps, MAX_HOPS) if splits else steps - 1)
    if values["judge_places"] is not True or (top_k is not None and top_k <= int(values["show"])):
        return reads
    # one question a candidate: the walk's best and the ranking's own places after the passages read (at any k, as
    # many as the walk's)
    own = top_k - int(values["show"]) if top_k is not None else int(values["judge_pool"])
    return reads + int(values["judge_pool"]) + own


INVESTIGATE = Strategy(
    "investigate", "Investigate", "Follows leads like a detective: the walk from the question, then a language model "
    "reads what was found and writes the next step to look up (or, reading by leads, picks the graph's leads), "
    "which the next walk starts from; it stops when a step only restates what it read.",
    build_with(llm_readers, namer_for=llm_namer, hops_for=llm_hops, judge_for=llm_judge), params=PARAMS,
    needs_llm=True, uses_triples=True, products=(KNOWLEDGE_GRAPH, BM25_INDEX),
    extra_llm_calls=loop_calls)
INVESTIGATE_WALK = Strategy(
    "investigate-walk", "Investigate (walk reads)", "The same loop with no language model: each round follows the "
    "walk's best leads blindly, so the lab shows what reading adds.",
    build_with(leads_only(WalkReader()), WALK), params=WALK_PARAMS, uses_triples=True,
    products=(KNOWLEDGE_GRAPH, BM25_INDEX))
