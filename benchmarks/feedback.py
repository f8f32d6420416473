#!/usr/bin/env python3
"""How HippoRAG's feedback walk was set: a second PageRank walk seeded also by the first walk's best passages.

For each (feedback_weight, feedback_passages): Recall@3 by question type of HippoRAG on generated seeds 100-115 (the
tuning set; the embedded model's cached OpenIE), and HippoRAG's Recall@5 on musique_train100 and 2wiki_first20,
which may not drop below their values with feedback off. The same rule as dense_power.py: among the settings that
keep both, the best mean HippoRAG Recall@3 over the three question types; ties go to off, then to the smaller
weight and fewer passages. As in tuning_grid.py, the best replaces the code's current default only if it beats the
default's mean by at least ``--min-gain`` (0.01: one question in a hundred). Seeds 1-10 are not used here:
generated.py reports on them.
"""
from __future__ import annotations

import argparse
import itertools

from dense_power import GUARD_CASES, measure, pick

from lab.registry import get
from llm import Settings, embedder_only

from common import write_result
from generated import TUNING_SEEDS, add_case_arguments

KEYS = ("feedback_weight", "feedback_passages")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--weights", default="1,2,3,5", help="feedback weights to try beside 0 (off)")
    p.add_argument("--passages", default="1,2,3", help="numbers of best passages to try")
    add_case_arguments(p, TUNING_SEEDS)
    p.add_argument("--min-gain", type=float, default=0.01,
                   help="how much the best must beat the current default's mean by to replace it")
    args = p.parse_args(argv)
    settings = Settings.from_env()
    grid = [{"feedback_weight": 0.0, "feedback_passages": 1}] + [
        {"feedback_weight": float(w), "feedback_passages": int(n)}
        for w, n in itertools.product(sorted(args.weights.split(","), key=float), args.passages.split(","))]
    rows = measure(grid, args.seeds, args.suspects, settings, embedder_only(settings))
    defaults = get("hipporag").values()
    picked = pick(rows, baseline=rows[0], min_gain=args.min_gain,   # rows[0]: feedback off
                  default=next((r for r in rows if all(r[k] == defaults[k] for k in KEYS)), None))
    print(f"picked: feedback_weight {picked['feedback_weight']}, feedback_passages {picked['feedback_passages']}")
    write_result("feedback", {"seeds": args.seeds, "suspects": args.suspects, "top_k": 3, "guard_k": 5,
                              "guard_cases": list(GUARD_CASES), "min_gain": args.min_gain, "rows": rows,
                              "picked": {k: picked[k] for k in KEYS}})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
