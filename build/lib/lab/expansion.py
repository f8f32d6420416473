"""Query expansion, an option shared by every strategy: one LLM call turns an abstract question into
short statements of the concrete facts that would answer it. Generic prompt: its example is from another domain."""
from __future__ import annotations

import json

from llm import OpenAIClient, chat_json

EXPANSION_SYSTEM = (
    "A search engine matches statements, not questions. Rewrite the question as 2 to 4 short statements of the "
    "concrete facts a document would have to state to answer it. Replace abstract words by the everyday evidence "
    "they stand for (for example: 'reason' -> what someone wanted, needed or feared; 'chance' -> being at the "
    "place at the time). Do not answer the question and do not invent names. Answer with JSON only: "
    '{"statements": [...]}')
EXAMPLE_Q = "Which supplier was able to deliver the parts despite the strike?"
EXAMPLE_A = {"statements": ["A supplier kept its factory running during the strike",
                            "A supplier had parts in stock before the strike began",
                            "A supplier shipped the parts by another route"]}
SCHEMA = {"type": "object", "properties": {"statements": {"type": "array", "items": {"type": "string"},
                                                          "maxItems": 4}}, "required": ["statements"]}


def expand_query(client: OpenAIClient, model: str, question: str) -> list[str]:
    """Up to four short statements; an empty list when the model gives nothing usable."""
    out = chat_json(client, [{"role": "system", "content": EXPANSION_SYSTEM},
                             {"role": "user", "content": EXAMPLE_Q},
                             {"role": "assistant", "content": json.dumps(EXAMPLE_A)},
                             {"role": "user", "content": question}], model=model, schema=SCHEMA, max_tokens=160,
                   check=_statements)
    items = out.value.get("statements") if isinstance(out.value, dict) else None
    if not isinstance(items, list):
        return []
    seen, statements = set(), []
    for s in items:
        if isinstance(s, str) and s.strip() and s.strip().casefold() not in seen and s.strip() != question.strip():
            seen.add(s.strip().casefold())
            statements.append(" ".join(s.split())[:300])
    return statements[:4]


def _statements(value: object) -> None:
    if not (isinstance(value, dict) and isinstance(value.get("statements"), list)):
        raise ValueError('no "statements" list')
