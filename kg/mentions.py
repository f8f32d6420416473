"""Named-entity mentions of every passage text by spaCy, found once and saved as JSON beside the index.

spaCy's parse is the slow part of both the deterministic triples (kg/nlp.py) and hubmesh's entity graph: 6,269
passages take about 80 s on 2 cores. The extraction keeps each passage's entities as it parses, so a build that makes
both saves them here and hubmesh reads them instead of parsing every passage again.
"""
from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from core.files import write_text_whole

from .nlp import SPACY_MODEL

log = logging.getLogger(__name__)

Mentions = dict[str, list[tuple[str, str]]]   # passage text -> [(entity text, spaCy label), ...]


def mentions_path(folder: Path, texts: Sequence[str]) -> Path:
    """Where the mentions of exactly this set of texts are saved (the model is in the key)."""
    key = hashlib.sha256(json.dumps([SPACY_MODEL, sorted(set(texts))]).encode()).hexdigest()[:20]
    return folder / f"ner-{key}.json"


def load_mentions(folder: Path, texts: Sequence[str]) -> Mentions | None:
    """The saved mentions of ``texts``, or None (nothing saved, unreadable or of the wrong shape: said in the log)."""
    path = mentions_path(folder, texts)
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("saved mentions %s are unreadable (%s); running NER again", path, exc)
        return None
    if _well_formed(saved, texts):
        return {t: [(m[0], m[1]) for m in saved[t]] for t in set(texts)}
    log.warning("saved mentions %s do not have the expected shape (text -> [[entity, label], ...] for every "
                "passage); running NER again", path)
    return None


def save_mentions(folder: Path, found: Mapping[str, Sequence[tuple[str, str]]]) -> None:
    """Save ``found`` whole or not at all; a folder that cannot be written costs a parse next time, nothing else."""
    path = mentions_path(folder, list(found))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_text_whole(path, json.dumps({t: [list(m) for m in found[t]] for t in sorted(found)},
                                          ensure_ascii=False))
    except OSError as exc:   # a file where the folder should be, a full disk: the mentions still serve this run
        log.warning("cannot save the NER mentions in %s (%s): they are used for this run and computed again "
                    "next time; make it a writable folder", folder, exc.strerror or exc)


def _well_formed(saved: object, texts: Sequence[str]) -> bool:
    return isinstance(saved, dict) and all(
        isinstance(saved.get(t), list) and all(isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) for x in m)
                                               for m in saved[t]) for t in texts)
