"""LLM OpenIE in two steps, as HippoRAG does: named entities first, then triples that use them (the default;
``MODES`` lists the one-call variants measured in benchmarks/indexing.py).

Prompts are one-shot and generic (the example is about nothing in any case). Output is schema-constrained
where the server supports it and always parsed leniently; a passage whose output cannot be parsed after one
retry is recorded as failed with its raw text, and extraction goes on.
"""
from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field

from core.types import Passage, Progress, ProgressUpdate
from llm import LLMError, OpenAIClient, chat_json

from .normalize import normalize_entity

log = logging.getLogger(__name__)

PROMPT_VERSION = "openie-v1"
STAGE = "openie"   # the progress stage of extract()

_EXAMPLE_PASSAGE = ("Dr. Ana Silva joined the Lisbon Maritime Museum in 2015. She later led its restoration of the "
                    "schooner Santa Clara, which reopened to visitors at 9 AM on 4 May 2019 after a $3 million refit.")
_EXAMPLE_ENTITIES = ["Dr. Ana Silva", "Lisbon Maritime Museum", "2015", "schooner Santa Clara", "9 AM",
                     "4 May 2019", "$3 million"]
_EXAMPLE_TRIPLES = [
    ["Dr. Ana Silva", "joined", "Lisbon Maritime Museum"],
    ["Dr. Ana Silva", "joined museum in", "2015"],
    ["Dr. Ana Silva", "led restoration of", "schooner Santa Clara"],
    ["Lisbon Maritime Museum", "restored", "schooner Santa Clara"],
    ["schooner Santa Clara", "reopened at", "9 AM"],
    ["schooner Santa Clara", "reopened on", "4 May 2019"],
    ["schooner Santa Clara", "had refit costing", "$3 million"],
]

# The parts the prompts share, so the one-call prompt asks for exactly what the two calls ask for.
_ENTITY_KINDS = ("every person, organisation, place, named object, date, time and amount, written exactly as in the "
                 "passage")
_TRIPLE_RULES = ("replace pronouns (he, she, it, they) and possessives (her, his, its) with the full name they refer "
                 "to; keep subjects and objects short noun phrases; keep dates, times and amounts as objects; state "
                 "only what the passage says. Answer with JSON only: ")
NER_SYSTEM = (f"[{PROMPT_VERSION}] You extract named entities from a passage. List {_ENTITY_KINDS}. Answer with JSON "
              'only: {"named_entities": [...]}')
TRIPLE_SYSTEM = (f"[{PROMPT_VERSION}] You build a knowledge graph from a passage. Write (subject, relation, object) "
                 "triples for the facts the passage states. Rules: every triple contains at least one of the given "
                 f"named entities; {_TRIPLE_RULES}" + '{"triples": [[subject, relation, object], ...]}')
JOINT_SYSTEM = (f"[{PROMPT_VERSION}-joint] You build a knowledge graph from a passage. First list {_ENTITY_KINDS}. "
                "Then write (subject, relation, object) triples for the facts the passage states. Rules: every triple "
                f"contains at least one of the named entities; {_TRIPLE_RULES}"
                + '{"named_entities": [...], "triples": [[subject, relation, object], ...]}')

TRIPLES_SYSTEM = (f"[{PROMPT_VERSION}-triples] You build a knowledge graph from a passage. Write (subject, relation, "
                  f"object) triples for the facts the passage states; subjects and objects name {_ENTITY_KINDS}. "
                  f"Rules: {_TRIPLE_RULES}" + '{"triples": [[subject, relation, object], ...]}')

NER_SCHEMA: dict = {"type": "object", "properties": {"named_entities": {
    "type": "array", "items": {"type": "string"}, "maxItems": 40}}, "required": ["named_entities"]}
TRIPLE_SCHEMA: dict = {"type": "object", "properties": {"triples": {
    "type": "array", "maxItems": 40,
    "items": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3}}},
    "required": ["triples"]}


JOINT_SCHEMA = {"type": "object", "properties": {**NER_SCHEMA["properties"], **TRIPLE_SCHEMA["properties"]},
                "required": ["named_entities", "triples"]}
