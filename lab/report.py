"""The evaluation report: one JSON contract (schema in report.schema.json) and the same tables in Markdown."""
from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from core.contract import BuildReport

from . import metrics
from .runner import Lab, QuestionResult, RunConfig
from .verdict import case_verdict

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")
REPORT_VERSION = 3   # 3: explanation.rounds, llm_calls, median_llm_calls


def build_report(lab: Lab, results: Sequence[QuestionResult], config: RunConfig | None = None) -> dict:
    """The JSON report of a run (``config``: the one the results were asked with; the lab's by default)."""
    case, backend = lab.case, lab.backend
    cfg = config or (results[0].config if results else lab.config)
    settings = {
        "top_k": cfg.top_k, "retrieval_only": cfg.retrieval_only, "triples": cfg.triples,
        "expansion": cfg.expansion, "judge": cfg.judge,
        "backend": backend.kind if backend else "none", "base_url": backend.base_url if backend else None,
        "model": backend.model if backend else None,
        "extraction_model": backend.extraction_model if backend else None,
        "embed_model": lab.embedder.name,
    }
    questions = []
    for r in results:
        q = r.question
        questions.append({
            "id": q.id, "question": q.text, "type": q.type, "supporting_docs": list(q.supporting_docs),
            "expected_answer": q.expected_answer, "expansions": r.expansions, "differences": r.differences,
            "results": {name: {
                "retrieved": s.retrieved, "passages": s.passages, "scores": s.scores, "recall": s.recall,
                "answer": s.answer, "answer_correct": s.answer_scores.correct if s.answer_scores else None,
                "answer_scores": s.answer_scores.to_dict() if s.answer_scores else None, "judge_correct": s.judge_correct,
                "retrieval_ms": round(s.retrieval_ms, 3), "llm_ms": round(s.llm_ms, 3), "llm_calls": s.llm_calls,
                "timings_ms": s.timings_ms,
                "params": s.params,
                "explanation": s.explanation.to_dict(),
            } for name, s in r.results.items()}})
    return {
        "report_version": REPORT_VERSION,
        "case": {"name": case.name, "title": case.title, "path": case.path, "fingerprint": case.fingerprint,
                 "documents": len(case.documents), "passages": len(case.passages), "questions": len(case.questions)},
        "settings": {**settings, "key_fact_share": cfg.key_fact_share},
        "strategies": list(cfg.strategies),
        "params": {name: cfg.values(name) for name in cfg.strategies},
        "build": [b.to_dict() for b in lab.reports],
        "questions": questions,
        "summary": summarise(questions, cfg.strategies),
    }


def describe_build(report: BuildReport) -> str:
    """One line for one build step, the same in the CLI and the app."""
    counts = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in report.counts.items())
    details = "; ".join(f"{k} {v}" for k, v in report.details.items() if k != "key")
    how = "up to date" if report.reused else "built"
    failed = f"; {len(report.failures)} item(s) failed" if report.failures else ""
    return f"{report.name}: {how} in {report.elapsed_ms:.0f} ms · {counts}" + (f" · {details}" if details else "") \
        + failed


def summarise(questions: list[dict], strategies: Sequence[str]) -> dict:
    out = {}
    for name in strategies:
        rows = [q["results"][name] for q in questions if name in q["results"]]
        by_type = defaultdict(list)
        for q in questions:
            if name in q["results"] and q["results"][name]["recall"] is not None:
                by_type[q["type"]].append(q["results"][name]["recall"])
        graded = [r["answer_scores"] for r in rows if r["answer_scores"]]
        judged = [r["judge_correct"] for r in rows if r["judge_correct"] is not None]
        both = [(r["answer_scores"]["correct"], r["judge_correct"]) for r in rows
                if r["answer_scores"] and r["judge_correct"] is not None]
        out[name] = {
            "questions": len(rows),
            "scored_questions": sum(1 for r in rows if r["recall"] is not None),
            "recall": metrics.safe_mean(r["recall"] for r in rows),
            "recall_by_type": {t: metrics.safe_mean(v) for t, v in sorted(by_type.items())},
            "answer_accuracy": metrics.safe_mean(float(g["correct"]) for g in graded) if graded else None,
            "answer_accuracy_strict": metrics.safe_mean(float(g["strict_correct"]) for g in graded) if graded else None,
            "key_fact_share": metrics.safe_mean(g["key_facts"]["share"] for g in graded) if graded else None,
            "no_answer_rate": metrics.safe_mean(float(g["no_answer"]) for g in graded) if graded else None,
            "judge_agreement": metrics.safe_mean(float(a == b) for a, b in both) if both else None,
            "answer_f1": metrics.safe_mean(g["f1"] for g in graded) if graded else None,
            "judge_accuracy": metrics.safe_mean(float(j) for j in judged) if judged else None,
            "median_retrieval_ms": metrics.safe_median(r["retrieval_ms"] for r in rows),
            "median_llm_ms": metrics.safe_median(r["llm_ms"] for r in rows),
            "median_llm_calls": metrics.safe_median(r["llm_calls"] for r in rows),
            "median_answer_ms": metrics.safe_median(r["timings_ms"].get("answer") for r in rows),
        }
    return out


