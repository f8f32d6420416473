"""How phrases join in the graph beyond the triples: text mentions, embedding synonymy, name variants.

Each rule says which phrase pairs name one thing (or which passages mention a phrase) and which only look alike:
other numbers, another gender's honorific, a phrase too common to link anything.
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from core.types import Passage

from .normalize import normalize_entity

SYNONYM_THRESHOLD = 0.8
SYNONYM_TOP_K = 10

MENTION_MAX_SHARE = 0.05   # a phrase in more than this share of passages is too common to join them...
MENTION_MIN_LIMIT = 3      # ...but in a small case up to 3 may (5% of 19 is none; 8 helped lookups, cost sense-making)


class PhraseIndex:
    """The graph's specific phrases, found in any text by word-boundary match on the normalised words.

    Specific: two words or more, or one word written with a capital or a digit (a name, a code); "the accountant"
    or "rain" alone would match everywhere.
    """

    def __init__(self, keys: Sequence[str], surfaces: Sequence[str]):
        self.ids = {k: i for i, (k, surface) in enumerate(zip(keys, surfaces, strict=True))
                    if " " in k or any(ch.isdigit() for ch in k) or surface[:1].isupper()}
        # The lengths of the phrases starting with each word: a text position tries only those, not every length.
        self.lengths: dict[str, set[int]] = defaultdict(set)
        for k in self.ids:
            words = k.split()
            self.lengths[words[0]].add(len(words))

    def find(self, text: str) -> set[int]:
        """Indexes of the phrases ``text`` mentions."""
        found = set()
        for variant in {text, _POSSESSIVE_S.sub("", text)}:   # "Victoria Crane's car" names "Victoria Crane" too
            words = normalize_entity(variant).split()
            for start, word in enumerate(words):
                for n in self.lengths.get(word, ()):
                    i = self.ids.get(" ".join(words[start:start + n]))
                    if i is not None:
                        found.add(i)
        return found


def text_mention_links(keys: Sequence[str], surfaces: Sequence[str],
                       passages: Sequence[Passage]) -> dict[int, set[str]]:
    """Phrase index -> the passages whose text mentions it (``PhraseIndex``); a phrase found in more than
    MENTION_MAX_SHARE of the passages (and more than MENTION_MIN_LIMIT) links nothing."""
    index = PhraseIndex(keys, surfaces)
    found: dict[int, set[str]] = defaultdict(set)
    for p in passages:
        for i in index.find(p.text):
            found[i].add(p.id)
    limit = max(MENTION_MIN_LIMIT, int(MENTION_MAX_SHARE * len(passages)))
    return {i: pids for i, pids in found.items() if len(pids) <= limit}


def _ordered(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a <= b else (b, a)


# Cells of one block of the similarity matrix: each costs ~5 bytes while the block is scanned (the float32 cosine
# and the threshold's mask; only the few cells above it are ranked), so this caps that at ~80 MB. 2,048 rows x all
# phrases took 2.2 GB on the 52,839 phrases of the 6,269-passage 2Wiki corpus when every row was ranked in full;
# graphs under 8,192 phrases keep blocks of 2,048 rows.
SYNONYM_BLOCK_CELLS = 16_000_000


def synonym_pairs(vectors: np.ndarray, keys: Sequence[str], threshold: float, top_k: int,
                  block: int = 2048) -> list[tuple[int, int, float]]:
    """Pairs (i < j) whose cosine is >= threshold, each phrase keeping its top_k + 1 most similar such
    neighbours (the count once made room for the phrase itself, which is excluded; kept so graphs stay as built).

    Vectorised in blocks of rows (at most ``block``, fewer when the graph is large, so a block's memory stays
    bounded); no Python loop over pairs. The matrix is symmetric, so a block of rows is multiplied only by the
    phrases from its first row on (half the products: ~16 s of the corpus's build), and each cell at or above the
    threshold is counted for both its phrases; only those few cells a row are ranked. Phrases made only of digits
    and punctuation (times, dates, amounts) get no synonymy edges: embeddings rate "8 pm" close to "9 15 pm".
    """
    n = len(vectors)
    if n < 2:
        return []
    block = max(16, min(block, SYNONYM_BLOCK_CELLS // n))
    eligible = np.array([any(ch.isalpha() for ch in k) for k in keys])
    vectors = np.asarray(vectors, dtype=np.float32)
    keep = min(top_k + 1, n - 1)
    found_a, found_b, found_v = [], [], []
    for start in range(0, n, block):
        sims = vectors[start:start + block] @ vectors[start:].T    # column c is phrase start + c
        r_idx, c_idx = np.nonzero(sims >= threshold)
        upper = c_idx > r_idx                                      # each pair once; not your own neighbour
        r_idx, c_idx = r_idx[upper], c_idx[upper]
        ok = eligible[r_idx + start] & eligible[c_idx + start]
        found_a.append(r_idx[ok] + start)
        found_b.append(c_idx[ok] + start)
        found_v.append(sims[r_idx[ok], c_idx[ok]])
    a, b, v = (np.concatenate(x) for x in (found_a, found_b, found_v))
    rows, cols, values = np.concatenate([a, b]), np.concatenate([b, a]), np.concatenate([v, v])
    order = np.lexsort((cols, -values, rows))                      # by row, most similar first (ties: by column)
    rows, cols, values = rows[order], cols[order], values[order]
    rank = np.arange(len(rows)) - np.searchsorted(rows, rows)      # place within its row
    best = rank < keep
    pairs: dict[tuple[int, int], float] = {}
    for r, c, s in zip(rows[best].tolist(), cols[best].tolist(), values[best].tolist(), strict=True):
        pair = _ordered(r, c)
        if pair not in pairs and may_be_synonyms(keys[pair[0]], keys[pair[1]]):
            pairs[pair] = float(s)
    return [(a, b, s) for (a, b), s in sorted(pairs.items())]


_MALE, _FEMALE = {"mr", "sir", "lord", "mister"}, {"mrs", "ms", "miss", "madam", "lady", "mme"}
_HONORIFICS = _MALE | _FEMALE | {"dr", "prof", "professor"}
_POSSESSIVE = re.compile(r"^(.+?)['\u2019]s\b")
_POSSESSIVE_S = re.compile(r"(?<=\w)['\u2019]s\b")


def may_be_synonyms(a: str, b: str) -> bool:
    """False for phrases that embeddings put close but name different things: other numbers (times, dates,
    amounts: "9 45 pm" / "9 15 pm") or honorifics of another gender ("mr blackwood" / "mrs blackwood")."""
    numbers_a, numbers_b = re.findall(r"\d+", a), re.findall(r"\d+", b)
    if numbers_a and numbers_b and numbers_a != numbers_b:
        return False
    genders = [{g for g, words in (("m", _MALE), ("f", _FEMALE)) if words & set(k.split())} for k in (a, b)]
    return not (genders[0] and genders[1] and genders[0] != genders[1])


def _full_names_by_surname(keys: Sequence[str], surfaces: Sequence[str]) -> dict[str, list[int]]:
    """Surname -> the phrases that are a full name ending with it: two or three capitalised words, no honorific,
    no digit ("Victoria Crane", "Gideon J. Whitlock")."""
    out: dict[str, list[int]] = defaultdict(list)
    for i, (key, surface) in enumerate(zip(keys, surfaces, strict=True)):
        words, shown = key.split(), surface.split()
        if 2 <= len(words) <= 3 and words[0] not in _HONORIFICS and all(w[:1].isupper() for w in shown) \
                and not any(ch.isdigit() for ch in key):
            out[words[-1]].append(i)
    return out


def name_variant_pairs(keys: Sequence[str], surfaces: Sequence[str]) -> list[tuple[int, int]]:
    """Pairs (i < j) of phrases that name one person or thing in other words: an honorific and a surname
    ("Ms. Crane") and the one full name in the graph with that surname ("Victoria Crane"); a possessive
    ("Victoria Crane's car") and its owner, when the owner is a phrase written as a name."""
    index = {k: i for i, k in enumerate(keys)}
    by_surname = _full_names_by_surname(keys, surfaces)
    pairs = set()
    for i, (key, surface) in enumerate(zip(keys, surfaces, strict=True)):
        words = key.split()
        if len(words) == 2 and words[0] in _HONORIFICS and len(by_surname.get(words[1], ())) == 1:
            pairs.add(_ordered(i, by_surname[words[1]][0]))
        owner = _POSSESSIVE.match(surface)
        j = index.get(normalize_entity(owner.group(1))) if owner else None
        if j is not None and j != i and surfaces[j][:1].isupper():   # a named owner, not "the country's"
            pairs.add(_ordered(i, j))
    return sorted(pairs)
