"""What one strategy's answer to one question carries: the runner makes it, the comparison and the report read it."""
from __future__ import annotations

from dataclasses import dataclass, field

from core.contract import Value
from core.types import Explanation

from .metrics import AnswerScores

LLM_STEPS = ("answer", "judge", "expand")   # the runner's own LLM calls, besides the strategies' LLM stages


@dataclass
class StrategyResult:
    passages: list[str]                 # retrieved passage ids, best first
    retrieved: list[str]                # their document ids, de-duplicated
    scores: list[float]
    recall: float | None
    answer: str | None
    answer_scores: AnswerScores | None
    judge_correct: bool | None
    timings_ms: dict[str, float]
    explanation: Explanation
    params: dict[str, Value] = field(default_factory=dict)   # the query-time parameters used

    @property
    def llm_stages(self) -> set[str]:
        return {s.name for s in self.explanation.stages if s.llm} | set(LLM_STEPS)

    @property
    def retrieval_ms(self) -> float:
        """Retrieval's own work, without any LLM call."""
        return sum(v for k, v in self.timings_ms.items() if k not in self.llm_stages)

    @property
    def llm_calls(self) -> int:
        """LLM steps that ran for this answer (each one call, but a round of several reads, a judge's, counts each; a
        reply served from the cache counts too)."""
        return sum(1 for k in self.timings_ms if k in self.llm_stages) + \
            sum(r.reads - 1 for r in self.explanation.rounds if r.reads > 1)

    @property
    def llm_ms(self) -> float:
        """Time in LLM calls: the strategy's LLM stages, the answer, the judge and query expansion."""
        return sum(v for k, v in self.timings_ms.items() if k in self.llm_stages)
