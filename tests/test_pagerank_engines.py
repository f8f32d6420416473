"""The two PageRank engines (nx.pagerank itself, and the compiled sparse iteration) agree on real graphs."""
import json
from pathlib import Path

import numpy as np
import pytest

from casebook.catalog import resolve
from casebook.loader import load_case
from casebook.types import Triple
from kg import build_graph, passage_triples
from llm import Settings, embedder_only

PEARL_OPENIE = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "openie" / "purloined_pearl.json"


def case_triples(name: str):
    case = load_case(resolve(name))
    if case.triples:
        return case, case.triples
    # The bundled case ships no triples: use the embedded model's OpenIE of it, cached in the repo.
    return case, [Triple(**t) for t in json.loads(PEARL_OPENIE.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("name", ["purloined_pearl", "musique_train100"])
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


def test_unknown_engine_is_a_clear_error():
    case, triples = case_triples("purloined_pearl")
    graph = build_graph(passage_triples(triples[:3], case.passages), case.passages,
                        embedder_only(Settings(cache_enabled=False)))
    with pytest.raises(ValueError, match="engine must be one of sparse, networkx"):
        graph.pagerank(np.ones(graph.n_nodes), 0.5, engine="igraph")
