"""Lenient JSON extraction for what small models actually return.

Handles code fences, leading prose, <think> blocks, trailing commas, single-quoted
(Python-literal) JSON and truncated arrays. Never evaluates code: single-quoted
input goes through ``ast.literal_eval``, which only builds literals.
"""
from __future__ import annotations

import ast
import json
import re
from typing import Any

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)(?:```|$)", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([\]}])")


class JSONExtractionError(ValueError):
    """No JSON value could be recovered from a model's text."""


def strip_think(text: str) -> str:
    """Remove reasoning: <think>..</think> blocks, or everything before a lone </think>.

    Tags inside a JSON value (a string that happens to contain "</think>") are left alone.
    """
    for match in reversed(list(_THINK_BLOCK.finditer(text))):
        if not _inside_json(text, match.start()):
            text = text[:match.start()] + text[match.end():]
    lowered = text.lower()
    close = lowered.find("</think>")
    while close != -1 and _inside_json(text, close):
        close = lowered.find("</think>", close + 1)
    if close != -1:  # the opening tag was in the prompt: the reasoning ends at this closing tag
        text = text[close + len("</think>"):]
    elif lowered.lstrip().startswith("<think>"):  # unterminated: the model never finished thinking
        text = ""
    return text.strip()


def _inside_json(text: str, pos: int) -> bool:
    """Is ``pos`` inside a complete JSON object or array that starts before it?"""
    for start in [i for i, ch in enumerate(text[:pos]) if ch in "[{"][:50]:
        end = _matching_end(text, start)
        if end is not None and end > pos and _loads(text[start:end + 1]) is not None:
            return True
    return False


def extract_json(text: str) -> Any:
    """Return the first JSON object or array found in ``text``; raise JSONExtractionError if none."""
    if not isinstance(text, str):
        raise JSONExtractionError(f"expected text, got {type(text).__name__}")
    cleaned = strip_think(text)
    candidates = [m.group(1) for m in _FENCE.finditer(cleaned)] + [cleaned]
    for candidate in candidates:
        value = _parse_candidate(candidate)
        if value is not None:
            return value
    raise JSONExtractionError(f"no JSON object or array in model output: {_preview(text)}")


def _preview(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return repr(flat[:limit] + ("..." if len(flat) > limit else ""))


def _parse_candidate(candidate: str) -> Any:
    for start in _json_starts(candidate):
        opener = candidate[start]
        end = _matching_end(candidate, start)
        if end is not None:
            value = _loads(candidate[start:end + 1])
            if value is not None:
                return value
        elif opener == "[":
            value = _repair_truncated_array(candidate[start:])
            if value is not None:
                return value
        else:
            value = _repair_truncated_object(candidate[start:])
            if value is not None:
                return value
    return None


def _json_starts(text: str) -> list[int]:
    return [i for i, ch in enumerate(text) if ch in "[{"][:50]


def _brackets(text: str, start: int, quotes: str):
    """Yield (index, bracket, depth after it) for brackets outside string literals, from ``start``."""
    depth = 0
    quote: str | None = None
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch in quotes:
            # An apostrophe inside a word ("Victoria's") is not a quote.
            if not (ch == "'" and i > 0 and text[i - 1].isalnum()):
                quote = ch
        elif ch in "[{":
            depth += 1
            yield i, ch, depth
        elif ch in "]}":
            depth -= 1
            yield i, ch, depth


def _matching_end(text: str, start: int) -> int | None:
    """Index of the bracket closing text[start], honouring strings; None if never closed."""
    for i, _ch, depth in _brackets(text, start, "\"'"):
        if depth == 0:
            return i
    return None


def _loads(snippet: str) -> Any:
    for attempt in (snippet, _TRAILING_COMMA.sub(r"\1", snippet)):
        try:
            return json.loads(attempt)
        except (json.JSONDecodeError, RecursionError):
            pass
    try:
        # Python-style literals: single quotes, True/False/None. literal_eval never runs code.
        value = ast.literal_eval(_TRAILING_COMMA.sub(r"\1", snippet))
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None
    if not isinstance(value, (dict, list)):
        return None
    try:
        return json.loads(json.dumps(value))  # keep only JSON-representable values
    except (TypeError, ValueError):
        return None


def _repair_truncated_array(fragment: str) -> list | None:
    """Keep the complete items of an array cut off mid-way (e.g. by max_tokens)."""
    items: list = []
    item_start: int | None = None
    for i, ch, depth in _brackets(fragment, 0, '"'):
        if ch in "[{" and depth == 2 and item_start is None:
            item_start = i
        elif ch in "]}" and depth == 1 and item_start is not None:
            value = _loads(fragment[item_start:i + 1])
            if value is not None:
                items.append(value)
            item_start = None
    return items if items else None


def _repair_truncated_object(fragment: str) -> dict | None:
    """Recover {"key": [complete items ...]} from an object cut off inside its array."""
    match = re.match(r'\{\s*"([^"]+)"\s*:\s*(\[.*)', fragment, re.DOTALL)
    if not match:
        return None
    items = _repair_truncated_array(match.group(2))
    return {match.group(1): items} if items is not None else None
