"""The case's verdict: the best strategy per question type, its margin, the questions behind it, ties called."""
from lab.verdict import case_verdict


def report(by_type: dict[str, dict[str, float]], questions: dict[str, int]) -> dict:
    qs = [{"type": t, "supporting_docs": ["D1"]} for t, n in questions.items() for _ in range(n)]
    names = {n for scores in by_type.values() for n in scores}
    return {"questions": qs, "summary": {n: {"recall_by_type": {t: s[n] for t, s in by_type.items() if n in s}}
                                         for n in sorted(names)}}


def test_the_best_per_type_with_its_margin_and_question_count():
    verdict = case_verdict(report({"multi-hop": {"naive": 0.67, "bm25": 0.75, "hipporag": 0.67},
                                   "simple": {"naive": 1.0, "bm25": 1.0, "hipporag": 1.0}},
                                  {"multi-hop": 6, "simple": 5}))
    hop = next(v for v in verdict if v.question_type == "multi-hop")
    assert hop.best == ("bm25",) and hop.runner_up in ("naive", "hipporag") and hop.margin == 0.08
    assert hop.sentence(3) == f"multi-hop: bm25 best, Recall@3 0.75 vs 0.67 for {hop.runner_up} (6 questions)"
    simple = next(v for v in verdict if v.question_type == "simple")
    assert simple.runner_up is None and simple.sentence(3) == "simple: every strategy ties at Recall@3 1.00 (5 questions)"


def test_a_lead_below_the_tie_margin_is_shared():
    hop = case_verdict(report({"multi-hop": {"a": 0.70, "b": 0.69, "c": 0.50}}, {"multi-hop": 1}))[0]
    assert hop.best == ("a", "b") and hop.runner_up == "c" and hop.sentence(5).endswith("(1 question)")
