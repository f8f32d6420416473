#!/usr/bin/env python3
"""The local embedders' speed and agreement, one process, one after the other, on real text.

Passages: the first 600 of the 6,269-passage 2Wiki corpus; short texts: 6,000 facts of musique_train100's published
triples ("subject relation object", what a graph embeds). Each embedder runs each set REPEATS times, not cached;
the median is kept. ``as exported`` is the pinned ONNX graph unedited (the embedder before llm/onnx_graph.py);
cosine is each embedder's vectors against the float32 ones, text by text.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from casebook.catalog import resolve
from casebook.loader import load_case
from llm.embedders import LocalMiniLM

from common import write_result

PASSAGES, FACTS, REPEATS = 600, 6000, 3


def texts() -> dict[str, list[str]]:
    corpus = load_case(resolve("2wiki_corpus6119"))
    musique = load_case(resolve("musique_train100"))
    return {"passages": [p.embedding_text for p in corpus.passages[:PASSAGES]],
            "facts": [f"{t.subject} {t.relation} {t.object}" for t in musique.triples[:FACTS]]}


def timed(embedder: LocalMiniLM, batch: list[str], repeats: int) -> tuple[float, np.ndarray]:
    seconds, vectors = [], np.zeros(0)
    for _ in range(repeats):
        t = time.perf_counter()
        vectors = embedder.embed(batch)
        seconds.append(time.perf_counter() - t)
    return statistics.median(seconds), vectors


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=REPEATS, help="runs of each set per embedder (the median is kept)")
    args = p.parse_args(argv)
    sets = texts()
    embedders = {"float32 (as exported)": LocalMiniLM(as_exported=True), "float32": LocalMiniLM(),
                 "int8": LocalMiniLM(int8_matmuls=True)}
    rows: list[dict] = []
    reference: dict[str, np.ndarray] = {}
    for label, embedder in embedders.items():
        for kind, batch in sets.items():
            seconds, vectors = timed(embedder, batch, args.repeats)
            if label == "float32":
                reference[kind] = vectors
            words = sum(len(t.split()) for t in batch)
            rows.append({"embedder": label, "name": embedder.name, "texts": kind, "count": len(batch),
                         "words": words, "seconds": round(seconds, 2), "texts_per_s": round(len(batch) / seconds),
                         "words_per_s": round(words / seconds), "vectors": vectors})
            print(f"{label:<22} {kind:<9} {seconds:6.2f} s  {len(batch) / seconds:7.0f} texts/s", flush=True)
    for row in rows:
        cos = (row.pop("vectors") * reference[row["texts"]]).sum(axis=1)
        row.update({"cosine_mean": round(float(cos.mean()), 5), "cosine_min": round(float(cos.min()), 5)})
    write_result("embed_speed", {"rows": rows, "repeats": args.repeats,
                                 "command_note": "`python benchmarks/embed_speed.py` (one process; median of "
                                                 f"{args.repeats} runs of each set, nothing cached)"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
