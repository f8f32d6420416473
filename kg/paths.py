"""Why a passage was reached: the most probable walk from a seed to it, read from the NetworkX graph."""
from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence

from casebook.types import PathStep

from .graph import KnowledgeGraph


def most_probable_paths(graph: KnowledgeGraph, targets: Sequence[int], seeds: Iterable[int],
                        max_cost: float = 12.0, max_pops: int = 50000) -> dict[int, list[PathStep]]:
    """For each target node, the walk from any seed that the random walker is most likely to take.

    One Dijkstra from all seeds at once, where stepping a -> b costs -log(w_ab / strength_a), the walker's
    probability of taking that edge; it stops once every target is reached, and ignores walks less likely than
    exp(-max_cost) (they explain nothing). A target no seed reaches that way gets [].
    """
    adj = graph.to_networkx().adj
    strength = graph.ppr.strength
    dist = {s: 0.0 for s in seeds}
    prev: dict[int, int] = {}
    heap = [(0.0, s) for s in dist]
    heapq.heapify(heap)
    todo, found, pops = set(targets), {}, 0
    while heap and todo and pops < max_pops:
        d, a = heapq.heappop(heap)
        pops += 1
        if d > dist.get(a, math.inf):
            continue
        if a in todo:
            todo.discard(a)
            path = [a]
            while path[-1] in prev:
                path.append(prev[path[-1]])
            found[a] = describe(graph, path[::-1])
        for b, data in adj[a].items():
            nd = d - math.log(data["weight"] / strength[a])
            if nd <= max_cost and nd < dist.get(b, math.inf):
                dist[b] = nd
                prev[b] = a
                heapq.heappush(heap, (nd, b))
    return {t: found.get(t, []) for t in targets}


def describe(graph: KnowledgeGraph, path: Sequence[int]) -> list[PathStep]:
    """Node labels and kinds along a path, each with the relation that leads to the next node."""
    return [PathStep(graph.node_label(a), graph.node_kind(a), graph.relation_between(a, b) if b is not None else "")
            for a, b in zip(path, [*path[1:], None], strict=True)]
