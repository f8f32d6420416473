#!/usr/bin/env python3
"""Retrieval quality: every registered strategy, retrieval-only, on the benchmark cases.

Recall@2/5/10 overall and by question type, plus median query latency, with each row's exact settings.
Strategies that use the knowledge graph use the case's precomputed triples (for the bundled case: the embedded
model's OpenIE, cached in benchmarks/results/openie/); cases without triples run only the strategies that need
none. Strategies that need an LLM (hipporag-v1's question NER) run on the embedded model; optional LLM steps
(filters, reranks) are off unless --llm-steps turns them all on, and each row records the stages that ran.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from dataclasses import replace

from casebook.catalog import resolve
from casebook.loader import load_case
from core.types import Triple
from lab.metrics import recall_at_k
from lab.registry import REGISTRY, get
from lab.runner import Lab, RunConfig
from llm import Settings, connect, embedder_only

from common import ROOT, assignments_for, write_result

KS = (2, 5, 10)
CASES = ["musique_train100", "2wiki_first20", "musique_tiny20", "hotpotqa_train100", "purloined_pearl"]
CACHED_OPENIE = ROOT / "benchmarks" / "results" / "openie"   # <case>.json: triples for cases that ship none


def evaluate(lab: Lab, name: str) -> dict:
    retriever = lab.retrievers[name]
    params = lab.config.query_params(name)
    per_k: dict = defaultdict(list)
    by_type: dict = defaultdict(lambda: defaultdict(list))
    latencies: list[float] = []
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


def with_cached_triples(case):
    """The case with the embedded model's cached OpenIE triples when it ships none of its own."""
    cached = CACHED_OPENIE / f"{case.name}.json"
    if case.triples or not cached.exists():
        return case
    return with_triples_file(case, cached)


def with_triples_file(case, path):
    """The case with the triples of a JSON file ([{doc_id, subject, relation, object}, ...]) as its own."""
    return replace(case, triples=[Triple(**t) for t in json.loads(path.read_text(encoding="utf-8"))])


def row_settings(name: str, lab: Lab) -> dict:
    s = {"embed_model": lab.embedder.name, **lab.config.values(name)}
    if get(name).uses_triples:
        s["triples"] = lab.config.triples
    return s


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--strategies", default=",".join(REGISTRY))
    p.add_argument("--skip", default="investigate",
                   help="strategies to leave out of the default list (investigate, whose model reads 1-2 times per "
                        "question, has its own benchmark: investigation.py)")
    p.add_argument("--quick", action="store_true", help="skip strategies that need an LLM (~1 call per question)")
    p.add_argument("--llm-steps", action="store_true",
                   help="turn on every optional LLM step (HippoRAG's fact filter, vector-graph's rerank) on the "
                        "embedded model")
    p.add_argument("--set", action="append", default=[], metavar="STRATEGY.PARAM=VALUE",
                   help="strategy parameters, applied after --llm-steps")
    p.add_argument("--triples", default="precomputed", choices=["precomputed", "nlp", "precomputed+nlp"],
                   help="where the graph strategies' triples come from: the case's file (or the cached OpenIE of "
                        "the embedded model), spaCy's parse (every case), or the file with spaCy's layer under it")
    p.add_argument("--out", default="retrieval")
    p.add_argument("--no-cache", action="store_true",
                   help="no response cache: every question is embedded (and every LLM step run) while timing")
    args = p.parse_args(argv)
    settings = Settings.from_env()
    if args.no_cache:
        settings = settings.replace(cache_enabled=False)
    skipped = set(args.skip.split(",")) if args.strategies == ",".join(REGISTRY) else set()
    strategies = [s for s in args.strategies.split(",") if s and s not in skipped
                  and not (args.quick and get(s).needs_llm)]
    backend = connect(settings) if args.llm_steps or any(get(s).needs_llm for s in strategies) else None
    embedder = backend.embedder if backend else embedder_only(settings)
    rows = []
    for case_name in args.cases.split(","):
        case = load_case(resolve(case_name))
        if args.triples.startswith("precomputed"):
            case = with_cached_triples(case)
        usable = [s for s in strategies if not get(s).uses_triples or case.triples or args.triples == "nlp"]
        params = {s: get(s).llm_switches(args.llm_steps) for s in usable}
        config = RunConfig(strategies=tuple(usable), retrieval_only=True, triples=args.triples, params=params)
        lab = Lab(case, settings, config.with_assignments(assignments_for(args.set, usable)),
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
