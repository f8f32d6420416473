"""A ChromaDB collection that mirrors a case's passages, kept in sync incrementally.

One collection per (case, embedding model): vectors of two models never mix. Each record stores a hash of
its passage text, so a sync embeds only new or changed passages and deletes the ones that are gone. Records
are written in batches, each with its embedding, so a run that stops half-way leaves a consistent
collection and the next sync continues where it stopped.
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.contract import BuildContext, BuildReport, Product
from core.files import held
from core.storage import Storage
from core.types import Passage, Progress, ProgressUpdate
from llm import Embedder
from llm.cache import storage_trouble

log = logging.getLogger(__name__)

STAGE = "vector index"

class IndexStoreError(RuntimeError):
    """The Chroma store cannot be opened or used; the message says which and how to recover."""


def open_chroma(storage: Storage):
    """A Chroma client: HttpClient when CHROMA_HOST is set (a `chroma run` server), else persistent on disk."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if storage.chroma_host:
        try:
            client = chromadb.HttpClient(host=storage.chroma_host, port=storage.chroma_port,
                                         settings=chroma_settings)
            client.heartbeat()
        except Exception as exc:  # chromadb raises many types here; all mean "cannot use this server"
            raise IndexStoreError(f"cannot reach the Chroma server at {storage.chroma_host}:{storage.chroma_port} "
                                  f"({type(exc).__name__}: {exc}); start it with `chroma run --host 127.0.0.1 "
                                  f"--port {storage.chroma_port} --path DIR` or unset CHROMA_HOST") from None
        return client
    folder = Path(storage.data_dir) / "chroma"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        # chromadb's per-path client registry is not thread-safe, and a new store's tables are made by whichever
        # process opens it first: two opening at once collide ("table collections already exists")
        with writing_chroma(storage), _OPENING:
            client = chromadb.PersistentClient(path=str(folder), settings=chroma_settings)
        client.list_collections()
    except Exception as exc:
        raise IndexStoreError(_rebuild_hint(folder, exc)) from None
    return client


_OPENING = threading.Lock()


def writing_chroma(storage: Storage) -> contextlib.AbstractContextManager:
    """One process (or thread) at a time creates or changes the Chroma folder: two that sync one collection at once
    leave it inconsistent, and one that rebuilds a collection pulls it from under the other. A Chroma server orders
    its own writes, so then nothing is held."""
    if storage.chroma_host:
        return contextlib.nullcontext()
    with contextlib.suppress(OSError):   # an unusable folder fails with its own message once used
        storage.data_dir.mkdir(parents=True, exist_ok=True)
    return held(storage.data_dir / "chroma.lock", "writing the Chroma store")


def _rebuild_hint(folder: Path, exc: Exception) -> str:
    if trouble := storage_trouble(exc):
        return (f"the Chroma folder {folder} cannot be written now ({trouble}); nothing was deleted and the index "
                "is as it was: free space (or wait for the other process) and run again")
    if folder.is_dir() and not os.access(folder, os.W_OK):
        return (f"the Chroma folder {folder} is read-only ({type(exc).__name__}); make it writable, or set "
                "DETECTIVE_DATA_DIR to a writable folder")
    return (f"the Chroma folder {folder} cannot be used ({type(exc).__name__}: {str(exc)[:200]}); it may come "
            f"from another chromadb version or be damaged. Delete it to rebuild the vector index: rm -rf '{folder}'")


# HNSW's search breadth. Chroma's default (100) is approximate when a strategy asks for 100 neighbours (hybrid's
# fusion depth), and its answers then move between runs; 512 is exact in practice at these sizes and costs < 1 ms.
EF_SEARCH = 512


def cosine_collection(client, name: str, metadata: dict | None = None):
    """A cosine-space collection searched with EF_SEARCH (raised on a collection made before it was set)."""
    collection = client.get_or_create_collection(name, embedding_function=None, metadata=metadata,
                                                 configuration={"hnsw": {"space": "cosine", "ef_search": EF_SEARCH}})
    if (collection.configuration.get("hnsw") or {}).get("ef_search", EF_SEARCH) < EF_SEARCH:
        collection.modify(configuration={"hnsw": {"ef_search": EF_SEARCH}})
    return collection


def collection_name(case_name: str, embed_model: str, identity: str = "") -> str:
    """A valid Chroma name (3-512 chars of [a-zA-Z0-9._-]) unique per (case identity, embedding model): two cases
    that share a name but not a folder get two collections."""
    digest = hashlib.sha256(f"{identity or case_name}\0{embed_model}".encode()).hexdigest()[:10]
    slug = re.sub(r"[^a-zA-Z0-9._-]+", "-", f"{case_name}-{embed_model}").strip("-._")[:40]
    return f"{slug or 'case'}-{digest}"


def _passage_hash(p: Passage) -> str:
    return hashlib.sha256(f"{p.doc_id}\0{p.title}\0{p.text}".encode()).hexdigest()[:16]


@dataclass
class SyncReport:
    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    embedded: int = 0
    elapsed_ms: float = 0.0


