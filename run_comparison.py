#!/usr/bin/env python3
"""Solve a case two (or more) ways and compare: naive RAG vs HippoRAG, side by side.

Exit codes: 0 done; 2 bad arguments, bad case or unusable index folder; 3 model backend unavailable.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import unicodedata
from pathlib import Path
from typing import Any

from casebook import catalog
from casebook.loader import CaseError, load_case
from core.contract import TRIPLE_SOURCES
from core.files import replacing, write_text_whole
from core.storage import Storage
from core.types import Case, ProgressUpdate, Question
from kg import KNOWLEDGE_GRAPH, missing_triples
from kg.build import NLP_ABOVE_PASSAGES, triples_source
from lab import registry
from lab.estimates import build_estimate
from lab.report import build_report, describe_build, round_text, to_markdown
from lab.runner import Lab, RunConfig
from llm import (
    AuthenticationFailed,
    Backend,
    Embedder,
    EndpointNotFound,
    LLMError,
    ModelFileError,
    ModelNotFound,
    Settings,
    connect,
    embedder_only,
)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--case", default=catalog.DEFAULT_CASE,
                   help=f"case folder or file, or a bundled name ({', '.join(catalog.available())})")
    p.add_argument("--strategies", default=",".join(registry.DEFAULT_STRATEGIES),
                   help=f"comma-separated, from: {', '.join(registry.REGISTRY)}")
    p.add_argument("--set", action="append", default=[], metavar="STRATEGY.PARAM=VALUE",
                   help="a strategy parameter, e.g. hipporag.damping=0.6 (repeatable; see --list-params)")
    p.add_argument("--list-params", action="store_true", help="print every strategy's parameters and exit")
    p.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                   help="import a module that registers more strategies (repeatable)")
    p.add_argument("--top-k", type=int, default=3)
    p.add_argument("--retrieval-only", action="store_true", help="retrieve and score recall; no answers")
    p.add_argument("--triples", choices=list(TRIPLE_SOURCES), default="auto",
                   help="precomputed = the case's triples.json; llm = OpenIE with the extraction model; nlp = spaCy's "
                        "parse, no LLM (seconds); auto = the file when the case has one, else nlp above "
                        f"{NLP_ABOVE_PASSAGES} passages or without a chat model, else llm")
    p.add_argument("--expand-query", action="store_true", help="one LLM call turns the question into fact statements")
    p.add_argument("--judge", action="store_true", help="also grade answers with an LLM judge (reported apart)")
    p.add_argument("--key-fact-share", type=float, default=1.0,
                   help="an answer is correct when it states this share of the expected answer's key facts")
    p.add_argument("--questions", help="only these question ids, e.g. Q1,Q4")
    p.add_argument("--ask", action="append", default=[], help="a free question (repeatable)")
    p.add_argument("--backend", choices=["auto", "openai", "embedded"])
    p.add_argument("--base-url", help="OpenAI-compatible URL or preset: lmstudio, ollama, llamacpp, vllm")
    p.add_argument("--model")
    p.add_argument("--extraction-model")
    p.add_argument("--embed-model")
    p.add_argument("--workers", type=int, default=2, help="parallel OpenIE requests")
    p.add_argument("--chroma-host", help="use a `chroma run` server instead of the local folder")
    p.add_argument("--chroma-port", type=int)
    p.add_argument("--json", type=Path, help="write the JSON report here")
    p.add_argument("--markdown", type=Path, help="write the Markdown report here")
    p.add_argument("--graphml", type=Path, help="write the knowledge graph as GraphML here (Gephi, yEd, Cytoscape)")
    p.add_argument("--quiet", action="store_true", help="no progress bars, no per-question detail")
    p.add_argument("--verbose", action="store_true", help="log what the libraries do")
    return p.parse_args(argv)


def writable(path: Path, flag: str) -> str | None:
    """Why ``path`` cannot be written, or None."""
    if path.is_dir():
        return f"{flag} {path}: is a folder; give a file name"
    if path.exists() and not path.is_file():
        return f"{flag} {path}: is not a regular file (a pipe, a device); give a file name"
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        return f"{flag} {path}: the folder {folder} does not exist"
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return f"{flag} {path}: the location is read-only"
    return None


def output_clash(outputs: dict[str, Path], inputs: dict[str, Path]) -> str | None:
    """Why an output would destroy an input or another output, or None: outputs may not name one file twice, nor
    lie inside the case folder (a report there becomes a document), the index folder or the response cache."""
    seen: dict[Path, str] = {}
    for flag, path in outputs.items():
        real = path.resolve()
        if real in seen:
            return f"{seen[real]} and {flag} both name {path}: give each report its own file"
        seen[real] = flag
        for what, where in inputs.items():
            home = where.resolve()
            if real == home or real.is_relative_to(home):
                return f"{flag} {path}: is inside {what} ({where}); write the report somewhere else"
    return None


def fail(code: int, message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def main(argv=None) -> int:
    try:
        return run(parse_args(argv))
    except KeyboardInterrupt:   # caches and indexes are written atomically: what finished is kept
        print("\nstopped (Ctrl-C); what was finished is saved, the rest runs next time", file=sys.stderr)
        return 130


class Stop(Exception):
    """End the run with this exit code and message (printed as an error; nothing is written)."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code, self.message = code, message


