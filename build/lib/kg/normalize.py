"""Entity normalization: Unicode-safe, so "Zoë" stays "zoë" and "Mrs. Blackwood" meets "Mrs Blackwood"."""
from __future__ import annotations

import unicodedata

_APOSTROPHES = {"'", "\u2019", "\u2018", "`"}


def normalize_entity(text: str) -> str:
    """Casefold, drop apostrophes, turn other punctuation into spaces, collapse whitespace."""
    text = unicodedata.normalize("NFC", text).casefold()
    out = []
    for ch in text:
        if ch in _APOSTROPHES:
            continue
        out.append(" " if unicodedata.category(ch).startswith(("P", "S")) and ch not in "$%&+" else ch)
    return " ".join("".join(out).split())
