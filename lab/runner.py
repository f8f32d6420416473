"""The comparison runner the CLI, the app and the benchmarks share.

``Lab`` builds every selected strategy's index for one case, then answers questions: each strategy retrieves,
the same answer step answers from what it retrieved, and everything is scored. Query-time settings (top-k,
query-time parameters, answers on or off) can change between questions without a rebuild.
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from core.contract import TRIPLE_SOURCES, BuildContext, BuildReport, Product, Value
from core.storage import Storage
from core.types import Case, Progress, Question, Retrieval, Retriever
from kg import KNOWLEDGE_GRAPH, GraphBuild
from kg.build import duration_text, triples_source
from llm import Backend, Embedder, Settings

from . import answer as answer_step
from . import metrics
from .compare import why_they_differ
from .expansion import expand_query
from .registry import DEFAULT_STRATEGIES, get
from .results import StrategyResult

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class RunConfig:
    strategies: tuple[str, ...] = DEFAULT_STRATEGIES
    top_k: int = 3
    retrieval_only: bool = False
    triples: str = "auto"        # one of TRIPLE_SOURCES
    expansion: bool = False      # query expansion: one LLM call turns the question into fact statements
    judge: bool = False
    workers: int = 2
    key_fact_share: float = 1.0  # an answer is correct when it states this share of the expected key facts
    params: Mapping[str, Mapping[str, Value]] = field(default_factory=dict)  # strategy -> parameter -> value

    def __post_init__(self):
        if not self.strategies:
            raise ValueError("choose at least one strategy")
        for name in self.strategies:
            get(name)  # raises KeyError naming the unknown strategy
        if self.top_k < 1:
            raise ValueError(f"top-k must be at least 1, not {self.top_k}")
        if self.triples not in TRIPLE_SOURCES:
            raise ValueError(f"triples must be one of {', '.join(TRIPLE_SOURCES)}, not {self.triples!r}")
        if self.workers < 1:
            raise ValueError(f"workers must be at least 1, not {self.workers}")
        if not 0.0 < self.key_fact_share <= 1.0:
            raise ValueError(f"key-fact share must be above 0 and at most 1, not {self.key_fact_share}")
        for name, overrides in self.params.items():
            get(name).values(overrides)  # raises naming the strategy, parameter and value
        object.__setattr__(self, "params", {k: dict(v) for k, v in self.params.items()})

    def values(self, strategy: str) -> dict[str, Value]:
        """Every parameter of ``strategy`` as this run uses it.

        A retrieval-only run turns the optional LLM steps off unless its parameters turn them on, so its rankings
        do not depend on whether a chat model happens to be running (for OpenIE, say).
        """
        s = get(strategy)
        quiet = s.llm_switches(False) if self.retrieval_only else {}
        return s.values({**quiet, **self.params.get(strategy, {})})

    def build_params(self, strategy: str) -> dict[str, Value]:
        """The parameters of ``strategy`` that shape its index."""
        return get(strategy).split(self.values(strategy))[0]

    def products(self) -> list[Product]:
        """The shared products the strategies' builds ask for, strategy by strategy (one may ask again)."""
        return [p for n in self.strategies for p in get(n).uses(self.build_params(n))]

    def query_params(self, strategy: str) -> dict[str, Value]:
        """The parameters of ``strategy`` that only shape its queries."""
        return get(strategy).split(self.values(strategy))[1]

    def with_assignments(self, assignments: Iterable[str]) -> RunConfig:
        """Apply "strategy.param=value" texts (the CLI's --set)."""
        params = {k: dict(v) for k, v in self.params.items()}
        for text in assignments:
            target, sep, raw = text.partition("=")
            strategy, dot, name = target.strip().partition(".")
            if not sep or not dot:
                raise ValueError(f"--set {text!r}: expected STRATEGY.PARAMETER=VALUE, e.g. hipporag.damping=0.6")
            param = get(strategy).param(name)
            params.setdefault(strategy, {})[name] = param.parse(raw, strategy)
        return replace(self, params=params)

    def build_key(self) -> str:
        """What the built indexes depend on: a query-time change leaves it equal, so nothing is rebuilt."""
        build_params = {s: self.build_params(s) for s in self.strategies}
        return json.dumps([sorted(self.strategies), self.triples, build_params], sort_keys=True)

    def needs_chat(self, case: Case) -> bool:
        """Does this run need a chat model: answers, expansion, judge, an LLM strategy, or OpenIE for the graph?"""
        strategies = [get(s) for s in self.strategies]
        # With a chat model, would the graph's triples come from its OpenIE (an explicit llm source, or "auto" on a
        # small case without triples.json)? Then the run needs one.
        openie = triples_source(self.triples, case, has_chat=True).startswith("llm")
        return (not self.retrieval_only or self.expansion or self.judge or any(s.needs_llm for s in strategies)
                or (openie and any(s.uses_triples for s in strategies)))


