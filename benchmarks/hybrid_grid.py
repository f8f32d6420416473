#!/usr/bin/env python3
"""How the hybrid strategy's defaults were picked: Recall@5 of weighted RRF over list depth x BM25 weight.

The choice is made on the tuning sets only (hotpotqa_train100, 2wiki_first20: best mean Recall@5); the report set
(musique_train100) is measured with the same grid so its numbers can be read, never to choose.
"""
from __future__ import annotations

import argparse
import itertools
import statistics

from casebook.catalog import resolve
from casebook.loader import load_case
from indexes import BM25_INDEX, VECTOR_INDEX, rrf
from lab.metrics import recall_at_k
from lab.runner import Lab, RunConfig
from llm import Settings, embedder_only

from common import write_result

TUNING = ["hotpotqa_train100", "2wiki_first20"]
REPORT = ["musique_train100"]
DEPTHS = [20, 50, 100]
WEIGHTS = [1.0, 0.75, 0.5, 0.33]


def grid(case_name: str, embedder, settings) -> dict[tuple[int, float], float]:
    case = load_case(resolve(case_name))
    lab = Lab(case, settings, RunConfig(strategies=("naive", "bm25"), retrieval_only=True), embedder=embedder)
    lab.build()
    assert lab.context is not None
    dense, lexical = lab.context.shared(VECTOR_INDEX), lab.context.shared(BM25_INDEX)
    vectors = embedder.embed([q.text for q in case.questions])
    out = {}
    lists = [([p for p, _ in dense.search(vectors[i:i + 1], max(DEPTHS))[0]],
              [p for p, _ in lexical.search(q.text, max(DEPTHS))]) for i, q in enumerate(case.questions)]
    for depth, weight in itertools.product(DEPTHS, WEIGHTS):
        recalls = [recall_at_k(case.documents_of([p for p, _ in rrf([d[:depth], b[:depth]], 60, [1.0, weight])]),
                               q.supporting_docs, 5) for q, (d, b) in zip(case.questions, lists, strict=True)]
        out[(depth, weight)] = round(statistics.fmean(r for r in recalls if r is not None), 4)
    return out


def main(argv=None) -> int:
    argparse.ArgumentParser(description=__doc__).parse_args(argv)
    settings = Settings.from_env()
    embedder = embedder_only(settings)
    cells = {name: grid(name, embedder, settings) for name in TUNING + REPORT}
    tuning_mean = {key: round(statistics.fmean(cells[n][key] for n in TUNING), 4) for key in cells[TUNING[0]]}
    depth, weight = max(tuning_mean, key=lambda key: (tuning_mean[key], key[0]))
    rows = [{"depth": d, "bm25_weight": w, "tuning_mean": tuning_mean[(d, w)],
             **{n: cells[n][(d, w)] for n in TUNING + REPORT}} for d, w in cells[TUNING[0]]]
    for r in rows:
        print(r)
    print(f"picked on {', '.join(TUNING)}: depth {depth}, BM25 weight {weight}")
    write_result("hybrid_grid", {"tuning_sets": TUNING, "report_sets": REPORT, "rrf_k": 60, "rows": rows,
                                 "picked": {"depth": depth, "bm25_weight": weight}})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
