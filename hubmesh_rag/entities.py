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
from kg.nlp import SPACY_MODEL, load_spacy, processes_for

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
        saved = json.loads(path.read_text(encoding="utf-8"))
        if _well_formed(saved, texts):
            return saved
        log.warning("saved mentions %s do not have the expected shape (text -> [[entity, label], ...] for every "
                    "passage); running NER again", path)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        log.warning("saved mentions %s are unreadable (%s); running NER again", path, exc)
    nlp = nlp_factory()
    found = {text: [(e.text.strip(), e.label_) for e in doc.ents]
             for text, doc in zip(texts, nlp.pipe(texts, batch_size=64, n_process=processes_for(texts)), strict=True)}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".json.tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(found, fh, ensure_ascii=False)
            os.replace(tmp, path)   # whole or not at all
        finally:
            Path(tmp).unlink(missing_ok=True)
    except OSError as exc:   # a file where the folder should be, a full disk: the mentions still serve this run
        log.warning("cannot save the NER mentions in %s (%s): they are used for this run and computed again "
                    "next time; make it a writable folder", folder, exc.strerror or exc)
    return found


def _well_formed(saved: object, texts: Sequence[str]) -> bool:
    return isinstance(saved, dict) and all(
        isinstance(saved.get(t), list) and all(isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) for x in m)
                                               for m in saved[t]) for t in texts)


def phrase_mentions(passages: Sequence[Passage], phrases: Sequence[str],
                    phrase_passages: Sequence[Sequence[str]]) -> dict[str, list]:
    """The knowledge graph's phrases as the mentions of the passages they were extracted from."""
    text_of = {p.id: p.text for p in passages}
    found: dict[str, list] = {}
    for phrase, pids in zip(phrases, phrase_passages, strict=True):
        for pid in pids:
            found.setdefault(text_of[pid], []).append((phrase, OPENIE_LABEL))
    return found
