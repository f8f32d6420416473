"""Which questions ask about a stretch of time ("What happened between 9:15 PM and 11:30 PM?", "Who was in the
house from 21:00 to 22:30?") or about one moment, a stretch of no length ("Where was the black BMW at 23:10?"), and the
clock times a passage names. The evidence of such a question is every record of something that happened in that
stretch, whatever it names, so it is found by its times rather than by its words (``InvestigateSettings.check_window``,
``check_moment``: ``timed``, then ``in_window``).

Clock times are read as written: "9:15 PM", "9.15 p.m.", "9pm", "21:15", "02:10", "noon", "midnight". A time with no
AM or PM and an hour from 1 to 12 ("10:40") could be either: both readings count. A year or a version ("4.12") is
not a time: a number with a dot needs an AM or PM after it, and one with neither colon nor AM/PM is a time only
where the other end of the question's stretch says which half of the day it is in ("between 9 and 11 PM").

With ``words``, a time said in words counts too: "ten o'clock", "half past eight", "a quarter to eleven", "twenty
past nine", and an hour word after a word of when ("at", "after", "by", "around", "until", ...: "shortly after ten")
when what follows it cannot be what it counts ("after ten and", "at ten.", not "after ten days"). "In the evening",
"at night" or "that night" after any of them says which half of the day it is in. "Shortly after ten" is read as
ten: the words do not say how long after. Only "a quarter" goes "to" an hour: "from ten to eleven" is a stretch.
"""
from __future__ import annotations

import itertools
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.types import Explanation
from kg.walk import Walk

from .merge import ahead
from .readers import Reading
from .search import CaseSearch
from .trail import round_record

DAY = 24 * 60   # minutes
_HALF = r"(?P<half>[ap])\.?\s?m\b\.?"
# a clock time: hours, then minutes after a colon (or a dot, when AM/PM follows), then AM/PM; or a named hour
_CLOCK = re.compile(rf"(?<![\w$£€.:,])(?P<hour>\d{{1,2}})(?:(?::(?P<min>\d{{2}}))|(?:\.(?P<dmin>\d{{2}})(?=\s?[ap]\.?\s?m\b)))?"
                    rf"(?:\s?{_HALF})?(?![\w:])|\b(?P<named>noon|midday|midnight)\b", re.IGNORECASE)
_HOUR_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
_MINUTES = {"quarter": 15, "half": 30, "five": 5, "ten": 10, "twenty": 20}   # "twenty-five" is twenty and five
_HOUR = rf"(?:{'|'.join(_HOUR_WORDS)}|1[0-2]|[1-9])"
_WORDED = re.compile(
    rf"\b(?:(?:a\s+)?(?P<min>quarter|half|twenty[- ]five|twenty|ten|five)\s+past\s+(?P<hour>{_HOUR})"
    rf"|(?:a\s+)?quarter\s+to\s+(?P<to>{_HOUR})"
    rf"|(?P<oclock>{_HOUR})\s*o[’']?\s?clock"
    rf"|(?:at|after|before|by|around|about|past|until|till|towards?|approximately|nearly)\s+"
    rf"(?P<cued>{'|'.join(_HOUR_WORDS)}))\b"
    r"(?:\s+(?P<q>in\s+the\s+(?:morning|afternoon|evening)|at\s+night|(?:that|this)\s+(?:night|morning|afternoon|"
    r"evening)|tonight)\b)?", re.IGNORECASE)
# what may follow an hour word after a word of when: not a noun it would count ("after ten days")
_ENDS_CUED = re.compile(r"\s*(?:$|[.,;:!?)\]—–-]|(?:and|or|but|when|while|that|so|then|he|she|they|we|it|the)\b)",
                        re.IGNORECASE)
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

    @property
    def moment(self) -> bool:
        """A window of no length: one time the question names."""
        return all(start == end for start, end in self.spans)

    @property
    def what(self) -> str:
        """The window as a passage names it: "a time between 9 and 11 PM", or the moment itself ("23:10")."""
        return self.text if self.moment else f"a time {self.text}"

    def offset(self, minute: int) -> int | None:
        """How many minutes into the window ``minute`` falls (None: outside it)."""
        offsets = [(minute - start) % DAY for start, end in self.spans if (minute - start) % DAY <= (end - start) % DAY]
        return min(offsets) if offsets else None

    def first(self, clocks: Sequence[Clock]) -> int | None:
        """The earliest of ``clocks`` in the window, in minutes after midnight, earliest by how far into the window
        it falls (None: none is in it; a bare number is no time)."""
        inside = [(o, m) for clock in clocks if clock.said for m in clock.readings if (o := self.offset(m)) is not None]
        return min(inside)[1] if inside else None


def clock_times(text: str, words: bool = False) -> list[Clock]:
    """The clock times ``text`` names, in order (a bare number among them: ``Clock.said`` is False); with ``words``,
    those said in words too."""
    return [clock for _, _, clock in _times(text, words) if clock is not None]


def _times(text: str, words: bool) -> list[tuple[int, int, Clock | None]]:
    """Where ``text`` names a time (start, end) and what it says (None: a number that cannot be one), in order. A time
    in words wins over a number inside it ("8 o'clock")."""
    found = [(m.start(), m.end(), _clock(m)) for m in _CLOCK.finditer(text)]
    if not words:
        return found
    worded: list[tuple[int, int, Clock | None]] = [
        (m.start("cued") if m["cued"] else m.start(), m.end(), _worded(m)) for m in _WORDED.finditer(text)
        if not m["cued"] or m["q"] or _ENDS_CUED.match(text, m.end())]
    kept = [t for t in found if not any(s < t[1] and t[0] < e for s, e, _ in worded)]
    return sorted(kept + worded, key=lambda t: t[0])


