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

SCRIPTS = ["llm_speed.py", "ppr_scale.py", "retrieval.py", "sensitivity.py", "flagship.py", "indexing.py"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--only", help="comma-separated script names to run")
    args = p.parse_args(argv)
    results = ROOT / "benchmarks" / "results" / ("quick" if args.quick else "")
    env = {**os.environ, "BENCH_RESULTS_DIR": str(results), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")}
    if not args.report_only:
        for script in SCRIPTS:
            if args.only and script.removesuffix(".py") not in args.only.split(","):
                continue
            extra = ["--quick"] if args.quick and script not in ("llm_speed.py", "flagship.py") else []
            if args.quick and script == "llm_speed.py":
                extra = ["--runs", "2"]
            print(f"== {script} {' '.join(extra)}", flush=True)
            t = time.perf_counter()
            code = subprocess.call([sys.executable, str(ROOT / "benchmarks" / script), *extra], env=env)
            print(f"   ({time.perf_counter() - t:.0f} s, exit {code})", flush=True)
            if code:
                return code
    (ROOT / "BENCHMARKS.md").write_text(render(results, quick=args.quick))
    print(f"wrote {ROOT / 'BENCHMARKS.md'}")
    return 0


def load(results, name):
    path = results / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def render(results, quick: bool) -> str:
    from report_md import render_markdown
    return render_markdown(results, quick, load)


if __name__ == "__main__":
    raise SystemExit(main())
