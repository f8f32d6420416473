"""Who wins on this case: per question type, the strategy with the best mean Recall@k, its margin over the next,
and how many questions stand behind it, in words the app and the Markdown report print as they are."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

# A margin below this, on the questions of one case, is called a tie: one question of ten moves a mean by 0.1.
TIE = 0.02


@dataclass(frozen=True)
class TypeVerdict:
    question_type: str
    questions: int
    best: tuple[str, ...]        # the strategies at the top (several when tied)
    best_recall: float
    runner_up: str | None        # the best of the others, None when every strategy tied
    runner_up_recall: float | None

    @property
    def margin(self) -> float | None:
        return None if self.runner_up_recall is None else round(self.best_recall - self.runner_up_recall, 3)

    def sentence(self, k: int) -> str:
        n = f"{self.questions} question{'s' if self.questions != 1 else ''}"
        if self.runner_up is None:
            return f"{self.question_type}: every strategy ties at Recall@{k} {self.best_recall:.2f} ({n})"
        lead = " and ".join(self.best)
        return (f"{self.question_type}: {lead} best, Recall@{k} {self.best_recall:.2f} vs {self.runner_up_recall:.2f} "
                f"for {self.runner_up} ({n})")


def case_verdict(report: dict) -> list[TypeVerdict]:
    """One verdict per question type with gold documents, from a report (lab.report.build_report's)."""
    counts = Counter(q["type"] for q in report["questions"] if q["supporting_docs"])
    out = []
    for qtype in sorted(counts):
        scores = {name: m["recall_by_type"][qtype] for name, m in report["summary"].items()
                  if m["recall_by_type"].get(qtype) is not None}
        if not scores:
            continue
        top = max(scores.values())
        best = tuple(n for n, v in scores.items() if top - v < TIE)
        others = {n: v for n, v in scores.items() if n not in best}
        runner = max(others, key=lambda n: others[n]) if others else None
        out.append(TypeVerdict(qtype, counts[qtype], best, top, runner, others[runner] if runner else None))
    return out