def _worded(match: re.Match[str]) -> Clock:
    hour_text = (match["hour"] or match["to"] or match["oclock"] or match["cued"]).lower()
    hour = int(hour_text) if hour_text.isdigit() else _HOUR_WORDS.index(hour_text) + 1
    minute = 0
    if match["min"]:
        minute = sum(_MINUTES[w] for w in re.split(r"[- ]+", match["min"].lower()))
    elif match["to"]:
        minute = -15
    at = (hour % 12) * 60 + minute
    qualifier = (match["q"] or "").lower()
    if qualifier:
        half = "a" if "morning" in qualifier else "p"
        return Clock(((at % 720) + (720 if half == "p" else 0),), True, half)
    return Clock((at % 720, at % 720 + 720), True)


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


def asks_about_window(question: str, words: bool = False) -> Window | None:
    """The stretch of time ``question`` asks about ("between 9:15 PM and 11:30 PM", "from 21:00 to 22:30"), or None
    if it names none: two clock times, "between" or "from" before the first and "and", "to" or "until" between them.
    At least one end must say it is a time (a colon, AM/PM or a named hour): "between 2 and 3 witnesses" is not a
    stretch of time. An end with no AM/PM takes the other end's. With ``words``, an end may be said in words ("from
    half past eight to ten o'clock")."""
    for (first, first_end, start), (second, second_end, end) in itertools.pairwise(_times(question, words)):
        before = question[:first].lower().split()
        opens = before[-1] if before and before[-1] in _OPENS else ""
        joined = question[first_end:second].strip().lower() in _JOINS
        if not (opens and joined) or start is None or end is None or not (start.said or end.said):
            continue
        start, end = _same_half(start, end), _same_half(end, start)
        if len(start.readings) == len(end.readings):   # both in the morning, or both in the evening
            spans = tuple(zip(start.readings, end.readings, strict=True))
        else:
            spans = tuple((s, e) for s in start.readings for e in end.readings)
        return Window(f"{opens} {question[first:second_end]}", spans)
    return None


def asks_about_moment(question: str, words: bool = False) -> Window | None:
    """The moment ``question`` asks about ("Where was the black BMW at 23:10?") as a window of no length, or None: it
    names exactly one time that says it is one (a colon, AM/PM or a named hour; bare numbers aside) and no stretch.
    What happened then is found by its time, as a stretch's is."""
    if asks_about_window(question, words) is not None:
        return None
    said = [(start, end, clock) for start, end, clock in _times(question, words) if clock is not None and clock.said]
    if len(said) != 1:
        return None
    start, end, clock = said[0]
    return Window(question[start:end], tuple((m, m) for m in clock.readings))


def _same_half(clock: Clock, other: Clock) -> Clock:
    """``clock`` read in ``other``'s half of the day when it says none and ``other`` does ("between 9 and 11 PM")."""
    if clock.half or not other.half or len(clock.readings) < 2:
        return clock
    return Clock((clock.readings[1] if other.half == "p" else clock.readings[0],), clock.said, other.half)


class CaseClocks:
    """Every passage's clock times, read once for the case (on its first question about a stretch of time), apart
    for each way of reading them: with times in words or without."""

    def __init__(self, search: CaseSearch):
        self.search = search
        self._by_words: dict[bool, dict[str, list[Clock]]] = {}

    def of(self, words: bool) -> dict[str, list[Clock]]:
        if words not in self._by_words:
            case = self.search.case
            self._by_words[words] = {pid: clock_times(case.passage(pid).text, words)
                                     for pid in self.search.graph.passage_ids}
        return self._by_words[words]


def timed(search: CaseSearch, clocks: Mapping[str, Sequence[Clock]], window: Window,
          first: Walk) -> list[tuple[str, int]]:
    """The passages that name a time in ``window`` (by ``clocks``: ``CaseClocks.of``), each with its earliest such
    time (minutes after midnight): the question's own walk (``first``) ranks them, its ranking first, then by its
    mass, then by time."""
    g = search.graph
    inside = [(row, pid, minute) for row, pid in enumerate(g.passage_ids)
              if (minute := window.first(clocks[pid])) is not None]
    rank = {pid: n for n, pid in enumerate(first.retrieval.ids)}
    mass = first.mass[len(g.phrases):]   # every node's mass, zeros when nothing seeded the walk
    inside.sort(key=lambda t: (rank.get(t[1], len(rank)), -float(mass[t[0]]), window.offset(t[2])))
    return [(pid, minute) for _, pid, minute in inside]


def in_window(window: Window, timed: Sequence[tuple[str, int]], ranking: list[str], ex: Explanation) -> list[str]:
    """The top k (``ranking``) once the stretch of time the question asks about is looked at, a round of its own on
    the trail: the first k of ``timed`` (``timed``) take the first places, in the order of their times, and the
    ranking fills the rest."""
    top_k = len(ranking)
    picked = sorted(timed[:top_k], key=lambda t: window.offset(t[1]) or 0)
    pids = [pid for pid, _ in picked]
    started = time.perf_counter()
    pending = dict(number=len(ex.rounds) + 1, searched=[window.text], seeds=[], added=pids)
    named = f"{len(timed)} passage{'s' if len(timed) > 1 else ''} name{'' if len(timed) > 1 else 's'} " + \
        ("it" if window.moment else "a time in it")
    picks = f"the question's walk picks {len(pids)}, " if len(timed) > len(pids) else ""
    why = f"the question asks about the time {window.text}: {named}; {picks}in the order of their times: " + \
          ", ".join(f"{pid} ({minute // 60:02d}:{minute % 60:02d})" for pid, minute in picked)
    ex.rounds.append(round_record(pending, [], Reading(), [], why, started))
    return ahead(pids, ranking, top_k)
