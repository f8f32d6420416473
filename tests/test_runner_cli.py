"""The runner end to end on a generated case with the embedded backend, metrics, report schema, CLI exit codes."""
import json
import subprocess
import sys

import pytest

from core.storage import Storage
from lab import metrics
from lab.report import build_report, to_markdown, validate_report
from lab.runner import Lab, RunConfig
from llm import embedder_only

from conftest import ROOT
from helpers import BRIDGE_DOCS, BRIDGE_QUESTION, BRIDGE_TRIPLES, make_case

SMALL_QUESTIONS = [BRIDGE_QUESTION,
                   {"id": "S1", "question": "When does the harbour of Dunmore freeze?", "type": "simple",
                    "supporting_docs": ["X5"], "expected_answer": "January"}]


def test_recall_and_answer_metrics_on_hand_made_examples():
    assert metrics.recall_at_k(["D1", "D4"], ["D4", "D7", "D8"]) == pytest.approx(1 / 3)
    assert metrics.recall_at_k([], ["D1"]) == 0.0 and metrics.recall_at_k(["D1"], []) is None
    assert metrics.exact_match("The Blackwood Mansion.", ["blackwood mansion"])
    assert metrics.token_f1("Victoria Crane took it", ["Victoria Crane"]) == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert metrics.contains("It was Victoria Crane [D4].", ["Victoria Crane"])
    assert not metrics.contains("Victorian era", ["Victoria"])
    assert metrics.answer_scores("No, he was at the gala.", "No", ["no"]).correct
    assert not metrics.answer_scores("I cannot tell from these passages.", "No", []).correct
    assert metrics.answer_scores(None, "x", []) is None


def test_runner_end_to_end_with_the_embedded_backend(backend, base_settings, tmp_path):
    case = make_case(BRIDGE_DOCS, SMALL_QUESTIONS, BRIDGE_TRIPLES, name="bridge")
    # The LLM filter is off by default (the rule, kg/walk.py); turned on, the explanation must say it ran.
    config = RunConfig(top_k=3, triples="precomputed", params={"hipporag": {"llm_filter": True}})
    lab = Lab(case, base_settings, config, embedder=backend.embedder, backend=backend, storage=Storage(data_dir=tmp_path))
    reports = {r.name: r for r in lab.build()}
    assert reports["knowledge graph"].details["triples"] == "precomputed"
    assert reports["vector index"].counts["embedded"] == len(case.passages)
    results = lab.evaluate()
    report = build_report(lab, results)
    validate_report(report)
    by_id = {q["id"]: q for q in report["questions"]}
    hippo, naive = by_id["B1"]["results"]["hipporag"], by_id["B1"]["results"]["naive"]
    assert hippo["recall"] == 1.0 and naive["recall"] < 1.0
    for r in (hippo, naive):
        assert isinstance(r["answer"], str) and r["answer"]
        assert {"embed", "answer"} <= set(r["timings_ms"])
    assert "ppr" in hippo["timings_ms"] and "search" in naive["timings_ms"]
    # The filter is on and this run has a chat model: the explanation says it ran.
    filter_stage = next(st for st in hippo["explanation"]["stages"] if st["name"] == "llm filter")
    assert filter_stage["ran"] and filter_stage["llm"] and report["params"]["hipporag"]["llm_filter"] is True
    # LLM time is reported apart from retrieval's own work: the filter and the answer count as LLM time.
    assert hippo["llm_ms"] >= hippo["timings_ms"]["answer"] + hippo["timings_ms"]["llm filter"] - 0.01
    assert hippo["retrieval_ms"] + hippo["llm_ms"] == pytest.approx(sum(hippo["timings_ms"].values()), abs=0.01)
    assert "bell" in hippo["answer"].lower()   # it had the answer passage; the same model answered both
    assert report["summary"]["hipporag"]["recall"] >= report["summary"]["naive"]["recall"]
    md = to_markdown(report)
    assert "| hipporag |" in md and "**G2**" in md


def test_retrieval_only_run_needs_no_chat_model(base_settings, tmp_path):
    case = make_case(BRIDGE_DOCS, SMALL_QUESTIONS, BRIDGE_TRIPLES)
    lab = Lab(case, base_settings,
              RunConfig(strategies=("naive", "hipporag", "bm25"), retrieval_only=True, triples="precomputed"),
              embedder=embedder_only(base_settings), storage=Storage(data_dir=tmp_path))
    lab.build()
    report = build_report(lab, lab.evaluate())
    validate_report(report)
    assert report["settings"]["backend"] == "none"
    assert all(r["answer"] is None for q in report["questions"] for r in q["results"].values())
    # The Markdown report opens with the case's verdict: a line per question type, naming who leads.
    verdict = to_markdown(report).split("## Verdict", 1)[1].split("##", 1)[0]
    assert {line.split(":")[0] for line in verdict.strip().splitlines()} == \
        {f"- {t}" for t in {q["type"] for q in report["questions"]}}
    # Retrieval only: the optional LLM steps are off unless asked for, and the explanation says so.
    result = report["questions"][0]["results"]["hipporag"]
    assert result["params"]["llm_filter"] is False
    assert {"name": "llm filter", "ran": False, "why": "turned off", "ms": 0.0, "llm": False} in \
        result["explanation"]["stages"]
    # Asked for, it still cannot run without a chat model: the explanation says why instead of pretending.
    asked = lab.ask(case.questions[0], lab.config.with_assignments(["hipporag.llm_filter=true"]))
    assert [(s.name, s.ran, s.why) for s in asked.results["hipporag"].explanation.stages if s.name == "llm filter"] \
        == [("llm filter", False, "no chat model in this run (retrieval only)")]


