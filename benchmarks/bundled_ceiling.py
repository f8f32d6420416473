#!/usr/bin/env python3
"""How far HippoRAG can go on the bundled case: with perfect triples, and with parameters fitted to the case itself.

Recall@3 by question type on the Purloined Pearl for naive RAG and BM25, and for HippoRAG on two sets of triples:
the embedded model's own OpenIE (cached in benchmarks/results/openie/) and complete ones written by hand
(benchmarks/gold/purloined_pearl.json: every fact each document states, subject and object in the document's own
words, no inference; a test keeps them verbatim). For each, HippoRAG at its defaults and over a grid of its
query-time parameters. The best grid points are picked on the case they are measured on, so they are an
optimistic ceiling, never a default. Retrieval only: HippoRAG's LLM fact filter is off.

The question it answers: can HippoRAG beat naive RAG by 0.10 on this case's multi-hop and sense-making questions
if its extraction were perfect, or if its parameters were tuned to this very case?

    python benchmarks/bundled_ceiling.py
"""
from __future__ import annotations

import argparse
import itertools

from tuning_grid import per_question_recalls

from casebook.catalog import resolve
from casebook.loader import load_case
from core.types import Case
from lab.registry import get
from llm import Settings, embedder_only

from common import ROOT, write_result
from generated import mean_by_type
from retrieval import with_cached_triples, with_triples_file

CASE = "purloined_pearl"
HAND_WRITTEN = ROOT / "benchmarks" / "gold" / f"{CASE}.json"
FLAGSHIP = "Q4"
MARGIN = 0.10   # the floor: HippoRAG >= naive + 0.10 on multi-hop and on sense-making
GRID: dict[str, list] = {"damping": [0.3, 0.5, 0.7, 0.85], "passage_weight": [0.0, 0.05, 0.1, 0.3, 1.0], "top_facts": [3, 5, 10],
        "dense_power": [1.0, 3.0], "feedback_weight": [0.0, 2.0], "hub_penalty": [0.0, 0.5, 1.0]}


def hand_written(case: Case) -> Case:
    return with_triples_file(case, HAND_WRITTEN)


def by_type(case: Case, recalls: list[float]) -> dict:
    """Mean recall per question type, and how many of the flagship's documents were retrieved."""
    out: dict = mean_by_type(case.questions, recalls)
    flagship, recall = next((q, r) for q, r in zip(case.questions, recalls, strict=True) if q.id == FLAGSHIP)
    out["flagship"] = round(recall * len(flagship.supporting_docs))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--k", type=int, default=3)
    args = p.parse_args(argv)
    settings = Settings.from_env()
    embedder = embedder_only(settings)
    case = load_case(resolve(CASE))
    baselines = {name: by_type(case, per_question_recalls(case, name, [{}], args.k, settings, embedder)[1][0])
                 for name in ("naive", "bm25")}
    floors = {t: round(baselines["naive"][t] + MARGIN, 3) for t in ("multi-hop", "sense-making")}
    grid = [dict(zip(GRID, values, strict=True)) for values in itertools.product(*GRID.values())]
    defaults = {name: get("hipporag").values()[name] for name in GRID}
    sources = {"the embedded model's OpenIE (cached)": with_cached_triples(case),
               "complete triples written by hand": hand_written(case)}
    rows = []
    for source, triples_case in sources.items():
        _, recalls = per_question_recalls(triples_case, "hipporag", [defaults] + grid, args.k, settings, embedder)
        points = [{"params": params, **by_type(case, r)} for params, r in zip(grid, recalls[1:], strict=True)]
        meets = [x for x in points if all(x[t] >= floors[t] for t in floors)]
        row = {"triples": source, "facts": len(triples_case.triples), "defaults": by_type(case, recalls[0]),
               "best_multi_hop": max(points, key=lambda x: (x["multi-hop"], x["sense-making"])),
               "best_sense_making": max(points, key=lambda x: (x["sense-making"], x["multi-hop"])),
               "best_flagship": max(points, key=lambda x: x["flagship"]),
               "settings_tried": len(points), "settings_meeting_both_floors": len(meets)}
        rows.append(row)
        print(f"{source}: defaults {row['defaults']}; best multi-hop {row['best_multi_hop']}; best sense-making "
              f"{row['best_sense_making']}; {len(meets)} of {len(points)} settings meet both floors {floors}",
              flush=True)
    flagship = next(q for q in case.questions if q.id == FLAGSHIP)
    write_result("bundled_ceiling", {"case": CASE, "top_k": args.k, "flagship": {"id": FLAGSHIP, "documents": len(
        flagship.supporting_docs)}, "baselines": baselines, "floors": floors, "grid": GRID, "defaults": defaults,
        "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
