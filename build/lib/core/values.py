"""Values written in text, normalised so different spellings meet: amounts of money ("EUR 12,500" ~ "€12,500"),
dates ("4 May 2023" ~ "4/5/2023", day first), clock times ("20:40" ~ "8:40 pm"), identifiers ("NX-4471") and
numbers ("two" ~ "2"). Answer scoring (lab.keyfacts) and the knowledge graph's deterministic extraction (kg.nlp)
both read text through these."""
from __future__ import annotations

import re

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
CODE = re.compile(r"\b[A-Z]{1,5}[-/]?\d[\w-]*\b")   # identifiers: NX-4471, B12, A4


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
