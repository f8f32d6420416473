"""Which questions ask what ties one thing to another ("What ties Ann Lee's car to the theft at the mill?", "Which
evidence links the van to the farm?", "How is the key connected to the safe?"). Their evidence is a chain: the
passage that says what the first thing is, then the passages it shares something specific with, one hop at a time,
toward the second (``InvestigateSettings.check_ties``: ``tie_chain``, then ``follow_chain``)."""
from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from core.types import Explanation
from kg.nlp import load_spacy
from kg.walk import Walk

from .merge import ahead
from .readers import Reading
from .search import CaseSearch
from .trail import round_record, searched

if TYPE_CHECKING:   # spaCy loads when a question is first parsed, not on import
    from spacy.tokens import Span

CONNECTING = ("tie", "link", "connect")   # verbs of connection, by lemma
ASKING = ("what", "which", "how")         # the question words that ask for the connection itself
TOWARD = ("to", "with")                   # the preposition that introduces the second thing


@dataclass(frozen=True)
class Tie:
    start: str   # what the chain starts from ("Ann Lee's car")
    end: str     # what it should reach ("the theft at the mill")


@lru_cache(maxsize=1024)   # a question is parsed once, however often it is asked
def asks_what_ties(question: str) -> Tie | None:
    """The two things ``question`` asks the tie between, or None if it asks something else. A question word comes
    first, then a verb of connection, and the first thing either follows the verb ("What ties X to Y?") or, in the
    passive, comes between the question word and the verb ("How is X connected to Y?"); "to" or "with" introduces
    the second. The first thing must name something (a noun or a name): "what ties them to it?" has no start."""
    doc = load_spacy()(question)
    if not len(doc) or doc[0].lower_ not in ASKING:
        return None
    for verb in doc[1:]:
        if verb.lemma_.lower() not in CONNECTING or verb.pos_ not in ("VERB", "NOUN"):
            continue
        toward = next((t.i for t in doc[verb.i + 1:] if t.lower_ in TOWARD and t.pos_ == "ADP"), None)
        if toward is None:
            return None
        start = doc[verb.i + 1:toward]
        # the passive ("How is X connected to Y?"): the first thing sits between the auxiliary and the verb
        if not _names_something(start) and verb.tag_ in ("VBN", "VBD") and doc[1].pos_ == "AUX":
            start = doc[2:verb.i]
        end = doc[toward + 1:].text.rstrip("?!. ")
        if not _names_something(start) or not end:
            return None
        return Tie(start.text, end)
    return None


def _names_something(span: Span) -> bool:
    """Whether ``span`` holds a noun or a name (a pronoun names nothing a search could start from)."""
    return any(t.pos_ in ("NOUN", "PROPN") for t in span)


@dataclass(frozen=True)
class Chain:
    """The chain a tie question asks for: its passages in order, each link as the trail shows it ("D13 -> D12
    (RC33 XJQ)"), and the search of the first thing that started it."""
    tie: Tie
    passages: list[str]
    links: list[str]
    walk: Walk
    ms: float


def tie_chain(search: CaseSearch, tie: Tie, question: str, depth: int, hops: int, ex: Explanation) -> Chain:
    """The chain ``tie`` asks for: a search of ``tie.start`` gives its first passage (its best find), and each link is
    the passage the chain's newest passage (failing that, an earlier one) shares its most specific phrase with, a
    phrase ``question`` names linking nothing; ``hops`` links at most."""
    g = search.graph
    started = time.perf_counter()
    with ex.stage("tie search", "the first thing the question ties"):
        ids, walk = search.search(tie.start, depth)
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


def follow_chain(chain: Chain, ranking: list[str], mass: np.ndarray, ex: Explanation) -> list[str]:
    """The top k (``ranking``) once ``chain`` is followed, a round of its own on the trail: the chain takes the first
    places, the ranking fills the rest. Its search's walk joins ``mass``."""
    mass += chain.walk.mass
    top_k = len(ranking)
    pending = searched(ex, chain.tie.start, chain.walk, chain.passages[:top_k])
    why = f"the question asks what ties {chain.tie.start} to {chain.tie.end}: the chain from the first thing's best find"
    tied = round_record(pending, [], Reading(), [], "; ".join([why, *chain.links]), time.perf_counter())
    tied.ms = chain.ms
    ex.rounds.append(tied)
    return ahead(chain.passages, ranking, top_k)
