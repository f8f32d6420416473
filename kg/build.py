"""Build (or load) a case's knowledge graph: triples from the case file or from LLM OpenIE."""
from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from core.contract import BuildContext, BuildFailure, BuildReport, Product
from core.types import Case, Passage, Progress, Triple
from llm import Embedder, OpenAIClient

from . import nlp, openie
from .graph import EMBED_STAGES, KnowledgeGraph, build_graph
from .mentions import save_mentions
from .storage import graph_key, load_graph, save_graph

log = logging.getLogger(__name__)


@dataclass
class GraphBuild:
    graph: KnowledgeGraph
    key: str
    loaded: bool                       # True when read from disk: no LLM or embedding call was made
    triples_source: str                # "precomputed", "llm:<model>:<prompt>" or nlp.SOURCE
    openie: openie.OpenIEResult | None = None
    extraction: nlp.Extraction | None = None   # what spaCy extracted, by rule (nlp triples only)
    elapsed_ms: float = 0.0
    failures: list = field(default_factory=list)


def passage_triples(triples: Sequence[Triple], passages: Sequence[Passage]) -> list[tuple[str, str, str, str]]:
    """Attach document-level triples to passages: those whose text names the subject or object, else all."""
    by_doc: dict[str, list[Passage]] = {}
    for p in passages:
        by_doc.setdefault(p.doc_id, []).append(p)
    out: list[tuple[str, str, str, str]] = []
    for t in triples:
        parts = by_doc.get(t.doc_id, [])
        if len(parts) > 1:
            named = [p for p in parts if t.subject.casefold() in p.text.casefold()
                     or t.object.casefold() in p.text.casefold()]
            parts = named or parts
        out.extend((p.id, t.subject, t.relation, t.object) for p in parts)
    return out


def build_or_load(*, passages: Sequence[Passage], fingerprint: str, embedder: Embedder, folder: Path,
                  precomputed: Sequence[Triple] | None = None, client: OpenAIClient | None = None,
                  extraction_model: str = "", deterministic: bool = False, nlp_layer: bool = False,
                  workers: int = 1, progress: Progress | None = None, ner_folder: Path | None = None) -> GraphBuild:
    """The graph for these passages: loaded if saved under the same key, else built and saved.

    ``precomputed`` triples skip the LLM entirely, as does ``deterministic`` (spaCy's parse, kg/nlp.py);
    otherwise ``client`` and ``extraction_model`` run OpenIE. ``nlp_layer`` adds the deterministic layer
    (nlp.LAYER_RULES) under the file's or the LLM's facts. A spaCy extraction saves the named entities it parsed
    in ``ner_folder``, so hubmesh does not parse the passages again.
    """
    started = time.perf_counter()
    if precomputed is not None:
        source = "precomputed"
    elif deterministic:
        source = nlp.SOURCE
    elif client is not None and extraction_model:
        source = f"llm:{extraction_model}:{openie.PROMPT_VERSION}"
    else:
        raise ValueError("the graph needs precomputed triples or an LLM client and extraction model")
    layered = nlp_layer and not deterministic
    if layered:
        source = f"{source}+{nlp.SOURCE}"
    # Precomputed triples are part of the key: a case whose triples.json changes gets a new graph, not the old one.
    triples = hashlib.sha256(json.dumps([[t.doc_id, t.subject, t.relation, t.object] for t in precomputed],
                                        ensure_ascii=False).encode()).hexdigest()[:16] if precomputed is not None else ""
    key = graph_key(fingerprint, source, extraction_model if source.startswith("llm:") else "", embedder.name,
                    triples=triples)
    graph = load_graph(folder, key, [p.id for p in passages])
    if graph is not None:
        return GraphBuild(graph=graph, key=key, loaded=True, triples_source=source,
                          elapsed_ms=(time.perf_counter() - started) * 1000)
    result = extraction = None
    if precomputed is not None:
        tuples = passage_triples(precomputed, passages)
    elif deterministic:
        extraction = nlp.extract(passages, workers=workers, progress=progress)
        tuples = extraction.triples
    else:
        if client is None:
            raise ValueError("LLM OpenIE needs a chat model, and none was given")
        result = openie.extract(client, extraction_model, passages, workers=workers, progress=progress)
        tuples = result.triples()
    if layered:
        extraction = nlp.extract(passages, workers=workers, progress=progress)
        tuples = [*tuples, *nlp.layer(extraction)]
    if extraction is not None and ner_folder is not None and not extraction.cut_passages:
        save_mentions(ner_folder, extraction.mentions)   # a cut passage's entities are not its whole text's
    graph = build_graph(tuples, passages, embedder, progress=progress)
    if graph.facts or not passages:   # a case with passages and no fact is a failed extraction, not its graph
        try:
            save_graph(graph, folder, key)
        except OSError as exc:   # the graph is still good for this run
            log.warning("cannot save the graph in %s (%s): it is used for this run only and built again next "
                        "time; make the folder writable or set DETECTIVE_DATA_DIR", folder,
                        "read-only" if isinstance(exc, PermissionError) else exc.strerror or exc)
    else:
        log.warning("no fact was extracted from %d passages: the graph is used for this run but not saved, so the "
                    "next build extracts again", len(passages))
    return GraphBuild(graph=graph, key=key, loaded=False, triples_source=source, openie=result, extraction=extraction,
                      elapsed_ms=(time.perf_counter() - started) * 1000,
                      failures=result.failures if result else [])


