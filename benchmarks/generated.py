#!/usr/bin/env python3
"""Generated mysteries with ground truth: OpenIE quality against the gold triples, and naive RAG vs HippoRAG.

For each seed, `casebook.generate` writes a case whose questions, supporting documents and facts are known. The
embedded model's OpenIE of it is cached in benchmarks/results/openie/mystery-<seed>.json (run once; reruns are fast).
Reported per case: entity and triple precision/recall of that OpenIE against gold_triples.json (lenient: a triple
matches when its normalised subject and object match a gold triple's, either way round; relations are not
compared); Recall@3 by question type for naive, HippoRAG on the model's triples, and HippoRAG on the gold triples
(what perfect extraction gives); and per question whether HippoRAG beat, tied or lost to naive.
Seeds 1-10 are the report set: nothing in the code was tuned on them (use seeds 100+ to tune).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
from collections.abc import Sequence
from pathlib import Path

from casebook.generate import gold_as_triples, load_mystery
from core.files import write_text_whole
from core.types import Question
from kg.normalize import normalize_entity
from kg.openie import extract
from lab.runner import Lab, RunConfig
from llm import Backend, Settings, connect, embedder_only
from llm.model_file import QWEN_CODER_1_5B

from common import RESULTS, assignments_for, write_result

OPENIE = RESULTS / "openie"
TYPES = ("simple", "multi-hop", "sense-making")


def triples_path(seed: int, suspects: int, model: str) -> Path:
    """Where a model's OpenIE of a generated case is cached: the embedded model's at the top of openie/ (as it
    always was), any other model's in a folder named after it (letters, digits and ._- only, plus a hash)."""
    name = f"mystery-{seed}-{suspects}.json"
    if model == QWEN_CODER_1_5B.name:
        return OPENIE / name
    slug = re.sub(r"[^a-z0-9._-]+", "-", model.lower()).strip("-.")[:60]
    return OPENIE / f"{slug}-{hashlib.sha256(model.encode()).hexdigest()[:8]}" / name


def model_triples(seed: int, suspects: int, settings: Settings, backend: Backend | None = None) -> list[dict]:
    """A model's OpenIE of the case, from the repo's cache or run now (and cached): ``backend``'s extraction
    model, or the embedded Qwen2.5-Coder 1.5B when none is given."""
    path = triples_path(seed, suspects, backend.extraction_model if backend else QWEN_CODER_1_5B.name)
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    case, _ = load_mystery(seed, suspects)
    backend = backend or connect(settings.replace(backend="embedded", model_path=""))
    triples = cache_openie(backend, case.passages, path)
    print(f"  (seed {seed})", flush=True)
    return triples


def cache_openie(backend: Backend, passages: list, path: Path) -> list[dict]:
    """The extraction model's OpenIE of ``passages`` as case triples, written to ``path`` (the repo's cache)."""
    result = extract(backend.client, backend.extraction_model, passages, workers=2)
    doc_of = {p.id: p.doc_id for p in passages}
    triples = [{"doc_id": doc_of[pid], "subject": s, "relation": r, "object": o} for pid, s, r, o in result.triples()]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_whole(path, json.dumps(triples, indent=1, ensure_ascii=False) + "\n")
    print(f"  OpenIE by {backend.extraction_model}: {len(triples)} triples, {len(result.failures)} failed passages",
          flush=True)
    return triples


def quality(found: list[dict], gold: list[dict]) -> dict:
    def pair(t):
        return frozenset((normalize_entity(t["subject"]), normalize_entity(t["object"])))

    def entities(ts):
        return {normalize_entity(x) for t in ts for x in (t["subject"], t["object"])}

    got, want = {pair(t) for t in found}, {pair(t) for t in gold}
    ents_got, ents_want = entities(found), entities(gold)
    return {"triple_precision": round(len(got & want) / max(len(got), 1), 3),
            "triple_recall": round(len(got & want) / max(len(want), 1), 3),
            "entity_precision": round(len(ents_got & ents_want) / max(len(ents_got), 1), 3),
            "entity_recall": round(len(ents_got & ents_want) / max(len(ents_want), 1), 3)}


def case_recalls(seed: int, suspects: int, triples: list[dict], strategies: tuple[str, ...],
                 assignments: list[str], settings: Settings, embedder) -> dict[str, dict]:
    """Recall@3 by question type and per question of each strategy, on the case with ``triples`` as its triples."""
    case, _ = load_mystery(seed, suspects, triples)
    config = RunConfig(strategies=strategies, retrieval_only=True, triples="precomputed", top_k=3)
    lab = Lab(case, settings, config.with_assignments(assignments_for(assignments, strategies)), embedder=embedder)
    lab.build()
    out = {}
    for name in strategies:
        per_question = {q.id: lab.ask(q).results[name].recall for q in case.questions}
        out[name] = {"by_type": mean_by_type(case.questions, [per_question[q.id] for q in case.questions]),
                     "questions": per_question}
    return out


