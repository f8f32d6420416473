"""What a first build costs, in words, said before it starts: the CLI and the app print the same text."""
from __future__ import annotations

from core.types import Case
from kg.build import duration_text, extraction_estimate, triples_source
from llm.settings import LOCAL_EMBED_MODEL, LOCAL_EMBED_MODEL_INT8

from .registry import get

# Passage words and graph texts (entities and facts, a few words each) embedded a second by the local embedders on
# this project's 2-core machines, end to end (index and graph writes included): the 6,269-passage 2Wiki corpus
# (455k words; 52,839 entities and 35,165 embedded facts) by `python benchmarks/nlp_scale.py` (71.3 s and 125 s) and
# its int8 run (55.3 s and 91 s). A server's speed is not known before it runs.
EMBED_RATES = {LOCAL_EMBED_MODEL: (6_400, 700), LOCAL_EMBED_MODEL_INT8: (8_200, 960)}
# Graph texts a passage word makes: spaCy's graph of that corpus embeds 88,004 (its co-occurrence facts are edges
# without a vector, kg/graph.py); a file's triples make about one fact and 0.7 entities each (musique_train100's
# published triples).
GRAPH_TEXTS_PER_WORD = 0.19
GRAPH_TEXTS_PER_TRIPLE = 1.7
# Where embedding alone would take longer than this (two minutes, of which the int8 embedder saves about a quarter),
# the estimate names it.
SUGGEST_INT8_ABOVE_S = 120


def build_estimate(case: Case, strategies: tuple[str, ...], triples: str, embed_model: str,
                   extraction_model: str = "the chat model", has_chat: bool = True) -> str:
    """"embedding 6,269 passages, about 71 s; spaCy (no LLM): about 75 s ...; embedding the graph's ~86,000
    entities and facts, about 2 minutes"."""
    words = sum(len(p.embedding_text.split()) for p in case.passages)
    passage_rate, graph_rate = EMBED_RATES.get(embed_model, (0, 0))
    embedding_s = words / passage_rate if passage_rate else 0.0
    parts = [f"embedding {len(case.passages):,} passages"
             + (f", about {duration_text(embedding_s)}" if passage_rate else f" with {embed_model}")]
    if any(get(name).uses_triples for name in strategies):
        source = triples_source(triples, case, has_chat)
        parts.append(extraction_estimate(case, source, extraction_model) or "triples from the case file")
        texts = len(case.triples) * GRAPH_TEXTS_PER_TRIPLE if source.startswith("precomputed") \
            else words * GRAPH_TEXTS_PER_WORD
        graph_s = texts / graph_rate if graph_rate else 0.0
        embedding_s += graph_s
        parts.append(f"embedding the graph's ~{round(texts, -3 if texts > 5000 else -1):,.0f} entities and facts"
                     + (f", about {duration_text(graph_s)}" if graph_rate else ""))
    if embed_model == LOCAL_EMBED_MODEL and embedding_s > SUGGEST_INT8_ABOVE_S:
        faster = EMBED_RATES[LOCAL_EMBED_MODEL_INT8][0] / EMBED_RATES[LOCAL_EMBED_MODEL][0]
        parts.append(f"EMBED_MODEL={LOCAL_EMBED_MODEL_INT8} embeds ~{faster:.1f}x faster (vectors within cosine "
                     "~0.995; not the default: BENCHMARKS.md, \"The local embedders\")")
    return "; ".join(parts)
