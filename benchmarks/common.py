"""Shared by the benchmark scripts: project imports, result files, environment facts."""
from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from core.files import write_text_whole

ROOT = Path(__file__).resolve().parents[1]
# run_all.py --quick points this at results/quick so a quick run never overwrites the committed full results.
RESULTS = Path(os.environ.get("BENCH_RESULTS_DIR") or ROOT / "benchmarks" / "results")


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


# The code a result was measured with is the code the script loaded: HEAD when it started, not when it writes (a long
# run outlives commits), and whether the code had changes not committed then (results/ aside: runs write there).
STARTED_AT = _git("rev-parse", "--short", "HEAD")
UNCOMMITTED = bool(_git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!benchmarks/results"))


def environment() -> dict:
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "commit": STARTED_AT,
            **({"uncommitted_changes": True} if UNCOMMITTED else {}), "python": platform.python_version(),
            "cpus": os.cpu_count(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "")}


def assignments_for(assignments: list[str], strategies) -> list[str]:
    """The ``--set STRATEGY.PARAM=VALUE`` texts that name one of ``strategies``: a run skips the others."""
    return [a for a in assignments if a.split(".")[0] in strategies]


def write_result(name: str, payload: dict, out_dir: Path | None = None) -> Path:
    """Write ``name``.json in ``out_dir`` (results/). A name is a plain name, or a path outside the project (a
    scratch run); one that lands elsewhere in the project (the OpenIE cache under results/openie/, a case folder)
    is refused: a result never overwrites an input."""
    out_dir = out_dir or RESULTS
    path = out_dir / f"{name}.json"
    where = path.resolve()
    if where.parent != out_dir.resolve() and where.is_relative_to(ROOT.resolve()):
        raise SystemExit(f"--out {name}: a result is a plain name in {out_dir} or a path outside the project; "
                         f"{where} would land among the project's inputs")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_whole(path, json.dumps({"environment": environment(), **payload}, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return path


@contextlib.contextmanager
def worktree(revision: str) -> Iterator[Path]:
    """``revision``'s code checked out in a temporary git worktree (removed afterwards), to run beside this tree's."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), revision], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            yield tree
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
