#!/usr/bin/env python3
"""OpenIE quality against ground truth, per model, and what each model's graph buys HippoRAG.

`python benchmarks/openie_quality.py [--seeds 1-10]` runs OpenIE with the model the settings point at: the
embedded Qwen2.5-Coder 1.5B by default; another GGUF on the embedded server with LLM_MODEL_PATH; any
OpenAI-compatible server with LLM_BACKEND=openai, LLM_BASE_URL and LLM_EXTRACTION_MODEL. Triples are cached per
model in benchmarks/results/openie/ (the embedded model's are the ones generated.py uses). Reported per model:
triples per case; entity and triple precision/recall against the generator's gold triples (lenient: normalised
subject and object, either order, relations not compared); and HippoRAG's Recall@3 by question type on that
model's triples, beside naive RAG (no graph) and HippoRAG on the gold triples (what perfect extraction gives).
Each run replaces its own model's row in results/openie_quality.json and keeps the others, so models sit side by
side. No parameter is chosen here.
"""
from __future__ import annotations

import argparse
import json
import statistics

from llm import Settings, connect, embedder_only

from common import RESULTS, environment, write_result
from generated import REPORT_SEEDS, TYPES, add_case_arguments, evaluate_seeds

NAME = "openie_quality"


def measure(backend, seeds: list[int], suspects: int, settings: Settings, embedder) -> tuple[dict, dict]:
    """The model's row, and the model-independent references (naive RAG, HippoRAG on gold triples)."""
    rows, summary = evaluate_seeds(seeds, suspects, [], settings, embedder, backend)
    row = {"model": backend.extraction_model, "backend": backend.kind, "seeds": seeds, "measured": environment(),
           "triples_per_case": round(statistics.mean(r["triples"] for r in rows), 1),
           "quality": summary["openie"], "hipporag": summary["hipporag"],
           "per_seed": [{"seed": r["seed"], "triples": r["triples"], "quality": r["openie"],
                         "hipporag": r["hipporag"]["by_type"]} for r in rows]}
    return row, {"naive": summary["naive"], "hipporag_gold": summary["hipporag_gold"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_case_arguments(p, REPORT_SEEDS)
    args = p.parse_args(argv)
    seeds = args.seeds
    settings = Settings.from_env()
    backend = connect(settings)
    print(f"OpenIE by {backend.extraction_model} ({backend.reason})", flush=True)
    row, references = measure(backend, seeds, args.suspects, settings, embedder_only(settings))
    path = RESULTS / f"{NAME}.json"
    previous = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    # Rows measured on other seeds do not compare with this one: only same-seed rows stay beside it.
    models = [m for m in previous.get("models", []) if m["model"] != row["model"] and m["seeds"] == seeds]
    write_result(NAME, {"suspects": args.suspects, "top_k": 3, "seeds": seeds, "types": list(TYPES),
                        **references, "models": [*models, row]})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
