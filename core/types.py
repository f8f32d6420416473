"""The things that travel between packages. This module imports nothing of ours."""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
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
    text: str
    type: str = "unspecified"
    supporting_docs: tuple[str, ...] = ()
    expected_answer: str = ""
    answers: tuple[str, ...] = ()
    key_facts: tuple[str, ...] = ()    # optional: the facts a correct answer must state (else split automatically)


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

    @property
    def identity(self) -> str:
        """What tells two cases apart when their names match: the name and the absolute folder (or file)."""
        return f"{self.name}\0{os.path.abspath(self.path)}" if self.path else self.name

    def document(self, doc_id: str) -> Document:
        return self._docs()[doc_id]

    def passage(self, passage_id: str) -> Passage:
        return self._passages()[passage_id]

    def documents_of(self, passage_ids: Sequence[str]) -> list[str]:
        """The documents behind ranked passages, each once, in rank order."""
        return list(dict.fromkeys(self.passage(pid).doc_id for pid in passage_ids))

    def _docs(self) -> dict[str, Document]:
        if getattr(self, "_doc_index", None) is None:
            self._doc_index = {d.id: d for d in self.documents}
        return self._doc_index

    def _passages(self) -> dict[str, Passage]:
        if getattr(self, "_passage_index", None) is None:
            self._passage_index = {p.id: p for p in self.passages}
        return self._passage_index


@dataclass(frozen=True)
class Evidence:
    """A fact or relation a strategy weighed for the question: what it says, its score, whether it was kept."""
    text: str
    score: float
    kept: bool = True
    detail: str = ""    # where it comes from or why it was (not) kept, e.g. "D4" or "rank 3 / rank 1"


@dataclass(frozen=True)
class Seed:
    """A graph node the walk started from, with its share of the start mass."""
    node: str
    weight: float


@dataclass(frozen=True)
class PathStep:
    """One node on a path that brought a passage; ``relation`` leads to the next step ("" on the last)."""
    node: str
    kind: str           # "entity" or "passage"
    relation: str = ""


@dataclass(frozen=True)
class Stage:
    """One step of a strategy's query path: whether it ran, why (not), and its milliseconds."""
    name: str
    ran: bool = True
    why: str = ""
    ms: float = 0.0
    llm: bool = False   # the stage called a language model (its time is LLM time, reported apart)


@dataclass
class Round:
    """One round of a strategy that follows leads: what it searched, what it was offered and chose, what it found."""
    number: int
    searched: list[str]                        # the texts this round searched (the question, leads, sub-questions)
    seeds: list[str] = field(default_factory=list)          # the graph nodes its walks started from
    added: list[str] = field(default_factory=list)          # passages this round found that no earlier round had
    offered: list[str] = field(default_factory=list)        # the leads the reader was offered after this round
    chosen: list[str] = field(default_factory=list)         # the leads it chose to follow next
    sub_questions: list[str] = field(default_factory=list)  # questions of its own it asked next
    set_aside: list[str] = field(default_factory=list)      # passages it read and judged no help to the question
    why: str = ""                              # the reader's reason, or why the loop stopped here
    enough: bool = False                       # the reader said the evidence is enough
    reader: str = ""                           # who read this round's passages ("llm", "walk"; "": nobody)
    ms: float = 0.0                            # the whole round, reading included
    llm_ms: float = 0.0                        # of which in LLM calls
    llm_calls: int = 0                         # chat calls made (0 when served from the cache or no LLM read)
    reads: int = 0                             # model reads, cached or not, where more than one (a judge's)


@dataclass
class StageNote:
    """What a running stage says about itself (``Explanation.stage`` records it when the block ends)."""
    why: str = ""


@dataclass
class Explanation:
    """What every strategy says about one retrieval, as far as it applies; the app and reports render it."""
    method: str = ""                                            # how passages were scored, in one line
    queries: list[str] = field(default_factory=list)            # the texts that were searched
    evidence: list[Evidence] = field(default_factory=list)
    seeds: list[Seed] = field(default_factory=list)
    node_scores: dict[str, float] = field(default_factory=dict)  # graph node label -> walk mass (highlight)
    paths: dict[str, list[PathStep]] = field(default_factory=dict)  # passage id -> the path that reached it
    stages: list[Stage] = field(default_factory=list)
    fallback: str = ""                                          # why the strategy fell back, if it did
    rounds: list[Round] = field(default_factory=list)           # a lead-following strategy's trail, in order

    @contextmanager
    def stage(self, name: str, why: str = "", llm: bool = False) -> Iterator[StageNote]:
        """Time a block and record it as a stage that ran (``llm``: it called a language model); the block may
        set the yielded note's ``why`` once it knows what it did."""
        note = StageNote(why)
        started = time.perf_counter()
        try:
            yield note
        finally:
            self.stages.append(Stage(name, True, note.why, round((time.perf_counter() - started) * 1000, 3), llm))

    def skip(self, name: str, why: str) -> None:
        self.stages.append(Stage(name, False, why))

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Retrieval:
    """What every strategy returns for one question."""
    passages: list[tuple[str, float]]               # (passage id, score), best first
    explanation: Explanation = field(default_factory=Explanation)

    @property
    def ids(self) -> list[str]:
        return [pid for pid, _ in self.passages]

    @property
    def timings_ms(self) -> dict[str, float]:
        return {s.name: s.ms for s in self.explanation.stages if s.ran}


@dataclass(frozen=True)
class ProgressUpdate:
    """One step of long work (building an index, extracting triples), for progress bars and live views."""
    stage: str
    done: int
    total: int
    note: str = ""
    rows: tuple[tuple[str, ...], ...] = ()   # what this step produced, e.g. (passage, subject, relation, object)


Progress = Callable[[ProgressUpdate], None]


class Retriever(Protocol):
    def retrieve(self, question: str, top_k: int, expansions: Sequence[str] = (),
                 params: Mapping[str, object] | None = None) -> Retrieval:
        """The top-k passages; ``params`` holds the strategy's query-time parameters (defaults when None)."""
        ...
