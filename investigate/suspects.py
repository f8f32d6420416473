"""Which questions ask for a suspect: who has several things at once (a motive and the opportunity; the means, the
opportunity and a way to sell). The passages that lead to such a person (the theft, the pawn shop, the pawnbroker who
names them) are not the evidence of the conditions; that evidence is about the person, so the loop checks them
(``InvestigateSettings.check_suspect``)."""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from kg.nlp import load_spacy

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