OUTPUT_FLAGS = ("--json", "--markdown", "--graphml")


def run(args: argparse.Namespace) -> int:
    """Validate, connect, build, evaluate, write: each step stops the run with a clear message if it cannot."""
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.list_params:
            load_plugins(args)
            print_params()
            return 0
        settings, storage, config, case = setup(args)
        questions = preflight(args, case, config, settings, storage)
        backend, embedder = connect_backend(config, case, settings)
        lab, results = build_and_evaluate(args, case, config, settings, storage, backend, embedder, questions)
        if results is None:
            return 0
        report = build_report(lab, results)
        if not args.quiet:
            print_questions(report, case)
        print_summary(report)
        write_reports(args, report)
    except Stop as stop:
        return fail(stop.code, stop.message)
    return 0


def load_plugins(args: argparse.Namespace) -> None:
    try:
        for module in args.plugin:
            registry.load_plugin(module)
    except (KeyError, ValueError) as exc:
        raise Stop(2, exc.args[0] if exc.args else str(exc)) from None


def setup(args: argparse.Namespace) -> tuple[Settings, Storage, RunConfig, Case]:
    """Settings, storage, the run's configuration and the case, each checked."""
    load_plugins(args)
    try:
        settings = Settings.from_env().replace(backend=args.backend, base_url=args.base_url, model=args.model,
                                                extraction_model=args.extraction_model, embed_model=args.embed_model)
        storage = Storage.from_env().replace(chroma_host=args.chroma_host, chroma_port=args.chroma_port)
        strategies = tuple(s.strip() for s in args.strategies.split(",") if s.strip())
        config = RunConfig(strategies=strategies, top_k=args.top_k, retrieval_only=args.retrieval_only,
                           triples=args.triples, expansion=args.expand_query, judge=args.judge,
                           workers=args.workers, key_fact_share=args.key_fact_share).with_assignments(args.set)
        case = load_case(catalog.resolve(args.case))
    except CaseError as exc:
        raise Stop(2, str(exc)) from None
    except (KeyError, ValueError) as exc:
        raise Stop(2, exc.args[0] if exc.args else str(exc)) from None
    return settings, storage, config, case


def preflight(args: argparse.Namespace, case: Case, config: RunConfig, settings: Settings,
              storage: Storage) -> list[Question]:
    """Everything that can be checked before the work, so nothing fails after it; the questions to ask."""
    outputs = {flag: path for flag, path in zip(OUTPUT_FLAGS, (args.json, args.markdown, args.graphml), strict=True)
               if path is not None}
    case_home = Path(case.path) if case.path else None
    inputs = {"the case": case_home.parent if case_home and case_home.is_file() else case_home,
              "the index folder": storage.data_dir, "the response cache": settings.cache_dir}
    problem = next((p for p in (
        output_clash(outputs, {k: v for k, v in inputs.items() if v is not None}),
        *(writable(path, flag) for flag, path in outputs.items()),
        "--judge grades answers and --retrieval-only makes none: drop one of them"
        if args.judge and args.retrieval_only else None,
        "--ask: the question is empty" if any(not a.strip() for a in args.ask) else None,
        "--graphml: no selected strategy builds a knowledge graph"
        if args.graphml and KNOWLEDGE_GRAPH not in config.products() else None,
        missing_triples(case, args.triples)) if p), None)
    if problem:
        raise Stop(2, problem)
    questions = list(case.questions)
    if args.questions:
        wanted = [q.strip() for q in args.questions.split(",") if q.strip()]
        known = {q.id: q for q in case.questions}
        missing = [q for q in wanted if q not in known]
        if missing:
            some = ", ".join(list(known)[:5]) + (", ..." if len(known) > 5 else "")
            raise Stop(2, f"no question {', '.join(map(repr, missing))} in {case.name} (it has {len(known)}: {some})")
        questions = [known[q] for q in wanted]
    return questions + [Question(id=f"ask{i}", text=text, type="free") for i, text in enumerate(args.ask, 1)]


