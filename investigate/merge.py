"""How the rounds' searches become one top k.

The final ranking is a fixed merge of every search's ranking (``merge``):
- ``trail``: round robin over the searches in the order they ran (the question first), each giving its best passage
  not yet placed: the trail order, which the answer step reads in. One round only = the walk's own ranking.
- ``rrf``: Reciprocal Rank Fusion across rounds: each round's searches fused into one ranking, then the rounds
  fused with equal weight, so the question's own walk weighs as much as all of one round's follow-ups together and
  a passage both reach rises (fusing every search alike let two follow-ups outvote the question).
Both keep Recall@k comparable with one-shot strategies: k passages, whatever the number of rounds. The k passages
are listed, and the answer step reads them, in trail order. With ``set_aside``, the reader also says which of the
passages it read help; the others leave the trail (the next reading sees the passages after them) and come after
every passage not judged so, in the merge's order: what a detective keeps in the file comes first.
"""
from __future__ import annotations

from collections.abc import Sequence

from indexes import rrf


def ahead(first: Sequence[str], rest: Sequence[str], k: int) -> list[str]:
    """``first``, then the passages of ``rest`` not among them, ``k`` at most: how a check's picks take the first
    places of a ranking."""
    return list(dict.fromkeys([*first, *rest]))[:k]


def final_ranking(searches: Sequence[Sequence[Sequence[str]]], answered: tuple[list[str], list[str]] | None,
                  aside: Sequence[str], how: str, top_k: int, n: int) -> list[str]:
    """The top k of an investigation over ``n`` passages. The merge (``how``) picks which passages make it, the
    set-aside ones only when too few others were found; they are listed (and the answer reads them) in trail order,
    the order the investigation came upon them, set-aside ones last. Recall@k is a property of the set, so unchanged
    by the listing. ``answered``: when the loop stopped on a restated step, the ranking its search filled and its
    finds (the searches are then as that ranking saw them)."""
    ranked, listed = merged(searches, how, n), list(searches)
    if answered is not None:
        ranked, found = answered
        listed = [*searches, [found]]
    kept = [pid for pid in ranked if pid not in aside]
    top = set(kept[:top_k])
    ranking = [pid for pid in merged(listed, "trail", n) if pid in top]
    return ranking + [pid for pid in ranked if pid in aside][:top_k - len(ranking)]


def merged(rounds: Sequence[Sequence[Sequence[str]]], how: str, k: int) -> list[str]:
    """The top ``k`` of the rounds' searches (``rounds[r]``: the rankings round r+1 searched) merged by ``how``
    (see the module docstring)."""
    if how == "rrf":
        fused = [[pid for pid, _ in rrf(searches)] for searches in rounds if searches]
        return [pid for pid, _ in rrf(fused)][:k]
    searches = [ranking for round_searches in rounds for ranking in round_searches]
    out: list[str] = []
    placed: set[str] = set()
    cursors = [0] * len(searches)
    while len(out) < k and any(c < len(s) for c, s in zip(cursors, searches, strict=True)):
        for n, ranking in enumerate(searches):
            while cursors[n] < len(ranking) and ranking[cursors[n]] in placed:
                cursors[n] += 1
            if cursors[n] < len(ranking) and len(out) < k:
                out.append(ranking[cursors[n]])
                placed.add(ranking[cursors[n]])
                cursors[n] += 1
    return out
