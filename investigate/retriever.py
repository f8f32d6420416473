"""Investigation: retrieve, read, follow leads, retrieve again, as a detective works a case.

Round 1 is HippoRAG's walk from the question (``kg.walk``, its LLM fact filter off). After each round a reader
(``readers.py``) sees the passages found so far and, by ``reading``, either writes the next step of reasoning (a
sentence the next round searches; a step that only restates what it read ends the loop) or is offered a numbered list
of leads, the graph's phrase nodes in those passages ranked by walk mass over node specificity, and picks leads to
follow, questions of its own (the first reading may split a question that names nothing into sub-questions), or
says the evidence is enough. Each lead and
sub-question is searched by a walk seeded from it (a lead is a graph node, so it seeds the walk itself; its dense
score seeds the passages) fused by RRF with BM25 on its words (identifiers and names match literally). The loop
stops when the reader says enough, a round finds nothing new, no lead is left, or after ``steps`` rounds.

The final ranking is a fixed merge of every search's ranking (``merge``, ``merge.py``): k passages, whatever the
number of rounds, so Recall@k compares with the one-shot strategies. With ``set_aside``, the reader also says which
of the passages it read help; the others leave the trail (the next reading sees the passages after them) and come
after every passage not judged so.

When a step restates the evidence, the reader has its answer in the passages it read: they stay in the top k, and
if it has places beyond them (``after_answer`` = step), a search of the step fills those, round robin with the
merge's unread tail: on a question of several hops the restated fact is often a bridge, and its far end is what
those places should hold.

With ``hops`` (off) and places beyond the passages read, the model first splits the question into a chain of simple
questions ("Who directed X?", "Where did #1 die?"); a chain is searched hop by hop instead of the steps, each hop's
answer read from its finds and put in place, and what the hops found fills those places.

Three kinds of question get a check of their own after the loop (``InvestigateSettings``): one that asks who meets
several conditions (``check_suspect``: the person the trail points to is named and searched, and a motive the
question names puts first what of theirs reads like one), one that asks what ties one thing to another
(``check_ties``: the chain from the first thing's best find, one most specific link at a time) and one that asks about
a stretch of time (``check_window``: the passages naming a clock time inside it; ``check_moment``: a stretch of no
length, the one time the question names). A chain or a stretch whose passages fill the top k leaves the loop no
reading to do.
"""
from __future__ import annotations

import re
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from core.contract import settings_with
from core.types import Case, Explanation, Passage, Retrieval, Round, Seed
from indexes import BM25Index, rrf
from kg import KnowledgeGraph
from kg.walk import HippoRAGRetriever, Walk

from .merge import ahead, final_ranking, merged
from .readers import HopReader, Namer, Reader, Reading, refers_to, with_answers
from .settings import DEFAULTS, InvestigateSettings
from .suspects import CONDITION_EVIDENCE, asks_for_someone_by_conditions, conditions_named
from .ties import Tie, asks_what_ties
from .windows import Clock, Window, asks_about_moment, asks_about_window, clock_times


@dataclass(frozen=True)
class Chain:
    """The chain a tie question asks for (``check_ties``): its passages in order, each link as the trail shows it
    ("D13 -> D12 (RC33 XJQ)"), and the search of the first thing that started it."""
    tie: Tie
    passages: list[str]
    links: list[str]
    walk: Walk
    ms: float


