"""Key-fact answer scoring: an expected answer is split into the facts it states (amounts, dates, times, numbers,
proper names, and the content words of short answers); an answer is scored by the share of them it contains.

People write expected answers as sentences ("At 20:40; his terrier is called Biscuit."), so whole-string
matching calls right answers wrong. Values are compared normalized: "EUR 12,500" ~ "€12,500" ~ "12,500 euros",
"4 May 2023" ~ "4/5/2023" (day first) ~ "May 4, 2023", "20:40" ~ "8:40 pm", "two" ~ "2"; a surname alone matches
the full name. Parenthesised parts of the expected answer are optional. Nothing here knows any case.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from core.values import amounts, codes, dates, numbers, times

STOPWORDS = set("""a an the and or but of to in on at by for with from as is was were are be been being it its this that
these those he she they him her his their them we our you your i me my who whom whose which what when where why how
than then there here not no yes did does do done has have had about after before into over under up down out so
very also only just still yet all any some each every both either neither one more most less least such own same
other another while during until since because if would could should will shall may might must can""".split())
NO_ANSWER = re.compile(r"\b(cannot|can ?not|can't|unable to) (tell|say|determine|answer|know)|\bnot enough "
                       r"information\b|\b(do|does|did) not (say|mention|state|tell)|\bno information\b|"
                       r"\bi (do not|don't) know\b|\bnot (stated|mentioned|specified|given)\b", re.IGNORECASE)

NAME = re.compile(r"\b([A-Z][\w'’-]*\.?(?:\s+(?:[A-Z][\w'’-]*|of|de|van|von|da|del|le|la))*)")
WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
SHORT_ANSWER_WORDS = 12
TITLES = {"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "pc", "dc", "di", "sgt", "lord", "lady", "st", "mt"}


@dataclass(frozen=True)
class KeyFact:
    text: str               # as written in the expected answer
    kind: str               # code, amount, date, time, number, name, word, polarity
    value: str              # the normalized value compared with the answer's
    optional: bool = False  # from a parenthesised part: counts when found, never when missing


@dataclass
class KeyFactScore:
    found: list[KeyFact] = field(default_factory=list)
    missing: list[KeyFact] = field(default_factory=list)
    optional_found: list[KeyFact] = field(default_factory=list)
    share: float = 0.0      # found / required facts
    no_answer: bool = False  # the answer says the passages do not tell

    def to_dict(self) -> dict:
        return {"found": [f.text for f in self.found], "missing": [f.text for f in self.missing],
                "optional_found": [f.text for f in self.optional_found], "share": round(self.share, 4),
                "no_answer": self.no_answer, "facts": [asdict(f) for f in self.found + self.missing]}


# -- normalization ------------------------------------------------------------------------------------------
def words(text: str) -> set[str]:
    return {_stem(w) for w in WORD.findall(_fold(text))}


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().replace("’", "'")


def _stem(word: str) -> str:
    """A light stem so "bells" meets "bell" and "officers" meets "officer"."""
    word = word.removesuffix("'s")
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _mask(text: str, spans: Sequence[str]) -> str:
    for s in spans:
        text = text.replace(s, " ")
    return text


# -- splitting an expected answer ------------------------------------------------------------------------------
def split_key_facts(expected: str, question: str = "", explicit: Sequence[str] = ()) -> list[KeyFact]:
    """The key facts of an expected answer (or of the question's explicit ``key_facts`` list).

    A fact the question itself states is no key fact: "Where was Mr. Blackwood?" is not answered by naming him.
    """
    if explicit:
        facts = []
        for item in explicit:
            found = _facts_in(item, optional=False, short=True)
            facts += found or [KeyFact(item, "word", _stem(_fold(item)))]
        return _dedupe(facts)
    optional_parts = re.findall(r"\(([^)]*)\)", expected)
    required = re.sub(r"\([^)]*\)", " ", expected)
    # Content words count only in a short answer that states nothing more specific ("bronze bells").
    facts = _new(_facts_in(required, optional=False, short=False), question)
    if not facts and len(WORD.findall(required)) <= SHORT_ANSWER_WORDS:
        facts = _new(_facts_in(required, optional=False, short=True), question)
    for part in optional_parts:
        facts += _new(_facts_in(part, optional=True, short=True), question)
    return _dedupe(facts)


def _new(facts: list[KeyFact], question: str) -> list[KeyFact]:
    """The facts the question does not already state."""
    if not question:
        return facts
    stated = {(f.kind, f.value) for f in score_answer(question, facts).found if f.kind != "polarity"}
    return [f for f in facts if (f.kind, f.value) not in stated]


def _facts_in(text: str, optional: bool, short: bool) -> list[KeyFact]:
    facts: list[KeyFact] = []
    first = WORD.findall(_fold(text))[:1]
    if first and first[0] in ("yes", "no"):
        facts.append(KeyFact(first[0], "polarity", first[0], optional))
    rest = text
    for kind, finder in (("code", codes), ("amount", amounts), ("date", dates), ("time", times),
                         ("number", numbers)):
        spans = finder(rest)
        facts += [KeyFact(t.strip(), kind, v, optional) for t, v in spans]
        rest = _mask(rest, [t for t, _ in spans])
    for m in NAME.finditer(rest):
        name = m.group(1).strip()
        tokens = [t for t in WORD.findall(name) if _fold(t) not in STOPWORDS]
        if not tokens:
            continue
        at_start = rest[:m.start()].strip() == "" or rest[:m.start()].rstrip()[-1:] in ".;:!?"
        if at_start and len(tokens) == 1 and not short:
            continue   # a capitalized first word of a sentence is usually not a name
        facts.append(KeyFact(name, "name", _name_key(name), optional))
        rest = rest.replace(name, " ", 1)
    if short:
        facts += [KeyFact(w, "word", _stem(w), optional) for w in WORD.findall(_fold(rest))
                  if w not in STOPWORDS and len(w) > 1]
    return facts


def _name_key(name: str) -> str:
    """The surname (last token that is not a title): a surname alone matches the full name."""
    tokens = [t for t in WORD.findall(_fold(name)) if t not in STOPWORDS]
    real = [t for t in tokens if t.rstrip(".") not in TITLES] or tokens
    return _stem(real[-1])


def _dedupe(facts: list[KeyFact]) -> list[KeyFact]:
    seen, out = set(), []
    for f in facts:
        if (f.kind, f.value) not in seen:
            seen.add((f.kind, f.value))
            out.append(f)
    return out


# -- scoring an answer -------------------------------------------------------------------------------------------
def score_answer(answer: str, facts: Sequence[KeyFact]) -> KeyFactScore:
    """Which facts the answer contains, compared by normalized value."""
    values = {"amount": {v for _, v in amounts(answer)}, "date": {v for _, v in dates(answer)},
              "time": {v for _, v in times(answer)}, "code": {v for _, v in codes(answer)}}
    values["number"] = {v for _, v in numbers(answer)} | {v.split()[1] for v in values["amount"]}
    folded_words = words(answer)
    first = WORD.findall(_fold(answer))[:1]
    out = KeyFactScore(no_answer=bool(NO_ANSWER.search(answer)) and len(WORD.findall(answer)) <= 40)
    for f in facts:
        if f.kind == "polarity":
            hit = bool(first) and first[0] == f.value
        elif f.kind in ("name", "word"):
            hit = f.value in folded_words
        else:
            hit = f.value in values[f.kind]
        if hit:
            (out.optional_found if f.optional else out.found).append(f)
        elif not f.optional:
            out.missing.append(f)
    required = len(out.found) + len(out.missing)
    out.share = len(out.found) / required if required else 0.0
    return out
