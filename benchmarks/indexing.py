#!/usr/bin/env python3
"""Indexing cost: LLM OpenIE with the embedded model on the Purloined Pearl and on MuSiQue passages.

Each configuration runs twice against a fresh response cache: the first run pays for every LLM call, the second
must make none. Reports passages per minute, LLM calls, tokens and failures, with 1 and 2 parallel requests.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from common import write_result

from casebook.catalog import resolve
from casebook.loader import load_case
from kg.openie import MODES, extract
from llm import Settings, connect


def measure(settings: Settings, case_name: str, n: int, workers: int, mode: str = "two-step") -> dict:
    case = load_case(resolve(case_name))
    passages = case.passages[:n]
    with tempfile.TemporaryDirectory() as cache:
        fresh = settings.replace(cache_dir=Path(cache), models_dir=settings.gguf_dir,
                                 embedded_parallel=max(workers, settings.embedded_parallel))
        backend = connect(fresh)
        runs = []
        for attempt in ("first", "second"):
            before = backend.client.usage.snapshot()
            t = time.perf_counter()
            result = extract(backend.client, backend.extraction_model, passages, workers=workers, mode=mode)
            elapsed = time.perf_counter() - t
            after = backend.client.usage.snapshot()
            runs.append({"run": attempt, "seconds": round(elapsed, 2),
                         "passages_per_min": round(len(passages) / elapsed * 60, 1),
                         "llm_calls": after["chat_calls"] - before["chat_calls"],
                         "cache_hits": after["cache_hits"] - before["cache_hits"],
                         "prompt_tokens": after["prompt_tokens"] - before["prompt_tokens"],
                         "cached_prompt_tokens": after["cached_prompt_tokens"] - before["cached_prompt_tokens"],
                         "completion_tokens": after["completion_tokens"] - before["completion_tokens"],
                         "triples": len(result.triples()), "failures": len(result.failures)})
            print(f"{case_name} x{len(passages)} workers={workers} {mode} {attempt}: {runs[-1]}", flush=True)
    return {"case": case_name, "passages": len(passages), "workers": workers, "mode": mode,
            "model": backend.extraction_model, "runs": runs}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", help="the Pearl and 10 MuSiQue passages, 2 workers only")
    p.add_argument("--musique", type=int, default=20, help="how many MuSiQue passages")
    p.add_argument("--only", help="case:passages:workers[,...], e.g. purloined_pearl:10:2 (these configurations)")
    p.add_argument("--out", help="result file name (default indexing or indexing_quick)")
    p.add_argument("--modes", default="two-step", help=f"comma-separated OpenIE modes to compare ({', '.join(MODES)}): "
                   "two calls per passage, or entities and triples in one")
    args = p.parse_args(argv)
    settings = Settings.from_env().replace(backend="embedded")
    configs = [("purloined_pearl", 10, 2), ("musique_train100", 10, 2)] if args.quick else [
        ("purloined_pearl", 10, 1), ("purloined_pearl", 10, 2),
        ("musique_train100", args.musique, 1), ("musique_train100", args.musique, 2)]
    if args.only:
        configs = [(name, int(n), int(w)) for name, n, w in (c.split(":") for c in args.only.split(","))]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not set(modes) <= set(MODES):
        p.error(f"--modes: choose from {', '.join(MODES)}")
    rows = [measure(settings, name, n, w, mode) for name, n, w in configs for mode in modes]
    write_result(args.out or ("indexing_quick" if args.quick else "indexing"), {"rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