# Two calls per passage (HippoRAG's); entities and triples in one reply; or triples alone in one reply (the
# shortest output: no entity list, so no triple is dropped for naming none of the listed entities).
MODES = ("two-step", "joint", "triples")


def one_call_messages(text: str, mode: str) -> list[dict]:
    """The prompt of a one-call mode: instructions, the one-shot example and its answer, then the passage."""
    system, example = ((JOINT_SYSTEM, {"named_entities": _EXAMPLE_ENTITIES, "triples": _EXAMPLE_TRIPLES})
                       if mode == "joint" else (TRIPLES_SYSTEM, {"triples": _EXAMPLE_TRIPLES}))
    return [{"role": "system", "content": system},
            {"role": "user", "content": f"Passage:\n{_EXAMPLE_PASSAGE}"},
            {"role": "assistant", "content": json.dumps(example)},
            {"role": "user", "content": f"Passage:\n{text}"}]


def ner_messages(text: str) -> list[dict]:
    return [{"role": "system", "content": NER_SYSTEM},
            {"role": "user", "content": f"Passage:\n{_EXAMPLE_PASSAGE}"},
            {"role": "assistant", "content": json.dumps({"named_entities": _EXAMPLE_ENTITIES})},
            {"role": "user", "content": f"Passage:\n{text}"}]


def triple_messages(text: str, entities: list[str]) -> list[dict]:
    return [{"role": "system", "content": TRIPLE_SYSTEM},
            {"role": "user", "content": f"Passage:\n{_EXAMPLE_PASSAGE}\n\nNamed entities: {json.dumps(_EXAMPLE_ENTITIES)}"},
            {"role": "assistant", "content": json.dumps({"triples": _EXAMPLE_TRIPLES})},
            {"role": "user", "content": f"Passage:\n{text}\n\nNamed entities: {json.dumps(entities, ensure_ascii=False)}"}]


@dataclass
class PassageExtraction:
    passage_id: str
    entities: list[str] = field(default_factory=list)
    triples: list[tuple[str, str, str]] = field(default_factory=list)
    failed_stage: str = ""     # "" when it worked, else "ner", "triples" or "joint"
    error: str = ""
    raw: str = ""              # the unparseable model output, kept for inspection
    llm_calls: int = 0


@dataclass
class OpenIEResult:
    passages: list[PassageExtraction]
    model: str

    @property
    def failures(self) -> list[PassageExtraction]:
        return [p for p in self.passages if p.failed_stage]

    @property
    def llm_calls(self) -> int:
        return sum(p.llm_calls for p in self.passages)

    def triples(self) -> list[tuple[str, str, str, str]]:
        """(passage id, subject, relation, object) for every extracted triple."""
        return [(p.passage_id, *t) for p in self.passages for t in p.triples]


def clean_entities(value) -> list[str]:
    items = value.get("named_entities", value.get("entities")) if isinstance(value, dict) else value
    if not isinstance(items, list):
        raise ValueError("no list of named entities")
    seen, out = set(), []
    for item in items:
        if isinstance(item, str) and item.strip() and normalize_entity(item) and normalize_entity(item) not in seen:
            seen.add(normalize_entity(item))
            out.append(" ".join(item.split()))
    return out


def clean_triples(value, entities: Sequence[str]) -> list[tuple[str, str, str]]:
    """Keep well-formed, de-duplicated triples that mention at least one named entity."""
    items = value.get("triples") if isinstance(value, dict) else value
    if not isinstance(items, list):
        raise ValueError("no list of triples")
    keys = [normalize_entity(e) for e in entities if normalize_entity(e)]
    seen, out = set(), []
    for item in items:
        if isinstance(item, dict):
            item = [item.get("subject"), item.get("relation", item.get("predicate")), item.get("object")]
        if not isinstance(item, list) or len(item) != 3 or not all(isinstance(x, str) for x in item):
            continue
        s, r, o = (" ".join(x.split()) for x in item)
        if not (s and r and o) or not normalize_entity(s) or not normalize_entity(o):
            continue
        if keys and not any(_mentions(normalize_entity(part), keys) for part in (s, o)):
            continue
        key = (normalize_entity(s), r.casefold(), normalize_entity(o))
        if key not in seen:
            seen.add(key)
            out.append((s, r, o))
    return out


