"""What a first build costs, in words, said before it starts: the CLI and the app print the same text."""
from __future__ import annotations

from core.types import Case
from kg.build import duration_text, extraction_estimate, triples_source
from llm.settings import LOCAL_EMBED_MODEL, LOCAL_EMBED_MODEL_INT8

from .registry import get

# Passage words and graph texts (entities and facts, a few words each) embedded a second by the local embedders on
# this project's 2-core machines: `python benchmarks/nlp_scale.py` on the 6,269-passage 2Wiki corpus (455k words,
# 131k graph texts). A server's speed is not known before it runs.
EMBED_RATES = {LOCAL_EMBED_MODEL: (4_600, 700), LOCAL_EMBED_MODEL_INT8: (4_600, 700)}
# Graph texts a passage word makes: spaCy's graph of that corpus had 52,839 entities and 78,628 facts for 434,519
# words; a file's triples make about one fact and 0.7 entities each (musique_train100's published triples).
GRAPH_TEXTS_PER_WORD = 0.30
GRAPH_TEXTS_PER_TRIPLE = 1.7


def build_estimate(case: Case, strategies: tuple[str, ...], triples: str, embed_model: str,
                   extraction_model: str = "the chat model", has_chat: bool = True) -> str:
    """"embedding 6,269 passages, about 99 s; spaCy (no LLM): about 75 s ...; embedding the graph's ~131,000
    entities and facts, about 3 minutes"."""
    words = sum(len(p.embedding_text.split()) for p in case.passages)
    passage_rate, graph_rate = EMBED_RATES.get(embed_model, (0, 0))
    parts = [f"embedding {len(case.passages):,} passages"
             + (f", about {duration_text(words / passage_rate)}" if passage_rate else f" with {embed_model}")]
    if any(get(name).uses_triples for name in strategies):
        source = triples_source(triples, case, has_chat)
        parts.append(extraction_estimate(case, source, extraction_model) or "triples from the case file")
        texts = len(case.triples) * GRAPH_TEXTS_PER_TRIPLE if source.startswith("precomputed") \
            else words * GRAPH_TEXTS_PER_WORD
        parts.append(f"embedding the graph's ~{round(texts, -3 if texts > 5000 else -1):,.0f} entities and facts"
                     + (f", about {duration_text(texts / graph_rate)}" if graph_rate else ""))
    return "; ".join(parts)
