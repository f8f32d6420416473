"""The loop's tools over one case: a search (the walk fused with BM25), the graph's links from a passage, what the
model sees of a passage, the passages a step or a passage names by title or that name a person, and the leads a round
offers.
The loop and its checks (``suspects.py``, ``ties.py``, ``windows.py``) look things up only through these."""
from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from core.types import Case, Explanation, Passage
from indexes import BM25Index, rrf
from kg import KnowledgeGraph
from kg.walk import HippoRAGRetriever, Walk


class CaseSearch:
    def __init__(self, graph: KnowledgeGraph, walker: HippoRAGRetriever, lexical: BM25Index, case: Case):
        self.graph, self.walker, self.lexical, self.case = graph, walker, lexical, case
        self._titles: TitleIndex | None = None
        self._bare_titles: TitleIndex | None = None

    def search(self, query: str, depth: int) -> tuple[list[str], Walk]:
        """A lead's or sub-question's ranking: its walk fused with BM25 on its words (equal weight, RRF k=60)."""
        walk = self.walker.walk(query, depth)
        lexical = [pid for pid, score in self.lexical.search(query, depth) if score > 0]
        fused = [pid for pid, _ in rrf([walk.retrieval.ids, lexical])] if lexical else walk.retrieval.ids
        return fused[:depth], walk

    def search_round(self, query: str, depth: int, mass: np.ndarray, ex: Explanation,
                     what: str) -> tuple[list[str], Walk, float]:
        """``search`` of ``query`` as the stage of the next round (``what`` it searches), its walk's mass added to
        ``mass``; with the time the round started."""
        started = time.perf_counter()
        with ex.stage(f"round {len(ex.rounds) + 1} search", what):
            ids, walk = self.search(query, depth)
        mass += walk.mass
        return ids, walk, started

    def links(self, pid: str, besides: Collection[str], avoid: Collection[int] = ()) -> list[str]:
        """The passages ``pid`` links to (``KnowledgeGraph.linked_passages``, the most specific first, phrases in
        ``avoid`` linking nothing) not in ``besides``."""
        return [other for other in self.graph.linked_passages(pid, avoid) if other not in besides]

    def in_sight(self, ids: Sequence[str], chars: int) -> list[Passage]:
        """The passages as the model reads them: the first ``chars`` characters of each (what it did not see, it
        cannot restate or name)."""
        return [replace(passage, text=passage.text[:chars]) for passage in map(self.case.passage, ids)]

    def titled(self, step: str, question: str, order: Sequence[str]) -> list[str]:
        """The passages whose title ``step`` names, word for word, and ``question`` does not: in ``order`` (the step's
        search), then the case's."""
        if self._titles is None:   # words of a title -> its passages (row, id), built on the first restated step
            self._titles = titles_index(self.case, self.graph.passage_ids, lambda title: title)
        asked = f" {title_words(question)} "
        hits = [hit for title in named_in(step, self._titles) if f" {title} " not in asked
                for hit in self._titles[title]]
        rank = {pid: n for n, pid in enumerate(order)}
        return [pid for _, pid in sorted(hits, key=lambda hit: (rank.get(hit[1], len(rank)), hit[0]))]

    def named_by(self, ids: Sequence[str], as_written: bool = False) -> list[str]:
        """The other passages whose title the texts of ``ids`` name word for word, a parenthetical aside ("Richard
        Sale (director)" is named "Richard Sale"): in the order ``ids`` name them. ``as_written``: only where a text
        writes the title as a name (``names_in``)."""
        if self._bare_titles is None:
            self._bare_titles = titles_index(self.case, self.graph.passage_ids,
                                             lambda title: PARENTHETICAL.sub("", title))
        out: list[str] = []
        for pid in ids:
            text = self.case.passage(pid).text
            out += [other for title in (names_in(text, self._bare_titles) if as_written else
                                        named_in(text, self._bare_titles))
                    for _, other in self._bare_titles[title] if other not in ids and other not in out]
        return out

    def weighed(self, pids: Sequence[str], ranked: Collection[str], mass: np.ndarray) -> list[str]:
        """``pids`` with the paragraphs of one title that are not in ``ranked`` in the order ``mass`` weighs them (most
        first), in the places they held: a page of several paragraphs is named by its title, and which of them a
        question needs its walks tell better than the corpus's order."""
        row, title = self.graph.passage_rows(), {pid: self.case.passage(pid).title for pid in pids}
        groups: dict[str, list[str]] = {}
        for pid in pids:
            if pid not in ranked:
                groups.setdefault(title[pid], []).append(pid)
        order = {name: iter(sorted(group, key=lambda pid: -mass[self.graph.passage_node(row[pid])]))
                 for name, group in groups.items()}
        return [pid if pid in ranked else next(order[title[pid]]) for pid in pids]

    def naming(self, person: str) -> list[int]:
        """The graph's rows of the passages that name ``person`` by the last word of the name, whole and as written:
        "Ms. Crane" names Victoria Crane as much as her full name does. (Not the graph's phrase nodes: OpenIE seldom
        makes "Ms. Crane" a synonym of "Victoria Crane", and a record that calls her so was then out of reach.)"""
        words = re.findall(r"\w[\w'-]*", person)
        if not words:
            return []
        surname = re.compile(rf"(?<!\w){re.escape(words[-1])}(?!\w)")
        return [row for row, pid in enumerate(self.graph.passage_ids) if surname.search(self.case.passage(pid).text)]

    def candidates(self, passages: Sequence[str], mass: np.ndarray, followed: set[int], n: int) -> list[int]:
        """The phrase nodes of ``passages`` not followed yet, best first by walk mass over node specificity (the
        number of passages mentioning it: a lead that points everywhere points nowhere)."""
        g = self.graph
        nodes = {i for pid in passages for i in g.phrases_of(pid)} - followed
        counts = g.mention_counts()
        ranked = sorted(nodes, key=lambda i: (-(mass[i] / counts[i]), g.phrases[i]))
        return ranked[:n]