def missing_triples(case: Case, triples: str) -> str:
    """Why ``--triples`` cannot be met by the case (precomputed triples it does not have), or ''."""
    if triples.startswith("precomputed") and not case.triples:
        return (f"--triples {triples}: the case {case.name!r} has no triples (no triples.json, or an empty one); use "
                "--triples nlp (spaCy, no LLM), llm or auto")
    return ""


# "auto" on a case without triples.json: spaCy above this many passages (LLM OpenIE takes ~45 s a document on the
# embedded model, so 200 passages would be hours), the chat model's OpenIE below it.
NLP_ABOVE_PASSAGES = 200


def triples_source(requested: str, case: Case, has_chat: bool) -> str:
    """The concrete source a build uses for ``requested`` (one of TRIPLE_SOURCES): precomputed, llm or nlp, with
    "+nlp" when the deterministic layer goes under the first."""
    if requested != "auto":
        return requested
    if case.triples:
        return "precomputed"
    return "nlp" if not has_chat or len(case.passages) > NLP_ABOVE_PASSAGES else "llm"


# Measured on this project's 2-core machines (BENCHMARKS.md): spaCy's parse of musique_train100, 143,985 words in
# 25 s on both cores; the embedded 1.5B model's two-step OpenIE, about 45 s a document.
NLP_WORDS_PER_S = 5_800
LLM_OPENIE_S_PER_DOCUMENT = 45


def extraction_estimate(case: Case, source: str, model: str = "the chat model") -> str:
    """What extracting this case's triples will cost, in words, before it starts ('' when nothing is extracted)."""
    base, _, layer = source.partition("+")
    if layer:
        return " and ".join(e for e in (extraction_estimate(case, base, model), extraction_estimate(case, layer)) if e)
    if source == "nlp":
        words = sum(len(p.text.split()) for p in case.passages)
        return (f"spaCy (no LLM): about {duration_text(words / NLP_WORDS_PER_S)} for {len(case.passages):,} passages "
                f"({words:,} words)")
    if source == "llm":
        n = len(case.documents)
        return (f"OpenIE with {model}: about {LLM_OPENIE_S_PER_DOCUMENT} s a document on the embedded model, "
                f"{n:,} documents: about {duration_text(n * LLM_OPENIE_S_PER_DOCUMENT)} (a faster server takes less)")
    return ""


def duration_text(seconds: float) -> str:
    """A wait in words: "40 s", "8 minutes", "2.5 hours"."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} minutes"
    return f"{seconds / 3600:.1f} hours"


def _plan(ctx: BuildContext) -> tuple[tuple[str, int], ...]:
    """The extraction (none when the case file has the triples), then the embeddings; a saved graph reports none."""
    n = len(ctx.case.passages)
    entities, facts, passages = EMBED_STAGES
    base, _, layer = triples_source(ctx.triples, ctx.case, ctx.backend is not None).partition("+")
    extraction = {"precomputed": (), "nlp": ((nlp.STAGE, n),), "llm": ((openie.STAGE, n),)}[base]
    if layer:
        extraction = (*extraction, (nlp.STAGE, n))
    return (*extraction, (entities, 0), (facts, 0), (passages, n))


def _make(ctx: BuildContext) -> GraphBuild:
    """The case's graph for this build: triples from the case file, spaCy's parse, or OpenIE by the chat model."""
    case = ctx.case
    if problem := missing_triples(case, ctx.triples):
        raise ValueError(problem)
    source, _, layer = triples_source(ctx.triples, case, ctx.backend is not None).partition("+")
    llm = source == "llm"
    if llm and ctx.backend is None:
        raise ValueError("LLM OpenIE needs a chat model; use --triples nlp (spaCy, no LLM), --triples precomputed "
                         "or a backend with an LLM")
    build = build_or_load(
        passages=case.passages, fingerprint=case.fingerprint, embedder=ctx.embedder, folder=ctx.storage.graphs_dir,
        precomputed=case.triples if source == "precomputed" else None, deterministic=source == "nlp",
        nlp_layer=bool(layer),
        client=ctx.backend.client if llm and ctx.backend else None,
        extraction_model=ctx.backend.extraction_model if llm and ctx.backend else "",
        workers=ctx.workers, progress=ctx.progress, ner_folder=ctx.storage.ner_dir)
    counts = build.graph.stats()
    counts["openie_llm_calls"] = build.openie.llm_calls if build.openie else 0
    if build.extraction:   # how many facts each rule of the deterministic extraction made
        counts.update({f"nlp_{rule}_facts": n for rule, n in sorted(build.extraction.by_rule.items())})
        counts["nlp_passages_without_fact"] = build.extraction.empty_passages
    for source, n in build.graph.meta.get("mention_edges_from", {}).items():   # what the LLM linked, what the text did
        counts[f"mentions_from_{source}"] = n
    counts["name_variant_edges"] = build.graph.meta.get("name_variant_edges", 0)   # among the synonym edges
    ctx.reports.append(BuildReport(
        name="knowledge graph", elapsed_ms=round(build.elapsed_ms, 1), reused=build.loaded, counts=counts,
        details={"triples": build.triples_source, "key": build.key},
        failures=[BuildFailure(f.passage_id, f.failed_stage, f.error, f.raw[:2000]) for f in build.failures]))
    return build


KNOWLEDGE_GRAPH: Product[GraphBuild] = Product("knowledge graph", _make, _plan)
