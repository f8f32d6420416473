"""Structured (JSON) calls: schema-constrained where the server can, always parsed leniently."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .client import Message, OpenAIClient
from .jsonparse import JSONExtractionError, extract_json


@dataclass
class JSONResult:
    value: Any | None     # the parsed JSON, or None when nothing could be parsed
    raw: str              # the model's text, kept for inspection
    error: str = ""
    calls: int = 0        # chat calls made (0 when served from the cache)


def chat_json(client: OpenAIClient, messages: list[Message], *, model: str, schema: dict | None = None,
              max_tokens: int = 512, retries: int = 1) -> JSONResult:
    """Ask for JSON; on unparseable output retry once (uncached, with a reminder), then give up softly."""
    raw, error, calls = "", "", 0
    for attempt in range(retries + 1):
        msgs = messages if attempt == 0 else messages + [
            {"role": "assistant", "content": raw[:2000]},
            {"role": "user", "content": "That was not valid JSON. Answer again with only the JSON value."}]
        result = client.chat(msgs, model=model, max_tokens=max_tokens, json_schema=schema)
        calls += 0 if result.cached else 1
        raw = result.text
        try:
            return JSONResult(value=extract_json(raw), raw=raw, calls=calls)
        except JSONExtractionError as exc:
            error = str(exc)
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
        model=model, schema=SELECT_SCHEMA, max_tokens=max_tokens)
    numbers = out.value.get("relevant") if isinstance(out.value, dict) else None
    if not isinstance(numbers, list):
        return None
    keep = {n for n in numbers if isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= len(items)}
    return [n - 1 for n in sorted(keep)]