class VectorIndex:
    def __init__(self, client, case_name: str, embedder: Embedder, folder_hint: str = "", identity: str = ""):
        self.client, self.embedder = client, embedder
        self.name = collection_name(case_name, embedder.name, identity)
        self._folder = Path(folder_hint or "the Chroma store")   # named in errors
        self._metadata = {"case": case_name[:200], "embed_model": embedder.name}
        try:
            self.collection = self._open()
        except Exception as exc:
            raise IndexStoreError(_rebuild_hint(self._folder, exc)) from None

    def _open(self):
        return cosine_collection(self.client, self.name, self._metadata)

    def sync(self, passages: Sequence[Passage], progress: Progress | None = None,
             batch_size: int = 256) -> SyncReport:
        """Make the collection hold exactly ``passages``, embedding only what is new or changed.

        A collection Chroma cannot read (damaged files) is dropped and built again, with a warning.
        """
        try:
            return self._sync(passages, progress, batch_size)
        except Exception as exc:   # chromadb raises InternalError and others on damaged segment files
            if not type(exc).__module__.startswith("chromadb"):
                raise   # an embedder's failure says nothing about the collection: keep it
            if storage_trouble(exc):   # a full disk or a lock says nothing about the files either: never drop them
                raise IndexStoreError(_rebuild_hint(self._folder, exc)) from None
            log.warning("the vector index %s cannot be read (%s: %s); building it again", self.name,
                        type(exc).__name__, str(exc)[:200])
            try:
                self.client.delete_collection(self.name)
                self.collection = self._open()
            except Exception as exc2:
                raise IndexStoreError(_rebuild_hint(self._folder, exc2)) from None
            return self._sync(passages, progress, batch_size)

    def _sync(self, passages: Sequence[Passage], progress: Progress | None, batch_size: int) -> SyncReport:
        started = time.perf_counter()
        report = SyncReport()
        existing = self._existing_hashes()
        wanted = {p.id: p for p in passages}
        stale = [pid for pid in existing if pid not in wanted]
        if stale:
            self.collection.delete(ids=stale)
            report.deleted = len(stale)
        # Shortest first: each batch then holds passages of one length, as the embedder would order them in one
        # call (in the case's order, batches padded to their longest passage cost the 2Wiki corpus 77 s, not 60).
        todo = sorted((p for p in passages if existing.get(p.id) != _passage_hash(p)),
                      key=lambda p: len(p.embedding_text))
        report.unchanged = len(passages) - len(todo)
        report.added = sum(1 for p in todo if p.id not in existing)
        report.updated = len(todo) - report.added
        done = report.unchanged
        if progress:
            progress(ProgressUpdate(STAGE, done, len(passages)))
        for start in range(0, len(todo), batch_size):
            batch = todo[start:start + batch_size]
            vectors = self.embedder.embed([p.embedding_text for p in batch])
            self.collection.upsert(
                ids=[p.id for p in batch], embeddings=vectors, documents=[p.text for p in batch],
                metadatas=[{"doc_id": p.doc_id, "title": p.title, "hash": _passage_hash(p)} for p in batch])
            report.embedded += len(batch)
            done += len(batch)
            if progress:
                progress(ProgressUpdate(STAGE, done, len(passages), f"{report.embedded} embedded"))
        if passages:   # one search reads the vector segment: damage shows now, not at the first question
            probe = self.collection.get(limit=1, include=["embeddings"])["embeddings"]
            self.collection.query(query_embeddings=np.asarray(probe[:1], dtype=np.float32), n_results=1)
        report.elapsed_ms = (time.perf_counter() - started) * 1000
        log.info("vector index %s: %s", self.name, report)
        return report

    def _existing_hashes(self) -> dict[str, str]:
        got = self.collection.get(include=["metadatas"])
        return {pid: (meta or {}).get("hash", "") for pid, meta in zip(got["ids"], got["metadatas"], strict=True)}

    def count(self) -> int:
        return self.collection.count()

    def vectors(self) -> dict[str, np.ndarray]:
        """Every passage's stored vector by id, in one read (not one call a passage)."""
        got = self.collection.get(include=["embeddings"])
        return {pid: np.asarray(v, dtype=np.float32) for pid, v in zip(got["ids"], got["embeddings"], strict=True)}

    def search(self, vectors: np.ndarray, top_k: int) -> list[list[tuple[str, float]]]:
        """For each query vector, the top-k (passage id, cosine similarity), best first."""
        n = min(top_k, self.count())
        if n == 0:
            return [[] for _ in range(len(vectors))]
        res = self.collection.query(query_embeddings=np.asarray(vectors, dtype=np.float32), n_results=n,
                                    include=["distances"])
        # Chroma's cosine space returns distances (1 - cosine); we report similarities.
        return [[(pid, 1.0 - float(d)) for pid, d in zip(ids, dists, strict=True)]
                for ids, dists in zip(res["ids"], res["distances"], strict=True)]

    def search_merged(self, vectors: np.ndarray, top_k: int) -> list[tuple[str, float]]:
        """One ranking for several query vectors (a question and its expansions): each passage keeps its best
        similarity; the top-k, best first."""
        best: dict[str, float] = {}
        for hits in self.search(vectors, top_k):
            for pid, sim in hits:
                best[pid] = max(sim, best.get(pid, -1.0))
        return sorted(best.items(), key=lambda kv: -kv[1])[:top_k]


def _make(ctx: BuildContext) -> VectorIndex:
    """The case's passages in Chroma, synced for this build (shared by every strategy that searches vectors)."""
    client = open_chroma(ctx.storage)
    with writing_chroma(ctx.storage):
        index = VectorIndex(client, ctx.case.name, ctx.embedder, identity=ctx.case.identity,
                            folder_hint="" if ctx.storage.chroma_host else str(ctx.storage.data_dir / "chroma"))
        sync = index.sync(ctx.case.passages, progress=ctx.progress)
    ctx.reports.append(BuildReport(
        name=STAGE, elapsed_ms=round(sync.elapsed_ms, 1), reused=sync.embedded == 0 and sync.deleted == 0,
        counts={"embedded": sync.embedded, "unchanged": sync.unchanged, "added": sync.added,
                "updated": sync.updated, "deleted": sync.deleted},
        details={"collection": index.name}))
    return index


VECTOR_INDEX: Product[VectorIndex] = Product(STAGE, _make, lambda ctx: ((STAGE, len(ctx.case.passages)),))
