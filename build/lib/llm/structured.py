"""Structured (JSON) calls: schema-constrained where the server can, always parsed leniently."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .client import Message, OpenAIClient
from .jsonparse import extract_json


@dataclass
class JSONResult:
    value: Any | None     # the parsed JSON, or None when nothing could be parsed
    raw: str              # the model's text, kept for inspection
    error: str = ""
    calls: int = 0        # chat calls made (0 when served from the cache)


def chat_json(client: OpenAIClient, messages: list[Message], *, model: str, schema: dict | None = None,
              max_tokens: int = 512, retries: int = 1, check: Callable[[Any], object] | None = None) -> JSONResult:
    """Ask for JSON; on unreadable output retry (with a reminder), then give up softly.

    ``check`` raises ValueError when the parsed value has the wrong shape. Only replies that parse and pass it
    are cached, so a bad reply is asked again on the next run instead of being served forever.
    """
    def read(text: str) -> Any:
        value = extract_json(text)
        if check is not None:
            check(value)
        return value

    def readable(text: str) -> bool:
        try:
            read(text)
            return True
        except ValueError:   # JSONExtractionError is one
            return False

    raw, error, calls = "", "", 0
    for attempt in range(retries + 1):
        msgs = messages if attempt == 0 else messages + [
            {"role": "assistant", "content": raw[:2000]},
            {"role": "user", "content": f"That answer was not usable ({error[:200]}). Answer again with only the "
                                        "JSON value."}]
        result = client.chat(msgs, model=model, max_tokens=max_tokens, json_schema=schema, accept=readable)
        calls += 0 if result.cached else 1
        raw = result.text
        try:
            return JSONResult(value=read(raw), raw=raw, calls=calls)
        except ValueError as exc:
            error = str(exc) or type(exc).__name__
    return JSONResult(value=None, raw=raw, error=error, calls=calls)


SELECT_SCHEMA = {"type": "object", "properties": {"relevant": {"type": "array", "items": {"type": "integer"},
                                                               "maxItems": 20}}, "required": ["relevant"]}


def select_relevant(client: OpenAIClient, model: str, question: str, items: list[str], item: str = "fact",
                    max_tokens: int = 120) -> list[int] | None:
    """One call: which of the numbered ``items`` help answer ``question``. Indices into ``items`` (0-based), in
    their original order; None when the reply is unreadable (callers then keep their own order)."""
    listing = "\n".join(f"{n}. {text}" for n, text in enumerate(items, 1))
    out = chat_json(client, [
        {"role": "system", "content": f"You select {item}s that help answer a question. Keep a {item} if it is "
                                      "about something the question asks about or needs. Answer with JSON only: "
                                      f'{{"relevant": [{item} numbers]}}'},
        {"role": "user", "content": f"Question: {question}\n\n{item.capitalize()}s:\n{listing}"}],
        model=model, schema=SELECT_SCHEMA, max_tokens=max_tokens, check=_numbers)
    numbers = out.value.get("relevant") if isinstance(out.value, dict) else None
    if not isinstance(numbers, list):
        return None
    keep = {n for n in numbers if isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= len(items)}
    return [n - 1 for n in sorted(keep)]


def _numbers(value: Any) -> None:
    if not (isinstance(value, dict) and isinstance(value.get("relevant"), list)):
        raise ValueError('no "relevant" list')
