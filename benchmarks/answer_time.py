#!/usr/bin/env python3
"""What "Run every question" costs with the embedded model: whole-case answering, before and after, in one run.

Each run is what the app's "Run every question" and the CLI do: `run_comparison.py --case <folder> --strategies
naive,hipporag,vector-graph --json ...` on fresh data and cache folders (every answer and LLM step computed, the
model's start included), timed from outside. Three configurations, one after the other, nothing else running:
- ``baseline``: REV's code (default: the commit before the short answer prompt), from a temporary git worktree;
- ``llm steps on``: this tree with every optional LLM step on (HippoRAG's fact filter, vector-graph's entity naming
  and rerank), the steps the baseline ran: the short prompt's own effect;
- ``defaults``: this tree as a user gets it.
Every answer is scored again by this tree's key-fact scorer, so the accuracies compare answers, not scorers. Cases:
the bundled case and generated mysteries (``--seeds``, report seeds: nothing here chooses a default), each with the
embedded model's cached OpenIE as its triples.json, so no configuration runs OpenIE.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from casebook.catalog import resolve
from casebook.loader import load_case
from lab.metrics import answer_scores
from llm import Settings

from common import ROOT, worktree, write_result
from generated import parse_seeds

STRATEGIES = ("naive", "hipporag", "vector-graph")
BASELINE = "8a18da3^"       # the answer prompt before the short one (fd37823 measured the short one)
LLM_STEPS_ON = ("hipporag.llm_filter=true", "vector-graph.rerank=true", "vector-graph.name_entities=true")
CACHED_OPENIE = ROOT / "benchmarks" / "results" / "openie"
TOP_K = 3


def case_folders(seeds: list[int], into: Path) -> list[Path]:
    """The bundled case and each seed's mystery, written as case folders with the cached OpenIE as triples.json."""
    folders = []
    pearl = into / "purloined_pearl"
    shutil.copytree(resolve("purloined_pearl"), pearl)
    shutil.copy(CACHED_OPENIE / "purloined_pearl.json", pearl / "triples.json")
    folders.append(pearl)
    for seed in seeds:
        folder = into / f"mystery-{seed}-4"
        subprocess.run([sys.executable, "-m", "casebook", "generate", "--seed", str(seed), "--out", str(folder)],
                       cwd=ROOT, check=True, capture_output=True)
        shutil.copy(CACHED_OPENIE / f"mystery-{seed}-4.json", folder / "triples.json")
        folders.append(folder)
    return folders


def run_case(tree: Path, case: Path, sets: tuple[str, ...], scratch: Path, settings: Settings) -> dict:
    """One whole-case run from ``tree``'s code: wall seconds, and per strategy the median answer seconds, median LLM
    seconds per question and key-fact accuracy (scored here)."""
    scratch.mkdir(parents=True)
    report = scratch / "report.json"
    env = {**os.environ, "DETECTIVE_DATA_DIR": str(scratch / "data"), "DETECTIVE_CACHE_DIR": str(scratch / "cache"),
           "LLM_BACKEND": "embedded", "LLM_MODELS_DIR": str(settings.gguf_dir)}
    cmd = [sys.executable, "run_comparison.py", "--case", str(case), "--triples", "precomputed", "--top-k",
           str(TOP_K), "--strategies", ",".join(STRATEGIES), "--quiet", "--json", str(report)]
    for assignment in sets:
        cmd += ["--set", assignment]
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} in {tree} exited {done.returncode}:\n{done.stderr[-2000:]}")
    questions = {q.id: q for q in load_case(case).questions}
    per: dict[str, dict[str, list]] = {s: {"answer_ms": [], "llm_ms": [], "correct": []} for s in STRATEGIES}
    for row in json.loads(report.read_text())["questions"]:
        q = questions[row["id"]]
        for name in STRATEGIES:
            r = row["results"][name]
            per[name]["answer_ms"].append(r["timings_ms"]["answer"])
            per[name]["llm_ms"].append(r["llm_ms"])
            scores = answer_scores(r["answer"], q.expected_answer, q.answers, q.text, q.key_facts)
            per[name]["correct"].append(bool(scores and scores.correct))
    return {"seconds": round(seconds, 1), "questions": len(questions), "strategies": {
        name: {"median_answer_s": round(statistics.median(v["answer_ms"]) / 1000, 2),
               "median_llm_s": round(statistics.median(v["llm_ms"]) / 1000, 2),
               "key_fact_accuracy": round(statistics.fmean(v["correct"]), 4)} for name, v in per.items()}}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--baseline", default=BASELINE, help=f"the git revision to compare with (default {BASELINE})")
    p.add_argument("--seeds", type=parse_seeds, default=parse_seeds("1"),
                   help="generated mysteries beside the bundled case (report seeds; default 1)")
    p.add_argument("--out", default="answer_time")
    args = p.parse_args(argv)
    settings = Settings.from_env()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, worktree(args.baseline) as old:
        for case in case_folders(args.seeds, Path(tmp) / "cases"):
            for label, tree, sets in (("baseline", old, ()), ("llm steps on", ROOT, LLM_STEPS_ON),
                                      ("defaults", ROOT, ())):
                run = run_case(tree, case, sets, Path(tmp) / "runs" / case.name / label.replace(" ", "_"), settings)
                rows.append({"case": case.name, "config": label, **run})
                print(f"{case.name} {label}: {run}", flush=True)
    write_result(args.out, {"baseline": args.baseline, "strategies": list(STRATEGIES), "top_k": TOP_K,
                            "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
