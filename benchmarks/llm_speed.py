#!/usr/bin/env python3
"""The embedded model's speed: prompt and generation tokens per second, as llama.cpp's server measures them."""
from __future__ import annotations

import argparse
import statistics

import requests

from llm import Settings, connect

from common import write_result

PROMPT = ("Summarise in three sentences: Detective Miller arrived at the mansion at 10 PM. The necklace had been in "
          "the bedroom safe. A figure in a long coat was filmed in the hallway at 9:15 PM. ") * 4


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args(argv)
    backend = connect(Settings.from_env().replace(backend="embedded"))
    rows = []
    for i in range(args.runs):
        body = requests.post(backend.base_url + "/chat/completions", timeout=300, json={
            "model": backend.model, "max_tokens": 128, "temperature": 0, "cache_prompt": False,
            "messages": [{"role": "user", "content": f"[run {i}] {PROMPT}"}]}).json()
        t = body.get("timings", {})
        rows.append({"prompt_tokens": t.get("prompt_n"), "prompt_tokens_per_s": round(t.get("prompt_per_second", 0), 1),
                     "generated_tokens": t.get("predicted_n"),
                     "generation_tokens_per_s": round(t.get("predicted_per_second", 0), 1)})
        print(rows[-1], flush=True)
    write_result("llm_speed", {"model": backend.model, "backend": backend.kind, "runs": rows,
                               "median_prompt_tokens_per_s": statistics.median(r["prompt_tokens_per_s"] for r in rows),
                               "median_generation_tokens_per_s":
                                   statistics.median(r["generation_tokens_per_s"] for r in rows)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
