#!/usr/bin/env python3
"""Retrieval quality: every registered strategy, retrieval-only, on the benchmark cases.

Recall@2/5/10 overall and by question type, plus median query latency, with each row's exact settings.
Strategies that need triples use the case's precomputed triples; cases without triples run only the
strategies that need none. hipporag-v1 needs an LLM (question NER) and runs on the embedded model.
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

from common import recall_at, write_result

from casebook.catalog import resolve
from casebook.loader import load_case
from casebook.runner import Lab, RunConfig
from casebook.strategies import REGISTRY
from hipporag import HippoConfig
from llm import Settings, connect, embedder_only

CASES = ["musique_train100", "2wiki_first20", "musique_tiny20", "hotpotqa_train100"]
KS = (2, 5, 10)
NEEDS_TRIPLES = {"hipporag", "hipporag-v1"}


def evaluate(lab: Lab, name: str) -> dict:
    retriever = lab.retrievers[name]
    per_k, by_type, latencies = defaultdict(list), defaultdict(lambda: defaultdict(list)), []
    for q in lab.case.questions:
        t = time.perf_counter()
        r = retriever.retrieve(q.question, max(KS))
        latencies.append((time.perf_counter() - t) * 1000)
        docs = list(dict.fromkeys(lab.case.passage(pid).doc_id for pid in r.ids))
        for k in KS:
            value = recall_at(docs, list(q.supporting_docs), k)
            per_k[k].append(value)
            by_type[q.type][k].append(value)
    mean = lambda v: round(statistics.fmean(v), 4)
    return {"recall": {f"@{k}": mean(per_k[k]) for k in KS},
            "recall_by_type": {t: {f"@{k}": mean(v[k]) for k in KS} for t, v in sorted(by_type.items())},
            "median_query_ms": round(statistics.median(latencies), 2), "questions": len(lab.case.questions)}


def row_settings(name: str, lab: Lab) -> dict:
    s = {"embed_model": lab.embedder.name}
    if name in NEEDS_TRIPLES:
        h = lab.config.hippo
        s.update(triples="precomputed", damping=h.damping, passage_weight=h.passage_weight if name == "hipporag" else 0,
                 top_facts=h.top_facts, linking="v2 (fact embedding, no LLM filter)" if name == "hipporag"
                 else "v1 (LLM question NER -> nearest entity)")
    return s


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--strategies", default=",".join(REGISTRY))
    p.add_argument("--quick", action="store_true", help="skip hipporag-v1 (it needs ~1 LLM call per question)")
    p.add_argument("--out", default="retrieval")
    args = p.parse_args(argv)
    settings = Settings.from_env()
    strategies = [s for s in args.strategies.split(",") if s and not (args.quick and s == "hipporag-v1")]
    backend = connect(settings) if "hipporag-v1" in strategies else None
    embedder = backend.embedder if backend else embedder_only(settings)
    rows = []
    for case_name in args.cases.split(","):
        case = load_case(resolve(case_name))
        usable = [s for s in strategies if s not in NEEDS_TRIPLES or case.triples]
        lab = Lab(case, settings, RunConfig(strategies=tuple(usable), retrieval_only=True, triples="precomputed",
                                            hippo=HippoConfig(llm_filter=False)),
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
