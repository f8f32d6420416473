#!/usr/bin/env python3
"""How a strategy's query-time defaults were picked: Recall@5 over a grid of its parameters.

Picked on the first half of a case's questions (1-50 of musique_train100); the second half is the held-out check,
and other sets (2wiki_first20) are not used by the rule. Ties go to the grid's later values.

    python benchmarks/tuning_grid.py --strategy three-stage --grid boost=1.0,1.2 --grid expand_weight=0,0.1,0.25,0.5,1
"""
from __future__ import annotations

import argparse
import itertools
import statistics

from common import write_result

from casebook.catalog import resolve
from casebook.loader import load_case
from lab.metrics import recall_at_k
from lab.registry import get
from lab.runner import Lab, RunConfig
from llm import Settings, embedder_only


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--strategy", required=True)
    p.add_argument("--grid", action="append", required=True, metavar="PARAM=V1,V2,...")
    p.add_argument("--case", default="musique_train100")
    p.add_argument("--k", type=int, default=5)
    args = p.parse_args(argv)
    strategy = get(args.strategy)
    axes = {}
    for text in args.grid:
        name, _, values = text.partition("=")
        axes[name] = [strategy.param(name).parse(v, strategy.name) for v in values.split(",")]
    settings = Settings.from_env()
    case = load_case(resolve(args.case))
    lab = Lab(case, settings, RunConfig(strategies=(strategy.name,), retrieval_only=True, triples="precomputed"),
              embedder=embedder_only(settings))
    lab.build()
    retriever, half = lab.retrievers[strategy.name], len(case.questions) // 2
    rows = []
    for values in itertools.product(*axes.values()):
        params = dict(zip(axes, values, strict=True))
        recalls = [recall_at_k(case.documents_of(retriever.retrieve(q.text, args.k, params=params).ids),
                               q.supporting_docs, args.k) for q in case.questions]
        rows.append({**params, "tuning_half": round(statistics.fmean(recalls[:half]), 4),
                     "held_out_half": round(statistics.fmean(recalls[half:]), 4),
                     "all": round(statistics.fmean(recalls), 4)})
        print(rows[-1], flush=True)
    picked = max(reversed(rows), key=lambda r: r["tuning_half"])   # ties: the later grid values
    print(f"picked on questions 1-{half}: {picked}")
    write_result(f"tuning_{strategy.name}", {"case": args.case, "k": args.k, "tuning": f"questions 1-{half}",
                                             "held_out": f"questions {half + 1}-{len(case.questions)}",
                                             "grid": {k: list(v) for k, v in axes.items()}, "rows": rows,
                                             "picked": picked})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
