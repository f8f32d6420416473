"""Saving and loading a knowledge graph: JSON + NPZ (no pickle), written through temp files and renames, keyed by
everything its contents depend on, the build code included, so loading a saved graph makes no LLM or embedding
call and a graph built by other code is never loaded as this code's.
"""
from __future__ import annotations

import functools
import hashlib
import json
import logging
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from core.files import replacing

from .graph import Fact, KnowledgeGraph
from .linking import MENTION_MAX_SHARE, MENTION_MIN_LIMIT, SYNONYM_THRESHOLD, SYNONYM_TOP_K

log = logging.getLogger(__name__)

GRAPH_FORMAT = 8   # 4: no synonymy across numbers or genders; 5: text mentions; 6: name variants; 7: possessives;
                   # 8: edge-only facts (co-occurrence) without vectors, after the matched ones


# what decides a graph's contents
BUILD_MODULES = ("build.py", "graph.py", "linking.py", "normalize.py", "openie.py", "nlp.py", "storage.py")


@functools.cache
def build_code_digest(folder: Path = Path(__file__).parent) -> str:
    """A digest of the modules that decide what a graph holds (BUILD_MODULES in ``folder``), so a graph saved by
    other code (an older checkout, an experiment) is not loaded as this code's, even when nobody raised GRAPH_FORMAT.
    Editing them costs one rebuild: OpenIE replies and embeddings come back from the response cache."""
    digest = hashlib.sha256()
    for name in BUILD_MODULES:
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()[:16]


def graph_key(fingerprint: str, triples_source: str, extraction_model: str, embed_model: str, **params) -> str:
    """The saved graph's name: everything the build depends on, the build code and its module constants included,
    so a graph built by other code or with other thresholds is never loaded as this one."""
    constants = [SYNONYM_THRESHOLD, SYNONYM_TOP_K, MENTION_MAX_SHARE, MENTION_MIN_LIMIT]
    blob = json.dumps([GRAPH_FORMAT, build_code_digest(), constants, fingerprint, triples_source, extraction_model,
                       embed_model, params], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def save_graph(graph: KnowledgeGraph, folder: Path, key: str) -> None:
    """Write JSON + NPZ via temp files and renames: a crash never leaves a half-written graph behind."""
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"format": GRAPH_FORMAT, "phrases": graph.phrases, "phrase_keys": graph.phrase_keys,
           "passage_ids": graph.passage_ids, "phrase_passages": graph.phrase_passages,
           "facts": [[f.subject, f.relation, f.object, f.passages] for f in graph.facts],
           "synonyms": graph.synonyms, "embed_model": graph.embed_model, "meta": graph.meta}
    # The JSON is renamed last (the outer block exits after the inner one): its presence means both are complete.
    with replacing(folder / f"{key}.json") as json_tmp, replacing(folder / f"{key}.npz") as npz_tmp:
        with open(npz_tmp, "wb") as fh:
            np.savez(fh, phrases=graph.phrase_vectors, facts=graph.fact_vectors, passages=graph.passage_vectors)
        json_tmp.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")


def _inconsistency(g: KnowledgeGraph) -> str:
    """What makes a loaded graph unusable (counts or node numbers that do not match), or ''."""
    n_phrases = len(g.phrases)
    if not (len(g.phrase_keys) == len(g.phrase_passages) == n_phrases == len(g.phrase_vectors)):
        return "inconsistent: its entity lists and vectors differ in length"
    matched = [not f.edge_only for f in g.facts]
    if matched != sorted(matched, reverse=True) or sum(matched) != len(g.fact_vectors) \
            or len(g.passage_ids) != len(g.passage_vectors):
        return "inconsistent: its facts or passages do not match their vectors"
    if any(not (0 <= f.subject < n_phrases and 0 <= f.object < n_phrases) for f in g.facts) or any(
            not (0 <= a < n_phrases and 0 <= b < n_phrases) for a, b, _ in g.synonyms):
        return "inconsistent: a fact or synonym points past the entity list"
    known = set(g.passage_ids)
    if any(pid not in known for f in g.facts for pid in f.passages) or any(
            pid not in known for ps in g.phrase_passages for pid in ps):
        return "inconsistent: a fact or entity names a passage the graph does not have"
    return ""


def load_graph(folder: Path, key: str, passage_ids: Sequence[str] | None = None) -> KnowledgeGraph | None:
    """The saved graph, or None if there is none (or it is unreadable, or built over other passages than
    ``passage_ids``, such as a file copied or linked from another case's: then it is rebuilt)."""
    jpath, npath = folder / f"{key}.json", folder / f"{key}.npz"
    if not (jpath.exists() and npath.exists()):
        return None
    started = time.perf_counter()
    try:
        doc = json.loads(jpath.read_text(encoding="utf-8"))
        if doc.get("format") != GRAPH_FORMAT:
            return None
        with np.load(npath, allow_pickle=False) as arrays:
            vectors = {k: arrays[k] for k in ("phrases", "facts", "passages")}
        graph = KnowledgeGraph(
            phrases=doc["phrases"], phrase_keys=doc["phrase_keys"], passage_ids=doc["passage_ids"],
            facts=[Fact(s, r, o, list(p)) for s, r, o, p in doc["facts"]], phrase_passages=doc["phrase_passages"],
            synonyms=[(a, b, s) for a, b, s in doc["synonyms"]], phrase_vectors=vectors["phrases"],
            fact_vectors=vectors["facts"], passage_vectors=vectors["passages"], embed_model=doc["embed_model"],
            meta=doc.get("meta", {}))
        problem = _inconsistency(graph)
        if not problem and passage_ids is not None and list(passage_ids) != graph.passage_ids:
            problem = "built over other passages than this case's (copied or linked from another case?)"
    except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, zipfile.BadZipFile) as exc:
        problem = f"unreadable ({type(exc).__name__}: {exc})"
    if problem:
        log.warning("the saved graph %s is %s; building it again", jpath, problem)
        return None
    log.info("loaded graph %s in %.0f ms", key, (time.perf_counter() - started) * 1000)
    return graph
