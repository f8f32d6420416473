"""The comparison runner the CLI, the app and the benchmarks share.

``Lab`` builds every selected strategy's index for one case, then answers questions: each strategy retrieves,
the same answer step answers from what it retrieved, and everything is scored.
"""
from __future__ import annotations

import dataclasses

import logging
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from hipporag import HippoConfig
from llm import Backend, Embedder, Settings

from . import answer as answer_step
from . import metrics
from .expansion import expand_query
from .strategies import DEFAULT_STRATEGIES, BuildContext, Progress, get
from .types import Case, Question, Retrieval, Retriever

log = logging.getLogger(__name__)

NON_RETRIEVAL_STAGES = ("answer", "judge", "expand")


@dataclass(frozen=True)
class RunConfig:
    strategies: tuple[str, ...] = DEFAULT_STRATEGIES
    top_k: int = 3
    retrieval_only: bool = False
    triples: str = "auto"
    expand_query: bool = False
    judge: bool = False
    hippo: HippoConfig = HippoConfig()   # llm_filter applies only when answers are on (not retrieval-only)
    workers: int = 2

    def __post_init__(self):
        for name in self.strategies:
            get(name)  # raises KeyError naming the unknown strategy
        if self.top_k < 1:
            raise ValueError(f"top-k must be at least 1, not {self.top_k}")
        if self.triples not in ("auto", "precomputed", "llm"):
            raise ValueError(f"triples must be auto, precomputed or llm, not {self.triples!r}")

    def needs_chat(self, case: Case) -> bool:
        """Does this run need a chat model: answers, expansion, judge, an LLM strategy, or OpenIE for the graph?"""
        triples_from_file = self.triples == "precomputed" or (self.triples == "auto" and bool(case.triples))
        strategies = [get(s) for s in self.strategies]
        return (not self.retrieval_only or self.expand_query or self.judge or any(s.needs_llm for s in strategies)
                or (not triples_from_file and any(s.uses_triples for s in strategies)))


@dataclass
class StrategyResult:
    passages: list[str]                 # retrieved passage ids, best first
    retrieved: list[str]                # their document ids, de-duplicated
    scores: list[float]
    recall: float | None
    answer: str | None
    answer_scores: dict | None
    judge_correct: bool | None
    timings_ms: dict[str, float]
    trace: dict

    @property
    def retrieval_ms(self) -> float:
        return sum(v for k, v in self.timings_ms.items() if k not in NON_RETRIEVAL_STAGES)


@dataclass
class QuestionResult:
    question: Question
    expansions: list[str] = field(default_factory=list)
    results: dict[str, StrategyResult] = field(default_factory=dict)


class Lab:
    """One case, its strategies built, ready to answer."""

    def __init__(self, case: Case, settings: Settings, config: RunConfig = RunConfig(), *,
                 embedder: Embedder, backend: Backend | None = None):
        if backend is None and config.needs_chat(case):
            raise ValueError("this run needs a chat model (answers, expansion, judge, hipporag-v1 or LLM OpenIE)")
        self.case, self.settings, self.config = case, settings, config
        self.embedder, self.backend = embedder, backend
        self.retrievers: dict[str, Retriever] = {}
        self.context: BuildContext | None = None

    def build(self, progress: Progress | None = None) -> dict:
        """Build or load every strategy's index; returns what each build did."""
        cfg = self.config
        ctx = BuildContext(case=self.case, settings=self.settings, embedder=self.embedder, backend=self.backend,
                           triples=cfg.triples, workers=cfg.workers, progress=progress,
                           hippo=dataclasses.replace(cfg.hippo, llm_filter=cfg.hippo.llm_filter and not cfg.retrieval_only))
        for name in cfg.strategies:
            t = time.perf_counter()
            self.retrievers[name] = get(name).build(ctx)
            ctx.reports.setdefault(name, {})["build_ms"] = round((time.perf_counter() - t) * 1000, 1)
        self.context = ctx
        return ctx.reports

    def ask(self, question: Question | str, strategies: Sequence[str] | None = None) -> QuestionResult:
        """Retrieve (and unless retrieval-only, answer) one question with every strategy."""
        if not self.retrievers:
            raise RuntimeError("call build() first")
        q = question if isinstance(question, Question) else Question(id="ask", question=str(question), type="free")
        if not q.question.strip():
            raise ValueError("the question is empty")
        out = QuestionResult(question=q)
        expand_ms = 0.0
        if self.config.expand_query and self.backend:
            t = time.perf_counter()
            out.expansions = expand_query(self.backend.client, self.backend.model, q.question)
            expand_ms = (time.perf_counter() - t) * 1000
        for name in strategies or self.config.strategies:
            retrieval = self.retrievers[name].retrieve(q.question, self.config.top_k, out.expansions or None)
            out.results[name] = self._score(q, retrieval, expand_ms)
        return out

    def _score(self, q: Question, retrieval: Retrieval, expand_ms: float) -> StrategyResult:
        passages = [self.case.passage(pid) for pid in retrieval.ids]
        docs = list(dict.fromkeys(p.doc_id for p in passages))
        timings = {k: round(v, 3) for k, v in retrieval.timings_ms.items()}
        if expand_ms:
            timings["expand"] = round(expand_ms, 1)
        text = scores = judged = None
        if not self.config.retrieval_only:
            ans = answer_step.answer(self.backend.client, self.backend.model, q.question, passages)
            text = ans.text
            timings["answer"] = round(ans.elapsed_ms, 1)
            scores = metrics.answer_scores(text, q.expected_answer, q.answers)
            if self.config.judge and q.expected_answer:
                t = time.perf_counter()
                judged = answer_step.judge(self.backend.client, self.backend.model, q.question, q.expected_answer,
                                           text)
                timings["judge"] = round((time.perf_counter() - t) * 1000, 1)
        return StrategyResult(passages=retrieval.ids, retrieved=docs, scores=[round(s, 6) for _, s in retrieval.passages],
                              recall=metrics.recall_at_k(docs, q.supporting_docs), answer=text, answer_scores=scores,
                              judge_correct=judged, timings_ms=timings, trace=retrieval.trace)

    def evaluate(self, questions: Sequence[Question] | None = None,
                 progress: Callable[[int, int, QuestionResult], None] | None = None) -> list[QuestionResult]:
        questions = list(self.case.questions if questions is None else questions)
        results = []
        for i, q in enumerate(questions, 1):
            results.append(self.ask(q))
            if progress:
                progress(i, len(questions), results[-1])
        return results
