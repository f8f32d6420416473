"""Entity mentions per passage for hubmesh's graph: spaCy NER (cached on disk) or the knowledge graph's phrases.

hubmesh builds its entity-document graph by calling a spaCy pipeline on every passage. ``Mentions`` stands in for
that pipeline with mentions found once and saved, so a rebuild runs no NER at all.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.types import Passage
from kg.nlp import SPACY_MODEL, load_spacy

log = logging.getLogger(__name__)

OPENIE_LABEL = "ORG"                      # any label hubmesh keeps; OpenIE phrases carry none


@dataclass(frozen=True)
class Span:
    text: str
    label_: str


@dataclass(frozen=True)
class Parsed:
    ents: tuple[Span, ...]


class Mentions:
    """Callable like a spaCy pipeline (``nlp(text).ents``), answering from mentions found beforehand."""

    def __init__(self, by_text: Mapping[str, Sequence[tuple[str, str]]]):
        self.by_text = by_text

    def __call__(self, text: str) -> Parsed:
        return Parsed(tuple(Span(t, label) for t, label in self.by_text.get(text, ())))


def spacy_mentions(passages: Sequence[Passage], folder: Path, nlp_factory=load_spacy) -> dict[str, list]:
    """Named-entity mentions of every passage text by spaCy, computed once per set of texts and saved as JSON."""
    texts = sorted({p.text for p in passages})
    key = hashlib.sha256(json.dumps([SPACY_MODEL, texts]).encode()).hexdigest()[:20]
    path = folder / f"ner-{key}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        log.warning("saved mentions %s are unreadable (%s); running NER again", path, exc)
    nlp = nlp_factory()
    found = {text: [(e.text.strip(), e.label_) for e in doc.ents]
             for text, doc in zip(texts, nlp.pipe(texts, batch_size=64), strict=True)}
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".json.tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(found, fh, ensure_ascii=False)
    os.replace(tmp, path)   # whole or not at all
    return found


def phrase_mentions(passages: Sequence[Passage], phrases: Sequence[str],
                    phrase_passages: Sequence[Sequence[str]]) -> dict[str, list]:
    """The knowledge graph's phrases as the mentions of the passages they were extracted from."""
    text_of = {p.id: p.text for p in passages}
    found: dict[str, list] = {}
    for phrase, pids in zip(phrases, phrase_passages, strict=True):
        for pid in pids:
            found.setdefault(text_of[pid], []).append((phrase, OPENIE_LABEL))
    return found
