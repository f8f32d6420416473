"""Reading a question for graph linking: the entities it names, by one LLM call."""
from __future__ import annotations

from llm import OpenAIClient, chat_json

QUESTION_NER_SCHEMA = {"type": "object", "properties": {"entities": {"type": "array", "items": {"type": "string"},
                                                                     "maxItems": 10}}, "required": ["entities"]}


def question_ner_messages(question: str) -> list[dict]:
    """One-shot: name the question's own entities (proper names, titles, dates), never generic categories."""
    return [{"role": "system", "content": "List the named entities that appear in the question: proper names of "
                                          "people, organisations, places and works, and dates, copied as written. "
                                          'Skip generic words. Answer with JSON only: {"entities": [...]}'},
            {"role": "user", "content": "Which museum hired the woman who restored the schooner Santa Clara in 2019?"},
            {"role": "assistant", "content": '{"entities": ["schooner Santa Clara", "2019"]}'},
            {"role": "user", "content": question}]


def name_question_entities(client: OpenAIClient, model: str, question: str) -> list[str]:
    """The entities the question names, as written; [] when the model names none or answers unreadably."""
    out = chat_json(client, question_ner_messages(question), model=model, schema=QUESTION_NER_SCHEMA, max_tokens=150)
    items = out.value.get("entities") if isinstance(out.value, dict) else None
    return [e.strip() for e in items if isinstance(e, str) and e.strip()] if isinstance(items, list) else []
