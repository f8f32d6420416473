#!/usr/bin/env python3
"""The development suite: every retrieval strategy on every development set, Recall@5, one table per set.

The sets are of several kinds on purpose, so that no default fits one genre: three hand-written cases
(benchmarks/cases/: two mysteries in police case-file style and a company's incident investigation), the bundled
case, the generated mysteries of seeds 100-115, and real multi-hop benchmarks (MuSiQue, 2Wiki, HotpotQA), on the
triples each has: the embedded model's OpenIE cached in benchmarks/results/openie/ (run once, then read), the
triples a benchmark publishes, or spaCy's (`nlp`, no LLM). Report sets (generated seeds 1-10) are never here.

`--set STRATEGY.PARAM=VALUE` runs the suite with a changed default; `choose.py` compares two runs by the rule
that keeps a change. Retrieval only, optional LLM steps off; the embeddings come from the response cache after
the first run.
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from casebook.catalog import resolve
from casebook.generate import load_mystery
from casebook.loader import load_case
from core.types import Case
from lab.metrics import recall_at_k
from lab.registry import get
from lab.runner import Lab, RunConfig
from llm import Settings, connect, embedder_only

from common import ROOT, assignments_for, write_result
from generated import cache_openie, model_triples
from retrieval import CACHED_OPENIE, with_cached_triples

K = 5
STRATEGIES = ("naive", "bm25", "hybrid", "hubmesh", "hipporag", "three-stage", "vector-graph")
CASES = ROOT / "benchmarks" / "cases"
HAND_WRITTEN = ("ashcombe_hoard", "ledgerline_outage", "marlow_road")
GENERATED_SEEDS = tuple(range(100, 116))
SUSPECTS = 4


@dataclass(frozen=True)
class SuiteSet:
    name: str
    kind: str            # hand-written | bundled | generated | benchmark
    triples: str         # what the graph strategies read: openie (embedded model, cached) | published | nlp
    cases: Callable[[], Iterator[Case]]


def hand_written(name: str) -> Callable[[], Iterator[Case]]:
    def cases() -> Iterator[Case]:
        yield with_cached_triples(load_case(CASES / name))
    return cases


def bundled(name: str, cached: bool = False) -> Callable[[], Iterator[Case]]:
    def cases() -> Iterator[Case]:
        case = load_case(resolve(name))
        yield with_cached_triples(case) if cached else case
    return cases


def generated(settings: Settings) -> Iterator[Case]:
    for seed in GENERATED_SEEDS:
        yield load_mystery(seed, SUSPECTS, model_triples(seed, SUSPECTS, settings))[0]


def suite_sets(settings: Settings) -> list[SuiteSet]:
    return [*(SuiteSet(n, "hand-written", "openie", hand_written(n)) for n in HAND_WRITTEN),
            SuiteSet("purloined_pearl", "bundled", "openie", bundled("purloined_pearl", cached=True)),
            SuiteSet("generated_100_115", "generated", "openie", lambda: generated(settings)),
            SuiteSet("musique_train100", "benchmark", "published", bundled("musique_train100")),
            SuiteSet("musique_train100/nlp", "benchmark", "nlp", bundled("musique_train100")),
            SuiteSet("2wiki_first20", "benchmark", "published", bundled("2wiki_first20")),
            SuiteSet("2wiki_q121_220", "benchmark", "nlp", bundled("2wiki_q121_220")),
            SuiteSet("hotpotqa_train100", "benchmark", "nlp", bundled("hotpotqa_train100"))]


def missing_openie(suite: list[SuiteSet]) -> list[str]:
    """Hand-written cases whose embedded-model OpenIE is not cached yet (the first run extracts it: minutes)."""
    return [s.name for s in suite if s.kind == "hand-written" and not (CACHED_OPENIE / f"{s.name}.json").exists()]


def run_set(s: SuiteSet, strategies: tuple[str, ...], assignments: list[str], settings: Settings,
            embedder, layer: bool = False) -> dict:
    """Recall@K per strategy over every question of the set, overall and by question type; and its hub share: the
    largest share of one case's questions whose top K holds the same document that is not theirs (a document
    that mentions everything and wins every question). ``layer``: the deterministic layer (kg/nlp.py) under the
    set's OpenIE or published triples (``--triples precomputed+nlp``); a set on nlp triples has it already."""
    per: dict[str, list[tuple[str, float]]] = {name: [] for name in strategies}
    hub: dict[str, float] = dict.fromkeys(strategies, 0.0)
    for case in s.cases():
        if s.triples == "openie" and not case.triples:
            raise SystemExit(f"{s.name}: no cached OpenIE in {CACHED_OPENIE}; run "
                             f"`python benchmarks/suite.py --extract` once")
        triples = "nlp" if s.triples == "nlp" else "precomputed+nlp" if layer else "precomputed"
        config = RunConfig(strategies=strategies, retrieval_only=True, triples=triples, top_k=K,
                           params={n: get(n).llm_switches(False) for n in strategies})
        lab = Lab(case, settings, config.with_assignments(assignments_for(assignments, strategies)),
                  embedder=embedder)
        lab.build()
        asked = [q for q in case.questions if q.supporting_docs]
        for name in strategies:
            params = lab.config.query_params(name)
            strangers: Counter[str] = Counter()
            for q in asked:
                docs = case.documents_of(lab.retrievers[name].retrieve(q.text, K, params=params).ids)
                strangers.update(d for d in dict.fromkeys(docs[:K]) if d not in q.supporting_docs)
                recall = recall_at_k(docs, q.supporting_docs, K)
                if recall is not None:
                    per[name].append((q.type, recall))
            if strangers and asked:
                hub[name] = max(hub[name], strangers.most_common(1)[0][1] / len(asked))
    out = {}
    for name, values in per.items():
        types = sorted({t for t, _ in values})
        out[name] = {"recall": round(statistics.fmean(v for _, v in values), 4),
                     "by_type": {t: round(statistics.fmean(v for u, v in values if u == t), 4) for t in types},
                     "questions": len(values), "hub_share": round(hub[name], 3)}
    return {"set": s.name, "kind": s.kind, "triples": s.triples, "strategies": out}


