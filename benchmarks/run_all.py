#!/usr/bin/env python3
"""Run every benchmark and regenerate BENCHMARKS.md's tables from the result files.

--quick (a few minutes on 2 cores): smaller grids and samples, results in benchmarks/results/quick/.
Full: everything, results in benchmarks/results/ (the committed ones).
--report-only: just rebuild BENCHMARKS.md from existing results.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from common import ROOT

# (name, script, its arguments in a full run, its arguments with --quick or None to skip it there)
RUNS = [
    ("llm_speed", "llm_speed.py", [], ["--runs", "2"]),
    ("ppr_scale", "ppr_scale.py", [], ["--quick"]),
    ("walk_agreement", "walk_agreement.py", [], None),   # the walk's solver against the power iteration's rankings
    ("retrieval", "retrieval.py", [], ["--quick"]),
    ("retrieval_uncached", "retrieval.py", ["--no-cache", "--cases", "musique_train100,2wiki_first20", "--strategies",
                                            "naive,hipporag", "--out", "retrieval_uncached"], None),
    ("retrieval_llm", "retrieval.py", ["--llm-steps", "--no-cache", "--strategies", "naive,hipporag,vector-graph", "--cases",
                                       "2wiki_first20,purloined_pearl", "--out", "retrieval_llm"], None),
    ("hybrid_grid", "hybrid_grid.py", [], None),
    ("tuning_three_stage", "tuning_grid.py", ["--strategy", "three-stage", "--grid", "boost=1.0,1.2", "--grid",
                                              "expand_weight=0,0.1,0.25,0.5,1"], None),
    ("tuning_hipporag", "tuning_grid.py", ["--strategy", "hipporag", "--grid",
                                           "hub_penalty=0,0.1,0.2,0.3,0.5,0.75,1", "--guard", "2wiki_first20",
                                           "--min-gain", "0.01"],
                            None),
    ("tuning_vector_graph", "tuning_grid.py", ["--strategy", "vector-graph", "--grid", "chain_weight=0,0.5,1",
                                               "--grid", "passage_weight=0,1,2,3"], None),
    ("sensitivity", "sensitivity.py", [], ["--quick"]),
    ("dense_power", "dense_power.py", [], None),   # after sensitivity: it measures that grid's pick too
    ("feedback", "feedback.py", [], None),
    ("flagship", "flagship.py", [], []),
    ("app_idle", "app_idle.py", [], ["--seconds", "20"]),
    ("answer_time", "answer_time.py", ["--seeds", "1"], None),
    ("bundled_ceiling", "bundled_ceiling.py", [], []),
    ("suite", "suite.py", [], None),   # the development suite; its first run extracts nothing: the OpenIE is cached
    ("embed_speed", "embed_speed.py", [], None),
    ("embedder_choice", "choose.py", ["--embed-model", "all-MiniLM-L6-v2-int8"], None),   # the int8 embedder
    ("nlp_scale", "nlp_scale.py", [], None),   # the 6,269-passage corpus and the synthetic curve (~15 minutes)
    ("generated", "generated.py", ["--seeds", "1-10"], None),
    # The loop's merge was chosen on seeds 100-101 (docs/investigate-choices.md); 1-10 and the rest report.
    ("investigation", "investigation.py", ["--seeds", "1-10", "--limit", "20"], None),
    ("generated_tuning", "generated.py", ["--seeds", "100-115", "--out", "generated_tuning"], None),
    ("openie_quality", "openie_quality.py", [], None),   # the embedded model; other models: run it by hand
    ("indexing", "indexing.py", ["--only", "purloined_pearl:10:1,musique_train100:10:1", "--modes",
                                 "two-step,joint,triples"], ["--quick"]),
    # 65372ca: main when the speed issue was filed, the baseline of the same-run build comparison.
    ("indexing_builds", "indexing.py", ["--baseline", "65372ca", "--builds-only", "--out", "indexing_builds"], None),
]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--only", help="comma-separated script names to run")
    args = p.parse_args(argv)
    results = ROOT / "benchmarks" / "results" / ("quick" if args.quick else "")
    env = {**os.environ, "BENCH_RESULTS_DIR": str(results), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")}
    if not args.report_only:
        for name, script, full, quick in RUNS:
            extra = quick if args.quick else full
            if extra is None or (args.only and name not in args.only.split(",")):
                continue
            print(f"== {script} {' '.join(extra)}", flush=True)
            t = time.perf_counter()
            code = subprocess.call([sys.executable, str(ROOT / "benchmarks" / script), *extra], env=env)
            print(f"   ({time.perf_counter() - t:.0f} s, exit {code})", flush=True)
            if code:
                return code
    from report_md import render_tuning
    (ROOT / "BENCHMARKS.md").write_text(render(results, quick=args.quick))
    (ROOT / "docs" / "tuning.md").write_text(render_tuning(results, args.quick, load))
    print(f"wrote {ROOT / 'BENCHMARKS.md'} and {ROOT / 'docs' / 'tuning.md'}")
    return 0


def load(results, name):
    path = results / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def render(results, quick: bool) -> str:
    from report_md import render_markdown
    return render_markdown(results, quick, load)


if __name__ == "__main__":
    raise SystemExit(main())
