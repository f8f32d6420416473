#!/usr/bin/env python3
"""Where each supporting passage of a choosing set's questions lands, and the loop's trail that put it there.

    python benchmarks/trails.py --sets atlas --missed
    python benchmarks/trails.py --sets dev5 --question 2wiki-131 --set investigate.read_on=false

Every candidate in docs/investigate-choices.md began as a reading of trails; this prints them. For each question of
the sets asked: its Recall at the set's top k, each supporting passage (in the top k, at which place, or missed) with
its title, the top k with titles, and each round of the loop (what it searched, what it added, why it went on or
stopped). With ``--missed``, only the questions below full Recall. The readings come from the response cache when
they were made before (llm/cache.py), so reading the trails of a saved run costs no model call.

Only the choosing sets (``investigation.py --sets dev, dev5, wide, atlas, mdev``) are offered: the report sets (generated
seeds 1-10, the bundled case, MuSiQue) stay unread while choosing.
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

from core.types import Case, Question
from lab.results import StrategyResult
from lab.runner import Lab
from llm import Backend, Embedder, Settings

from investigation import add_choosing_arguments, case_config, choosing_cases, models_for

TEXT_CHARS = 150   # of each passage, as a line of the listing


@dataclass(frozen=True)
class Support:
    passage: str
    title: str
    place: int | None   # 1-based place in the top k; None: missed


@dataclass(frozen=True)
class Trail:
    question: Question
    recall: float | None
    supports: tuple[Support, ...]
    top: tuple[str, ...]
    rounds: tuple[dict, ...]


def trail_of(case: Case, question: Question, result: StrategyResult) -> Trail:
    """``result``'s top k read against ``question``'s supporting documents, with the rounds of its explanation."""
    top = tuple(result.passages)
    place: dict[str, int] = {}
    for n, pid in enumerate(top, 1):
        place.setdefault(case.passage(pid).doc_id, n)
    supports = tuple(Support(passage.id, passage.title, place.get(doc))
                     for doc in question.supporting_docs
                     for passage in [next(p for p in case.passages if p.doc_id == doc)])
    rounds = tuple({"searched": list(r.searched), "added": list(r.added), "why": r.why}
                   for r in result.explanation.rounds)
    return Trail(question, result.recall, supports, top, rounds)


def trails(case: Case, strategy: str, top_k: int, assignments: list[str], triples: str, settings: Settings,
           embedder: Embedder, backend: Backend | None = None, only: Sequence[str] = ()) -> list[Trail]:
    """The trail of each question of ``case`` (of ``only``'s ids, if given), asked of ``strategy`` at ``top_k``
    (``backend``: the chat model, for a strategy that reads)."""
    config = case_config([strategy], top_k, assignments, triples)
    lab = Lab(case, settings, config, embedder=embedder, backend=backend)
    lab.build()
    return [trail_of(case, q, lab.ask(q, config).results[strategy]) for q in case.questions
            if not only or q.id in only]


def render(case: Case, trail: Trail) -> str:
    """One question's trail as lines of text."""
    q = trail.question

    def line(pid: str) -> str:
        p = case.passage(pid)
        return f"{pid} [{p.title}] {p.text[:TEXT_CHARS]}"

    recall = "-" if trail.recall is None else f"{trail.recall:.3f}"
    out = [f"== {q.id} ({q.type}) Recall {recall}: {q.text}"]
    out += [f"   {'missed' if s.place is None else f'at {s.place}':>7}  {line(s.passage)}" for s in trail.supports]
    out += [f"   top {n:>3}  {line(pid)}" for n, pid in enumerate(trail.top, 1)]
    out += [f"   round {n}: searched {r['searched']}, added {r['added']}; {r['why']}" for n, r in
            enumerate(trail.rounds, 1)]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_choosing_arguments(p, "whose trails (investigate-walk reads with no model)")
    p.add_argument("--question", action="append", default=[], help="only this question id (repeatable)")
    p.add_argument("--missed", action="store_true", help="only the questions below full Recall")
    args = p.parse_args(argv)
    cases = choosing_cases(p, args)
    absent = set(args.question).difference(q.id for *_, case, _, _ in cases for q in case.questions)
    if absent:   # said before any graph is built or model asked
        p.error(f"--question: {', '.join(sorted(absent))} is in none of the sets asked ({args.sets})")
    settings = Settings.from_env()
    backend, embedder = models_for(args.strategy, settings)
    for group, name, case, k, triples in cases:
        if args.question and not any(q.id in args.question for q in case.questions):
            continue
        shown = [t for t in trails(case, args.strategy, k, args.set, triples, settings, embedder, backend,
                                   args.question)
                 if not args.missed or (t.recall is not None and t.recall < 1)]
        print(f"# {group} {name}: {len(shown)} questions, top {k}, {args.strategy}")
        for trail in shown:
            print(render(case, trail))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
