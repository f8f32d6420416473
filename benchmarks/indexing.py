#!/usr/bin/env python3
"""Indexing cost: LLM OpenIE with the embedded model on the Purloined Pearl and on MuSiQue passages.

Each configuration runs twice against a fresh response cache: the first run pays for every LLM call, the second
must make none. Reports passages per minute, LLM calls, tokens and failures, with 1 and 2 parallel requests.

``--baseline REV`` also times whole first builds as a newcomer runs them (the CLI, retrieval only, fresh data and
cache folders) with REV's code, from a temporary git worktree, and with this tree's, in the same run; then this
tree's second build, which must embed nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from casebook.catalog import resolve
from casebook.loader import load_case
from kg.openie import MODES, extract
from llm import Settings, connect

from common import ROOT, worktree, write_result


def measure(settings: Settings, case_name: str, n: int, workers: int, mode: str = "two-step") -> dict:
    case = load_case(resolve(case_name))
    passages = case.passages[:n]
    with tempfile.TemporaryDirectory() as cache:
        fresh = settings.replace(cache_dir=Path(cache), models_dir=settings.gguf_dir,
                                 embedded_parallel=max(workers, settings.embedded_parallel))
        backend = connect(fresh)
        runs = []
        for attempt in ("first", "second"):
            before = backend.client.usage.snapshot()
            t = time.perf_counter()
            result = extract(backend.client, backend.extraction_model, passages, workers=workers, mode=mode)
            elapsed = time.perf_counter() - t
            after = backend.client.usage.snapshot()
            runs.append({"run": attempt, "seconds": round(elapsed, 2),
                         "passages_per_min": round(len(passages) / elapsed * 60, 1),
                         "llm_calls": after["chat_calls"] - before["chat_calls"],
                         "cache_hits": after["cache_hits"] - before["cache_hits"],
                         "prompt_tokens": after["prompt_tokens"] - before["prompt_tokens"],
                         "cached_prompt_tokens": after["cached_prompt_tokens"] - before["cached_prompt_tokens"],
                         "completion_tokens": after["completion_tokens"] - before["completion_tokens"],
                         "triples": len(result.triples()), "failures": len(result.failures)})
            print(f"{case_name} x{len(passages)} workers={workers} {mode} {attempt}: {runs[-1]}", flush=True)
    return {"case": case_name, "passages": len(passages), "workers": workers, "mode": mode,
            "model": backend.extraction_model, "runs": runs}


# The builds --baseline compares: the case, and where its triples come from.
BUILDS = [("musique_train100", "precomputed"), ("purloined_pearl", "llm")]


def cli_build(tree: Path, case: Path, triples: str, folders: Path, settings: Settings) -> dict:
    """One `run_comparison.py --retrieval-only` with naive and HippoRAG from ``tree``: the whole run timed from
    outside, and the build steps as its report times them."""
    report = folders / "report.json"
    folders.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "DETECTIVE_DATA_DIR": str(folders / "data"), "DETECTIVE_CACHE_DIR": str(folders / "cache"),
           "LLM_BACKEND": "embedded", "LLM_MODELS_DIR": str(settings.gguf_dir)}
    cmd = [sys.executable, "run_comparison.py", "--case", str(case), "--triples", triples, "--retrieval-only",
           "--strategies", "naive,hipporag", "--quiet", "--json", str(report)]
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} in {tree} exited {done.returncode}:\n{done.stderr[-2000:]}")
    # The report lists build steps (a list now; a dict by step name in older code), each with its elapsed_ms.
    steps = json.loads(report.read_text()).get("build", [])
    steps = [b for b in (steps.values() if isinstance(steps, dict) else steps) if isinstance(b, dict)]
    return {"seconds": round(seconds, 1), "build_seconds": round(sum(b.get("elapsed_ms", 0) for b in steps) / 1000, 1),
            "vector_texts_embedded": sum(b.get("counts", b).get("embedded", 0) for b in steps),
            "reused": [b.get("name") for b in steps if b.get("reused")]}


def compare_builds(baseline: str, settings: Settings) -> list[dict]:
    """First builds by ``baseline``'s code and by this tree's, then this tree's second build, per case."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp, worktree(baseline) as old:
        for name, triples in BUILDS:
            case = resolve(name)
            runs = {}
            for label, tree, folders in (("baseline first", old, "b"), ("first", ROOT, "n"), ("second", ROOT, "n")):
                runs[label] = cli_build(tree, case, triples, Path(tmp) / folders / name, settings)
                print(f"{name} ({triples} triples) {label}: {runs[label]}", flush=True)
            rows.append({"case": name, "triples": triples, "baseline": baseline, **{
                label.replace(" ", "_"): run for label, run in runs.items()},
                "speedup": round(runs["baseline first"]["build_seconds"] / runs["first"]["build_seconds"], 2)})
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", help="the Pearl and 10 MuSiQue passages, 2 workers only")
    p.add_argument("--musique", type=int, default=20, help="how many MuSiQue passages")
    p.add_argument("--only", help="case:passages:workers[,...], e.g. purloined_pearl:10:2 (these configurations)")
    p.add_argument("--out", help="result file name (default indexing or indexing_quick)")
    p.add_argument("--modes", default="two-step", help=f"comma-separated OpenIE modes to compare ({', '.join(MODES)}): "
                   "two calls per passage, entities and triples in one, or triples alone in one")
    p.add_argument("--baseline", help="a git revision: time first builds with its code and this tree's in one run")
    p.add_argument("--builds-only", action="store_true", help="with --baseline: only the build comparison")
    args = p.parse_args(argv)
    settings = Settings.from_env().replace(backend="embedded")
    configs = [("purloined_pearl", 10, 2), ("musique_train100", 10, 2)] if args.quick else [
        ("purloined_pearl", 10, 1), ("purloined_pearl", 10, 2),
        ("musique_train100", args.musique, 1), ("musique_train100", args.musique, 2)]
    if args.only:
        configs = [(name, int(n), int(w)) for name, n, w in (c.split(":") for c in args.only.split(","))]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not set(modes) <= set(MODES):
        p.error(f"--modes: choose from {', '.join(MODES)}")
    if args.builds_only and not args.baseline:
        p.error("--builds-only compares builds: give --baseline REV")
    rows = [] if args.builds_only else [measure(settings, name, n, w, mode) for name, n, w in configs
                                        for mode in modes]
    builds = compare_builds(args.baseline, settings) if args.baseline else []
    write_result(args.out or ("indexing_quick" if args.quick else "indexing"), {"rows": rows, "builds": builds})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
