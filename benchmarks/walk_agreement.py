#!/usr/bin/env python3
"""Does a change to the walk's solver rank the same? The walk strategies' top 10 on every development set, this tree
against another revision's code, question by question, and each tree's walk time.

    python benchmarks/walk_agreement.py --against 1807598

runs each tree's code in its own process (the other from a temporary git worktree) over the suite's sets
(benchmarks/suite.py; the embeddings come from the response cache) and says, per set and strategy, how many
questions have the same top 10 in the same order, the median number of matrix products the walks of a question
took (a count: the solver's work) and the median milliseconds of the walk's stages (rough: this machine's speed moves
between the two processes). It judges an equivalence, not a default: nothing is chosen by it.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT, worktree, write_result

STRATEGIES = ("hipporag", "three-stage")   # the strategies whose ranking is a Personalized PageRank walk
TOP = 10
WALK_STAGES = ("ppr", "feedback", "graph expand")   # HippoRAG's two walks, three-stage's one


def dump(out: Path) -> None:
    """This process's code: every development set's questions, each strategy's top 10, its walks' matrix products
    and milliseconds."""
    import kg.graph
    from lab.registry import get
    from lab.runner import Lab, RunConfig
    from llm import Settings, embedder_only

    from suite import suite_sets

    products: list[int] = []   # matrix products of each walk of the question in hand: a count, unlike its ms
    walk = kg.graph.KnowledgeGraph.pagerank

    def counted(self, *args, **kwargs):
        result = walk(self, *args, **kwargs)
        products.append(result.iterations)
        return result

    kg.graph.KnowledgeGraph.pagerank = counted   # type: ignore[method-assign]
    settings = Settings.from_env()
    embedder = embedder_only(settings)
    rows: dict[str, dict[str, list[dict]]] = {}
    for s in suite_sets(settings):
        per = rows.setdefault(s.name, {n: [] for n in STRATEGIES})
        for case in s.cases():
            # As suite.run_set configures a set, written out: the other revision runs this dumper against its own
            # suite.py, so only what every revision's suite.py has (suite_sets) may be imported from it.
            config = RunConfig(strategies=STRATEGIES, retrieval_only=True, top_k=TOP,
                               triples="nlp" if s.triples == "nlp" else "precomputed",
                               params={n: get(n).llm_switches(False) for n in STRATEGIES})
            lab = Lab(case, settings, config, embedder=embedder)
            lab.build()
            for name in STRATEGIES:
                for q in case.questions:
                    products.clear()
                    r = lab.retrievers[name].retrieve(q.text, TOP, params=config.query_params(name))
                    walk_ms = sum(st.ms for st in r.explanation.stages if st.ran and st.name in WALK_STAGES)
                    per[name].append({"question": f"{case.name}/{q.id}", "top": r.ids, "walk_ms": walk_ms,
                                      "products": sum(products)})
        print(s.name, flush=True)
    out.write_text(json.dumps(rows), encoding="utf-8")


def compare(ours: dict, theirs: dict) -> list[dict]:
    rows = []
    for set_name, by_strategy in ours.items():
        for name, questions in by_strategy.items():
            other = {q["question"]: q for q in theirs[set_name][name]}
            same = sum(q["top"] == other[q["question"]]["top"] for q in questions)
            rows.append({"set": set_name, "strategy": name, "questions": len(questions), "same_top10": same,
                         "products_this": statistics.median(q["products"] for q in questions),
                         "products_against": statistics.median(other[q["question"]]["products"] for q in questions),
                         "walk_ms_this": round(statistics.median(q["walk_ms"] for q in questions), 2),
                         "walk_ms_against": round(statistics.median(other[q["question"]]["walk_ms"]
                                                                    for q in questions), 2)})
    return rows


def run_dump(tree: Path, out: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}   # that tree's packages, not the installed ones
    subprocess.run([sys.executable, str(tree / "benchmarks" / "walk_agreement.py"), "--dump", str(out)],
                   cwd=tree, env=env, check=True)
    return json.loads(out.read_text(encoding="utf-8"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--against", default="1807598", help="the revision to compare with (default: the last commit "
                                                        "with the power iteration)")
    p.add_argument("--dump", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--out", default="walk_agreement")
    args = p.parse_args(argv)
    if args.dump:
        dump(args.dump)
        return 0
    with tempfile.TemporaryDirectory() as tmp, worktree(args.against) as old:
        if not (old / "benchmarks" / "walk_agreement.py").exists():   # an older tree runs this tree's dumper
            (old / "benchmarks" / "walk_agreement.py").write_text((ROOT / "benchmarks" / "walk_agreement.py")
                                                                 .read_text(encoding="utf-8"), encoding="utf-8")
        theirs = run_dump(old, Path(tmp) / "against.json")
        ours = run_dump(ROOT, Path(tmp) / "this.json")
    rows = compare(ours, theirs)
    for r in rows:
        print(f"{r['set']:<22} {r['strategy']:<12} same top {TOP}: {r['same_top10']}/{r['questions']}   matrix "
              f"products {r['products_against']} -> {r['products_this']}   walk ms {r['walk_ms_against']} -> "
              f"{r['walk_ms_this']}")
    write_result(args.out, {"against": args.against, "top": TOP, "rows": rows,
                            "same": sum(r["same_top10"] for r in rows),
                            "questions": sum(r["questions"] for r in rows)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