PARENTHETICAL = re.compile(r"\s*\([^)]*\)")


@dataclass
class TitleIndex:
    """The words of each title (lowercase, one space apart; more than two characters) -> its passages (row, id)."""
    passages: dict[str, list[tuple[int, str]]]
    longest: int   # the most words a title has

    def __getitem__(self, title: str) -> list[tuple[int, str]]:
        return self.passages[title]


def titles_index(case: Case, passage_ids: Sequence[str], form: Callable[[str], str]) -> TitleIndex:
    """The case's titles, each as ``form`` gives it, indexed by their words."""
    index: dict[str, list[tuple[int, str]]] = {}
    for row, pid in enumerate(passage_ids):
        if len(title := title_words(form(case.passage(pid).title))) > 2:
            index.setdefault(title, []).append((row, pid))
    return TitleIndex(index, max((t.count(" ") + 1 for t in index), default=0))


def named_in(text: str, titles: TitleIndex) -> list[str]:
    """The titles of ``titles`` that ``text`` names word for word, in the order it names them."""
    return list(dict.fromkeys(span for _, _, span in title_spans(title_words(text).split(), titles)))


def names_in(text: str, titles: TitleIndex) -> list[str]:
    """``named_in``, where the text writes the title as a name: capitalised, and not followed (after a space alone) by
    another capitalised word that would make it part of a longer name ("the editor of", "Princess Maria" do not name
    "Editor" or "Princess")."""
    tokens = list(re.finditer(r"\w+", text))

    def as_name(i: int, j: int) -> bool:   # tokens[i:j]
        after = tokens[j] if j < len(tokens) else None
        longer = after is not None and after.group()[0].isupper() and \
            text[tokens[j - 1].end():after.start()].isspace()
        return tokens[i].group()[0].isupper() and not longer

    spans = title_spans([t.group().lower() for t in tokens], titles)
    return list(dict.fromkeys(span for i, j, span in spans if as_name(i, j)))


def title_spans(words: Sequence[str], titles: TitleIndex) -> Iterator[tuple[int, int, str]]:
    """Each run of ``words`` (lowercase) that is a title of ``titles``: its start, its end and the title, in order."""
    for i in range(len(words)):
        for j in range(i + 1, min(len(words), i + titles.longest) + 1):
            if (span := " ".join(words[i:j])) in titles.passages:
                yield i, j, span


def title_words(text: str) -> str:
    """``text``'s words, lowercase, one space apart: how a step names a title ("Houston Baptist University")."""
    return " ".join(re.findall(r"\w+", text.lower()))