class InvestigateRetriever:
    def __init__(self, graph: KnowledgeGraph, walker: HippoRAGRetriever, lexical: BM25Index, case: Case,
                 readers: Mapping[str, Reader], settings: InvestigateSettings = DEFAULTS,
                 namer: Namer | None = None, hop_reader: HopReader | None = None):
        """``readers``: a reader for each way of reading it offers (``READINGS``); ``settings.reading`` must be one.
        ``namer``: who names the suspect for ``check_suspect`` (None: no one, so nothing is checked)."""
        if settings.reading not in readers:
            raise ValueError(f"investigate: no {settings.reading!r} reader among {', '.join(readers)}")
        self.graph, self.walker, self.lexical, self.case = graph, walker, lexical, case
        self.readers, self.settings, self.namer, self.hop_reader = dict(readers), settings, namer, hop_reader
        self._clock_times: dict[bool, dict[str, list[Clock]]] = {}   # by whether times in words count
        self._titles: dict[str, list[tuple[int, str]]] | None = None
        self._longest_title = 0

    def retrieve(self, question: str, top_k: int, expansions: Sequence[str] = (),
                 params: Mapping[str, object] | None = None) -> Retrieval:
        p = settings_with(self.settings, params)
        g = self.graph
        reader = self.readers[p.reading]
        follows = "the steps the reader writes" if p.reading == "step" else f"the leads the {reader.name} reader follows"
        ex = Explanation(method=f"up to {p.steps} rounds: HippoRAG's walk from the question, then walks and BM25 "
                                f"from {follows}; merged by {p.merge}")
        started = time.perf_counter()
        with ex.stage("round 1 search"):
            first = self.walker.walk(question, p.depth, expansions)
        searches = [[first.retrieval.ids]]   # each round's searches, round by round
        mass = first.mass.copy()
        followed = set(g.phrases_named_in(question))
        seeds_by_round = [[s.node for s in first.retrieval.explanation.seeds]]
        ex.queries = [question, *expansions]
        ex.paths = first.retrieval.explanation.paths
        pending = dict(number=1, searched=[question], seeds=seeds_by_round[0][:8],
                       added=first.retrieval.ids[:p.show])
        # with a restated step's search: the final ranking (the passages read, then its finds and the unread tail),
        # and its finds, for the listing
        answered: tuple[list[str], list[str]] | None = None
        aside: list[str] = []   # read and judged no help, in the order they were set aside
        tie = asks_what_ties(question) if p.check_ties else None
        chain = self._chain(tie, question, p.depth, p.tie_hops, ex) if tie is not None else None
        window = asks_about_window(question, p.time_words) if p.check_window else None
        if window is None and p.check_moment:
            window = asks_about_moment(question, p.time_words)
        timed = self._timed(window, first, p.time_words) if window is not None else []
        # a chain or a stretch of time that fills the top k leaves nothing for a reading to change: no model call
        filled = "the chain the question asks for fills" if chain is not None and len(chain.passages) >= top_k \
            else f"the passages that name {window.what} fill" if window is not None and len(timed) >= top_k \
            else ""
        split = self._split(question, ex) if p.hops and self.hop_reader is not None and top_k > p.show and \
            not filled else None
        hops = split.sub_questions if split is not None else ()
        steps = 1 if filled or hops else p.steps
        for number in range(2, steps + 1):
            everything = merged(searches, p.merge, len(g.passage_ids))
            trail = [pid for pid in everything if pid not in aside]
            shown = trail[:p.show]
            # a step reader writes its own query: no list of leads to offer it
            offered_nodes = self._candidates(shown, mass, followed, p.candidates) if p.reading == "leads" else []
            offered = [g.phrases[i] for i in offered_nodes]
            with ex.stage(f"round {number - 1} read", f"{reader.name} reader", llm=reader.uses_llm):
                read = reader.read(question, self._in_sight(shown, p.passage_chars), offered,
                                   first=number == 2, judge=p.set_aside)
            useful = read.useful
            newly = [pid for n, pid in enumerate(shown) if n not in useful] if p.set_aside and useful is not None \
                else []
            aside += newly
            reading, chosen, queries, stop = self._decide(read, offered_nodes, p)
            ex.rounds.append(self._round(pending, offered, reading, [g.phrases[i] for i in chosen], stop, started,
                                         reader.name, newly))
            if read.answer and p.after_answer == "step" and top_k > len(shown):
                answered = self._after_answer(read.answer, shown, everything, top_k, p.depth, mass, ex,
                                              question if p.step_titles else None)
                seeds_by_round.append(ex.rounds[-1].seeds)
                if p.read_on and number < steps:
                    before = len(ex.rounds)
                    answered = self._read_on(question, reader, shown, answered, everything, top_k, p, mass, ex)
                    seeds_by_round += [r.seeds for r in ex.rounds[before:]]
            if stop:
                break
            started = time.perf_counter()
            followed.update(chosen)
            with ex.stage(f"round {number} search", f"{len(queries)} searches"):
                walks = [self._search(q, p.depth) for q in queries]
            new_rankings = [ids for ids, _ in walks]
            for _, walk in walks:
                mass += walk.mass
            # New: in a new search's best ``show`` and neither on the trail the reader saw nor set aside.
            on_trail = set(trail[:max(p.show, top_k)]) | set(aside)
            added = list(dict.fromkeys(pid for ids in new_rankings for pid in ids[:p.show] if pid not in on_trail))
            searches.append(new_rankings)
            seeds_by_round.append([s.node for _, w in walks for s in w.retrieval.explanation.seeds[:3]])
            pending = dict(number=number, searched=queries, seeds=list(dict.fromkeys(seeds_by_round[-1]))[:8],
                           added=added)
            if not added:
                ex.rounds.append(self._round(pending, [], Reading(), [], "this round found nothing new", started))
                break
        else:
            last = f"{filled} the top {top_k}: nothing is left for a reading to find" if filled else \
                "the question splits into hops, searched one by one" if hops else f"the last of {p.steps} rounds"
            ex.rounds.append(self._round(pending, [], Reading(), [], last, started))
        if split is not None:   # the split was made before round 1's reading: its cost is round 1's
            add_reading(ex.rounds[0], split, split.why or "hops: " + " / ".join(hops), HopReader.name)
        if hops:
            answered = self._follow_hops(question, hops, first.retrieval.ids, p, mass, ex)
        ranking = final_ranking(searches, answered, aside, p.merge, top_k, len(g.passage_ids))
        if p.check_suspect and self.namer is not None and asks_for_someone_by_conditions(question):
            before = len(ex.rounds)
            if p.suspect_beyond == "links":   # each of the top k in turn gives its most specific link not read yet
                beyond = merged([[self._links(top, ranking)] for top in ranking], "trail", len(g.passage_ids))
            else:
                beyond = final_ranking(searches, answered, aside, p.merge, max(top_k, p.suspect_reads),
                                       len(g.passage_ids))
            reads = ahead(ranking, beyond, p.suspect_reads)
            ranking = self._check_suspect(self.namer, question, ranking, reads, p, mass, ex,
                                          scene=first.retrieval.ids[:p.show])
            seeds_by_round += [r.seeds for r in ex.rounds[before:]]
        if chain is not None:
            ranking = self._follow(chain, ranking, mass, ex)
            seeds_by_round.append(ex.rounds[-1].seeds)
        if window is not None and timed:
            ranking = self._in_window(window, timed, ranking, ex)
        ex.seeds = [Seed(node, round(1.0 / (r + 1), 6)) for r, nodes in enumerate(seeds_by_round)
                    for node in dict.fromkeys(nodes)][:20]
        ex.node_scores = {g.node_label(int(n)): round(float(mass[n]), 6) for n in np.argsort(-mass)[:200]
                          if mass[n] > 0}
        score = {pid: 1.0 / (rank + 1) for rank, pid in enumerate(ranking)}
        return Retrieval([(pid, score[pid]) for pid in ranking], ex)

    def _decide(self, read: Reading, offered_nodes: Sequence[int],
                p: InvestigateSettings) -> tuple[Reading, list[int], list[str], str]:
        """What the loop does with a reading: the reading as followed, the lead nodes it follows, the next round's
        queries, and why the loop stops here ("" if it goes on)."""
        # The loop follows the reader's first picks: how many is a setting, not the prompt's business. A step
        # reader's one step is its query: the sub-questions setting counts the leads reader's own questions.
        asked = read.sub_questions if p.reading == "step" else read.sub_questions[:p.sub_questions]
        reading = replace(read, leads=read.leads[:p.leads], sub_questions=asked)
        chosen = [offered_nodes[i] for i in reading.leads]
        queries = [self.graph.phrases[i] for i in chosen] + list(reading.sub_questions)
        stop = (reading.enough_why or "the reader says the evidence is enough") if reading.enough else \
            "no lead or question to follow" if not queries else ""
        if reading.enough:   # nothing is followed after "enough", whatever else the reader listed
            chosen, reading = [], replace(reading, leads=(), sub_questions=())
        return reading, chosen, queries, stop

    def _after_answer(self, step: str, shown: list[str], ranked: list[str], top_k: int, depth: int,
                      mass: np.ndarray, ex: Explanation, titles_for: str | None = None) -> tuple[list[str], list[str]]:
        """The search of a step that restated the passages read (``shown``), for the top k's places after them: its
        round goes on the trail and its walk's mass into ``mass``. Returns the ranking with those places filled (the
        passages read, then the step's finds round robin with the rest of ``ranked``) and the step's finds."""
        ids, walk, started = self._search_round(step, depth, mass, ex, "the step that restated the evidence")
        found = [pid for pid in ids if pid not in shown]
        if titles_for is not None:
            titled = self._titled(step, titles_for, ids)
            found = ahead([pid for pid in titled if pid not in shown], found, len(self.graph.passage_ids))
        rest = [pid for pid in ranked if pid not in shown]
        filled = shown + merged([[rest], [found]], "trail", len(self.graph.passage_ids))
        after = filled[len(shown):top_k]
        pending = searched(ex, step, walk, [pid for pid in after if pid not in rest[:len(after)]])
        ex.rounds.append(self._round(pending, [], Reading(), [], "the places after the passages read go to what "
                                     "the answer leads to", started))
        return filled, found

    def _read_on(self, question: str, reader: Reader, shown: list[str], answered: tuple[list[str], list[str]],
                 ranked: list[str], top_k: int, p: InvestigateSettings, mass: np.ndarray,
                 ex: Explanation) -> tuple[list[str], list[str]]:
        """``answered`` (``_after_answer``'s ranking and finds) once the reader has read ``shown`` and the restated
        step's best find: a step that names something new is searched, a round of its own, and the top k keeps the
        passages read, then that search's finds round robin with the rest of ``ranked``; any other reading leaves
        ``answered`` as it is. The reading's cost and what it wrote go on the restated step's round."""
        filled, found = answered
        if not found or top_k <= len(shown) + 1:
            return answered
        seen = [*shown, found[0]]
        with ex.stage(f"round {len(ex.rounds)} read", f"{reader.name} reader", llm=reader.uses_llm):
            read = reader.read(question, self._in_sight(seen, p.passage_chars), [], first=False)
        step = read.sub_questions[0] if read.sub_questions and not read.enough else ""
        said = f"next, {step}" if step else read.why or "no step"
        add_reading(ex.rounds[-1], read, f"read with {found[0]}: {said}", reader.name)
        if not step:
            return answered
        ids, walk, started = self._search_round(step, p.depth, mass, ex, "the step after the restated one")
        new = [pid for pid in ids if pid not in seen]
        rest = [pid for pid in ranked if pid not in seen]
        refilled = seen + merged([[new], [rest]], "trail", len(self.graph.passage_ids))
        pending = searched(ex, step, walk, [pid for pid in refilled[len(seen):top_k] if pid not in filled[:top_k]])
        ex.rounds.append(self._round(pending, [], Reading(), [], "the step the passages read and the restated "
                                     "step's find lead to", started))
        return refilled, [found[0], *new]

    def _split(self, question: str, ex: Explanation) -> Reading:
        """``question``'s hops as the hop reader splits it (``Reading.sub_questions``; none: it does not split)."""
        assert self.hop_reader is not None
        with ex.stage("round 1 split", "the question into hops", llm=self.hop_reader.uses_llm):
            return self.hop_reader.split(question)

    def _follow_hops(self, question: str, hops: Sequence[str], ranked: list[str], p: InvestigateSettings,
                     mass: np.ndarray, ex: Explanation) -> tuple[list[str], list[str]]:
        """The question's hops searched one by one, a round each, each later hop with the earlier hops' answers in
        place (read from the best ``show`` of its finds) until one is unanswered. Returns, as ``_after_answer`` does,
        the ranking (the question's passages read, then the hops' finds round robin with the rest of ``ranked``) and
        the hops' finds: first the passages whose title an answer names, then each hop's best ``show``, the last
        hop's first."""
        assert self.hop_reader is not None
        n = len(self.graph.passage_ids)
        shown = ranked[:p.show]
        answers: dict[int, str] = {}
        searches: list[list[str]] = []
        for number, hop in enumerate(hops, 1):
            text = with_answers(hop, answers)
            if text is None:
                break
            ids, walk, started = self._search_round(text, p.depth, mass, ex, f"hop {number} of the question")
            reading, reader = Reading(), ""
            if refers_to(hops[number:], number):
                reader = self.hop_reader.name
                with ex.stage(f"round {len(ex.rounds) + 1} read", "the hop's answer", llm=self.hop_reader.uses_llm):
                    reading = self.hop_reader.answer(text, self._in_sight(ids[:p.show], p.passage_chars))
                if reading.answer:
                    answers[number] = reading.answer
            on_trail = set(shown).union(*searches)
            searches.append(ids)
            pending = searched(ex, text, walk, [pid for pid in ids[:p.show] if pid not in on_trail])
            ex.rounds.append(self._round(pending, [], reading, [], "", started, reader))
        # a hop's finds are its best ``show``: further down, a search that found what was read finds little else
        found = ahead([pid for answer in answers.values() for pid in self._titled(answer, question, ranked)],
                      merged([[ids[:p.show]] for ids in reversed(searches)], "trail", n), n)
        found = [pid for pid in found if pid not in shown]
        rest = [pid for pid in ranked if pid not in shown]
        return shown + merged([[found], [rest]], "trail", n), found

    def _titled(self, step: str, question: str, order: Sequence[str]) -> list[str]:
        """The passages whose title ``step`` names, word for word, and ``question`` does not: in ``order`` (the step's
        search), then the case's."""
        if self._titles is None:   # words of a title -> its passages (row, id), built on the first restated step
            self._titles = {}
            for row, pid in enumerate(self.graph.passage_ids):
                if len(title := title_words(self.case.passage(pid).title)) > 2:
                    self._titles.setdefault(title, []).append((row, pid))
            self._longest_title = max((t.count(" ") + 1 for t in self._titles), default=0)
        words, asked = title_words(step).split(), f" {title_words(question)} "
        named = {" ".join(words[i:j]) for i in range(len(words))
                 for j in range(i + 1, min(len(words), i + self._longest_title) + 1)}
        hits = [hit for title in named if title in self._titles and f" {title} " not in asked
                for hit in self._titles[title]]
        rank = {pid: n for n, pid in enumerate(order)}
        return [pid for _, pid in sorted(hits, key=lambda hit: (rank.get(hit[1], len(rank)), hit[0]))]

    def _check_suspect(self, namer: Namer, question: str, ranking: list[str], read: list[str], p: InvestigateSettings,
                       mass: np.ndarray, ex: Explanation, scene: Sequence[str] = ()) -> list[str]:
        """The top k (``ranking``) once the person the trail points to is checked: ``namer`` reads ``read`` (its cost
        and its answer go on the last round), and if it names someone, a search of the name is a round of its own
        whose finds beyond the top k (with ``suspect_hop``, round robin with the best finds' links) take its places,
        after the passage of theirs that reads most like a condition the question names (``suspect_condition``); the
        ranking's own fill any left. Its walk joins ``mass``."""
        top_k = len(ranking)
        with ex.stage("suspect named", "the question asks who meets several conditions", llm=True):
            named = namer.name(question, self._in_sight(read, p.passage_chars))
        person = named.answer
        add_reading(ex.rounds[-1], named, named.why or f"the trail points to {person}")
        if not person:
            return ranking
        ids, walk, started = self._search_round(person, p.depth, mass, ex, "the person named")
        found = [pid for pid in ids if pid not in ranking]
        if p.suspect_hop and found:
            links = [[self._links(find, ranking)] for find in found[:p.suspect_hop_finds]]
            found = merged([[found], *links], "trail", len(self.graph.passage_ids))
        # the conditions the question names that the check looks for; the person's passages are found once, for both
        conditions = conditions_named(question)
        worded = [c for c in conditions if c in CONDITION_EVIDENCE] if p.suspect_condition else []
        placed = p.suspect_opportunity and "opportunity" in conditions
        rows = self._naming(person) if worded or placed else []
        evidence = self._condition_evidence(worded, rows)
        at_scene = self._opportunity_evidence(question, rows, ids, scene) if placed else ()
        picked = list(dict.fromkeys([*evidence.values(), *at_scene]))
        checked = ahead(picked, found, top_k)
        pending = searched(ex, person, walk, checked)
        why = "the question asks who meets several conditions: the person the trail points to is checked against them"
        if evidence:
            why += f"; what reads most like their {' and '.join(evidence)}: " + \
                ", ".join(dict.fromkeys(evidence.values()))
        if at_scene:
            why += f"; what places something of theirs at the scene: {at_scene[0]} (through {at_scene[1]})"
        ex.rounds.append(self._round(pending, [], Reading(), [], why, started))
        return ahead(checked, ranking, top_k)

    def _condition_evidence(self, conditions: Sequence[str], rows: Sequence[int]) -> dict[str, str]:
        """For each of ``conditions`` (each with generic evidence words, ``CONDITION_EVIDENCE``), the passage of
        ``rows`` (the graph's rows of the passages naming the person: ``_naming``) whose embedding is closest to those
        words; {} when there are none."""
        if not conditions or not rows:
            return {}
        g = self.graph
        words = self.walker.embedder.embed([CONDITION_EVIDENCE[c] for c in conditions])
        fit = g.passage_vectors[rows] @ words.T   # passages x conditions
        return {c: g.passage_ids[rows[int(np.argmax(fit[:, n]))]] for n, c in enumerate(conditions)}

    def _opportunity_evidence(self, question: str, rows: Sequence[int], found: Sequence[str],
                              scene: Sequence[str]) -> tuple[str, str] | tuple[()]:
        """For a question that names an opportunity: the passage that places something of the person's at the scene
        (``scene``: the question's own best finds), found from the passages naming them (``rows``, the graph's rows
        ``_naming`` gives, taken in the name's search order ``found``) one most specific link away, and the passage
        of theirs it came from; () when none does. A phrase the question names links nothing, and a link must name
        none of theirs: their own statements are the name's finds already."""
        g = self.graph
        theirs = [g.passage_ids[row] for row in rows]
        rank = {pid: n for n, pid in enumerate(found)}
        theirs.sort(key=lambda pid: rank.get(pid, len(rank)))
        asked = set(g.phrases_named_in(question))
        away = set(theirs) | set(scene)
        at_scene = {i for pid in scene if pid not in theirs for i in g.phrases_of(pid)} - asked
        for pid in theirs:
            links = self._links(pid, away, avoid=asked)
            if links and at_scene & set(g.phrases_of(links[0])):
                return links[0], pid
        return ()

    def _naming(self, person: str) -> list[int]:
        """The graph's rows of the passages that name ``person`` by the last word of the name, whole and as written:
        "Ms. Crane" names Victoria Crane as much as her full name does. (Not the graph's phrase nodes: OpenIE seldom
        makes "Ms. Crane" a synonym of "Victoria Crane", and a record that calls her so was then out of reach.)"""
        words = re.findall(r"\w[\w'-]*", person)
        if not words:
            return []
        surname = re.compile(rf"(?<!\w){re.escape(words[-1])}(?!\w)")
        return [row for row, pid in enumerate(self.graph.passage_ids) if surname.search(self.case.passage(pid).text)]

    def _chain(self, tie: Tie, question: str, depth: int, hops: int, ex: Explanation) -> Chain:
        """The chain ``tie`` asks for: a search of ``tie.start`` gives its first passage (its best find), and each
        link is the passage the chain's newest passage (failing that, an earlier one) shares its most specific
        phrase with, a phrase ``question`` names linking nothing; ``hops`` links at most."""
        g = self.graph
        started = time.perf_counter()
        with ex.stage("tie search", "the first thing the question ties"):
            ids, walk = self._search(tie.start, depth)
        named = g.phrases_named_in(question)
        passages, links = ids[:1], []
        while passages and len(passages) <= hops:
            link = next(((src, other) for src in reversed(passages) for other in g.linked_passages(src, named)
                         if other not in passages), None)
            if link is None:
                break
            passages.append(link[1])
            links.append(f"{link[0]} -> {link[1]} ({g.link_phrase(*link, named)})")
        return Chain(tie, passages, links, walk, round((time.perf_counter() - started) * 1000, 1))

    def _follow(self, chain: Chain, ranking: list[str], mass: np.ndarray, ex: Explanation) -> list[str]:
        """The top k (``ranking``) once ``chain`` is followed, a round of its own on the trail: the chain takes the
        first places, the ranking fills the rest. Its search's walk joins ``mass``."""
        mass += chain.walk.mass
        top_k = len(ranking)
        pending = searched(ex, chain.tie.start, chain.walk, chain.passages[:top_k])
        why = f"the question asks what ties {chain.tie.start} to {chain.tie.end}: the chain from the first thing's " \
              "best find"
        tied = self._round(pending, [], Reading(), [], "; ".join([why, *chain.links]), time.perf_counter())
        tied.ms = chain.ms
        ex.rounds.append(tied)
        return ahead(chain.passages, ranking, top_k)

    def _timed(self, window: Window, first: Walk, words: bool) -> list[tuple[str, int]]:
        """The passages that name a time in ``window`` (with ``words``, in words too), each with its earliest such time
        (minutes after midnight): the question's own walk (``first``) ranks them, its ranking first, then by its
        mass, then by time."""
        g = self.graph
        clocks = self._clocks(words)
        inside = [(row, pid, minute) for row, pid in enumerate(g.passage_ids)
                  if (minute := window.first(clocks[pid])) is not None]
        rank = {pid: n for n, pid in enumerate(first.retrieval.ids)}
        mass = first.mass[len(g.phrases):]   # every node's mass, zeros when nothing seeded the walk
        inside.sort(key=lambda t: (rank.get(t[1], len(rank)), -float(mass[t[0]]), window.offset(t[2])))
        return [(pid, minute) for _, pid, minute in inside]

    def _clocks(self, words: bool) -> dict[str, list[Clock]]:
        """Every passage's clock times (with ``words``, those in words too), read once (the first question about a
        stretch of time reads them)."""
        if words not in self._clock_times:
            self._clock_times[words] = {pid: clock_times(self.case.passage(pid).text, words)
                                        for pid in self.graph.passage_ids}
        return self._clock_times[words]

    def _in_window(self, window: Window, timed: Sequence[tuple[str, int]], ranking: list[str],
                   ex: Explanation) -> list[str]:
        """The top k (``ranking``) once the stretch of time the question asks about is looked at, a round of its own
        on the trail: the first k of ``timed`` (``_timed``) take the first places, in the order of their times, and
        the ranking fills the rest."""
        top_k = len(ranking)
        picked = sorted(timed[:top_k], key=lambda t: window.offset(t[1]) or 0)
        pids = [pid for pid, _ in picked]
        started = time.perf_counter()
        pending = dict(number=len(ex.rounds) + 1, searched=[window.text], seeds=[], added=pids)
        named = f"{len(timed)} passage{'s' if len(timed) > 1 else ''} name{'' if len(timed) > 1 else 's'} " + \
            ("it" if window.moment else "a time in it")
        picks = f"the question's walk picks {len(pids)}, " if len(timed) > len(pids) else ""
        why = f"the question asks about the time {window.text}: {named}; {picks}in the order of their times: " + \
              ", ".join(f"{pid} ({minute // 60:02d}:{minute % 60:02d})" for pid, minute in picked)
        ex.rounds.append(self._round(pending, [], Reading(), [], why, started))
        return ahead(pids, ranking, top_k)

    def _links(self, pid: str, besides: Collection[str], avoid: Collection[int] = ()) -> list[str]:
        """The passages ``pid`` links to (``KnowledgeGraph.linked_passages``, the most specific first, phrases in
        ``avoid`` linking nothing) not in ``besides``."""
        return [other for other in self.graph.linked_passages(pid, avoid) if other not in besides]

    def _in_sight(self, ids: Sequence[str], chars: int) -> list[Passage]:
        """The passages as the model reads them: the first ``chars`` characters of each (what it did not see, it
        cannot restate or name)."""
        return [replace(passage, text=passage.text[:chars]) for passage in map(self.case.passage, ids)]

    def _search_round(self, query: str, depth: int, mass: np.ndarray, ex: Explanation,
                      what: str) -> tuple[list[str], Walk, float]:
        """``_search`` of ``query`` as the stage of the next round (``what`` it searches), its walk's mass added to
        ``mass``; with the time the round started."""
        started = time.perf_counter()
        with ex.stage(f"round {len(ex.rounds) + 1} search", what):
            ids, walk = self._search(query, depth)
        mass += walk.mass
        return ids, walk, started

    def _search(self, query: str, depth: int) -> tuple[list[str], Walk]:
        """A lead's or sub-question's ranking: its walk fused with BM25 on its words (equal weight, RRF k=60)."""
        walk = self.walker.walk(query, depth)
        lexical = [pid for pid, score in self.lexical.search(query, depth) if score > 0]
        fused = [pid for pid, _ in rrf([walk.retrieval.ids, lexical])] if lexical else walk.retrieval.ids
        return fused[:depth], walk

    def _candidates(self, passages: Sequence[str], mass: np.ndarray, followed: set[int], n: int) -> list[int]:
        """The phrase nodes of ``passages`` not followed yet, best first by walk mass over node specificity (the
        number of passages mentioning it: a lead that points everywhere points nowhere)."""
        g = self.graph
        nodes = {i for pid in passages for i in g.phrases_of(pid)} - followed
        counts = g.mention_counts()
        ranked = sorted(nodes, key=lambda i: (-(mass[i] / counts[i]), g.phrases[i]))
        return ranked[:n]

    @staticmethod
    def _round(pending: dict, offered: Sequence[str], reading: Reading, leads: Sequence[str], stop: str,
               started: float, reader: str = "", set_aside: Sequence[str] = ()) -> Round:
        """The record of a round: what ``pending`` says it searched and found, then the reading after it (the
        passages it set aside, the leads it follows, by name, and its sub-questions) and why the loop stops there,
        if it does."""
        why = "; ".join(x for x in (reading.why, stop) if x)
        return Round(**pending, offered=list(offered), chosen=list(leads), sub_questions=list(reading.sub_questions),
                     set_aside=list(set_aside), why=why, enough=reading.enough, reader=reader,
                     ms=round((time.perf_counter() - started) * 1000, 1), llm_ms=reading.llm_ms,
                     llm_calls=reading.llm_calls)


def searched(ex: Explanation, query: str, walk: Walk, added: Sequence[str]) -> dict:
    """The record of the next round (``_round``'s ``pending``) when it searched ``query`` by ``walk``: its number,
    the walk's first seeds and the passages it ``added``."""
    return dict(number=len(ex.rounds) + 1, searched=[query], seeds=[s.node for s in walk.retrieval.explanation.seeds[:8]],
                added=list(added))


def add_reading(record: Round, reading: Reading, why: str, reader: str = "") -> None:
    """A reading made apart from ``record``'s own: its cost and what it says go on it (and who read, if given)."""
    record.why = "; ".join(x for x in (record.why, why) if x)
    record.llm_calls += reading.llm_calls
    record.llm_ms = round(record.llm_ms + reading.llm_ms, 1)
    record.reader = reader or record.reader


def title_words(text: str) -> str:
    """``text``'s words, lowercase, one space apart: how a step names a title ("Houston Baptist University")."""
    return " ".join(re.findall(r"\w+", text.lower()))
