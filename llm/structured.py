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