def connect_backend(config: RunConfig, case: Case, settings: Settings) -> tuple[Backend | None, Embedder]:
    """The chat model when the run needs one (its model names checked now, not after the build), else none."""
    try:
        if not config.needs_chat(case):
            embedder = embedder_only(settings)
            print(f"backend: none needed (retrieval only, no LLM step); embeddings {embedder.name}")
            return None, embedder
        backend = connect(settings)
        for model in {backend.model, backend.extraction_model}:
            backend.client.check_model(model)
        print(backend.describe())
        return backend, backend.embedder
    except (LLMError, ModelFileError) as exc:
        raise Stop(3, f"no model backend: {exc}") from None
    except ValueError as exc:
        raise Stop(2, str(exc)) from None


def build_and_evaluate(args: argparse.Namespace, case: Case, config: RunConfig, settings: Settings,
                       storage: Storage, backend: Backend | None, embedder: Embedder,
                       questions: list[Question]) -> tuple[Lab, list | None]:
    """Build every index (the cost said first), write the graph if asked, answer the questions (None: none)."""
    if any(registry.get(n).uses_triples for n in config.strategies):
        print(f"knowledge graph triples: {triples_source(config.triples, case, backend is not None)}")
    cost = build_estimate(case, config.strategies, config.triples, embedder.name,
                          backend.extraction_model if backend else "", has_chat=backend is not None)
    print(f"a first build: {cost} (a saved one loads in seconds)")
    try:
        lab = Lab(case, settings, config, embedder=embedder, backend=backend, storage=storage)
        bars = ProgressBars(enabled=not args.quiet)
        try:
            reports = lab.build(progress=bars.update)
        finally:
            bars.close()
        for r in reports:
            print(describe_build(r))
        if args.graphml:
            write_graphml(lab, args.graphml)
        if not questions:
            print(f"{case.title}: the case has no questions, so nothing can be scored. Ask one with --ask \"...\".")
            return lab, None
        if not case.questions:
            print(f"{case.title}: the case has no questions with gold answers; showing retrieval only.")
        bar = None if args.quiet else make_bar(len(questions), "questions")
        # Answers stream, as in the app: one protocol path for both, so a reply cut off, trickled or garbled
        # mid-stream is caught the same way here (each answer is printed whole with the results).
        results = lab.evaluate(questions, progress=lambda i, n, r: bar.update(1) if bar else None,
                               on_answer=lambda _strategy, _piece: None)
        if bar:
            bar.close()
        return lab, results
    except (AuthenticationFailed, ModelNotFound, EndpointNotFound) as exc:   # the settings must change, not the luck
        what = {AuthenticationFailed: "the API key (LLM_API_KEY)", ModelNotFound: "the model name (--model)",
                EndpointNotFound: "the base URL (LLM_BASE_URL, usually ending in /v1)"}[type(exc)]
        raise Stop(3, f"the model backend refused the run ({exc}). Check {what}; what was computed so far is "
                      "cached.") from None
    except (LLMError, ModelFileError) as exc:
        raise Stop(3, f"the model backend failed mid-run ({exc}). Everything computed so far is cached; run the "
                      "same command again to continue.") from None
    except (ValueError, RuntimeError) as exc:  # includes IndexStoreError
        raise Stop(2, str(exc)) from None


def write_graphml(lab: Lab, path: Path) -> None:
    if lab.knowledge_graph is None:
        raise Stop(2, "--graphml: no selected strategy builds a knowledge graph")
    with replacing(path) as tmp:
        lab.knowledge_graph.graph.write_graphml(tmp)
    print(f"wrote {path}")


def write_reports(args: argparse.Namespace, report: dict) -> None:
    for flag, path, text in (("--json", args.json, lambda: json.dumps(report, indent=2, ensure_ascii=False)),
                             ("--markdown", args.markdown, lambda: to_markdown(report))):
        if path is None:
            continue
        try:
            write_text_whole(path, text())
        except OSError as exc:
            raise Stop(4, f"{flag} {path}: cannot be written ({exc.strerror or exc}); nothing was written there, "
                          "and every answer of this run is cached: the same command again is quick") from None
        print(f"wrote {path}")


