"""`python -m llm check [--json]`: which backend is in use, and do chat and embeddings work?"""
from __future__ import annotations

import argparse
import json
import sys
import time

from . import LLMError, ModelFileError, Settings, connect
from .backend import Backend
from .settings import public_url

PROMPT = [{"role": "user", "content": "Answer in one short sentence: what is the capital of France?"}]


def check(settings: Settings) -> tuple[dict, bool]:
    report: dict = {"backend": None, "base_url": public_url(settings.base_url), "ok": False}
    started = time.perf_counter()
    try:
        backend: Backend = connect(settings)
    except (LLMError, ModelFileError, ValueError) as exc:
        report["error"] = f"no backend: {exc}"
        return report, False
    report.update(backend=backend.kind, reason=backend.reason, base_url=backend.base_url,
                  model=backend.model, extraction_model=backend.extraction_model,
                  embed_model=backend.embed_model, connect_ms=round((time.perf_counter() - started) * 1000, 1))
    try:
        report["models"] = backend.client.list_models()
        t = time.perf_counter()
        answer = backend.client.chat(PROMPT, model=backend.model, max_tokens=40, use_cache=False)
        report["answer"] = answer.text
        report["chat_ms"] = round((time.perf_counter() - t) * 1000, 1)
        t = time.perf_counter()
        vectors = backend.embedder.embed(["The pearl necklace was in the bedroom safe."])
        report["embedding_dim"] = int(vectors.shape[1])
        report["embed_ms"] = round((time.perf_counter() - t) * 1000, 1)
    except LLMError as exc:
        report["error"] = str(exc)
        return report, False
    report["ok"] = bool(report["answer"]) and report["embedding_dim"] > 0
    if not report["answer"]:
        report["error"] = "the chat model returned an empty answer"
    return report, report["ok"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m llm", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check", help="probe the backend: chat, embeddings, latencies")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--backend", choices=["auto", "openai", "embedded"])
    p.add_argument("--base-url", help="OpenAI-compatible base URL, or a preset: lmstudio, ollama, llamacpp, vllm")
    p.add_argument("--model")
    args = parser.parse_args(argv)
    try:
        settings = Settings.from_env().replace(backend=args.backend, base_url=args.base_url, model=args.model)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report, ok = check(settings)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        for key, value in report.items():
            print(f"{key:>16}: {value}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
