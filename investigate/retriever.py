"""Investigation: retrieve, read, follow leads, retrieve again, as a detective works a case.

Round 1 is HippoRAG's walk from the question (``kg.walk``, its LLM fact filter off). After each round a reader
(``readers.py``) sees the passages found so far (the first time, the pages the question names by title take the
places of the walk's others: ``read_named``) and, by ``reading``, either writes the next step of reasoning (a
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
if it has places beyond them, the pages whose title the step names (``after_answer`` = titles; = step: a search of
the step) fill those, round robin with the merge's unread tail: on a question of several hops the restated fact is
often a bridge, and its far end's page is what those places should hold. A step that names no page leaves them to
the tail.

With ``hops`` (off) and places beyond the passages read, the model first splits the question into a chain of simple
questions ("Who directed X?", "Where did #1 die?"); a chain is searched hop by hop instead of the steps, each hop's
answer read from its finds and put in place, and what the hops found fills those places. With ``judge_places`` (off)
the model then weighs each candidate for those places (``judge.py``): the top k's own there, ``judge_margin`` ahead,
and the question's walk's best.

Three kinds of question get a check of their own after the loop (``InvestigateSettings``; each check sits beside
the question form it knows, in ``suspects.py``, ``ties.py`` and ``windows.py``): one that asks who meets
several conditions (``check_suspect``: the person the trail points to is named and searched, and a motive the
question names puts first what of theirs reads like one), one that asks what ties one thing to another
(``check_ties``: the chain from the first thing's best find, one most specific link at a time) and one that asks about
a stretch of time (``check_window``: the passages naming a clock time inside it; ``check_moment``: a stretch of no
length, the one time the question names). A chain or a stretch whose passages fill the top k leaves the loop no
reading to do.
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from core.contract import settings_with
from core.types import Case, Explanation, Retrieval, Seed
from indexes import BM25Index
from kg import KnowledgeGraph
from kg.walk import HippoRAGRetriever, Walk

from .judge import Judge
from .merge import ahead, final_ranking, merged
from .readers import HopReader, Namer, Reader, Reading, refers_to, with_answers
from .search import CaseSearch
from .settings import DEFAULTS, InvestigateSettings
from .suspects import asks_for_someone_by_conditions, check_suspect
from .ties import Chain, asks_what_ties, follow_chain, tie_chain
from .trail import add_reading, round_record, searched
from .windows import CaseClocks, Window, asks_about_moment, asks_about_window, in_window, timed


@dataclass
class Inquiry:
    """One question's investigation as it goes: each round's searches (the question's walk first), the walks' summed
    mass, the phrase nodes followed, each round's seeds, the passages set aside, and, once a step restated the
    evidence, the ranking it filled and its finds."""
    searches: list[list[list[str]]]
    mass: np.ndarray
    followed: set[int]
    seeds_by_round: list[list[str]]   # the graph nodes (by label) each round's walks started from
    aside: list[str] = field(default_factory=list)   # read and judged no help, in the order they were set aside
    answered: tuple[list[str], list[str]] | None = None


@dataclass(frozen=True)
class QuestionChecks:
    """What the question's form asks for beyond the loop: a chain of ties, a stretch of time and the passages naming a
    time in it, and why those fill the top k ("" if they do not)."""
    chain: Chain | None
    window: Window | None
    found_in_time: list[tuple[str, int]]   # (passage, minutes after midnight)
    filled: str


class InvestigateRetriever:
    def __init__(self, graph: KnowledgeGraph, walker: HippoRAGRetriever, lexical: BM25Index, case: Case,
                 readers: Mapping[str, Reader], settings: InvestigateSettings = DEFAULTS,
                 namer: Namer | None = None, hop_reader: HopReader | None = None, judge: Judge | None = None):
        """``readers``: a reader for each way of reading it offers (``READINGS``); ``settings.reading`` must be one.
        ``namer``: who names the suspect for ``check_suspect`` (None: no one, so nothing is checked); ``judge``: who
        weighs the places after the passages read for ``judge_places`` (None: no one, so they stay as ranked)."""
        if settings.reading not in readers:
            raise ValueError(f"investigate: no {settings.reading!r} reader among {', '.join(readers)}")
        self.graph, self.search = graph, CaseSearch(graph, walker, lexical, case)
        self.readers, self.settings, self.namer, self.hop_reader = dict(readers), settings, namer, hop_reader
        self.judge = judge
        self.clocks = CaseClocks(self.search)

    def retrieve(self, question: str, top_k: int, expansions: Sequence[str] = (),
                 params: Mapping[str, object] | None = None) -> Retrieval:
        p = settings_with(self.settings, params)
        follows = "the steps the reader writes" if p.reading == "step" else \
            f"the leads the {self.readers[p.reading].name} reader follows"
        ex = Explanation(method=f"up to {p.steps} rounds: HippoRAG's walk from the question, then walks and BM25 "
                                f"from {follows}; merged by {p.merge}")
        started = time.perf_counter()
        with ex.stage("round 1 search"):
            first = self.search.walker.walk(question, p.depth, expansions)
        inquiry = Inquiry(searches=[[first.retrieval.ids]], mass=first.mass.copy(),
                          followed=set(self.graph.phrases_named_in(question)),
                          seeds_by_round=[[s.node for s in first.retrieval.explanation.seeds]])
        ex.queries = [question, *expansions]
        ex.paths = first.retrieval.explanation.paths
        checks = self._question_checks(question, first, top_k, p, ex)
        split = self._split(question, ex) if p.hops and self.hop_reader is not None and top_k > p.show and \
            not checks.filled else None
        hops = split.sub_questions if split is not None else ()
        pending = dict(number=1, searched=[question], seeds=inquiry.seeds_by_round[0][:8],
                       added=first.retrieval.ids[:p.show])
        if checks.filled or hops:
            last = f"{checks.filled} the top {top_k}: nothing is left for a reading to find" if checks.filled else \
                "the question splits into hops, searched one by one"
            ex.rounds.append(round_record(pending, [], Reading(), [], last, started))
        else:
            self._read_rounds(question, inquiry, pending, started, top_k, p, ex)
        if split is not None:   # the split was made before round 1's reading: its cost is round 1's
            add_reading(ex.rounds[0], split, split.why or "hops: " + " / ".join(hops), HopReader.name)
        if hops:
            inquiry.answered = self._follow_hops(question, hops, first.retrieval.ids, p, inquiry.mass, ex)
        ranking = self._finish(question, inquiry, checks, first.retrieval.ids, top_k, p, ex)
        g, mass = self.graph, inquiry.mass
        ex.seeds = [Seed(node, round(1.0 / (r + 1), 6)) for r, nodes in enumerate(inquiry.seeds_by_round)
                    for node in dict.fromkeys(nodes)][:20]
        ex.node_scores = {g.node_label(int(n)): round(float(mass[n]), 6) for n in np.argsort(-mass)[:200]
                          if mass[n] > 0}
        score = {pid: 1.0 / (rank + 1) for rank, pid in enumerate(ranking)}
        return Retrieval([(pid, score[pid]) for pid in ranking], ex)

    def _question_checks(self, question: str, first: Walk, top_k: int, p: InvestigateSettings,
                         ex: Explanation) -> QuestionChecks:
        """The checks the question's form asks for, made before any reading: what ties one thing to another (the
        chain, searched now) and a stretch of time or a moment (the passages naming a time in it)."""
        tie = asks_what_ties(question) if p.check_ties else None
        chain = tie_chain(self.search, tie, question, p.depth, p.tie_hops, ex) if tie is not None else None
        window = asks_about_window(question, p.time_words) if p.check_window else None
        if window is None and p.check_moment:
            window = asks_about_moment(question, p.time_words)
        found_in_time = timed(self.search, self.clocks.of(p.time_words), window, first) if window is not None else []
        # a chain or a stretch of time that fills the top k leaves nothing for a reading to change: no model call
        filled = "the chain the question asks for fills" if chain is not None and len(chain.passages) >= top_k \
            else f"the passages that name {window.what} fill" if window is not None and len(found_in_time) >= top_k \
            else ""
        return QuestionChecks(chain, window, found_in_time, filled)

    def _read_rounds(self, question: str, inquiry: Inquiry, pending: dict, started: float, top_k: int,
                     p: InvestigateSettings, ex: Explanation) -> None:
        """Rounds 2 to ``steps``: the reader reads the trail so far, and the next round searches what it chose, until
        the loop stops (``inquiry`` and ``ex`` take each round; ``pending``: round 1's record, not yet read)."""
        g, reader = self.graph, self.readers[p.reading]
        for number in range(2, p.steps + 1):
            everything = merged(inquiry.searches, p.merge, len(g.passage_ids))
            trail = [pid for pid in everything if pid not in inquiry.aside]
            shown = self._to_read(question, trail, p) if number == 2 and p.read_named else trail[:p.show]
            # a step reader writes its own query: no list of leads to offer it
            offered_nodes = self.search.candidates(shown, inquiry.mass, inquiry.followed, p.candidates) \
                if p.reading == "leads" else []
            offered = [g.phrases[i] for i in offered_nodes]
            with ex.stage(f"round {number - 1} read", f"{reader.name} reader", llm=reader.uses_llm):
                read = reader.read(question, self.search.in_sight(shown, p.passage_chars), offered,
                                   first=number == 2, judge=p.set_aside)
            useful = read.useful
            newly = [pid for n, pid in enumerate(shown) if n not in useful] if p.set_aside and useful is not None \
                else []
            inquiry.aside += newly
            reading, chosen, queries, stop = self._decide(read, offered_nodes, p)
            ex.rounds.append(round_record(pending, offered, reading, [g.phrases[i] for i in chosen], stop, started,
                                          reader.name, newly))
            if read.answer and p.after_answer != "walk" and top_k > len(shown):
                answered = self._after_answer(read.answer, question, shown, everything, top_k, p, inquiry.mass, ex)
                if answered is not None:
                    inquiry.answered = answered
                    inquiry.seeds_by_round.append(ex.rounds[-1].seeds)
                    if p.read_on and number < p.steps:
                        before = len(ex.rounds)
                        inquiry.answered = self._read_on(question, reader, shown, answered, everything, top_k, p,
                                                         inquiry.mass, ex)
                        inquiry.seeds_by_round += [r.seeds for r in ex.rounds[before:]]
            if stop:
                return
            started = time.perf_counter()
            inquiry.followed.update(chosen)
            with ex.stage(f"round {number} search", f"{len(queries)} searches"):
                walks = [self.search.search(q, p.depth) for q in queries]
            new_rankings = [ids for ids, _ in walks]
            for _, walk in walks:
                inquiry.mass += walk.mass
            # New: in a new search's best ``show`` and neither on the trail the reader saw nor set aside.
            on_trail = set(trail[:max(p.show, top_k)]) | set(inquiry.aside)
            added = list(dict.fromkeys(pid for ids in new_rankings for pid in ids[:p.show] if pid not in on_trail))
            inquiry.searches.append(new_rankings)
            inquiry.seeds_by_round.append([s.node for _, w in walks for s in w.retrieval.explanation.seeds[:3]])
            pending = dict(number=number, searched=queries,
                           seeds=list(dict.fromkeys(inquiry.seeds_by_round[-1]))[:8], added=added)
            if not added:
                ex.rounds.append(round_record(pending, [], Reading(), [], "this round found nothing new", started))
                return
        ex.rounds.append(round_record(pending, [], Reading(), [], f"the last of {p.steps} rounds", started))

    def _finish(self, question: str, inquiry: Inquiry, checks: QuestionChecks, walk: list[str], top_k: int,
                p: InvestigateSettings, ex: Explanation) -> list[str]:
        """The top k: the rounds' merge (or a restated step's ranking), then the title links, the judge and the checks
        the question's form asks for, each a round of its own on the trail when it acts (``walk``: the question's own
        walk; its best ``show`` are the scene, where the suspect's opportunity is looked for)."""
        n = len(self.graph.passage_ids)
        ranking = final_ranking(inquiry.searches, inquiry.answered, inquiry.aside, p.merge, top_k, n)
        # the title links read the top k as listed, in trail order, so a later round's best find is among the first
        # passages; read in rank order they lost atlas 0.074 (candidate (SSS), investigate-choices.md)
        if p.title_links and top_k > p.show:
            ranking = self._title_links(ranking, p.show, ex, inquiry.mass if p.paragraphs_by_mass else None,
                                        p.names_as_written, p.link_chain)
        if p.judge_places and self.judge is not None and top_k > p.show:
            ranking = self._judged(question, ranking, walk[:p.judge_pool], p, ex)
        if p.check_suspect and self.namer is not None and asks_for_someone_by_conditions(question):
            before = len(ex.rounds)
            further = final_ranking(inquiry.searches, inquiry.answered, inquiry.aside, p.merge,
                                    max(top_k, p.suspect_reads), n) if p.suspect_beyond == "ranking" else []
            ranking = check_suspect(self.search, self.namer, question, ranking, further, p, inquiry.mass, ex,
                                    scene=walk[:p.show])
            inquiry.seeds_by_round += [r.seeds for r in ex.rounds[before:]]
        if checks.chain is not None:
            ranking = follow_chain(checks.chain, ranking, inquiry.mass, ex)
            inquiry.seeds_by_round.append(ex.rounds[-1].seeds)
        if checks.window is not None and checks.found_in_time:
            ranking = in_window(checks.window, checks.found_in_time, ranking, ex)
        return ranking

    def _to_read(self, question: str, trail: list[str], p: InvestigateSettings) -> list[str]:
        """The passages the first reading sees: the trail's best ``show``, where the passages whose title the question
        names (among the trail's best ``depth``) take the places of the others, last first; in trail order."""
        shown, ahead_of = trail[:p.show], trail[:p.depth]
        named = set(self.search.titled(question, "", ahead_of))
        missing = [pid for pid in ahead_of if pid in named and pid not in shown]
        if not missing:
            return shown
        keep = [pid for pid in shown if pid in named]
        room = p.show - len(keep)
        others = [pid for pid in shown if pid not in named][:max(0, room - len(missing))]
        picked = {*keep, *missing[:room], *others}
        return [pid for pid in trail if pid in picked]

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

    def _after_answer(self, step: str, question: str, shown: list[str], ranked: list[str], top_k: int,
                      p: InvestigateSettings, mass: np.ndarray,
                      ex: Explanation) -> tuple[list[str], list[str]] | None:
        """What a step that restated the passages read (``shown``) brings to the top k's places after them
        (``after_answer``): the step's finds, from its search (its round goes on the trail and its walk's mass into
        ``mass``), with the passages whose title it names first (``step_titles``), or those passages alone
        (``titles``). Returns the ranking with those places filled (the passages read, then the finds round robin
        with the rest of ``ranked``) and the finds; None when ``titles`` finds no page the step names (no search
        runs: the ranking stays the loop's)."""
        n = len(self.graph.passage_ids)
        if p.after_answer == "titles" and not [pid for pid in self.search.titled(step, question, ())
                                               if pid not in shown]:   # whether any is named: no order needed
            return None
        ids, walk, started = self.search.search_round(step, p.depth, mass, ex, "the step that restated the evidence")
        titled = [pid for pid in self.search.titled(step, question, ids) if pid not in shown] \
            if p.step_titles or p.after_answer == "titles" else []
        if p.paragraphs_by_mass:
            titled = self.search.weighed(titled, ids, mass)
        found = titled if p.after_answer == "titles" else ahead(titled, [pid for pid in ids if pid not in shown], n)
        rest = [pid for pid in ranked if pid not in shown]
        filled = shown + merged([[rest], [found]], "trail", n)
        after = filled[len(shown):top_k]
        pending = searched(ex, step, walk, [pid for pid in after if pid not in rest[:len(after)]])
        why = "the pages the answer names by title" if p.after_answer == "titles" else "what the answer leads to"
        ex.rounds.append(round_record(pending, [], Reading(), [], f"the places after the passages read go to {why}",
                                      started))
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
            read = reader.read(question, self.search.in_sight(seen, p.passage_chars), [], first=False)
        step = read.sub_questions[0] if read.sub_questions and not read.enough else ""
        said = f"next, {step}" if step else read.why or "no step"
        add_reading(ex.rounds[-1], read, f"read with {found[0]}: {said}", reader.name)
        if not step:
            return answered
        ids, walk, started = self.search.search_round(step, p.depth, mass, ex, "the step after the restated one")
        new = [pid for pid in ids if pid not in seen]
        rest = [pid for pid in ranked if pid not in seen]
        refilled = seen + merged([[new], [rest]], "trail", len(self.graph.passage_ids))
        pending = searched(ex, step, walk, [pid for pid in refilled[len(seen):top_k] if pid not in filled[:top_k]])
        ex.rounds.append(round_record(pending, [], Reading(), [], "the step the passages read and the restated "
                                      "step's find lead to", started))
        return refilled, [found[0], *new]

    def _title_links(self, ranking: list[str], show: int, ex: Explanation, mass: np.ndarray | None = None,
                     as_written: bool = False, chain: bool = False) -> list[str]:
        """The top k (``ranking``) with its places after the first ``show`` given, turn about, to the passages whose
        title those passages name (those the ranking holds first, in its order; ``as_written``: named as names) and to
        the ranking's next; a round of its own on the trail when it changes the top k. ``chain``: the place after the
        first named page goes to the page that page names first, unless the passage it would take it from is named by
        the first passages too (two signals outweigh one)."""
        started = time.perf_counter()
        first, n = ranking[:show], len(self.graph.passage_ids)
        place = {pid: rank for rank, pid in enumerate(ranking)}
        named = sorted(self.search.named_by(first, as_written), key=lambda pid: place.get(pid, len(place)))
        if mass is not None:
            named = self.search.weighed(named, place, mass)
        linked = (first + merged([[named], [ranking[show:]]], "trail", n))[:len(ranking)]
        chained = ""   # the page the chain placed
        if chain and named and len(linked) > show + 1 and linked[show] == named[0] and linked[show + 1] not in named:
            own = self.search.case.passage(named[0]).title   # a page's text names its own title first
            onward = [pid for pid in self.search.named_by([named[0]], as_written)
                      if self.search.case.passage(pid).title != own and pid not in linked[:show + 1]]
            if mass is not None:
                onward = self.search.weighed(onward, place, mass)
            if onward:
                chained = onward[0]
                linked = (linked[:show + 1] + [chained] + [pid for pid in linked[show + 1:] if pid != chained]
                          )[:len(ranking)]
        added = [pid for pid in linked if pid not in ranking]
        if added or chained:
            pages = [*added, *named[:1]] + ([chained] if chained else [])
            title = {pid: self.search.case.passage(pid).title for pid in pages}
            why = "the first passages name these by title: the places after them go to those pages, turn about with " \
                  "the ranking's next"
            if chained:
                why += f"; after {title[named[0]]}, the page it names first ({title[chained]})"
            ex.rounds.append(round_record(dict(number=len(ex.rounds) + 1, searched=[title[pid] for pid in added],
                                               seeds=[], added=added), [], Reading(), [], why, started))
        return linked

    def _judged(self, question: str, ranking: list[str], walk: list[str], p: InvestigateSettings,
                ex: Explanation) -> list[str]:
        """The top k (``ranking``) with its places after the first ``show`` given to the candidates the judge weighs
        most (the ranking's own there, weighed ``judge_margin`` more, then ``walk``'s; ties keep that order); a round
        of its own on the trail."""
        assert self.judge is not None
        started = time.perf_counter()
        read = ranking[:p.show]
        pool = [pid for pid in dict.fromkeys([*ranking[p.show:], *walk]) if pid not in read]
        with ex.stage("judge places", f"{len(pool)} candidates, one question each", llm=True):
            weighing = self.judge.weigh(question, self.search.in_sight(read, p.passage_chars),
                                        self.search.in_sight(pool, p.passage_chars))
        share = dict(zip(pool, weighing.weights, strict=True))
        own = set(ranking[p.show:])
        weight = {pid: w + (p.judge_margin if pid in own else 0.0) for pid, w in share.items()}
        judged = read + sorted(pool, key=lambda pid: -weight[pid])[:len(ranking) - p.show]
        added = [pid for pid in judged if pid not in ranking]
        why = f"the model weighed {len(pool)} candidates for the places after the passages read (best: " + \
              ", ".join(f"{self.search.case.passage(pid).title} {share[pid]:.2f}" for pid in judged[p.show:]) + ")"
        reading = Reading(llm_calls=weighing.llm_calls, llm_ms=weighing.llm_ms)
        record = round_record(dict(number=len(ex.rounds) + 1, searched=[], seeds=[], added=added), [], reading, [],
                              why, started, self.judge.name)
        record.reads = weighing.reads
        ex.rounds.append(record)
        return judged

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
            ids, walk, started = self.search.search_round(text, p.depth, mass, ex, f"hop {number} of the question")
            reading, reader = Reading(), ""
            if refers_to(hops[number:], number):
                reader = self.hop_reader.name
                with ex.stage(f"round {len(ex.rounds) + 1} read", "the hop's answer", llm=self.hop_reader.uses_llm):
                    reading = self.hop_reader.answer(text, self.search.in_sight(ids[:p.show], p.passage_chars))
                if reading.answer:
                    answers[number] = reading.answer
            on_trail = set(shown).union(*searches)
            searches.append(ids)
            pending = searched(ex, text, walk, [pid for pid in ids[:p.show] if pid not in on_trail])
            ex.rounds.append(round_record(pending, [], reading, [], "", started, reader))
        # a hop's finds are its best ``show``: further down, a search that found what was read finds little else
        found = ahead([pid for answer in answers.values() for pid in self.search.titled(answer, question, ranked)],
                      merged([[ids[:p.show]] for ids in reversed(searches)], "trail", n), n)
        found = [pid for pid in found if pid not in shown]
        rest = [pid for pid in ranked if pid not in shown]
        return shown + merged([[found], [rest]], "trail", n), found
