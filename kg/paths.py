"""Why a passage was reached: the most probable walk from a seed to it, by the walker's step probabilities."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from scipy.sparse import csgraph

from core.types import PathStep

from .graph import KnowledgeGraph


def most_probable_paths(graph: KnowledgeGraph, targets: Sequence[int], seeds: Iterable[int],
                        max_cost: float = 12.0) -> dict[int, list[PathStep]]:
    """For each target node, the walk from any seed that the random walker is most likely to take.

    One compiled Dijkstra from all seeds at once, where stepping a -> b costs -log(w_ab / strength_a), the
    walker's probability of taking that edge; walks less likely than exp(-max_cost) explain nothing and are
    not followed. A target no seed reaches that way gets [].
    """
    sources = sorted(set(seeds))
    if not sources:
        return {t: [] for t in targets}
    _, prev, _ = csgraph.dijkstra(graph.ppr.step_costs, directed=True, indices=sources, min_only=True,
                                  limit=max_cost, return_predecessors=True)
    out = {}
    for t in targets:
        path = [t]
        while prev[path[-1]] >= 0:
            path.append(int(prev[path[-1]]))
        out[t] = describe(graph, path[::-1]) if path[-1] in sources else []
    return out


def describe(graph: KnowledgeGraph, path: Sequence[int]) -> list[PathStep]:
    """Node labels and kinds along a path, each with the relation that leads to the next node."""
    return [PathStep(graph.node_label(a), graph.node_kind(a), graph.relation_between(a, b) if b is not None else "")
            for a, b in zip(path, [*path[1:], None], strict=True)]
