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

MONTHS = {m: i for i, m in enumerate(["january", "february", "march", "april", "may", "june", "july", "august",
                                      "september", "october", "november", "december"], 1)}
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
MONTHS["sept"] = 9
NUMBER_WORDS = {w: i for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                                            "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen",
                                            "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}
SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9}
CURRENCIES = {"€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR", "$": "USD", "usd": "USD", "dollar": "USD",
              "dollars": "USD", "£": "GBP", "gbp": "GBP", "pound": "GBP", "pounds": "GBP", "¥": "JPY", "jpy": "JPY",
              "yen": "JPY", "chf": "CHF", "francs": "CHF"}
STOPWORDS = set("""a an the and or but of to in on at by for with from as is was were are be been being it its this that
these those he she they him her his their them we our you your i me my who whom whose which what when where why how
than then there here not no yes did does do done has have had about after before into over under up down out so
very also only just still yet all any some each every both either neither one more most less least such own same
other another while during until since because if would could should will shall may might must can""".split())
NO_ANSWER = re.compile(r"\b(cannot|can ?not|can't|unable to) (tell|say|determine|answer|know)|\bnot enough "
                       r"information\b|\b(do|does|did) not (say|mention|state|tell)|\bno information\b|"
                       r"\bi (do not|don't) know\b|\bnot (stated|mentioned|specified|given)\b", re.IGNORECASE)

_NUM = r"\d{1,3}(?:[,\u202f ]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_CUR_SYMBOLS = "|".join(re.escape(c) for c in sorted(CURRENCIES, key=len, reverse=True))
AMOUNT_BEFORE = re.compile(rf"(?<!\w)({_CUR_SYMBOLS})\s?({_NUM})(?:\s?(thousand|million|billion|bn|mn|k|m)\b)?",
                           re.IGNORECASE)
AMOUNT_AFTER = re.compile(rf"\b({_NUM})(?:\s?(thousand|million|billion|bn|mn|k|m)\b)?\s?({_CUR_SYMBOLS})(?!\w)",
                          re.IGNORECASE)
TIME = re.compile(r"\b(\d{1,2})(?:[:.h](\d{2}))?\s*(a\.?m\.?|p\.?m\.?)(?!\w)|\b(\d{1,2})[:h](\d{2})\b", re.IGNORECASE)
_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
DATE_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_NAMES})\.?,?\s+(\d{{4}})\b", re.IGNORECASE)
DATE_MDY = re.compile(rf"\b({_MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.IGNORECASE)
DATE_NUMERIC = re.compile(r"\b(\d{1,2})[/.](\d{1,2})[/.](\d{4})\b")
DATE_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
NUMBER = re.compile(rf"(?<![\w.])({_NUM})(?![\w.]|\.\d)|\b({'|'.join(NUMBER_WORDS)})\b", re.IGNORECASE)
NAME = re.compile(r"\b([A-Z][\w'’-]*\.?(?:\s+(?:[A-Z][\w'’-]*|of|de|van|von|da|del|le|la))*)")
WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
SHORT_ANSWER_WORDS = 12
CODE = re.compile(r"\b[A-Z]{1,5}[-/]?\d[\w-]*\b")   # identifiers: NX-4471, B12, A4
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
def number_value(text: str, scale: str | None = None) -> float:
    text = text.strip().lower()
    if text in NUMBER_WORDS:
        value = float(NUMBER_WORDS[text])
    else:
        value = float(re.sub(r"[,\u202f ]", "", text))
    return value * SCALES.get((scale or "").lower(), 1.0)


def _num(value: float) -> str:
    return f"{value:.6g}" if value != int(value) else str(int(value))


def amounts(text: str) -> list[tuple[str, str]]:
    """(text, "CUR value") for every amount of money."""
    out = [(m.group(0), f"{CURRENCIES[m.group(1).lower()]} {_num(number_value(m.group(2), m.group(3)))}")
           for m in AMOUNT_BEFORE.finditer(text)]
    out += [(m.group(0), f"{CURRENCIES[m.group(3).lower()]} {_num(number_value(m.group(1), m.group(2)))}")
            for m in AMOUNT_AFTER.finditer(text)]
    return out


def times(text: str) -> list[tuple[str, str]]:
    """(text, "HH:MM") on a 24-hour clock."""
    out = []
    for m in TIME.finditer(text):
        if m.group(3):
            hour, minute = int(m.group(1)), int(m.group(2) or 0)
            pm = m.group(3).lower().startswith("p")
            if not 1 <= hour <= 12:
                continue
            hour = hour % 12 + (12 if pm else 0)
        else:
            hour, minute = int(m.group(4)), int(m.group(5))
        if hour < 24 and minute < 60:
            out.append((m.group(0), f"{hour:02d}:{minute:02d}"))
    return out


def dates(text: str) -> list[tuple[str, str]]:
    """(text, "YYYY-MM-DD"); numeric dates are read day first (4/5/2023 is 4 May)."""
    found = []
    for m in DATE_DMY.finditer(text):
        found.append((m.group(0), int(m.group(3)), MONTHS[m.group(2).lower().rstrip(".")], int(m.group(1))))
    for m in DATE_MDY.finditer(text):
        found.append((m.group(0), int(m.group(3)), MONTHS[m.group(1).lower().rstrip(".")], int(m.group(2))))
    for m in DATE_NUMERIC.finditer(text):
        found.append((m.group(0), int(m.group(3)), int(m.group(2)), int(m.group(1))))
    for m in DATE_ISO.finditer(text):
        found.append((m.group(0), int(m.group(1)), int(m.group(2)), int(m.group(3))))
    return [(t, f"{y:04d}-{mo:02d}-{d:02d}") for t, y, mo, d in found if 1 <= mo <= 12 and 1 <= d <= 31]


def codes(text: str) -> list[tuple[str, str]]:
    """(text, compact form) for identifiers such as "NX-4471" (compared without separators)."""
    return [(m.group(0), re.sub(r"[^0-9a-z]", "", m.group(0).casefold())) for m in CODE.finditer(text)]


def numbers(text: str) -> list[tuple[str, str]]:
    return [(m.group(0), _num(number_value(m.group(0)))) for m in NUMBER.finditer(text)]


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
