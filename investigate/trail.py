"""The records of the trail: one ``Round`` per search the loop or a check made, with the reading after it."""
from __future__ import annotations

import time
from collections.abc import Sequence

from core.types import Explanation, Round
from kg.walk import Walk

from .readers import Reading


def round_record(pending: dict, offered: Sequence[str], reading: Reading, leads: Sequence[str], stop: str,
                 started: float, reader: str = "", set_aside: Sequence[str] = ()) -> Round:
    """The record of a round: what ``pending`` says it searched and found, then the reading after it (the passages it
    set aside, the leads it follows, by name, and its sub-questions) and why the loop stops there, if it does."""
    why = "; ".join(x for x in (reading.why, stop) if x)
    return Round(**pending, offered=list(offered), chosen=list(leads), sub_questions=list(reading.sub_questions),
                 set_aside=list(set_aside), why=why, enough=reading.enough, reader=reader,
                 ms=round((time.perf_counter() - started) * 1000, 1), llm_ms=reading.llm_ms,
                 llm_calls=reading.llm_calls)


def searched(ex: Explanation, query: str, walk: Walk, added: Sequence[str]) -> dict:
    """The record of the next round (``round_record``'s ``pending``) when it searched ``query`` by ``walk``: its
    number, the walk's first seeds and the passages it ``added``."""
    return dict(number=len(ex.rounds) + 1, searched=[query], seeds=[s.node for s in walk.retrieval.explanation.seeds[:8]],
                added=list(added))


def add_reading(record: Round, reading: Reading, why: str, reader: str = "") -> None:
    """A reading made apart from ``record``'s own: its cost and what it says go on it (and who read, if given)."""
    record.why = "; ".join(x for x in (record.why, why) if x)
    record.llm_calls += reading.llm_calls
    record.llm_ms = round(record.llm_ms + reading.llm_ms, 1)
    record.reader = reader or record.reader
