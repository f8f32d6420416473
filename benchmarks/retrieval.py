#!/usr/bin/env python3
"""Retrieval quality: every registered strategy, retrieval-only, on the benchmark cases.

Recall@2/5/10 overall and by question type, plus median query latency, with each row's exact settings.
Strategies that use the knowledge graph use the case's precomputed triples; cases without triples run only the
strategies that need none. Strategies that need an LLM (hipporag-v1's question NER) run on the embedded model;
optional LLM steps are off unless --set turns them on, and each row records the stages that actually ran.
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

from common import write_result

from casebook.catalog import resolve
from casebook.loader import load_case
from lab.metrics import recall_at_k
from lab.registry import REGISTRY, get
from lab.runner import Lab, RunConfig
from llm import Settings, connect, embedder_only

CASES = ["musique_train100", "2wiki_first20", "musique_tiny20", "hotpotqa_train100"]
KS = (2, 5, 10)
# Retrieval quality without an LLM in the loop, unless a strategy cannot work without one.
DEFAULT_SETTINGS = ["hipporag.llm_filter=false"]


def evaluate(lab: Lab, name: str) -> dict:
    retriever = lab.retrievers[name]
    params = get(name).split(lab.config.values(name))[1]
    per_k, by_type, latencies = defaultdict(list), defaultdict(lambda: defaultdict(list)), []
    stages: dict[str, str] = {}
    for q in lab.case.questions:
        t = time.perf_counter()
        r = retriever.retrieve(q.text, max(KS), params=params)
        latencies.append((time.perf_counter() - t) * 1000)
        for st in r.explanation.stages:
            stages.setdefault(st.name, "ran" if st.ran else f"skipped: {st.why}")
        docs = lab.case.documents_of(r.ids)
        for k in KS:
            value = recall_at_k(docs, q.supporting_docs, k)
            per_k[k].append(value)
            by_type[q.type][k].append(value)
    mean = lambda v: round(statistics.fmean(v), 4)
    return {"recall": {f"@{k}": mean(per_k[k]) for k in KS},
            "recall_by_type": {t: {f"@{k}": mean(v[k]) for k in KS} for t, v in sorted(by_type.items())},
            "median_query_ms": round(statistics.median(latencies), 2), "questions": len(lab.case.questions),
            "stages": stages}


def row_settings(name: str, lab: Lab) -> dict:
    s = {"embed_model": lab.embedder.name, **lab.config.values(name)}
    if get(name).uses_triples:
        s["triples"] = "precomputed"
    return s


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--strategies", default=",".join(REGISTRY))
    p.add_argument("--quick", action="store_true", help="skip strategies that need an LLM (~1 call per question)")
    p.add_argument("--set", action="append", default=None, metavar="STRATEGY.PARAM=VALUE",
                   help=f"strategy parameters (default: {' '.join(DEFAULT_SETTINGS)})")
    p.add_argument("--out", default="retrieval")
    args = p.parse_args(argv)
    settings = Settings.from_env()
    strategies = [s for s in args.strategies.split(",") if s and not (args.quick and get(s).needs_llm)]
    backend = connect(settings) if any(get(s).needs_llm for s in strategies) else None
    embedder = backend.embedder if backend else embedder_only(settings)
    assignments = DEFAULT_SETTINGS if args.set is None else args.set
    rows = []
    for case_name in args.cases.split(","):
        case = load_case(resolve(case_name))
        usable = [s for s in strategies if not get(s).uses_triples or case.triples]
        config = RunConfig(strategies=tuple(usable), retrieval_only=True, triples="precomputed")
        lab = Lab(case, settings, config.with_assignments(a for a in assignments if a.split(".")[0] in usable),
                  embedder=embedder, backend=backend)
        lab.build()
        for name in usable:
            result = evaluate(lab, name)
            rows.append({"case": case_name, "strategy": name, "settings": row_settings(name, lab), **result})
            print(f"{case_name:<18} {name:<12} " + "  ".join(f"R{k} {v:.3f}" for k, v in result["recall"].items())
                  + f"  median {result['median_query_ms']:.1f} ms", flush=True)
    write_result(args.out, {"rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
