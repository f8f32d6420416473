"""The two PageRank engines (nx.pagerank itself, and the compiled sparse iteration) agree on real graphs."""
import json
from pathlib import Path

import numpy as np
import pytest

from casebook.catalog import resolve
from casebook.loader import load_case
from core.types import Triple
from kg import build_graph, passage_triples
from llm import Settings, embedder_only

PEARL_OPENIE = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "openie" / "purloined_pearl.json"


def case_triples(name: str):
    case = load_case(resolve(name))
    if case.triples:
        return case, case.triples
    # The bundled case ships no triples: use the embedded model's OpenIE of it, cached in the repo.
    return case, [Triple(**t) for t in json.loads(PEARL_OPENIE.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("name", ["purloined_pearl", pytest.param("musique_train100", marks=pytest.mark.slow)])
def test_networkx_and_sparse_engines_agree(name):
    case, triples = case_triples(name)
    graph = build_graph(passage_triples(triples, case.passages), case.passages,
                        embedder_only(Settings(cache_enabled=False)))
    rng = np.random.default_rng(7)
    for _ in range(3):
        seeds = np.zeros(graph.n_nodes)
        seeds[rng.choice(len(graph.phrases), size=4, replace=False)] = rng.uniform(0.2, 1.0, size=4)
        seeds[len(graph.phrases):] = rng.uniform(0, 0.1, size=len(graph.passage_ids))  # passage reset weights
        sparse = graph.pagerank(seeds, 0.5, engine="sparse", tol=1e-14)
        reference = graph.pagerank(seeds, 0.5, engine="networkx", tol=1e-14)
        assert sparse.converged and reference.converged
        assert np.abs(sparse.scores - reference.scores).max() < 1e-9
        assert sparse.scores.sum() == pytest.approx(1.0)


def test_float32_and_batched_walks_stay_within_1e_6_of_the_reference():
    """sparse32 (float32, stopping at its DEFAULT_TOL) and run_many (one walk per column) give float64's scores."""
    case, triples = case_triples("purloined_pearl")
    graph = build_graph(passage_triples(triples, case.passages), case.passages,
                        embedder_only(Settings(cache_enabled=False)))
    rng = np.random.default_rng(3)
    seeds = np.zeros((graph.n_nodes, 5))
    for j in range(5):
        seeds[rng.choice(len(graph.phrases), size=4, replace=False), j] = rng.uniform(0.2, 1.0, size=4)
    seeds[len(graph.phrases):, 1] = 0.01          # one walk also resets to the passages
    reference = [graph.pagerank(seeds[:, j], 0.5, engine="sparse", tol=1e-13).scores for j in range(5)]
    float32 = [graph.pagerank(seeds[:, j], 0.5, engine="sparse32") for j in range(5)]
    assert all(r.converged and r.scores.dtype == np.float32 for r in float32)
    assert max(np.abs(r.scores - ref).max() for r, ref in zip(float32, reference, strict=True)) < 1e-6
    batched = graph.ppr.run_many(seeds, damping=0.5, tol=1e-13)
    assert batched.converged and batched.scores.shape == seeds.shape
    assert np.abs(batched.scores - np.stack(reference, axis=1)).max() < 1e-12
    with pytest.raises(ValueError, match="n x k"):
        graph.ppr.run_many(seeds[:, 0])


def test_unknown_engine_is_a_clear_error():
    case, triples = case_triples("purloined_pearl")
    graph = build_graph(passage_triples(triples[:3], case.passages), case.passages,
                        embedder_only(Settings(cache_enabled=False)))
    with pytest.raises(ValueError, match="engine must be one of auto, sparse, sparse32, networkx"):
        graph.pagerank(np.ones(graph.n_nodes), 0.5, engine="igraph")
