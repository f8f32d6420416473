#!/usr/bin/env python3
"""Where the room is: what HippoRAG's deeper ranking holds that the loop's top k misses, on each choosing set.

    python benchmarks/headroom.py --sets mdev,dev5,wide,atlas,dev

For each choosing set, by supporting document: HippoRAG's Recall at the set's k, at 10 and at 20; the loop's at k
and of its first ``show`` places (the passages the reader reads); those places followed by a perfect pick from
HippoRAG's top 10, the most any rule could reach that fills the places after the passages read from the walk's own
ranking; and where the supporting passages the loop misses sit in HippoRAG's ranking (its top k, k+1 to 10, 11 to
20, past 20). Where the loop is already at or above the perfect pick, its places after the passages read find what
the walk does not rank; where it is far below, the room is in the walk's own next passages, and telling those apart
is what a candidate must do. Readings come from the response cache when they were made before (llm/cache.py).

Only the choosing sets are offered (``investigation.py --sets``): the report sets stay unread while choosing.
"""
from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from core.types import Case
from investigate.settings import DEFAULTS
from lab.metrics import recall_at_k
from lab.runner import Lab
from llm import Backend, Embedder, Settings

from investigation import add_choosing_arguments, case_config, choosing_cases, models_for

DEEP = 20   # how far down HippoRAG's ranking is read
PICK_FROM = 10   # the perfect pick's pool: HippoRAG's top 10
BUCKETS = ("top k", "k+1 to 10", "11 to 20", "past 20")


def recall(ranking: Sequence[str], supporting: Sequence[str], k: int) -> float:
    """``recall_at_k`` of a question that has supporting documents (the only ones scored here)."""
    found = recall_at_k(ranking, supporting, k)
    assert found is not None
    return found


def with_perfect_pick(first: Sequence[str], pool: Sequence[str], supporting: Sequence[str], k: int) -> float:
    """Recall at ``k`` of ``first`` followed by the supporting documents of ``pool`` it lacks, as many as fit."""
    picked = [doc for doc in dict.fromkeys(pool) if doc in supporting and doc not in first]
    return recall([*first, *picked], supporting, k)


def bucket(place: int | None, k: int) -> str:
    """Which stretch of a ranking a 1-based ``place`` (None: not in it) falls in."""
    if place is None or place > DEEP:
        return BUCKETS[3]
    return BUCKETS[0] if place <= k else BUCKETS[1] if place <= PICK_FROM else BUCKETS[2]


@dataclass(frozen=True)
class Headroom:
    name: str
    k: int
    show: int
    questions: int                   # those with supporting documents
    walk: dict[str, float]           # HippoRAG's Recall at k, 10 and 20
    loop: float                      # the loop's Recall at k
    loop_read: float                 # of its first ``show`` places
    perfect_pick: float              # those places, then a perfect pick from HippoRAG's top 10
    missed: dict[str, int]           # the loop's missed supporting documents, by where HippoRAG ranks them


def headroom(name: str, case: Case, strategy: str, k: int, assignments: list[str], triples: str,
             settings: Settings, embedder: Embedder, backend: Backend | None = None) -> Headroom:
    """``case``'s figures for ``strategy`` (the loop, read at its settings with ``assignments``) at ``k``."""
    show = min(DEFAULTS.show, k)
    deep_config = case_config(["hipporag"], DEEP, [], triples)
    deep = Lab(case, settings, deep_config, embedder=embedder)
    deep.build()
    config = case_config([strategy], k, assignments, triples)
    lab = Lab(case, settings, config, embedder=embedder, backend=backend)
    lab.build()
    def docs(pids: Sequence[str]) -> list[str]:
        return [case.passage(pid).doc_id for pid in pids]   # a page's paragraphs each keep their place

    rows = []
    for q in case.questions:
        if not q.supporting_docs:   # nothing to score, as the lab scores it (lab/metrics.py)
            continue
        walk = docs(deep.ask(q, deep_config).results["hipporag"].passages)
        loop = docs(lab.ask(q, config).results[strategy].passages)
        rows.append((q.supporting_docs, walk, loop))
    n = len(rows)
    missed: Counter[str] = Counter()
    for supporting, walk, loop in rows:
        missed.update(bucket(walk.index(doc) + 1 if doc in walk else None, k)
                      for doc in supporting if doc not in loop[:k])
    return Headroom(
        name, k, show, n,
        walk={f"@{depth}": sum(recall(w, s, depth) for s, w, _ in rows) / n for depth in (k, PICK_FROM, DEEP)},
        loop=sum(recall(lp, s, k) for s, _, lp in rows) / n,
        loop_read=sum(recall(lp, s, show) for s, _, lp in rows) / n,
        perfect_pick=sum(with_perfect_pick(lp[:show], w[:PICK_FROM], s, k) for s, w, lp in rows) / n,
        missed={b: missed[b] for b in BUCKETS})


def table(found: Sequence[Headroom], strategy: str) -> str:
    """The figures as a Markdown table."""
    head = ["set", "k", "questions", "HippoRAG @k", "@10", "@20", f"{strategy} @k", "its first show",
            "first show + perfect pick from HippoRAG's top 10", *(f"missed, HippoRAG {b}" for b in BUCKETS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for h in found:
        cells = [h.name, str(h.k), str(h.questions), *(f"{v:.3f}" for v in h.walk.values()), f"{h.loop:.3f}",
                 f"{h.loop_read:.3f} ({h.show})", f"{h.perfect_pick:.3f}", *(str(h.missed[b]) for b in BUCKETS)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_choosing_arguments(p, "whose top k (investigate-walk reads with no model)")
    args = p.parse_args(argv)
    cases = choosing_cases(p, args)
    settings = Settings.from_env()
    backend, embedder = models_for(args.strategy, settings)
    found = [headroom(name, case, args.strategy, k, args.set, triples, settings, embedder, backend)
             for _, name, case, k, triples in cases]
    print(table(found, args.strategy))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
