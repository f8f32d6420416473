"""Naive RAG as a lab strategy: the case's passages synced into Chroma, searched by cosine."""
from __future__ import annotations

from collections.abc import Mapping

from casebook.contract import BuildContext, BuildReport, Strategy, Value

from .index import STAGE, VectorIndex, open_chroma
from .retriever import NaiveRetriever


def build(ctx: BuildContext, params: Mapping[str, Value]) -> NaiveRetriever:
    index = VectorIndex(open_chroma(ctx.storage), ctx.case.name, ctx.embedder)
    sync = index.sync(ctx.case.passages, progress=ctx.progress)
    ctx.reports.append(BuildReport(
        name=STAGE, elapsed_ms=round(sync.elapsed_ms, 1), reused=sync.embedded == 0 and sync.deleted == 0,
        counts={"embedded": sync.embedded, "unchanged": sync.unchanged, "added": sync.added,
                "updated": sync.updated, "deleted": sync.deleted},
        details={"collection": index.name}))
    return NaiveRetriever(index, ctx.embedder)


NAIVE = Strategy("naive", "Naive RAG", "Question embedding, top-k passages by cosine similarity in ChromaDB.", build)