def test_config_rejects_unknown_strategy_and_bad_k():
    with pytest.raises(KeyError, match="unknown strategy 'magic'"):
        RunConfig(strategies=("naive", "magic"))
    with pytest.raises(ValueError, match="top-k"):
        RunConfig(top_k=0)


def run_cli(*args, env=None, timeout=300):
    return subprocess.run([sys.executable, str(ROOT / "run_comparison.py"), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)


@pytest.fixture
def cli_env(base_settings, tmp_path):
    import os
    env = dict(os.environ)
    env.update({"DETECTIVE_CACHE_DIR": str(base_settings.cache_dir), "DETECTIVE_DATA_DIR": str(tmp_path / "index"),
                "LLM_MODELS_DIR": str(base_settings.gguf_dir)})
    return env


def test_cli_exit_codes(tmp_path, cli_env):
    assert run_cli("--strategies", "naive,magic", env=cli_env).returncode == 2
    bad = run_cli("--case", str(tmp_path / "missing"), env=cli_env)
    assert bad.returncode == 2 and "no such file" in bad.stderr
    (tmp_path / "dup").mkdir()
    (tmp_path / "dup" / "documents.json").write_text(json.dumps([{"id": "A", "text": "x"}, {"id": "A", "text": "y"}]))
    dup = run_cli("--case", str(tmp_path / "dup"), env=cli_env)
    assert dup.returncode == 2 and "duplicate document id" in dup.stderr
    down = run_cli("--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", env=cli_env)
    assert down.returncode == 3 and "127.0.0.1:9" in down.stderr
    assert run_cli("--questions", "Q99", env=cli_env).returncode == 2


def test_cli_retrieval_only_writes_a_valid_report(tmp_path, cli_env):
    """On a small case of its own (a benchmark set's first build would embed thousands of texts: the benchmark
    scripts' test runs 2wiki_first20)."""
    case = tmp_path / "case"
    case.mkdir()
    second = {"id": "B2", "question": "Where is the harbour that freezes in January?", "type": "simple",
              "supporting_docs": ["X5"], "expected_answer": "Dunmore"}
    for name, value in (("documents", BRIDGE_DOCS), ("questions", [BRIDGE_QUESTION, second]),
                        ("triples", BRIDGE_TRIPLES)):
        (case / f"{name}.json").write_text(json.dumps(value))
    out = tmp_path / "out.json"
    res = run_cli("--case", str(case), "--retrieval-only", "--triples", "precomputed", "--top-k", "5",
                  "--json", str(out), "--markdown", str(tmp_path / "out.md"), "--quiet", env=cli_env)
    assert res.returncode == 0, res.stderr
    report = json.loads(out.read_text())
    validate_report(report)
    assert report["case"]["questions"] == 2 and set(report["summary"]) == {"naive", "hipporag"}
    assert all(len(q["results"]["hipporag"]["passages"]) == 5 for q in report["questions"])
    assert "backend: none needed" in res.stdout and (tmp_path / "out.md").read_text().startswith("# ")


def test_cli_case_without_questions_reports_nothing_to_score(tmp_path, cli_env):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Alibi\nThe butler was in the garden at 9 PM.")
    (folder / "b.txt").write_text("The garden gate was found open.")
    triples = [{"doc_id": "a", "subject": "butler", "relation": "was in", "object": "garden"}]
    (folder / "triples.json").write_text(json.dumps(triples))
    res = run_cli("--case", str(folder), "--retrieval-only", "--quiet", env=cli_env)
    assert res.returncode == 0 and "nothing can be scored" in res.stdout
    asked = run_cli("--case", str(folder), "--retrieval-only", "--ask", "Where was the butler?", env=cli_env)
    assert asked.returncode == 0 and "ask1" in asked.stdout and " a " in asked.stdout


def test_the_committed_report_of_the_bundled_case_follows_the_contract_and_renders_as_committed():
    """The committed JSON follows the schema, and this code renders it to exactly the committed Markdown (so the
    Markdown in docs/ is what to_markdown writes today, not what an older version wrote)."""
    report = json.loads((ROOT / "docs" / "purloined_pearl_report.json").read_text())
    validate_report(report)
    assert len(report["strategies"]) == 8 and all(q["differences"] for q in report["questions"])
    assert to_markdown(report) == (ROOT / "docs" / "purloined_pearl_report.md").read_text(encoding="utf-8")
