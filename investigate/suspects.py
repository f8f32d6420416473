"""Which questions ask for a suspect: who has several things at once (a motive and the opportunity; the means, the
opportunity and a way to sell). The passages that lead to such a person (the theft, the pawn shop, the pawnbroker who
names them) are not the evidence of the conditions; that evidence is about the person, so the loop checks them
(``InvestigateSettings.check_suspect``: ``check_suspect``)."""
from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from core.types import Explanation
from kg.nlp import load_spacy

from .merge import ahead, merged
from .readers import Namer, Reading
from .search import CaseSearch
from .settings import InvestigateSettings
from .trail import add_reading, round_record, searched

if TYPE_CHECKING:   # spaCy loads when a question is first parsed, not on import
    from spacy.tokens import Token

PERSON_WORDS = ("who", "whom", "whose")   # the question words that ask for a person
# What a condition the question names looks like in the evidence about a person, in generic words (the issue's
# decomposition of a motive: who needed money, held a grudge, stood to gain). Only the motive: the evidence of the
# opportunity mostly does not name the person (a car's sighting), and what does (their own statement of where they
# were) reads most like "was at the place at the time"; the loop finds it through the graph instead
# (``InvestigateSettings.suspect_opportunity``).
CONDITION_EVIDENCE = {"motive": "needed money, held a grudge or stood to gain"}


def asks_for_someone_by_conditions(question: str) -> bool:
    """Whether ``question`` asks who has two or more things at once: a who-question whose verb's object is a
    coordination of common nouns ("Who had both a motive and the opportunity ...?", "Who had the means, the
    opportunity and a way to sell the coins?") or whose verb is coordinated with another of the same subject ("Who
    had a key and knew the code?"). Coordinated names ("... first, A or B?") and coordinated clauses ("Whose card
    opened it, and where was that person?") are not: there the passages that answer are the evidence."""
    nouns, verbs = _conditions(question)
    return bool(nouns) or verbs


def conditions_named(question: str) -> tuple[str, ...]:
    """The conditions such a question names as a coordination of common nouns, by lemma ("Who had both a motive and
    the opportunity to steal X?": motive, opportunity); () when it names none so (or asks something else)."""
    return _conditions(question)[0]


@lru_cache(maxsize=1024)   # a question is parsed once, however often it is asked
def _conditions(question: str) -> tuple[tuple[str, ...], bool]:
    """The lemmas of the coordinated common nouns a who-question's verb takes, and whether that verb is coordinated
    with another of the same subject."""
    doc = load_spacy()(question)
    if not len(doc) or doc[0].lower_ not in PERSON_WORDS:
        return (), False
    for verb in (t for t in doc if any(c.dep_ == "nsubj" and c.lower_ in PERSON_WORDS for c in t.children)):
        if any(c.dep_ == "conj" and c.pos_ in ("VERB", "AUX") and
               not any(g.dep_.startswith("nsubj") for g in c.children) for c in verb.children):
            return (), True
        for obj in (c for c in verb.children if c.dep_ in ("dobj", "attr") and _common_noun(c)):
            joined = [c for c in obj.children if c.dep_ == "conj" and _common_noun(c)]
            if joined:
                more = [c for j in joined for c in j.children if c.dep_ == "conj" and _common_noun(c)]
                return tuple(t.lemma_.lower() for t in (obj, *joined, *more)), False
    return (), False


def _common_noun(token: Token) -> bool:
    """A common noun, or a lowercase word the tagger took for a name ("Who owns the van and the boat?" tags "van" a
    proper noun): a name is written with a capital."""
    return token.pos_ == "NOUN" or (token.pos_ == "PROPN" and token.text.islower())


