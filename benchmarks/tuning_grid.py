#!/usr/bin/env python3
"""How a strategy's query-time defaults were picked: Recall@5 over a grid of its parameters.

Picked on the first half of a case's questions (1-50 of musique_train100); the second half is the held-out check.
Ties go to the grid's later values. With ``--guard CASE`` a value may not lower that case's Recall@k below the
strategy's current default (when the grid holds it): a change must not hurt another set. With ``--min-gain G`` a
value replaces the default only if it beats the default's tuning-half recall by at least G (0.01: one question in
a hundred, the noise of this set).

    python benchmarks/tuning_grid.py --strategy three-stage --grid boost=1.0,1.2 --grid expand_weight=0,0.1,0.25,0.5,1
"""
from __future__ import annotations

import argparse
import itertools
import statistics

from casebook.catalog import resolve
from casebook.loader import load_case
from core.types import Case
from lab.metrics import recall_at_k
from lab.registry import get
from lab.runner import Lab, RunConfig
from llm import Settings, embedder_only

from common import write_result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--strategy", required=True)
    p.add_argument("--grid", action="append", required=True, metavar="PARAM=V1,V2,...")
    p.add_argument("--case", default="musique_train100")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--guard", action="append", default=[], metavar="CASE",
                   help="a case whose Recall@k no pick may lower below the default's (repeatable)")
    p.add_argument("--min-gain", type=float, default=0.0,
                   help="how much a value must beat the default's tuning-half recall by to replace it")
    args = p.parse_args(argv)
    strategy = get(args.strategy)
    axes = {}
    for text in args.grid:
        name, _, values = text.partition("=")
        axes[name] = [strategy.param(name).parse(v, strategy.name) for v in values.split(",")]
    settings = Settings.from_env()
    embedder = embedder_only(settings)
    grid = [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]
    case, recalls = per_question_recalls(args.case, strategy.name, grid, args.k, settings, embedder)
    guards = {name: per_question_recalls(name, strategy.name, grid, args.k, settings, embedder)[1]
              for name in args.guard}
    half = len(case.questions) // 2
    rows = []
    for n, params in enumerate(grid):
        rows.append({**params, "tuning_half": round(statistics.fmean(recalls[n][:half]), 4),
                     "held_out_half": round(statistics.fmean(recalls[n][half:]), 4),
                     "all": round(statistics.fmean(recalls[n]), 4),
                     **{name: round(statistics.fmean(g[n]), 4) for name, g in guards.items()}})
        print(rows[-1], flush=True)
    defaults = strategy.values()
    default_row = next((r for r in rows if all(r[a] == defaults[a] for a in axes)), None)
    allowed = [r for r in rows if default_row is None or all(r[g] >= default_row[g] for g in guards)]
    picked = max(reversed(allowed), key=lambda r: r["tuning_half"])   # ties: the later grid values
    if default_row is not None and picked["tuning_half"] < default_row["tuning_half"] + args.min_gain:
        picked = default_row
    print(f"picked on questions 1-{half}: {picked}")
    write_result(f"tuning_{strategy.name}", {"case": args.case, "k": args.k, "tuning": f"questions 1-{half}",
                                             "held_out": f"questions {half + 1}-{len(case.questions)}",
                                             "guards": list(guards), "min_gain": args.min_gain,
                                             "grid": {k: list(v) for k, v in axes.items()},
                                             "rows": rows, "picked": picked})
    return 0


def per_question_recalls(case: Case | str, strategy: str, grid: list[dict], k: int, settings: Settings,
                         embedder) -> tuple[Case, list[list[float]]]:
    """The case (or the catalogue case of that name), built once for ``strategy`` (retrieval only, its precomputed
    triples), and for each parameter setting of the grid the Recall@k of each of its questions."""
    case = load_case(resolve(case)) if isinstance(case, str) else case
    unscored = [q.id for q in case.questions if not q.supporting_docs]
    if unscored:   # a grid's means need a recall for every question
        raise ValueError(f"{case.name}: questions without supporting_docs cannot be tuned on: {', '.join(unscored)}")
    lab = Lab(case, settings, RunConfig(strategies=(strategy,), retrieval_only=True, triples="precomputed"),
              embedder=embedder)
    lab.build()
    retriever = lab.retrievers[strategy]
    return case, [[recall_at_k(case.documents_of(retriever.retrieve(q.text, k, params=params).ids),
                               q.supporting_docs, k) or 0.0 for q in case.questions] for params in grid]


if __name__ == "__main__":
    raise SystemExit(main())
