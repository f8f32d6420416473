"""The answer step: the SAME prompt and model for every strategy, so answers differ only by retrieval."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.types import Passage
from llm import OpenAIClient, chat_json

ANSWER_SYSTEM = (
    "You answer questions about a case file using only the passages given. Combine facts from several passages "
    "when the question needs it: compare times, match people, places and objects across passages, and draw the "
    "conclusion they support. Cite every passage you use by its id in square brackets, for example [D4]. Give the "
    "answer first, then the reason, in one to three sentences. Only if no passage is relevant, answer: "
    "I cannot tell from these passages.")

JUDGE_SYSTEM = (
    "You grade answers. Given a question, the expected answer and a candidate answer, decide whether the candidate "
    "reaches the same conclusion as the expected answer (wording may differ; extra correct detail is fine). "
    'Answer with JSON only: {"correct": true or false}')
JUDGE_SCHEMA = {"type": "object", "properties": {"correct": {"type": "boolean"}}, "required": ["correct"]}


@dataclass
class Answer:
    text: str
    elapsed_ms: float
    cached: bool


def answer_messages(question: str, passages: Sequence[Passage]) -> list[dict]:
    context = "\n\n".join(f"[{p.id}] {p.title}: {p.text}" for p in passages) or "(no passages)"
    return [{"role": "system", "content": ANSWER_SYSTEM},
            {"role": "user", "content": f"Passages:\n{context}\n\nQuestion: {question}"}]


def answer(client: OpenAIClient, model: str, question: str, passages: Sequence[Passage],
           max_tokens: int = 200, on_text: Callable[[str], None] | None = None) -> Answer:
    """The answer from these passages; ``on_text`` sees it as it streams."""
    t = time.perf_counter()
    result = client.chat(answer_messages(question, passages), model=model, max_tokens=max_tokens, on_text=on_text)
    return Answer(text=result.text, elapsed_ms=(time.perf_counter() - t) * 1000, cached=result.cached)


def judge(client: OpenAIClient, model: str, question: str, expected: str, candidate: str) -> bool | None:
    """An LLM's verdict on a long answer; None when it gives no readable verdict. Reported apart from EM/F1."""
    out = chat_json(client, [{"role": "system", "content": JUDGE_SYSTEM},
                             {"role": "user", "content": f"Question: {question}\nExpected answer: {expected}\n"
                                                         f"Candidate answer: {candidate}"}],
                    model=model, schema=JUDGE_SCHEMA, max_tokens=20, check=_verdict)
    value = out.value.get("correct") if isinstance(out.value, dict) else None
    return value if isinstance(value, bool) else None


def _verdict(value: object) -> None:
    if not (isinstance(value, dict) and isinstance(value.get("correct"), bool)):
        raise ValueError('no "correct": true or false')
