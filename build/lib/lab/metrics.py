"""Scores: Recall@k against supporting documents, and answer correctness against the expected answer."""
from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import mean, median

from .keyfacts import KeyFactScore, score_answer, split_key_facts

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def recall_at_k(retrieved_docs: Sequence[str], gold: Iterable[str], k: int | None = None) -> float | None:
    """Share of gold documents among the first ``k`` retrieved ones (all when k is None); None without gold."""
    gold = set(gold)
    if not gold:
        return None
    return len(gold & set(retrieved_docs[:k] if k is not None else retrieved_docs)) / len(gold)


def normalize_answer(text: str) -> str:
    """SQuAD-style: lowercase, drop punctuation and articles, collapse spaces (Unicode-aware)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(ch).startswith("P") or ch in string.punctuation else ch
                   for ch in text)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, golds: Sequence[str]) -> bool:
    p = normalize_answer(prediction)
    return any(p == normalize_answer(g) for g in golds if g)


def token_f1(prediction: str, golds: Sequence[str]) -> float:
    best = 0.0
    pred = normalize_answer(prediction).split()
    for g in golds:
        gold = normalize_answer(g).split()
        common = Counter(pred) & Counter(gold)
        same = sum(common.values())
        if not pred or not gold or same == 0:
            continue
        precision, recall = same / len(pred), same / len(gold)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best


def contains(prediction: str, golds: Sequence[str]) -> bool:
    """Does the prediction contain a gold answer as a run of whole words?"""
    pred = f" {normalize_answer(prediction)} "
    return any(normalize_answer(g) and f" {normalize_answer(g)} " in pred for g in golds)


@dataclass(frozen=True)
class AnswerScores:
    """How one answer compares with the expected one.

    ``strict_correct`` = exact match or whole containment of the expected answer or an alias (the old measure).
    ``correct`` = strict_correct, or at least the run's share of the key facts found in an answer that does not
    say the passages do not tell. ``no_answer`` marks such an answer, counted apart from wrong ones.
    """
    exact_match: bool
    f1: float
    contains: bool
    strict_correct: bool
    key_facts: KeyFactScore
    no_answer: bool
    correct: bool

    def to_dict(self) -> dict:
        """The report's ``answer_scores`` object (report.schema.json)."""
        return {"exact_match": self.exact_match, "f1": self.f1, "contains": self.contains,
                "strict_correct": self.strict_correct, "key_facts": self.key_facts.to_dict(),
                "no_answer": self.no_answer, "correct": self.correct}


def answer_scores(prediction: str | None, expected: str, aliases: Sequence[str], question: str = "",
                  key_facts: Sequence[str] = (), share: float = 1.0) -> AnswerScores | None:
    """Key-fact scoring beside the string measures (None when there is no answer or nothing to compare with)."""
    golds = [g for g in [expected, *aliases] if g]
    if prediction is None or not (golds or key_facts):
        return None
    em, has = exact_match(prediction, golds), contains(prediction, golds)
    facts = split_key_facts(expected, question, key_facts)
    found = score_answer(prediction, facts)
    by_facts = bool(facts) and found.share >= share and not found.no_answer
    return AnswerScores(exact_match=em, f1=round(token_f1(prediction, golds), 4), contains=has,
                        strict_correct=em or has, key_facts=found, no_answer=found.no_answer and not (em or has),
                        correct=em or has or by_facts)


def safe_mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(mean(vals), 4) if vals else None


def safe_median(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(median(vals), 3) if vals else None