def suite_mean(rows: list[dict], strategy: str) -> float:
    """The suite's score of a strategy: the mean over sets of its Recall@K (each set weighs the same)."""
    return round(statistics.fmean(r["strategies"][strategy]["recall"] for r in rows), 4)


def print_tables(rows: list[dict], strategies: tuple[str, ...]) -> None:
    for r in rows:
        types = sorted({t for s in r["strategies"].values() for t in s["by_type"]})
        print(f"\n{r['set']} ({r['kind']}, triples {r['triples']}), Recall@{K}")
        print(f"  {'strategy':<13} {'all':>6} " + " ".join(f"{t[:12]:>12}" for t in types) + "   hub share")
        for name in strategies:
            s = r["strategies"][name]
            print(f"  {name:<13} {s['recall']:6.3f} " + " ".join(f"{s['by_type'].get(t, 0):12.3f}" for t in types)
                  + f"   {s['hub_share']:9.2f}")
    print(f"\nsuite mean over {len(rows)} sets, Recall@{K}: "
          + "  ".join(f"{n} {suite_mean(rows, n):.3f}" for n in strategies))


def extract_openie(suite: list[SuiteSet], settings: Settings) -> None:
    """The embedded model's OpenIE of each hand-written case, cached in benchmarks/results/openie/<case>.json."""
    names = missing_openie(suite)
    if not names:
        return
    backend = connect(settings.replace(backend="embedded", model_path=""))
    for name in names:
        case = load_case(CASES / name)
        print(f"OpenIE of {name} ({len(case.passages)} passages) by {backend.extraction_model}: about "
              f"{len(case.passages) * 45 // 60} minutes on the embedded model", flush=True)
        cache_openie(backend, case.passages, CACHED_OPENIE / f"{name}.json")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sets", default="", help="comma-separated set names (default: every set)")
    p.add_argument("--strategies", default=",".join(STRATEGIES))
    p.add_argument("--set", action="append", default=[], metavar="STRATEGY.PARAM=VALUE",
                   help="a changed default to measure (repeatable)")
    p.add_argument("--extract", action="store_true",
                   help="first run the embedded model's OpenIE of hand-written cases that have none cached")
    p.add_argument("--layer", action="store_true",
                   help="the deterministic layer under the OpenIE and published triples (--triples precomputed+nlp)")
    p.add_argument("--out", default="suite")
    args = p.parse_args(argv)
    settings = Settings.from_env()
    suite = suite_sets(settings)
    if args.sets:
        wanted = args.sets.split(",")
        unknown = sorted(set(wanted) - {s.name for s in suite})
        if unknown:
            p.error(f"unknown set(s) {', '.join(unknown)}; the suite has {', '.join(s.name for s in suite)}")
        suite = [s for s in suite if s.name in wanted]
    if args.extract:
        extract_openie(suite, settings)
    strategies = tuple(s for s in args.strategies.split(",") if s)
    embedder = embedder_only(settings)
    started = time.perf_counter()
    rows = []
    for s in suite:
        rows.append(run_set(s, strategies, args.set, settings, embedder, layer=args.layer))
        best = max(strategies, key=lambda n: rows[-1]["strategies"][n]["recall"])
        print(f"{s.name:<22} " + "  ".join(f"{n} {rows[-1]['strategies'][n]['recall']:.3f}" for n in strategies)
              + f"   best {best}", flush=True)
    print_tables(rows, strategies)
    write_result(args.out, {"k": K, "assignments": args.set, "layer": args.layer,
                            "seconds": round(time.perf_counter() - started, 1), "rows": rows,
                            "mean": {n: suite_mean(rows, n) for n in strategies}})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