def mean_by_type(questions: Sequence[Question], recalls: Sequence[float | None],
                 types: Sequence[str] = TYPES) -> dict[str, float]:
    """The mean of each of ``types``' recalls (``recalls[i]`` is ``questions[i]``'s; None, a question without gold
    documents, is left out; a type with none is left out too), to 3 decimals."""
    out = {}
    for t in types:
        values = [r for q, r in zip(questions, recalls, strict=True) if q.type == t and r is not None]
        if values:
            out[t] = round(statistics.mean(values), 3)
    return out


def evaluate_seeds(seeds: list[int], suspects: int, assignments: list[str], settings: Settings,
                   embedder, backend: Backend | None = None) -> tuple[list[dict], dict]:
    """Per-seed rows (OpenIE quality, Recall@3 by type and per question, paired counts) and their summary, on the
    triples of ``backend``'s extraction model (the embedded 1.5B when none is given)."""
    rows: list[dict] = []
    templates: dict = {}
    for seed in seeds:
        triples = model_triples(seed, suspects, settings, backend)
        case, gold = load_mystery(seed, suspects)
        row: dict = {"seed": seed, "triples": len(triples), "openie": quality(triples, gold)}
        if not templates:   # every seed asks the same nine questions in other names: the first seed's words
            templates = {q.id: {"type": q.type, "example": q.text, "documents": len(q.supporting_docs)}
                         for q in case.questions}
        row.update(case_recalls(seed, suspects, triples, ("naive", "hipporag"), assignments, settings, embedder))
        row["hipporag_gold"] = case_recalls(seed, suspects, gold_as_triples(gold), ("hipporag",), assignments,
                                            settings, embedder)["hipporag"]
        naive, hippo = row["naive"]["questions"], row["hipporag"]["questions"]
        row["paired"] = {"wins": sum(hippo[q] > naive[q] for q in naive),
                         "ties": sum(hippo[q] == naive[q] for q in naive),
                         "losses": sum(hippo[q] < naive[q] for q in naive)}
        rows.append(row)
        print(f"seed {seed}: naive {row['naive']['by_type']} hipporag {row['hipporag']['by_type']} "
              f"gold {row['hipporag_gold']['by_type']} {row['paired']} openie {row['openie']}", flush=True)
    summary = {name: {t: round(statistics.mean(r[name]["by_type"][t] for r in rows), 3) for t in TYPES}
               for name in ("naive", "hipporag", "hipporag_gold")}
    summary["openie"] = {k: round(statistics.mean(r["openie"][k] for r in rows), 3) for k in rows[0]["openie"]}
    summary["paired"] = {k: sum(r["paired"][k] for r in rows) for k in ("wins", "ties", "losses")}
    summary["by_question"] = {qid: {**t, **{name: round(statistics.mean(r[name]["questions"][qid] for r in rows), 3)
                                           for name in ("naive", "hipporag", "hipporag_gold")}}
                              for qid, t in templates.items()}
    return rows, summary


REPORT_SEEDS, TUNING_SEEDS = "1-10", "100-115"   # never tune on the report seeds


def parse_seeds(text: str) -> list[int]:
    """"1-10" or "100,101"."""
    if "-" in text:
        lo, hi = map(int, text.split("-"))
        return list(range(lo, hi + 1))
    return [int(s) for s in text.split(",")]


def add_case_arguments(p: argparse.ArgumentParser, seeds: str) -> None:
    """--seeds (parsed into a list of ints) and --suspects, for the scripts that run generated cases."""
    p.add_argument("--seeds", type=parse_seeds, default=parse_seeds(seeds),
                   help=f"e.g. 1-10 or 100,101 (default {seeds}; {TUNING_SEEDS} tune, {REPORT_SEEDS} report)")
    p.add_argument("--suspects", type=int, default=4)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    add_case_arguments(p, REPORT_SEEDS)
    p.add_argument("--out", default="generated")
    p.add_argument("--set", action="append", default=[], metavar="STRATEGY.PARAM=VALUE",
                   help="a strategy parameter for every run (repeatable), e.g. hipporag.passage_weight=0.05")
    args = p.parse_args(argv)
    seeds = args.seeds
    settings = Settings.from_env()
    rows, summary = evaluate_seeds(seeds, args.suspects, args.set, settings, embedder_only(settings))
    print(json.dumps(summary, indent=1))
    write_result(args.out, {"seeds": seeds, "suspects": args.suspects, "top_k": 3, "params": args.set, "rows": rows,
                            "summary": summary})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
