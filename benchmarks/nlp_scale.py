#!/usr/bin/env python3
"""The graph without an LLM at scale: 2wiki_corpus6119 built end to end on --triples nlp, then a synthetic curve.

Part 1 (one process, fresh data and cache folders, so nothing is reused; run after part 2): naive, hipporag, hubmesh and hybrid on
the 6,269 passages of HippoRAG's whole 2Wiki corpus: each build stage's seconds, extraction passages/s, peak RSS,
graph size, Recall@2/5/10 and query p50/p95 per strategy, then a second build of the same case (nothing may be
recomputed). Part 2 (--curve): synthetic corpora of growing size made by a generator (names, places, codes and
times in short records), each extracted, embedded and built as a graph: seconds and peak RSS per stage.
"""
from __future__ import annotations

import argparse
import random
import resource
import statistics
import tempfile
import time
from pathlib import Path

from casebook.catalog import resolve
from casebook.loader import load_case
from core.storage import Storage
from core.types import Passage
from kg import build_graph, nlp
from lab.metrics import recall_at_k
from lab.runner import Lab, RunConfig
from llm import Settings, embedder_only

from common import write_result

CASE = "2wiki_corpus6119"
STRATEGIES = ("naive", "hipporag", "hubmesh", "hybrid")
KS = (2, 5, 10)
CURVE = (1000, 3000, 10000)
TIMED_PASSES = 3   # latency over every question this many times, after a first pass that also sets things up


def peak_rss_mb() -> int:
    """Peak resident memory of this process and of its finished children (spaCy's worker processes), in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, children) / 1024)


def corpus_run(settings: Settings) -> dict:
    case = load_case(resolve(CASE))
    config = RunConfig(strategies=STRATEGIES, retrieval_only=True, triples="nlp", top_k=max(KS))
    stages = []
    started = time.perf_counter()
    lab = Lab(case, settings, config, embedder=embedder_only(settings), storage=Storage(data_dir=settings.cache_dir
                                                                                                / "index"))
    for report in lab.build():
        stages.append({"build": "first", "stage": report.name, "seconds": round(report.elapsed_ms / 1000, 1),
                       "count": next(iter(report.counts.values()), "")})
    graph = lab.knowledge_graph
    assert graph is not None and graph.extraction is not None
    extraction_s = graph.extraction.elapsed_ms / 1000
    at = next(i for i, x in enumerate(stages) if x["stage"] == "knowledge graph") + 1
    stages.insert(at, {"build": "first", "stage": "of which spaCy extraction", "seconds": round(extraction_s, 1),
                      "count": len(case.passages)})
    rows: list[dict] = []
    for name in STRATEGIES:   # the first pass, as a user's run asks each question once: the recalls
        retriever, params = lab.retrievers[name], config.query_params(name)
        recalls: dict[int, list[float]] = {k: [] for k in KS}
        t = time.perf_counter()
        for q in case.questions:
            docs = case.documents_of(retriever.retrieve(q.text, max(KS), params=params).ids)
            for k in KS:
                recalls[k].append(recall_at_k(docs, q.supporting_docs, k) or 0.0)
        rows.append({"strategy": name, "recall": {f"@{k}": round(statistics.fmean(v), 4) for k, v in recalls.items()},
                     "first_pass_s": round(time.perf_counter() - t, 2)})
    # The run a user makes ends here: built, and every question asked of every strategy once. The passes below only
    # measure latency, so they are not part of it.
    first_s = round(time.perf_counter() - started, 1)
    for row in rows:   # then the latency a user meets question after question
        retriever, params = lab.retrievers[row["strategy"]], config.query_params(row["strategy"])
        times: list[float] = []
        stage_ms: dict[str, list[float]] = {}
        for _ in range(TIMED_PASSES):
            for q in case.questions:
                t = time.perf_counter()
                r = retriever.retrieve(q.text, max(KS), params=params)
                times.append((time.perf_counter() - t) * 1000)
                for stage in r.explanation.stages:
                    if stage.ran:
                        stage_ms.setdefault(stage.name, []).append(stage.ms)
        times.sort()
        row.update({"stage_p50_ms": {name: round(statistics.median(v), 1) for name, v in stage_ms.items()},
                    "p50_ms": round(statistics.median(times), 1),
                    "p95_ms": round(times[min(len(times) - 1, round(0.95 * (len(times) - 1)))], 1)})
        print(f"{row['strategy']:<10} R@5 {row['recall']['@5']:.3f}  p50 {row['p50_ms']} ms  p95 {row['p95_ms']} ms",
              flush=True)
    t = time.perf_counter()
    again = Lab(case, settings, config, embedder=embedder_only(settings), storage=Storage(data_dir=settings.cache_dir
                                                                                                 / "index"))
    second = again.build()
    second_s = round(time.perf_counter() - t, 1)
    for report in second:
        stages.append({"build": "second", "stage": report.name + (" (reused)" if report.reused else ""),
                       "seconds": round(report.elapsed_ms / 1000, 1), "count": next(iter(report.counts.values()), "")})
    counts = graph.graph.stats()
    return {"case": CASE, "passages": len(case.passages), "embed_model": lab.embedder.name, "stages": stages,
            "strategies": rows,
            "first_run_s": first_s, "second_build_s": second_s, "peak_rss_mb": peak_rss_mb(),
            "extraction_passages_per_s": round(len(case.passages) / extraction_s, 1),
            "graph": {"entities": counts["entities"], "facts": counts["facts"],
                      "embedded_facts": counts["embedded_facts"], "edges": counts["edges"]},
            "command_note": f"`python benchmarks/nlp_scale.py` (one process, fresh data and cache folders): "
                            f"{', '.join(STRATEGIES)} on --triples nlp, retrieval only, {len(case.questions)} questions, "
                            "top-10 retrieved for the recalls (the first pass over the questions); the first run is "
                            "the build and that pass, as `run_comparison.py --retrieval-only` makes it; query latency "
                            f"over {TIMED_PASSES} more passes (question embeddings from the response cache by then); "
                            "a first build, then a second of the same case."}


NAMES = ["Ada Moss", "Bram Hale", "Cora Fenn", "Dev Rao", "Edda Lund", "Finn Shaw", "Gita Nair", "Hugo Kline",
         "Ines Roth", "Jon Pike", "Kira Vale", "Liam Ord"]
PLACES = ["Harbour Street", "the mill", "Kestrel Foundry", "the station", "Elm Court", "the archive", "Dunmore"]
VERBS = ["met", "paid", "called", "followed", "visited", "wrote to", "saw"]


def synthetic(n: int, seed: int = 0) -> list[Passage]:
    """Short records with names, places, plates, codes and clock times, as case files have them."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b = rng.sample(NAMES, 2)
        place = rng.choice(PLACES)
        text = (f"{a} {rng.choice(VERBS)} {b} at {place} at {rng.randint(1, 12)}:{rng.randint(0, 59):02d} pm. "
                f"A car with the plate {rng.choice('ABCDEFGH')}{rng.choice('KLMNPRST')}{rng.randint(10, 99)} "
                f"{''.join(rng.choice('WXYZ') for _ in range(3))} was parked nearby. "
                f"Ledger entry C-{rng.randint(100, 999)} records a payment of £{rng.randint(10, 5000):,} by {b}.")
        out.append(Passage(f"S{i}", f"S{i}", f"Record {i}", text))
    return out