# -- terminal output --------------------------------------------------------------------------------
class ProgressBars:
    """One tqdm bar per build stage, on stderr."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.bars: dict[str, Any] = {}   # stage -> its tqdm bar

    def update(self, u: ProgressUpdate) -> None:
        if not self.enabled:
            return
        bar = self.bars.get(u.stage)
        if bar is None:
            bar = self.bars[u.stage] = make_bar(u.total, u.stage)
        bar.total, bar.n = u.total, u.done
        if u.note:
            bar.set_postfix_str(u.note)
        bar.refresh()

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()
        self.bars.clear()


def make_bar(total: int, desc: str):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="item", file=sys.stderr, leave=False)


def print_params() -> None:
    for strategy in registry.REGISTRY.values():
        needs = [n for n, on in (("chat model", strategy.needs_llm), ("knowledge graph", strategy.uses_triples)) if on]
        print(f"{strategy.name}: {strategy.label}" + (f" (needs {', '.join(needs)})" if needs else ""))
        for p in strategy.params:
            bounds = f" {p.minimum}..{p.maximum}" if p.minimum is not None or p.maximum is not None else ""
            choices = f" one of {', '.join(p.choices)}" if p.choices else ""
            when = "build" if p.build_time else "query"
            print(f"  {strategy.name}.{p.name}={p.default}  [{p.kind.__name__}{bounds}{choices}; {when} time] {p.help}")
        if not strategy.params:
            print("  (no parameters)")


def shown(text: object) -> str:
    """Document or model text as the terminal may print it: control characters (ANSI escapes, a bell, a carriage
    return that rewrites the line) become visible escapes instead of acting on the terminal."""
    return "".join(ch if ch == "\n" or unicodedata.category(ch) not in ("Cc", "Cf") else repr(ch)[1:-1]
                   for ch in str(text))


def print_questions(report: dict, case) -> None:
    for q in report["questions"]:
        gold = set(q["supporting_docs"])
        print(f"\n{shown(q['id'])} [{shown(q['type'])}] {shown(q['question'])}")
        if q["expected_answer"]:
            print(f"  expected: {shown(q['expected_answer'])}  (gold: {shown(', '.join(q['supporting_docs']) or '-')})")
        if q.get("expansions"):
            print(f"  expansion: {shown(' | '.join(q['expansions']))}")
        for name, r in q["results"].items():
            recall = "" if r["recall"] is None else f"  recall {r['recall']:.2f}"
            print(f"  {name}:{recall}  ({r['retrieval_ms']:.0f} ms)")
            for pid, score in zip(r["passages"], r["scores"], strict=True):
                p = case.passage(pid)
                mark = "*" if p.doc_id in gold else " "
                print(f"   {mark} {shown(pid):<8} {score:8.4f}  {shown(p.title)}")
            if r["explanation"].get("fallback"):   # why it returned nothing, or fell back to another ranking
                print(f"    note: {shown(r['explanation']['fallback'])}")
            for step in r["explanation"]["rounds"]:
                print(f"    round {step['number']}: {shown(round_text(step))}")
            if r["answer"] is not None:
                verdict = {True: "correct", False: "wrong", None: "not graded"}[r["answer_correct"]]
                print(f"    answer ({verdict}): {shown(r['answer'])}")


def print_summary(report: dict) -> None:
    k = report["settings"]["top_k"]
    print(f"\nSummary ({shown(report['case']['title'])}, top-{k}; accuracy by key facts, strict = whole-answer match):")
    print(f"  {'strategy':<13} {'Recall@' + str(k):>9} {'accuracy':>9} {'strict':>7} {'no answer':>10} "
          f"{'retrieval ms':>13} {'LLM ms':>9} {'LLM calls':>9}  recall by type")
    for name, m in report["summary"].items():
        fmt = lambda v: "-" if v is None else f"{v:.2f}"
        by = ", ".join(f"{t} {fmt(v)}" for t, v in m["recall_by_type"].items())
        print(f"  {name:<13} {fmt(m['recall']):>9} {fmt(m['answer_accuracy']):>9} {fmt(m['answer_accuracy_strict']):>7} "
              f"{fmt(m['no_answer_rate']):>10} {fmt(m['median_retrieval_ms']):>13} {fmt(m['median_llm_ms']):>9} "
              f"{fmt(m['median_llm_calls']):>9}  {by}")


if __name__ == "__main__":
    sys.exit(main())