def check_suspect(search: CaseSearch, namer: Namer, question: str, ranking: list[str], further: Sequence[str],
                  p: InvestigateSettings, mass: np.ndarray, ex: Explanation, scene: Sequence[str] = ()) -> list[str]:
    """The top k (``ranking``) once the person the trail points to is checked. ``namer`` reads the top k, then what
    ``suspect_beyond`` says (links: each of the top k in turn gives its most specific link not read yet; ranking:
    ``further``, the loop's ranking past the top k, given only then), ``suspect_reads`` passages in all; its cost and
    its answer go on the last round. If it names someone, a search of the name is a round of its own whose finds
    beyond the top k (with ``suspect_hop``, round robin with the best finds' links) take its places, after the passage
    of theirs that reads most like a condition the question names (``suspect_condition``) and the one that places
    something of theirs at the ``scene`` (``suspect_opportunity``); the ranking's own fill any left. Its walk joins
    ``mass``."""
    top_k, n = len(ranking), len(search.graph.passage_ids)
    beyond = merged([[search.links(top, ranking)] for top in ranking], "trail", n) \
        if p.suspect_beyond == "links" else further
    with ex.stage("suspect named", "the question asks who meets several conditions", llm=True):
        named = namer.name(question, search.in_sight(ahead(ranking, beyond, p.suspect_reads), p.passage_chars))
    person = named.answer
    add_reading(ex.rounds[-1], named, named.why or f"the trail points to {person}")
    if not person:
        return ranking
    ids, walk, started = search.search_round(person, p.depth, mass, ex, "the person named")
    found = [pid for pid in ids if pid not in ranking]
    if p.suspect_hop and found:
        links = [[search.links(find, ranking)] for find in found[:p.suspect_hop_finds]]
        found = merged([[found], *links], "trail", n)
    # the conditions the question names that the check looks for; the person's passages are found once, for both
    conditions = conditions_named(question)
    worded = [c for c in conditions if c in CONDITION_EVIDENCE] if p.suspect_condition else []
    placed = p.suspect_opportunity and "opportunity" in conditions
    rows = search.naming(person) if worded or placed else []
    evidence = condition_evidence(search, worded, rows)
    at_scene = opportunity_evidence(search, question, rows, ids, scene) if placed else ()
    picked = list(dict.fromkeys([*evidence.values(), *at_scene]))
    checked = ahead(picked, found, top_k)
    pending = searched(ex, person, walk, checked)
    why = "the question asks who meets several conditions: the person the trail points to is checked against them"
    if evidence:
        why += f"; what reads most like their {' and '.join(evidence)}: " + ", ".join(dict.fromkeys(evidence.values()))
    if at_scene:
        why += f"; what places something of theirs at the scene: {at_scene[0]} (through {at_scene[1]})"
    ex.rounds.append(round_record(pending, [], Reading(), [], why, started))
    return ahead(checked, ranking, top_k)


def condition_evidence(search: CaseSearch, conditions: Sequence[str], rows: Sequence[int]) -> dict[str, str]:
    """For each of ``conditions`` (each with generic evidence words, ``CONDITION_EVIDENCE``), the passage of ``rows``
    (the graph's rows of the passages naming the person: ``CaseSearch.naming``) whose embedding is closest to those
    words; {} when there are none."""
    if not conditions or not rows:
        return {}
    g = search.graph
    words = search.walker.embedder.embed([CONDITION_EVIDENCE[c] for c in conditions])
    fit = g.passage_vectors[rows] @ words.T   # passages x conditions
    return {c: g.passage_ids[rows[int(np.argmax(fit[:, n]))]] for n, c in enumerate(conditions)}


def opportunity_evidence(search: CaseSearch, question: str, rows: Sequence[int], found: Sequence[str],
                         scene: Sequence[str]) -> tuple[str, str] | tuple[()]:
    """For a question that names an opportunity: the passage that places something of the person's at the scene
    (``scene``: the question's own best finds), found from the passages naming them (``rows``, the graph's rows
    ``CaseSearch.naming`` gives, taken in the name's search order ``found``) one most specific link away, and the
    passage of theirs it came from; () when none does. A phrase the question names links nothing, and a link must
    name none of theirs: their own statements are the name's finds already."""
    g = search.graph
    theirs = [g.passage_ids[row] for row in rows]
    rank = {pid: n for n, pid in enumerate(found)}
    theirs.sort(key=lambda pid: rank.get(pid, len(rank)))
    asked = set(g.phrases_named_in(question))
    away = set(theirs) | set(scene)
    at_scene = {i for pid in scene if pid not in theirs for i in g.phrases_of(pid)} - asked
    for pid in theirs:
        links = search.links(pid, away, avoid=asked)
        if links and at_scene & set(g.phrases_of(links[0])):
            return links[0], pid
    return ()