def curve(settings: Settings, sizes: tuple[int, ...]) -> list[dict]:
    embedder = embedder_only(settings)
    rows = []
    for n in sizes:
        passages = synthetic(n)
        t = time.perf_counter()
        extraction = nlp.extract(passages)
        extract_s = time.perf_counter() - t
        t = time.perf_counter()
        embedder.embed([p.embedding_text for p in passages])
        embed_s = time.perf_counter() - t
        t = time.perf_counter()
        graph = build_graph(extraction.triples, passages, embedder)   # its passage vectors come from the cache
        graph_s = time.perf_counter() - t
        rows.append({"passages": n, "words": sum(len(p.text.split()) for p in passages),
                     "extract_s": round(extract_s, 1), "embed_passages_s": round(embed_s, 1),
                     "graph_s": round(graph_s, 1), "entities": len(graph.phrases), "facts": len(graph.facts),
                     "embedded_facts": graph.matched_facts, "peak_rss_mb": peak_rss_mb()})
        print(rows[-1], flush=True)
    return rows


RATE_CASES = ("musique_train100", "hotpotqa_train100", "2wiki_first20")


def rates() -> list[dict]:
    """spaCy extraction alone on the benchmark sets: passages, words, seconds (--rates)."""
    nlp_model = nlp.load_spacy()
    rows = []
    for name in RATE_CASES:
        passages = load_case(resolve(name)).passages
        out = nlp.extract(passages, nlp=nlp_model)
        words = sum(len(p.text.split()) for p in passages)
        rows.append({"case": name, "passages": len(passages), "words": words,
                     "seconds": round(out.elapsed_ms / 1000, 1), "triples": len(out.triples),
                     "by_rule": dict(out.by_rule), "passages_without_fact": out.empty_passages})
        print(rows[-1], flush=True)
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--curve", default=",".join(map(str, CURVE)), help="synthetic corpus sizes ('' to skip)")
    p.add_argument("--skip-corpus", action="store_true")
    p.add_argument("--folder", help="an empty folder to build in and keep (default: a temporary one), so the "
                                    "built corpus can be queried again afterwards")
    p.add_argument("--out", default="nlp_scale", help="the result's name (nlp_scale_int8 for a run with "
                                                     "EMBED_MODEL=all-MiniLM-L6-v2-int8, which BENCHMARKS.md sets beside "
                                                     "the default's)")
    p.add_argument("--rates", action="store_true", help="only spaCy's extraction rate on the benchmark sets "
                                                        "(written to nlp_rates.json)")
    args = p.parse_args(argv)
    if args.rates:
        write_result("nlp_rates", {"rows": rates()})
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.folder or tmp)
        if any(folder.glob("*")):
            p.error(f"--folder {folder} is not empty: the first build must start from nothing")
        settings = Settings.from_env().replace(cache_dir=folder)
        # The curve first, smallest first: peak RSS only grows in a process, so each row's is its own size's.
        sizes = tuple(sorted(int(s) for s in args.curve.split(",") if s.strip()))
        rows = curve(settings, sizes) if sizes else []
        out = {} if args.skip_corpus else corpus_run(settings)
        if rows:
            out["curve"] = rows
    write_result(args.out, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
