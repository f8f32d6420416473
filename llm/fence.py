"""Untrusted text (documents, earlier model replies) fenced in a prompt's tags so it cannot close its own fence."""
from __future__ import annotations

import re

FENCE_TAGS = ("passage", "lead")   # every tag our prompts fence evidence in
_TAG = re.compile(r"<(/?)\s*(" + "|".join(FENCE_TAGS) + r")", re.IGNORECASE)


def fenced(text: str) -> str:
    """``text`` with any opening or closing fence tag broken ("</passage" becomes "</ passage")."""
    return _TAG.sub(lambda m: f"<{m.group(1)} {m.group(2)}", text)


def quoted(text: str) -> str:
    """``fenced`` text fit for a tag attribute: no double quote, no line break."""
    return fenced(text).replace('"', "'").replace("\n", " ")
