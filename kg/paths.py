"""Why a passage was reached: the most probable walk from a seed to it, by the walker's step probabilities."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from scipy.sparse import csgraph

from core.types import PathStep

from .graph import KnowledgeGraph

# A walk's most probable paths run through the nodes it gave mass to: on a graph larger than this, the search is
# kept to the walk's heaviest nodes (with the seeds and targets), so explaining costs ~1 ms, not 24 ms, at 59k
# nodes (the 6,269-passage 2Wiki corpus); a smaller graph is searched whole, as before.
SEARCH_NODES = 5000


def most_probable_paths(graph: KnowledgeGraph, targets: Sequence[int], seeds: Iterable[int],
                        max_cost: float = 12.0, mass: np.ndarray | None = None) -> dict[int, list[PathStep]]:
    """For each target node, the walk from any seed that the random walker is most likely to take.

    One compiled Dijkstra from all seeds at once, where stepping a -> b costs -log(w_ab / strength_a), the
    walker's probability of taking that edge; walks less likely than exp(-max_cost) explain nothing and are
    not followed. With the walk's ``mass``, a large graph is searched among its SEARCH_NODES heaviest nodes.
    A target no seed reaches that way gets [].
    """
    sources = sorted(set(seeds))
    if not sources:
        return {t: [] for t in targets}
    costs = graph.ppr.step_costs
    nodes = None
    if mass is not None and costs.shape[0] > SEARCH_NODES:
        kept = np.zeros(costs.shape[0], dtype=bool)
        kept[np.argpartition(-mass, SEARCH_NODES)[:SEARCH_NODES]] = True
        kept[sources] = kept[np.asarray(targets, dtype=np.int64)] = True
        nodes = np.flatnonzero(kept)
        costs = costs[nodes][:, nodes]
        local = np.cumsum(kept) - 1   # node -> its place among ``nodes`` (a vector: no dict of 5,000 entries)
        sources_in = local[sources].tolist()
    else:
        sources_in = sources
    _, prev, _ = csgraph.dijkstra(costs, directed=True, indices=sources_in, min_only=True,
                                  limit=max_cost, return_predecessors=True)
    out = {}
    for t in targets:
        at = t if nodes is None else int(local[t])
        path = [at]
        while prev[path[-1]] >= 0:
            path.append(int(prev[path[-1]]))
        full = path if nodes is None else [int(nodes[i]) for i in path]
        out[t] = describe(graph, full[::-1]) if full[-1] in sources else []
    return out


def describe(graph: KnowledgeGraph, path: Sequence[int]) -> list[PathStep]:
    """Node labels and kinds along a path, each with the relation that leads to the next node."""
    return [PathStep(graph.node_label(a), graph.node_kind(a), graph.relation_between(a, b) if b is not None else "")
            for a, b in zip(path, [*path[1:], None], strict=True)]
