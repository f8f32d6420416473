"""The strategy registry: a new retrieval strategy is one module plus one line in ``REGISTRY``."""
from __future__ import annotations

import dataclasses

from dataclasses import dataclass, field
from typing import Callable

from hipporag import HippoConfig
from llm import Backend, Embedder, Settings

from .types import Case, Retriever

# progress(stage, done, total, detail)
Progress = Callable[[str, int, int, object], None]


@dataclass
class BuildContext:
    """What a strategy may use to build its index. ``backend`` is None when no chat model is available."""
    case: Case
    settings: Settings
    embedder: Embedder
    backend: Backend | None = None
    triples: str = "auto"              # "auto" (case file if it has one, else LLM), "precomputed" or "llm"
    hippo: HippoConfig = HippoConfig()
    workers: int = 2
    progress: Progress | None = None
    shared: dict = field(default_factory=dict)   # work several strategies reuse (the graph)
    reports: dict = field(default_factory=dict)  # what each build did, for the report and the app

    def notify(self, stage: str, done: int, total: int, detail: object = None) -> None:
        if self.progress:
            self.progress(stage, done, total, detail)


@dataclass(frozen=True)
class Strategy:
    name: str
    label: str
    description: str
    build: Callable[[BuildContext], Retriever]
    needs_llm: bool = False    # to build or to query (beyond embeddings)
    uses_triples: bool = False  # builds on the knowledge graph (triples from the case file or LLM OpenIE)


def _naive(ctx: BuildContext) -> Retriever:
    from naive_rag import NaiveRetriever, VectorIndex, open_chroma

    index = VectorIndex(open_chroma(ctx.settings), ctx.case.name, ctx.embedder)
    report = index.sync(ctx.case.passages, progress=lambda d, n: ctx.notify("vector index", d, n))
    ctx.reports["naive"] = {"collection": index.name, "embedded": report.embedded, "unchanged": report.unchanged,
                            "added": report.added, "updated": report.updated, "deleted": report.deleted,
                            "elapsed_ms": round(report.elapsed_ms, 1)}
    return NaiveRetriever(index, ctx.embedder)


def graph_for(ctx: BuildContext):
    """Build or load the case's knowledge graph once per context (shared by the HippoRAG variants)."""
    if "graph" in ctx.shared:
        return ctx.shared["graph"]
    from hipporag import build_or_load

    use_file = ctx.triples == "precomputed" or (ctx.triples == "auto" and ctx.case.triples)
    if ctx.triples == "precomputed" and not ctx.case.triples:
        raise ValueError(f"--triples precomputed: the case {ctx.case.name!r} has no triples.json")
    if not use_file and ctx.backend is None:
        raise ValueError("LLM OpenIE needs a chat model; use --triples precomputed or a backend with an LLM")
    build = build_or_load(
        passages=ctx.case.passages, fingerprint=ctx.case.fingerprint, embedder=ctx.embedder,
        folder=ctx.settings.data_dir / "graphs",
        precomputed=ctx.case.triples if use_file else None,
        client=None if use_file else ctx.backend.client,
        extraction_model="" if use_file else ctx.backend.extraction_model,
        workers=ctx.workers, progress=ctx.notify)
    ctx.shared["graph"] = build
    openie = build.openie
    ctx.reports["graph"] = {"key": build.key, "loaded": build.loaded, "triples_source": build.triples_source,
                            "elapsed_ms": round(build.elapsed_ms, 1), **build.graph.stats(),
                            "openie_llm_calls": openie.llm_calls if openie else 0,
                            "openie_failures": [{"passage": f.passage_id, "stage": f.failed_stage, "error": f.error,
                                                 "raw": f.raw[:2000]} for f in build.failures]}
    return build


def _hippo(linking: str, name: str) -> Callable[[BuildContext], Retriever]:
    def build(ctx: BuildContext) -> Retriever:
        from hipporag import ChatModel, HippoRAGRetriever

        graph = graph_for(ctx).graph
        chat = ChatModel(ctx.backend.client, ctx.backend.model) if ctx.backend else None
        config = dataclasses.replace(ctx.hippo, linking=linking, llm_filter=ctx.hippo.llm_filter and chat is not None)
        return HippoRAGRetriever(graph, ctx.embedder, config, chat=chat, name=name)
    return build


def _bm25(ctx: BuildContext) -> Retriever:
    from lexical import BM25Retriever

    return BM25Retriever(ctx.case.passages)


REGISTRY: dict[str, Strategy] = {s.name: s for s in [
    Strategy("naive", "Naive RAG", "Question embedding, top-k passages by cosine similarity in ChromaDB.", _naive),
    Strategy("hipporag", "HippoRAG", "Facts linked by embedding seed a Personalized PageRank walk over the "
             "knowledge graph (HippoRAG 2 linking).", _hippo("v2", "hipporag"), uses_triples=True),
    Strategy("hipporag-v1", "HippoRAG v1", "An LLM names the question's entities; each links to its closest graph "
             "node; phrase-only PageRank (the seed article's method).", _hippo("v1", "hipporag-v1"), needs_llm=True,
             uses_triples=True),
    Strategy("bm25", "BM25", "Lexical baseline: BM25 word matching, no embeddings.", _bm25),
]}

DEFAULT_STRATEGIES = ("naive", "hipporag")


def get(name: str) -> Strategy:
    if name not in REGISTRY:
        raise KeyError(f"unknown strategy {name!r}; available: {', '.join(REGISTRY)}")
    return REGISTRY[name]
