"""Why the strategies differ on one question, in a few sentences computed from their explanations and the gold
marks; nothing here knows any case or any strategy by name."""
from __future__ import annotations

from collections.abc import Mapping

from core.types import Case, Question

from .results import StrategyResult


def why_they_differ(case: Case, question: Question, results: Mapping[str, StrategyResult]) -> list[str]:
    """Which gold documents each strategy found that another missed, the bridge on a graph path that found one,
    fallbacks, and answers that failed although retrieval was complete."""
    gold = [d for d in question.supporting_docs]
    lines: list[str] = []
    found = {name: set(r.retrieved) & set(gold) for name, r in results.items()}
    if gold and len(results) > 1:
        if len({frozenset(f) for f in found.values()}) == 1:
            got = sorted(next(iter(found.values())))
            lines.append(f"Every strategy found the same gold documents ({', '.join(got) or 'none'} of "
                         f"{', '.join(gold)}).")
        else:
            for doc in gold:
                have = [n for n in results if doc in found[n]]
                miss = [n for n in results if doc not in found[n]]
                if have and miss:
                    lines.append(f"{doc} was found by {_names(have)} and missed by {_names(miss)}"
                                 + _bridge(case, results, have, doc) + ".")
    for name, r in results.items():
        if r.explanation.fallback:
            lines.append(f"{name} fell back: {r.explanation.fallback}.")
        if gold and r.recall == 1.0 and r.answer_scores and not r.answer_scores.correct:
            missing = [f.text for f in r.answer_scores.key_facts.missing]
            lines.append(f"{name} retrieved every gold document, yet its answer "
                         + ("said the passages do not tell" if r.answer_scores.no_answer else
                            f"missed {', '.join(missing)}" if missing else "did not match")
                         + ": the answer step failed, not retrieval.")
    return lines


def _bridge(case: Case, results: Mapping[str, StrategyResult], finders: list[str], doc: str) -> str:
    """', reached through X' for the first finder whose path to the document passes named entities."""
    for name in finders:
        for pid, path in results[name].explanation.paths.items():
            if case.passage(pid).doc_id != doc:
                continue
            entities = [step.node for step in path if step.kind == "entity"]
            if entities:
                return f" ({name} reached it through {' -> '.join(entities)})"
    return ""


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
