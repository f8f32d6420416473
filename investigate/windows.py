"""Which questions ask about a stretch of time ("What happened between 9:15 PM and 11:30 PM?", "Who was in the
house from 21:00 to 22:30?"), and the clock times a passage names. The evidence of such a question is every record of
something that happened in that stretch, whatever it names, so it is found by its times rather than by its words
(``InvestigateSettings.check_window``).

Clock times are read as written: "9:15 PM", "9.15 p.m.", "9pm", "21:15", "02:10", "noon", "midnight". A time with no
AM or PM and an hour from 1 to 12 ("10:40") could be either: both readings count. A year or a version ("4.12") is
not a time: a number with a dot needs an AM or PM after it, and one with neither colon nor AM/PM is a time only
where the other end of the question's stretch says which half of the day it is in ("between 9 and 11 PM").
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

DAY = 24 * 60   # minutes
_HALF = r"(?P<half>[ap])\.?\s?m\b\.?"
# a clock time: hours, then minutes after a colon (or a dot, when AM/PM follows), then AM/PM; or a named hour
_CLOCK = re.compile(rf"(?<![\w$£€.:,])(?P<hour>\d{{1,2}})(?:(?::(?P<min>\d{{2}}))|(?:\.(?P<dmin>\d{{2}})(?=\s?[ap]\.?\s?m\b)))?"
                    rf"(?:\s?{_HALF})?(?![\w:])|\b(?P<named>noon|midday|midnight)\b", re.IGNORECASE)
_OPENS = ("between", "from")                 # the word before a stretch's first end
_JOINS = ("and", "to", "until", "till", "-", "–")   # what comes between its two ends


@dataclass(frozen=True)
class Clock:
    """One clock time as written: its readings in minutes after midnight (two for "10:40", one for "10:40 PM"),
    and whether the text said it is a time (a colon, AM/PM or a named hour) rather than a bare number."""
    readings: tuple[int, ...]
    said: bool
    half: str = ""   # "a" or "p" when written


@dataclass(frozen=True)
class Window:
    """A stretch of the day a question asks about, as the question words it, and the minutes after midnight it
    covers: each span runs from its start to its end inclusive, past midnight when the end comes first; a question
    that does not say which half of the day gives both."""
    text: str
    spans: tuple[tuple[int, int], ...]

    def offset(self, minute: int) -> int | None:
        """How many minutes into the window ``minute`` falls (None: outside it)."""
        offsets = [(minute - start) % DAY for start, end in self.spans if (minute - start) % DAY <= (end - start) % DAY]
        return min(offsets) if offsets else None

    def first(self, clocks: Sequence[Clock]) -> int | None:
        """The earliest of ``clocks`` in the window, in minutes after midnight, earliest by how far into the window
        it falls (None: none is in it; a bare number is no time)."""
        inside = [(o, m) for clock in clocks if clock.said for m in clock.readings if (o := self.offset(m)) is not None]
        return min(inside)[1] if inside else None


def clock_times(text: str) -> list[Clock]:
    """The clock times ``text`` names, in order (a bare number among them: ``Clock.said`` is False)."""
    return [clock for match in _CLOCK.finditer(text) if (clock := _clock(match)) is not None]


def _clock(match: re.Match[str]) -> Clock | None:
    named = (match["named"] or "").lower()
    if named:
        return Clock((12 * 60,) if named in ("noon", "midday") else (0,), True)
    hour, minute, half = int(match["hour"]), int(match["min"] or match["dmin"] or 0), (match["half"] or "").lower()
    if minute > 59 or hour > 23 or (half and not 1 <= hour <= 12):
        return None
    if half:
        return Clock((((hour % 12) + (12 if half == "p" else 0)) * 60 + minute,), True, half)
    said = match["min"] is not None
    # "02:10" and "21:15" say which half they are in; "10:40" and a bare "9" do not
    if hour == 0 or hour > 12 or match["hour"].startswith("0"):
        return Clock((hour * 60 + minute,), said)
    return Clock(((hour % 12) * 60 + minute, (hour % 12 + 12) * 60 + minute), said)


def asks_about_window(question: str) -> Window | None:
    """The stretch of time ``question`` asks about ("between 9:15 PM and 11:30 PM", "from 21:00 to 22:30"), or None
    if it names none: two clock times, "between" or "from" before the first and "and", "to" or "until" between them.
    At least one end must say it is a time (a colon, AM/PM or a named hour): "between 2 and 3 witnesses" is not a
    stretch of time. An end with no AM/PM takes the other end's."""
    clocks = list(_CLOCK.finditer(question))
    for first, second in itertools.pairwise(clocks):
        before = question[:first.start()].lower().split()
        opens = before[-1] if before and before[-1] in _OPENS else ""
        joined = question[first.end():second.start()].strip().lower() in _JOINS
        start, end = _clock(first), _clock(second)
        if not (opens and joined) or start is None or end is None or not (start.said or end.said):
            continue
        start, end = _same_half(start, end), _same_half(end, start)
        if len(start.readings) == len(end.readings):   # both in the morning, or both in the evening
            spans = tuple(zip(start.readings, end.readings, strict=True))
        else:
            spans = tuple((s, e) for s in start.readings for e in end.readings)
        return Window(f"{opens} {question[first.start():second.end()]}", spans)
    return None


def _same_half(clock: Clock, other: Clock) -> Clock:
    """``clock`` read in ``other``'s half of the day when it says none and ``other`` does ("between 9 and 11 PM")."""
    if clock.half or not other.half or len(clock.readings) < 2:
        return clock
    return Clock((clock.readings[1] if other.half == "p" else clock.readings[0],), clock.said, other.half)
