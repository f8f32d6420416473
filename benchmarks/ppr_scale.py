#!/usr/bin/env python3
"""PPR at scale: our sparse Chebyshev iteration (float64, float32, float32 batched) vs nx.pagerank on the same
synthetic entity-passage graphs.

Seeded generator: passages mention entities (Zipf-like popularity, so some entities are hubs), and entities are
linked by relation edges. Both run on the same graph and personalization in the same process; we report
build time, milliseconds per query, memory, the speed-up ratio and the max absolute score difference.
"""
from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc
from typing import Any

import networkx as nx
import numpy as np

from kg.ppr import PPRMatrix

from common import write_result

SIZES = [(300, 1_000), (3_000, 10_000), (30_000, 100_000), (100_000, 500_000), (200_000, 1_000_000)]


def synthetic_graph(n_nodes: int, n_edges: int, seed: int = 7):
    rng = np.random.default_rng(seed)
    n_passages = max(10, n_nodes // 5)
    n_entities = n_nodes - n_passages
    mention = int(n_edges * 0.6)
    popularity = 1.0 / np.arange(1, n_entities + 1) ** 0.8
    popularity /= popularity.sum()
    ent = rng.choice(n_entities, size=mention, p=popularity)
    psg = n_entities + rng.integers(0, n_passages, size=mention)
    a = rng.choice(n_entities, size=n_edges - mention, p=popularity)
    b = rng.integers(0, n_entities, size=n_edges - mention)
    rows, cols = np.concatenate([ent, a]), np.concatenate([psg, b])
    keep = rows != cols
    pairs = np.unique(np.sort(np.stack([rows[keep], cols[keep]], axis=1), axis=1), axis=0)
    weights = rng.uniform(0.5, 2.0, size=len(pairs))
    return n_nodes, pairs[:, 0], pairs[:, 1], weights, n_entities


BATCH = 16   # personalizations per sparse matrix-matrix product in the batched run


def timed(fn) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - t) * 1000


def run(n_nodes: int, n_edges: int, queries: int, nx_queries: int) -> dict:
    n, rows, cols, weights, n_entities = synthetic_graph(n_nodes, n_edges)
    rng = np.random.default_rng(1)
    matrices, build_s, build_mb = {}, {}, {}
    for name, dtype in (("float64", np.float64), ("float32", np.float32)):
        tracemalloc.start()
        matrices[name], ms = timed(lambda dtype=dtype: PPRMatrix(n, rows, cols, weights, dtype=dtype))
        build_mb[name] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        build_s[name] = ms / 1000
    personalizations = np.zeros((n, queries))
    for j in range(queries):
        personalizations[rng.choice(n_entities, size=5, replace=False), j] = rng.uniform(0.2, 1.0, size=5)
    times: dict[str, list[float]] = {"float64": [], "float32": []}
    scores: dict[str, list[np.ndarray]] = {"float64": [], "float32": []}
    for name, matrix in matrices.items():
        for j in range(queries):
            result, ms = timed(lambda j=j, matrix=matrix: matrix.run(personalizations[:, j], damping=0.5))
            times[name].append(ms)
            scores[name].append(result.scores)
    batched_ms = []
    for start in range(0, queries, BATCH):
        block = personalizations[:, start:start + BATCH]
        _, ms = timed(lambda block=block: matrices["float32"].run_many(block, damping=0.5))
        batched_ms.append(ms / block.shape[1])

    tracemalloc.start()
    g, nx_build = timed(lambda: _nx_graph(n, rows, cols, weights))
    nx_mem = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    nx_times, diffs = [], []
    for j in range(nx_queries):
        pers = _as_dict(personalizations[:, j])
        ref, ms = timed(lambda pers=pers: nx.pagerank(g, alpha=0.5, personalization=pers, weight="weight"))
        nx_times.append(ms)
        diffs.append(float(np.abs(_as_array(ref, n) - scores["float64"][j]).max()))
    # nx.pagerank stops when the L1 change is below N * tol, so at scale its default answer is itself loose:
    # check our scores against nx run to a tight tolerance (untimed) as well.
    tight = _as_array(nx.pagerank(g, alpha=0.5, personalization=_as_dict(personalizations[:, 0]), weight="weight",
                                  tol=1e-14, max_iter=1000), n)
    nx_ms = statistics.median(nx_times)
    ms64, ms32 = statistics.median(times["float64"]), statistics.median(times["float32"])
    return {"nodes": n, "edges": int(len(rows)), "our_build_s": round(build_s["float64"], 3),
            "nx_build_s": round(nx_build / 1000, 3), "our_ms_per_query": round(ms64, 2),
            "float32_ms_per_query": round(ms32, 2), "float32_batched_ms_per_query": round(statistics.median(batched_ms), 2),
            "nx_ms_per_query": round(nx_ms, 1), "speedup": round(nx_ms / ms64, 1),
            "float32_speedup": round(nx_ms / ms32, 1), "our_build_peak_mb": round(build_mb["float64"], 1),
            "float32_build_peak_mb": round(build_mb["float32"], 1),
            "nx_build_peak_mb": round(nx_mem / 2**20, 1), "max_abs_diff_vs_nx_default": max(diffs),
            "max_abs_diff_vs_nx_tight": float(np.abs(tight - scores["float64"][0]).max()),
            "float32_max_abs_diff_vs_nx_tight": float(np.abs(tight - scores["float32"][0]).max()),
            "queries": queries, "batch": BATCH, "nx_queries": nx_queries}


def _as_dict(column: np.ndarray) -> dict[int, float]:
    """A personalization vector as nx.pagerank takes it: its non-zero entries by node."""
    return {int(i): float(column[i]) for i in np.nonzero(column)[0]}


def _as_array(scores: dict[int, float], n: int) -> np.ndarray:
    return np.array([scores[i] for i in range(n)])


def _nx_graph(n, rows, cols, weights) -> nx.Graph:
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_weighted_edges_from(zip(rows.tolist(), cols.tolist(), weights.tolist(), strict=True))
    return g


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", help="stop at 100k edges")
    args = p.parse_args(argv)
    rows = []
    for nodes, edges in SIZES[:3] if args.quick else SIZES:
        r = run(nodes, edges, queries=2 * BATCH, nx_queries=3 if edges >= 500_000 else 5)
        rows.append(r)
        print(f"{r['nodes']:>8} nodes {r['edges']:>9} edges: float64 {r['our_ms_per_query']:8.2f} ms, float32 "
              f"{r['float32_ms_per_query']:8.2f} ms ({r['float32_batched_ms_per_query']:.2f} batched), nx "
              f"{r['nx_ms_per_query']:9.1f} ms, x{r['float32_speedup']:<6} max diff vs tight nx "
              f"{r['max_abs_diff_vs_nx_tight']:.1e} / {r['float32_max_abs_diff_vs_nx_tight']:.1e}", flush=True)
    write_result("ppr_scale", {"damping": 0.5, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