@dataclass
class QuestionResult:
    question: Question
    config: RunConfig
    expansions: list[str] = field(default_factory=list)
    results: dict[str, StrategyResult] = field(default_factory=dict)
    differences: list[str] = field(default_factory=list)   # why the strategies differ, in sentences


class Lab:
    """One case, its strategies built, ready to answer."""

    def __init__(self, case: Case, settings: Settings, config: RunConfig = RunConfig(), *,
                 embedder: Embedder, backend: Backend | None = None, storage: Storage | None = None):
        if backend is None and config.needs_chat(case):
            raise ValueError("this run needs a chat model (answers, expansion, judge, an LLM strategy or LLM OpenIE)")
        self.case, self.settings, self.config = case, settings, config
        self.storage = storage or Storage.from_env()
        self.embedder, self.backend = embedder, backend
        self.retrievers: dict[str, Retriever] = {}
        self.context: BuildContext | None = None
        self.answer_ms: list[float] = []   # every answer this lab had the model write (not cached): the rate said

    def _context(self, progress: Progress | None = None) -> BuildContext:
        cfg = self.config
        return BuildContext(case=self.case, settings=self.settings, storage=self.storage, embedder=self.embedder,
                            backend=self.backend, triples=cfg.triples, workers=cfg.workers, progress=progress)

    def plan(self) -> list[tuple[str, int]]:
        """The progress stages build() may report, in order, with their totals (0: known once it gets there)."""
        return self._context().plan(self.config.products())

    def build(self, progress: Progress | None = None) -> list[BuildReport]:
        """Build or load every strategy's index; returns what each build step did."""
        cfg = self.config
        ctx = self._context(progress)
        for name in cfg.strategies:
            self.retrievers[name] = get(name).build(ctx, cfg.build_params(name))
        self.context = ctx
        return ctx.reports

    @property
    def reports(self) -> list[BuildReport]:
        return self.context.reports if self.context else []

    @property
    def knowledge_graph(self) -> GraphBuild | None:
        """The knowledge graph this build made, if a selected strategy asked for it."""
        return self.context.built(KNOWLEDGE_GRAPH) if self.context else None

    def accepts(self, config: RunConfig) -> bool:
        """Can ``config`` run on these indexes (it differs at most in query-time settings)?"""
        return all(name in self.retrievers for name in config.strategies) and all(
            config.build_params(n) == self.config.build_params(n) for n in config.strategies) \
            and config.triples == self.config.triples

    def ask(self, question: Question | str, config: RunConfig | None = None,
            on_answer: Callable[[str, str], None] | None = None) -> QuestionResult:
        """Retrieve (and unless retrieval-only, answer) one question with every strategy of ``config``.

        ``on_answer(strategy, piece)`` sees each answer as it streams from the model.
        """
        cfg = self._checked(config)
        q = question if isinstance(question, Question) else Question(id="ask", text=str(question), type="free")
        if not q.text.strip():
            raise ValueError("the question is empty")
        out = QuestionResult(question=q, config=cfg)
        expand_ms = 0.0
        if cfg.expansion and self.backend:
            t = time.perf_counter()
            out.expansions = expand_query(self.backend.client, self.backend.model, q.text)
            expand_ms = (time.perf_counter() - t) * 1000
        for name in cfg.strategies:
            query_params = cfg.query_params(name)
            retrieval = self.retrievers[name].retrieve(q.text, cfg.top_k, out.expansions, query_params)
            stream = (lambda piece, name=name: on_answer(name, piece)) if on_answer else None
            out.results[name] = self._score(q, retrieval, cfg, expand_ms, stream)
            out.results[name].params = query_params
        out.differences = why_they_differ(self.case, q, out.results)
        return out

    def _checked(self, config: RunConfig | None) -> RunConfig:
        if not self.retrievers:
            raise RuntimeError("call build() first")
        if config is None:
            return self.config
        if not self.accepts(config):
            raise ValueError("these settings change what was built (strategies, triples or build-time parameters): "
                             "build again")
        if self.backend is None and config.needs_chat(self.case):
            raise ValueError("these settings need a chat model (answers, expansion or judge), and this lab has none")
        return config

    def _score(self, q: Question, retrieval: Retrieval, cfg: RunConfig, expand_ms: float,
               on_text: Callable[[str], None] | None = None) -> StrategyResult:
        passages = [self.case.passage(pid) for pid in retrieval.ids]
        docs = self.case.documents_of(retrieval.ids)
        timings = {k: round(v, 3) for k, v in retrieval.timings_ms.items()}
        if expand_ms:
            timings["expand"] = round(expand_ms, 1)
        text = scores = judged = None
        if not cfg.retrieval_only:
            backend = self.backend
            if backend is None:
                raise RuntimeError("answers need a chat model, and this lab has none")
            ans = answer_step.answer(backend.client, backend.model, q.text, passages, on_text=on_text)
            text = ans.text
            timings["answer"] = round(ans.elapsed_ms, 1)
            if not ans.cached:
                self.answer_ms.append(ans.elapsed_ms)
            scores = metrics.answer_scores(text, q.expected_answer, q.answers, q.text, q.key_facts,
                                           cfg.key_fact_share)
            if cfg.judge and q.expected_answer:
                t = time.perf_counter()
                judged = answer_step.judge(backend.client, backend.model, q.text, q.expected_answer, text)
                timings["judge"] = round((time.perf_counter() - t) * 1000, 1)
        return StrategyResult(passages=retrieval.ids, retrieved=docs, scores=[round(s, 6) for _, s in retrieval.passages],
                              recall=metrics.recall_at_k(docs, q.supporting_docs), answer=text, answer_scores=scores,
                              judge_correct=judged, timings_ms=timings, explanation=retrieval.explanation)

    def answer_seconds(self, default: float) -> float:
        """The typical seconds one answer takes on this backend: the median of this lab's own, else ``default``."""
        if not self.answer_ms:
            return default
        ordered = sorted(self.answer_ms)
        return ordered[len(ordered) // 2] / 1000

    def cost_estimate(self, questions: int, config: RunConfig | None = None, default_answer_s: float = 12.0) -> str:
        """What asking ``questions`` questions costs, said before the wait ("about 3 minutes: 14 questions x 3
        strategies x about 12 s an answer"); retrieval alone takes seconds."""
        cfg = config or self.config
        # A strategy's own LLM steps (a fact filter, a loop's reads) cost about what an answer does.
        steps = sum(get(name).llm_calls(cfg.values(name), cfg.top_k) for name in cfg.strategies)
        answers = 0 if cfg.retrieval_only else len(cfg.strategies)
        if not answers and not steps:
            return f"retrieval only: {questions} question(s) x {len(cfg.strategies)} strategies, a few seconds"
        each = self.answer_seconds(default_answer_s)
        total = questions * (answers + steps) * each
        source = "measured on this backend" if self.answer_ms else "a first guess until one is measured"
        calls = " + ".join(x for x in (f"{answers} answers" if answers else "",
                                       f"up to {steps} strategy LLM steps" if steps else "") if x)
        per = f"{len(cfg.strategies)} strategies x about {each:.0f} s an answer" if not steps else \
            f"({calls}) x about {each:.0f} s a call"
        return (f"about {duration_text(total)}: {questions} question(s) x {per} ({source}; cached replies are "
                "instant)")

    def evaluate(self, questions: Sequence[Question] | None = None,
                 progress: Callable[[int, int, QuestionResult], None] | None = None,
                 config: RunConfig | None = None,
                 on_answer: Callable[[str, str], None] | None = None) -> list[QuestionResult]:
        questions = list(self.case.questions if questions is None else questions)
        results = []
        for i, q in enumerate(questions, 1):
            results.append(self.ask(q, config, on_answer))
            if progress:
                progress(i, len(questions), results[-1])
        return results
