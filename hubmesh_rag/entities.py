"""Entity mentions per passage for hubmesh's graph: spaCy NER (cached on disk) or the knowledge graph's phrases.

hubmesh builds its entity-document graph by calling a spaCy pipeline on every passage. ``SavedMentions`` stands in for
that pipeline with mentions found once and saved (kg/mentions.py), so a rebuild runs no NER at all.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.types import Passage
from kg.mentions import Mentions, load_mentions, save_mentions
from kg.nlp import entities_of, load_spacy, processes_for

OPENIE_LABEL = "ORG"                      # any label hubmesh keeps; OpenIE phrases carry none


@dataclass(frozen=True)
class Span:
    text: str
    label_: str


@dataclass(frozen=True)
class Parsed:
    ents: tuple[Span, ...]


class SavedMentions:
    """Callable like a spaCy pipeline (``nlp(text).ents``), answering from mentions found beforehand."""

    def __init__(self, by_text: Mapping[str, Sequence[tuple[str, str]]]):
        self.by_text = by_text

    def __call__(self, text: str) -> Parsed:
        return Parsed(tuple(Span(t, label) for t, label in self.by_text.get(text, ())))


def spacy_mentions(passages: Sequence[Passage], folder: Path) -> Mentions:
    """Named-entity mentions of every passage text by spaCy: the saved ones (the knowledge graph's spaCy
    extraction saves them too) or, when none are, parsed now and saved."""
    texts = sorted({p.text for p in passages})
    found = load_mentions(folder, texts)
    if found is None:
        nlp = load_spacy()
        found = {text: entities_of(doc) for text, doc in
                 zip(texts, nlp.pipe(texts, batch_size=64, n_process=processes_for(texts)), strict=True)}
        save_mentions(folder, found)
    return found


def phrase_mentions(passages: Sequence[Passage], phrases: Sequence[str],
                    phrase_passages: Sequence[Sequence[str]]) -> Mentions:
    """The knowledge graph's phrases as the mentions of the passages they were extracted from."""
    text_of = {p.id: p.text for p in passages}
    found: dict[str, list] = {}
    for phrase, pids in zip(phrases, phrase_passages, strict=True):
        for pid in pids:
            found.setdefault(text_of[pid], []).append((phrase, OPENIE_LABEL))
    return found
