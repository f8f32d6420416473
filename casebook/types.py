"""The things that travel between packages. This module imports nothing of ours."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str


@dataclass(frozen=True)
class Passage:
    """A retrievable unit: a whole short document, or one piece of a long one."""
    id: str        # equals doc_id when the document is a single passage
    doc_id: str
    title: str
    text: str

    @property
    def embedding_text(self) -> str:
        """What retrievers embed: the title (when it is a real title) and the text."""
        return f"{self.title}\n{self.text}" if self.title and self.title != self.doc_id else self.text


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    type: str = "unspecified"
    supporting_docs: tuple[str, ...] = ()
    expected_answer: str = ""
    answers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Triple:
    doc_id: str
    subject: str
    relation: str
    object: str


@dataclass
class Case:
    name: str
    path: str
    title: str
    description: str
    documents: list[Document]
    passages: list[Passage]
    questions: list[Question] = field(default_factory=list)
    triples: list[Triple] = field(default_factory=list)
    fingerprint: str = ""   # content hash of the documents: indexes and caches key on it
    source: str = ""
    license: str = ""

    def document(self, doc_id: str) -> Document:
        return self._docs()[doc_id]

    def passage(self, passage_id: str) -> Passage:
        return self._passages()[passage_id]

    def _docs(self) -> dict[str, Document]:
        if getattr(self, "_doc_index", None) is None:
            self._doc_index = {d.id: d for d in self.documents}
        return self._doc_index

    def _passages(self) -> dict[str, Passage]:
        if getattr(self, "_passage_index", None) is None:
            self._passage_index = {p.id: p for p in self.passages}
        return self._passage_index


@dataclass
class Retrieval:
    """What every strategy returns for one question."""
    passages: list[tuple[str, float]]               # (passage id, score), best first
    trace: dict = field(default_factory=dict)        # strategy-specific explanation, JSON-serialisable
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        return [pid for pid, _ in self.passages]


class Retriever(Protocol):
    name: str

    def retrieve(self, question: str, top_k: int, expansions: list[str] | None = None) -> Retrieval: ...