def _mentions(phrase: str, keys: list[str]) -> bool:
    return any(k == phrase or k in phrase or (len(phrase) > 3 and phrase in k) for k in keys)


def extract_one_call(client: OpenAIClient, model: str, passage: Passage, mode: str) -> PassageExtraction:
    """Entities and triples (``joint``) or triples alone (``triples``) in one call: the passage is read once."""
    out = PassageExtraction(passage_id=passage.id)
    with_entities = mode == "joint"

    def read(value) -> tuple[list[str], list[tuple[str, str, str]]]:
        entities = clean_entities(value) if with_entities else []
        return entities, clean_triples(value, entities)

    reply = chat_json(client, one_call_messages(passage.text, mode), model=model,
                      schema=JOINT_SCHEMA if with_entities else TRIPLE_SCHEMA, max_tokens=1200, check=read)
    out.llm_calls += reply.calls
    try:
        out.entities, out.triples = read(reply.value)
    except ValueError as exc:
        out.failed_stage, out.error, out.raw = mode, reply.error or str(exc), reply.raw
    return out


def extract_two_step(client: OpenAIClient, model: str, passage: Passage) -> PassageExtraction:
    """Entities first, then triples that use them (HippoRAG's two calls)."""
    out = PassageExtraction(passage_id=passage.id)
    ner = chat_json(client, ner_messages(passage.text), model=model, schema=NER_SCHEMA, max_tokens=300,
                    check=clean_entities)
    out.llm_calls += ner.calls
    try:
        out.entities = clean_entities(ner.value)
    except ValueError as exc:
        out.failed_stage, out.error, out.raw = "ner", ner.error or str(exc), ner.raw
        return out
    tri = chat_json(client, triple_messages(passage.text, out.entities), model=model, schema=TRIPLE_SCHEMA,
                    max_tokens=900, check=lambda value: clean_triples(value, out.entities))
    out.llm_calls += tri.calls
    try:
        out.triples = clean_triples(tri.value, out.entities)
    except ValueError as exc:
        out.failed_stage, out.error, out.raw = "triples", tri.error or str(exc), tri.raw
    return out


def extract(client: OpenAIClient, model: str, passages: Sequence[Passage], *, workers: int = 1,
            progress: Progress | None = None, mode: str = "two-step") -> OpenIEResult:
    """Run OpenIE over ``passages`` (``workers`` requests at once). Raises only if the server is unusable."""
    if mode not in MODES:
        raise ValueError(f"OpenIE mode must be one of {', '.join(MODES)}, not {mode!r}")

    def extract_passage(client: OpenAIClient, model: str, passage: Passage) -> PassageExtraction:
        if mode == "two-step":
            return extract_two_step(client, model, passage)
        return extract_one_call(client, model, passage, mode)

    results: dict[str, PassageExtraction] = {}
    lock = threading.Lock()
    done = 0

    def report(res: PassageExtraction) -> None:
        nonlocal done
        with lock:
            results[res.passage_id] = res
            done += 1
            if res.failed_stage:
                log.warning("OpenIE failed on passage %s at %s: %s", res.passage_id, res.failed_stage, res.error)
            if progress:
                note = f"{res.passage_id}: " + (f"failed at {res.failed_stage}" if res.failed_stage
                                                 else f"{len(res.triples)} triples")
                progress(ProgressUpdate(STAGE, done, len(passages), note,
                                        tuple((res.passage_id, *t) for t in res.triples)))

    if workers <= 1:
        for p in passages:
            report(extract_passage(client, model, p))
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(extract_passage, client, model, p) for p in passages]
            try:
                for fut in as_completed(futures):
                    report(fut.result())
            except LLMError:
                for f in futures:
                    f.cancel()
                raise
    return OpenIEResult(passages=[results[p.id] for p in passages], model=model)