def validate_report(report: dict) -> None:
    """Raise jsonschema.ValidationError if the report breaks the documented contract."""
    import jsonschema

    jsonschema.validate(report, json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


def _fmt(value, pct: bool = False) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}" if not pct else f"{value * 100:.0f}%"
    return str(value)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def to_markdown(report: dict) -> str:
    """The same tables as the JSON report, readable on GitHub."""
    s, case = report["settings"], report["case"]
    names = report["strategies"]
    lines = [f"# {_cell(case['title'])}: {' vs '.join(names)}", "",
             f"{case['documents']} documents, {case['passages']} passages, {len(report['questions'])} questions run. "
             f"top-k {s['top_k']}; backend {s['backend']} ({s['model'] or 'no chat model'}); embeddings "
             f"{s['embed_model']}; triples {s['triples']}; query expansion {'on' if s['expansion'] else 'off'}"
             f"{'; retrieval only' if s['retrieval_only'] else ''}.", ""]
    for name in names:
        values = ", ".join(f"{k} {_fmt(v)}" for k, v in report["params"].get(name, {}).items())
        if values:
            lines.append(f"- {name} parameters: {_cell(values)}")
    lines += _verdict_lines(report)
    lines += ["", "## Summary", "",
             "| strategy | Recall@k | answer accuracy (key facts) | strict accuracy | no answer | answer F1 | judge | "
             "judge agrees | median retrieval ms (no LLM) | median LLM ms | median LLM calls | median answer ms |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in names:
        m = report["summary"][name]
        lines.append(f"| {name} | {_fmt(m['recall'])} | {_fmt(m['answer_accuracy'])} | {_fmt(m['answer_accuracy_strict'])} "
                     f"| {_fmt(m['no_answer_rate'])} | {_fmt(m['answer_f1'])} | {_fmt(m['judge_accuracy'])} | "
                     f"{_fmt(m['judge_agreement'])} | {_fmt(m['median_retrieval_ms'])} | {_fmt(m['median_llm_ms'])} | "
                     f"{_fmt(m['median_llm_calls'])} | {_fmt(m['median_answer_ms'])} |")
    types = sorted({t for n in names for t in report["summary"][n]["recall_by_type"]})
    if types:
        lines += ["", "## Recall@k by question type", "", "| strategy | " + " | ".join(types) + " |",
                  "|---|" + "---|" * len(types)]
        for name in names:
            by = report["summary"][name]["recall_by_type"]
            lines.append(f"| {name} | " + " | ".join(_fmt(by.get(t)) for t in types) + " |")
    lines += ["", "## Questions", "", "| id | type | question | gold | " +
              " | ".join(f"{n} retrieved | {n} recall | {n} correct" for n in names) + " |",
              "|---|---|---|---|" + "---|---|---|" * len(names)]
    for q in report["questions"]:
        cells = [q["id"], q["type"], _cell(q["question"]), ", ".join(q["supporting_docs"]) or "-"]
        for n in names:
            r = q["results"].get(n, {})
            gold = set(q["supporting_docs"])
            cells += [", ".join(f"**{d}**" if d in gold else d for d in r.get("retrieved", [])),
                      _fmt(r.get("recall")), _fmt(r.get("answer_correct"))]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines += ["", "## Why they differ", ""]
    for q in report["questions"]:
        lines.append(f"- **{q['id']}**: " + (_cell(" ".join(q["differences"])) or "no difference to explain."))
    if not s["retrieval_only"]:
        lines += ["", "## Answers", ""]
        for q in report["questions"]:
            lines.append(f"**{q['id']}. {_cell(q['question'])}** (expected: {_cell(q['expected_answer'] or '-')})")
            lines.append("")
            for n in names:
                r = q["results"].get(n, {})
                lines.append(f"- {n}: {_cell(r.get('answer') or '-')}" + key_fact_note(r.get("answer_scores")))
            lines.append("")
    lines += ["", "## How each strategy got there", ""]
    for q in report["questions"]:
        lines.append(f"### {q['id']}. {_cell(q['question'])}")
        lines.append("")
        for n in names:
            if n in q["results"]:
                lines += explanation_lines(n, q["results"][n]["explanation"])
        lines.append("")
    lines += ["", "Gold documents are in **bold**. Recall@k counts the question's supporting documents found in "
              "the top k. An answer is correct when it states the expected answer's key facts (amounts, dates, times, "
              "numbers, names, and the content words of short answers, normalized; facts the question already states "
              "and parenthesised extras do not count against it), or matches the expected answer or an alias "
              "exactly or as whole words (the strict measure, shown apart). An answer that says the passages do not "
              "tell is counted as no answer."]
    return "\n".join(lines) + "\n"


def explanation_lines(name: str, ex: dict, top: int = 5) -> list[str]:
    """Markdown bullets for one strategy's explanation: method, fallback, stages, evidence, seeds, paths."""
    stages = ", ".join(f"{st['name']} {st['ms']:.0f} ms" if st["ran"] else f"{st['name']} skipped ({st['why']})"
                       for st in ex["stages"])
    lines = [f"- **{name}**: {_cell(ex['method'])}" + (f"; stages: {_cell(stages)}" if stages else "")]
    if ex["fallback"]:
        lines.append(f"  - fell back: {_cell(ex['fallback'])}")
    if ex["evidence"]:
        lines.append("  - evidence: " + "; ".join(
            f"{_cell(e['text'])} ({e['score']:.3f}{'' if e['kept'] else ', dropped'})" for e in ex["evidence"][:top]))
    if ex["seeds"]:
        lines.append("  - seeds: " + ", ".join(f"{_cell(s['node'])} ({s['weight']:.3g})" for s in ex["seeds"][:top]))
    for pid, path in ex["paths"].items():
        lines.append(f"  - {_cell(pid)}: " + (path_text(path) if path else "reached by its own dense score"))
    lines += [f"  - round {r['number']}: {round_text(r)}" for r in ex.get("rounds", [])]
    return lines


def round_text(r: dict) -> str:
    """One round of a trail in a line: what it searched, what it added, what it chose next and why."""
    searched = f"searched {'; '.join(map(_cell, r['searched']))}; " if r["searched"] else ""   # a judge searches none
    text = f"{searched}added {', '.join(map(_cell, r['added'])) or 'nothing new'}"
    if r.get("set_aside"):
        text += f"; set aside (read, no help): {', '.join(map(_cell, r['set_aside']))}"
    if r["chosen"] or r["sub_questions"]:
        text += "; next: " + "; ".join(map(_cell, [*r["chosen"], *r["sub_questions"]]))
    if r["why"]:
        text += f" ({_cell(r['why'])})"
    return text + (f"; {r['llm_calls']} LLM call(s), {r['llm_ms'] / 1000:.1f} s" if r["llm_calls"] else "")


def _verdict_lines(report: dict) -> list[str]:
    verdict = case_verdict(report)
    k = report["settings"]["top_k"]
    return ["", "## Verdict", "", *(f"- {_cell(v.sentence(k))}" for v in verdict)] if verdict else []


def path_text(path: list[dict]) -> str:
    """``a -[relation]-> b -[relation]-> D4``: a path as plain text."""
    return " ".join(_cell(step["node"]) + (f" -[{_cell(step['relation'])}]->" if step["relation"] else "")
                    for step in path)


def key_fact_note(scores: dict | None) -> str:
    """' (facts found: a, b; missing: c)' for one answer, or '' when it was not scored."""
    if not scores:
        return ""
    kf = scores["key_facts"]
    if scores["no_answer"]:
        return " (no answer)"
    parts = [f"found: {', '.join(kf['found'])}" if kf["found"] else "",
             f"missing: {', '.join(kf['missing'])}" if kf["missing"] else ""]
    return f" (key facts {'; '.join(p for p in parts if p)})" if any(parts) else ""
