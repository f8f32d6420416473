"""Detective RAG lab: solve a case several ways, naive RAG, HippoRAG and more, step by step, side by side.

Thin by design: every computation lives in lab/ and the packages below it; this file lays out cells and renders
what lab/ returns by type (explanations, build reports), never by strategy name.
"""
from __future__ import annotations

import json
import random
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

import altair as alt
import pandas as pd
import streamlit as st

from casebook import catalog
from casebook.generate import gold_as_triples, load_mystery
from casebook.loader import CaseError, load_case, load_files
from core.contract import Param, Strategy
from core.types import Case, Explanation, Question
from kg.build import NLP_ABOVE_PASSAGES, extraction_estimate, triples_source
from kg.visual import ROUND_COLOR_NAMES, graph_html
from lab.estimates import build_estimate
from lab.registry import DEFAULT_STRATEGIES, REGISTRY
from lab.report import build_report, describe_build, key_fact_note, path_text, round_text, to_markdown
from lab.results import StrategyResult
from lab.runner import Lab, QuestionResult, RunConfig
from lab.verdict import TIE, case_verdict
from llm import PRESETS, Backend, LLMError, ModelFileError, Settings, connect

st.set_page_config(page_title="Detective RAG lab", layout="wide")

_MD_SPECIAL = "\\`*_{}[]()#+-.!|<>~$"
MAX_LABS = 4   # built labs kept in memory (least recently used evicted first)
MAX_COLUMNS = 3  # strategies shown side by side; more become a comparison table


def md(text: object) -> str:
    """Escape Markdown so document and model text (or an error's message) is shown as written, never rendered as
    links or HTML."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))


def code(text: str) -> str:
    """Text shown as written, in a code span (no Markdown, no links)."""
    return "`" + str(text).replace("`", "'") + "`"


# -- resources shared by every session (cache owned by this one place) ----------------------------------------
@st.cache_resource(show_spinner=False)
def backend_for(settings: Settings) -> Backend:
    return connect(settings)


@st.cache_resource(show_spinner=False)
def lab_store() -> tuple[OrderedDict, threading.Lock]:
    """Built labs by key, least recently used first: a rerun or a second tab reuses them instead of rebuilding."""
    return OrderedDict(), threading.Lock()


@st.cache_data(show_spinner=False)
def bundled_case(path: str) -> Case:
    return load_case(path)


def lab_key(case: Case, backend: Backend, config: RunConfig) -> str:
    """Only what the built indexes depend on: query-time settings never change it."""
    return json.dumps([case.name, case.path, case.fingerprint, len(case.triples), backend.kind, backend.base_url,
                       backend.model, backend.extraction_model, backend.embed_model, config.build_key()])


def timing(started: float, done: int, total: int) -> str:
    """'12 s' so far, and once something is done, about how long the rest will take at the same pace."""
    elapsed = time.perf_counter() - started
    left = f", about {elapsed / done * (total - done):.0f} s left" if 0 < done < total else ""
    return f"{elapsed:.0f} s{left}"


# -- sidebar: settings ---------------------------------------------------------------------------------------
def sidebar() -> tuple[Settings, RunConfig]:
    env = Settings.from_env()
    sb = st.sidebar
    sb.header("Models")
    backend = sb.radio("Backend", ["auto", "openai", "embedded"], index=["auto", "openai", "embedded"].index(env.backend),
                       help="auto: use the server below if it answers, else the embedded llama.cpp model")
    preset_names = ["custom"] + list(PRESETS)
    preset = sb.selectbox("Server preset", preset_names,
                          index=preset_names.index(next((k for k, v in PRESETS.items() if v == env.base_url), "custom")))
    base_url = sb.text_input("Base URL", value=PRESETS.get(preset, env.base_url))
    model = sb.text_input("Answer model", value=env.model, help="empty: the server's first model")
    extraction = sb.text_input("Extraction model (OpenIE)", value=env.extraction_model, help="empty: the answer model")
    sb.header("Retrieval")
    strategies = sb.multiselect("Strategies", list(REGISTRY), default=list(DEFAULT_STRATEGIES),
                                format_func=lambda n: REGISTRY[n].label)
    top_k = sb.slider("top-k passages", 1, 10, 3)
    answers = sb.toggle("Answer with the model", value=True, key="answers",
                        help="off: no answers, retrieval scored by Recall@k (in seconds, unless a strategy's own LLM steps are "
                             "on in its parameters); on: the same model also answers "
                             "from each strategy's passages (tens of seconds per answer on the embedded model)")
    expansion = sb.toggle("Query expansion", value=False,
                          help="one LLM call rewrites the question as statements of the facts that would answer it; "
                               "every strategy then searches with them too")
    params = {}
    for name in strategies:
        strategy = REGISTRY[name]
        if strategy.params:
            with sb.expander(f"{strategy.label} parameters"):
                params[name] = {p.name: param_widget(strategy, p) for p in strategy.params}
    settings = env.replace(backend=backend, base_url=base_url, model=model, extraction_model=extraction)
    config = RunConfig(strategies=tuple(strategies) or DEFAULT_STRATEGIES, top_k=top_k, expansion=expansion,
                       retrieval_only=not answers, params=params)
    return settings, config


def param_widget(strategy: Strategy, p: Param):
    """A widget built from the parameter's declaration: toggle, choice, slider or number box."""
    key, label = f"param:{strategy.name}.{p.name}", p.name.replace("_", " ")
    help_text = p.help + (" (changes the index: rebuilds)" if p.build_time else "")
    default = p.default
    if isinstance(default, bool):
        return st.toggle(label, value=default, key=key, help=help_text)
    if p.choices:
        return st.selectbox(label, p.choices, index=p.choices.index(str(default)), key=key, help=help_text)
    if isinstance(default, int):
        if p.minimum is not None and p.maximum is not None:
            return st.slider(label, int(p.minimum), int(p.maximum), default, key=key, help=help_text)
        return st.number_input(label, value=default, key=key, help=help_text,
                               min_value=None if p.minimum is None else int(p.minimum),
                               max_value=None if p.maximum is None else int(p.maximum))
    if isinstance(default, float):
        if p.minimum is not None and p.maximum is not None:
            return st.slider(label, float(p.minimum), float(p.maximum), default, p.step, key=key, help=help_text)
        return st.number_input(label, value=default, min_value=p.minimum, max_value=p.maximum, key=key,
                               help=help_text)
    return st.text_input(label, value=default, key=key, help=help_text)


# -- cell 1: the case ----------------------------------------------------------------------------------------
def cell_case() -> Case | None:
    st.header("1 · The case files")
    st.caption("Every strategy reads the same documents. Pick the bundled mystery, a real multi-hop benchmark, or "
               "bring your own (a JSON list of {id, title, text}, or .md / .txt files).")
    cases = catalog.available()
    bundled = [n for n, p in cases.items() if p.parent == catalog.BUNDLED]
    benchmarks = [n for n in cases if n not in bundled]
    source = st.radio("Source", ["Bundled case", "Benchmark set", "Generated mystery", "Upload"], horizontal=True,
                      key="case_source")
    try:
        if source == "Generated mystery":
            case = generated_case()
        elif source == "Upload":
            files = st.file_uploader("Documents", type=["json", "md", "txt"], accept_multiple_files=True)
            if not files:
                st.info("Upload documents to continue.")
                return None
            case = load_files([(f.name, f.getvalue()) for f in files], name="upload")
            case.name = f"upload-{case.fingerprint}"
            if case.title == "upload":   # no case.json title: say what was uploaded
                names = [f.name for f in files]
                case.title = f"Uploaded: {', '.join(names[:3])}" + (f" and {len(names) - 3} more" if len(names) > 3
                                                                     else "")
        else:
            names = bundled if source == "Bundled case" else benchmarks
            name = st.selectbox("Case", names, key=f"case_{source}",
                                format_func=lambda n: f"{catalog.title(cases[n])} ({n})")
            case = bundled_case(str(cases[name]))
    except CaseError as exc:
        st.error("This case cannot be loaded:\n\n" + "\n".join(f"- {md(p)}" for p in exc.problems))
        return None
    st.subheader(md(case.title))
    if case.description:
        st.write(md(case.description))
    cols = st.columns(4)
    cols[0].metric("Documents", len(case.documents))
    cols[1].metric("Passages", len(case.passages))
    cols[2].metric("Questions", len(case.questions))
    cols[3].metric("Precomputed triples", len(case.triples))
    # One table; a cell shows its full text when clicked.
    st.dataframe(pd.DataFrame([{"id": d.id, "title": d.title, "text": d.text} for d in case.documents]),
                 hide_index=True, width="stretch", height=min(400, 40 + 35 * len(case.documents)),
                 column_config={"text": st.column_config.TextColumn(width="large")})
    return case


def generated_case() -> Case:
    """A seeded mystery whose answers are known by construction (casebook.generate)."""
    st.session_state.setdefault("mystery_seed", 1)
    if st.button("Generate a new mystery"):   # before the seed widget: a widget's state is set before it is drawn
        st.session_state["mystery_seed"] = random.randint(1, 99_999)
    cols = st.columns(2)
    seed = cols[0].number_input("Seed", min_value=1, max_value=99_999, step=1, key="mystery_seed")
    suspects = cols[1].slider("Suspects", 3, 6, 4, key="mystery_suspects")
    case, gold = load_mystery(int(seed), suspects)
    if st.toggle("Give the graph the generator's own facts (perfect extraction)", key="mystery_gold",
                 help="The graph strategies then read the facts the generator wrote the case from, as a perfect "
                      "OpenIE would extract them: the ceiling of what better extraction can give, to set beside "
                      "the model's own OpenIE."):
        case = load_mystery(int(seed), suspects, gold_as_triples(gold))[0]
    return case


# -- cell 2: models ------------------------------------------------------------------------------------------
def cell_models(settings: Settings) -> Backend | None:
    st.header("2 · The models")
    st.caption("Both strategies use the same chat model (for OpenIE and answers) and the same embeddings; only "
               "retrieval differs. Any OpenAI-compatible server works; with none, an embedded llama.cpp server "
               "runs a small model from PyPI.")
    try:
        with st.spinner("Connecting to a model backend (the embedded model takes a few seconds to start)..."):
            backend = backend_for(settings)
    except (LLMError, ModelFileError, ValueError) as exc:
        st.error(f"No model backend: {md(exc)}")
        return None
    # The reason holds URLs: a code span shows them as written (escaped Markdown inside a URL shows backslashes).
    if backend.kind == "embedded" and settings.backend == "auto":
        st.warning(f"The configured server did not answer, so the embedded model is used: {code(backend.reason)}")
    else:
        st.success(f"Using {backend.kind}: {code(backend.reason)}")
    st.dataframe(pd.DataFrame([{"role": "answers (and the LLM steps of retrieval)", "model": backend.model},
                               {"role": "OpenIE (triples for the graph)", "model": backend.extraction_model},
                               {"role": "embeddings", "model": backend.embed_model}]),
                 hide_index=True, width="stretch")
    st.sidebar.caption(f"In use: {backend.kind} at {code(backend.base_url)}")
    return backend


# -- cell 3: build -------------------------------------------------------------------------------------------
TRIPLE_LABELS = {"precomputed": "the case's triples.json", "nlp": "spaCy's parse (no LLM)",
                 "llm": "OpenIE by the LLM"}


def triples_choice(case: Case, config: RunConfig, backend: Backend) -> str:
    """Where the graph's triples come from, each source shown with what a first build costs; the default said."""
    if not any(REGISTRY[n].uses_triples for n in config.strategies):
        return "auto"
    default = triples_source("auto", case, has_chat=True)
    sources = [s for s in ("precomputed", "nlp", "llm") if s != "precomputed" or case.triples]
    costs = {s: extraction_estimate(case, s, backend.extraction_model) for s in sources}

    def label(s: str) -> str:
        return TRIPLE_LABELS[s] + (f": {costs[s]}" if costs[s] else ": no extraction")
    # Keyed by the case and its triples: another case, or the generator's facts toggled on, starts from its own
    # default instead of keeping a choice made for a case without them.
    choice = st.radio("Triples for the graph", sources, index=sources.index(default), format_func=label,
                      key=f"triples_source:{case.fingerprint}:{len(case.triples)}")
    if default == "nlp" and not case.triples:
        st.caption(f"spaCy is the default here: the case has {len(case.passages):,} passages, over the "
                   f"{NLP_ABOVE_PASSAGES} up to which the LLM's OpenIE is the default.")
    return choice


def cell_build(case: Case, settings: Settings, config: RunConfig, backend: Backend) -> tuple[Lab | None, RunConfig]:
    st.header("3 · Build the indexes")
    st.caption("Naive RAG embeds each passage into ChromaDB. Graph strategies ask the LLM for the entities and "
               "(subject, relation, object) triples of every passage, join them into a knowledge graph and embed "
               "its entities and facts. Everything is cached: a rebuild only redoes what changed.")
    triples = triples_choice(case, config, backend)
    config = replace(config, triples=triples)
    key = lab_key(case, backend, config)
    store, lock = lab_store()
    with lock:
        lab = store.get(key)
        if lab is not None:
            store.move_to_end(key)
    if lab is None:
        cost = build_estimate(case, config.strategies, config.triples, backend.embed_model, backend.extraction_model)
        st.caption(f"Cost of a first build: {md(cost)}; a saved one loads in seconds.")
    if lab is None and not st.button("Build the indexes", type="primary"):
        st.info("Press the button to build (cached afterwards).")
        return None, config
    if lab is None:
        with lock:
            lab = store.get(key) or build_lab(case, settings, config, backend)
            if lab is not None:
                store[key] = lab
                while len(store) > MAX_LABS:
                    store.popitem(last=False)
    if lab is None:
        return None, config
    for report in lab.reports:
        st.markdown(md(describe_build(report)))
        if report.failures:
            with st.expander(f"{len(report.failures)} item(s) of {report.name} failed"):
                st.dataframe(pd.DataFrame([f.__dict__ for f in report.failures]), hide_index=True)
    return lab, config


def build_lab(case: Case, settings: Settings, config: RunConfig, backend: Backend) -> Lab | None:
    bars: dict = {}
    recent: list[tuple[str, ...]] = []
    with st.status("Building...", expanded=True) as status:
        waiting: dict = {}   # planned stages that have not reported yet
        bars_box = st.container()
        rows_box = st.empty()

        def progress(u):
            if u.stage not in bars:
                bar = waiting.pop(u.stage, None) or bars_box.progress(0.0, text=u.stage)
                bars[u.stage] = (bar, time.perf_counter())
            bar, started = bars[u.stage]
            note = f" · {u.note}" if u.note else ""
            bar.progress(min(1.0, u.done / max(u.total, 1)),
                         text=f"{u.stage}: {u.done}/{u.total} · {timing(started, u.done, u.total)}{note}")
            if u.rows:
                recent.extend(u.rows)
                rows_box.dataframe(pd.DataFrame(recent[-12:], columns=["passage", "subject", "relation", "object"]
                                                [:len(recent[-1])]), hide_index=True, width="stretch")

        try:
            lab = Lab(case, settings, config, embedder=backend.embedder, backend=backend)
            # Every stage listed from the start, so a long first stage does not look like the whole build.
            waiting.update({stage: bars_box.progress(0.0, text=f"{stage}: 0/{total or '?'} · waiting")
                            for stage, total in lab.plan()})
            lab.build(progress=progress)
        except (LLMError, ModelFileError) as exc:
            status.update(label="Build stopped: the model backend failed", state="error", expanded=True)
            st.error(f"The model backend failed: {md(exc)}. What was extracted so far is cached; build again "
                     "to continue.")
            return None
        except (ValueError, RuntimeError) as exc:
            status.update(label="Build failed", state="error", expanded=True)
            st.error(md(exc))
            return None
        for stage, bar in waiting.items():
            bar.progress(1.0, text=f"{stage}: nothing to do (reused what was saved)")
        status.update(label="Indexes ready", state="complete", expanded=False)
    return lab


# -- cell 4: the graph ---------------------------------------------------------------------------------------
def cell_graph(lab: Lab) -> None:
    st.header("4 · The knowledge graph")
    st.caption("Blue dots are entities, orange boxes are passages. Grey lines: an entity is mentioned in a "
               "passage; dark lines: a relation between two entities; dashed purple: near-synonyms by embedding. "
               "Hover a node for its facts.")
    build = lab.knowledge_graph
    if build is None:
        st.info("No selected strategy builds a knowledge graph.")
        return
    search = st.text_input("Highlight entities containing", key="graph_search")
    html, drawn = graph_html(build.graph, highlight=search, titles={p.id: p.title for p in lab.case.passages})
    note = "" if drawn["nodes"] == drawn["total_nodes"] else \
        f" (showing {drawn['nodes']} of {drawn['total_nodes']} nodes: the search matches and best-connected first)"
    st.markdown(f"**{drawn['total_nodes']} nodes, {drawn['total_edges']} edges**{md(note)}"
                + (f" · {drawn['matches']} match(es)" if search else ""))
    st.iframe(html, height=600)   # the 560 px graph and its frame, nothing cut off
    st.download_button("Download the graph as GraphML", graphml(build.graph), file_name=f"{lab.case.name}.graphml",
                       mime="application/xml")


def graphml(graph) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "graph.graphml"
        graph.write_graphml(path)
        return path.read_bytes()


# -- cell 5: ask ---------------------------------------------------------------------------------------------
def pick_question(case: Case) -> Question | None:
    """The case's question the reader picks (a multi-hop one first), or their own; None until one is typed."""
    options = [f"{q.id} [{q.type}] {q.text}" for q in case.questions] + ["Type my own question"]
    default = next((i for i, q in enumerate(case.questions) if q.type == "multi-hop"), 0)
    choice = st.selectbox("Question", options, index=default, key="question_choice")
    if choice != options[-1]:
        return case.questions[options.index(choice)]
    text = st.text_input("Your question", key="free_question")
    return Question(id="ask", text=text, type="free") if text.strip() else None


def cell_ask(lab: Lab, config: RunConfig) -> None:
    st.header("5 · Ask a question")
    st.caption("Each strategy retrieves its top-k passages; then the same model answers from them with the same "
               "prompt. Gold documents (the ones the answer needs) are marked yes.")
    case = lab.case
    question = pick_question(case)
    asked = st.session_state.get("asked")
    if question is None or asked != (case.fingerprint, question.id, question.text):
        st.session_state.pop("answer", None)   # a new question: the old answers no longer apply
        asked = None
    if question is None:
        st.button("Ask", type="primary", disabled=True)
        return
    if config.top_k >= len(case.passages):
        st.warning(f"top-k {config.top_k} covers all {len(case.passages)} passages of this case: every strategy "
                   "returns every passage, so recall cannot tell them apart. Lower top-k in the sidebar.")
    st.caption(f"Cost: {md(lab.cost_estimate(1, config))}")
    if st.button("Ask", type="primary"):
        asked = st.session_state["asked"] = (case.fingerprint, question.id, question.text)
    result: QuestionResult | None = st.session_state.get("answer")
    if asked and (result is None or result.config != config):   # a query-time change re-asks, never rebuilds
        live = st.empty()   # each answer as it streams; replaced by the full results once every strategy is done
        try:
            with st.spinner("Retrieving and answering..."):
                result = st.session_state["answer"] = lab.ask(question, config, on_answer=streamer(live.container()))
        except (LLMError, ModelFileError) as exc:
            st.error(f"The model backend failed: {md(exc)}")
            return
        except ValueError as exc:
            st.error(md(exc))
            return
        live.empty()
    if result is None:
        return
    q = result.question
    st.subheader(f"{md(q.id)} · top-{result.config.top_k} · {md(', '.join(result.results))}")
    if result.expansions:
        st.markdown("**Query expansion:** " + " · ".join(md(e) for e in result.expansions))
    gold = set(q.supporting_docs)
    if len(result.results) <= MAX_COLUMNS:
        cols = st.columns(len(result.results))
        for col, (name, r) in zip(cols, result.results.items(), strict=True):
            with col:
                strategy_column(lab, REGISTRY[name], r, gold, result.config.top_k)
    else:
        comparison_table(lab, result, gold)
    if result.differences:
        st.markdown("**Why they differ:** " + " ".join(md(line) for line in result.differences))
    timing_chart(result)
    for name, r in result.results.items():
        with st.expander(f"How {REGISTRY[name].label} got there"):
            if len(result.results) > MAX_COLUMNS:
                strategy_column(lab, REGISTRY[name], r, gold, result.config.top_k)
            render_explanation(lab, r.explanation)


def streamer(area) -> Callable[[str, str], None]:
    """An ``on_answer`` callback that shows each strategy's answer in ``area`` as its words arrive."""
    shown: dict[str, tuple] = {}

    def on_answer(name: str, piece: str) -> None:
        box, text = shown.get(name) or (area.empty(), "")
        text += piece
        shown[name] = (box, text)
        box.markdown(f"**{md(REGISTRY[name].label)} (streaming):** {md(text)}")
    return on_answer


def comparison_table(lab: Lab, result: QuestionResult, gold: set[str]) -> None:
    """More strategies than columns fit: one row each; the full column sits in each strategy's detail view."""
    rows = []
    for name, r in result.results.items():
        rows.append({"strategy": REGISTRY[name].label,
                     f"Recall@{result.config.top_k}": r.recall,
                     "retrieved (gold marked *)": ", ".join(f"{d}*" if d in gold else d for d in r.retrieved),
                     "answer": r.answer if r.answer is not None else "",
                     "matches expected": {True: "yes", False: "no", None: ""}[
                         r.answer_scores.correct if r.answer_scores else None],
                     "retrieval ms": round(r.retrieval_ms, 1), "LLM ms": round(r.llm_ms, 1)})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={"answer": st.column_config.TextColumn(width="large")})


def strategy_column(lab: Lab, strategy: Strategy, r: StrategyResult, gold: set[str], top_k: int) -> None:
    st.subheader(strategy.label)
    recall = "" if r.recall is None else f" · Recall@{top_k} {r.recall:.2f}"
    st.caption(md(strategy.description) + recall + f" · retrieval {r.retrieval_ms:,.0f} ms, LLM {r.llm_ms:,.0f} ms")
    rows = [{"gold": "yes" if lab.case.passage(pid).doc_id in gold else "", "passage": pid,
             "title": lab.case.passage(pid).title, "score": round(score, 4)}
            for pid, score in zip(r.passages, r.scores, strict=True)]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    if r.explanation.fallback:
        st.info(md(r.explanation.fallback))
    if r.answer is not None:
        scores = r.answer_scores
        verdict = "" if not scores else "(says the passages do not tell)" if scores.no_answer else \
            "(states the expected answer)" if scores.correct else "(misses part of the expected answer)"
        st.markdown(f"**Answer** {verdict}")
        st.text(r.answer)
        note = key_fact_note(scores.to_dict() if scores else None)
        if note:
            st.caption(md(note.strip(" ()")))


def timing_chart(result: QuestionResult) -> None:
    """Retrieval and LLM time in two panels, each on its own axis: the model's seconds would make every retrieval
    stage a sliver on a shared one. One labelled row per strategy, its total printed at the bar's end. A run with
    no model call has the retrieval panel alone."""
    rows = [{"strategy": REGISTRY[n].label, "stage": k, "ms": v,
             "part": "LLM (s)" if k in r.llm_stages else "retrieval (ms)",
             "value": v / 1000 if k in r.llm_stages else v}
            for n, r in result.results.items() for k, v in r.timings_ms.items()]
    if not rows:
        return
    data = pd.DataFrame(rows)
    order = [REGISTRY[n].label for n in result.results]
    height = 36 * len(order) + 20

    def panel(part: str, unit: str) -> alt.LayerChart:
        base = alt.Chart(data[data["part"] == part]).encode(
            y=alt.Y("strategy:N", title=None, sort=order, axis=alt.Axis(labelLimit=220)))
        bars = base.mark_bar().encode(x=alt.X("sum(value):Q", title=part), color=alt.Color(
            "stage:N", legend=alt.Legend(orient="bottom", columns=4, labelLimit=200)),
            tooltip=["strategy", "stage", alt.Tooltip("ms:Q", format=",.1f", title="ms")])
        totals = base.mark_text(align="left", dx=4).encode(
            x="sum(value):Q", text=alt.Text("sum(value):Q", format=",.1f" if unit == "ms" else ",.2f"))
        return (bars + totals).properties(height=height, width=360, title=f"{part.split(' ')[0]} per strategy")

    # a panel with no stage (no model call: answers off, a retrieval-only strategy) is left out, not drawn empty
    panels = [panel(part, unit) for part, unit in (("retrieval (ms)", "ms"), ("LLM (s)", "s"))
              if (data["part"] == part).any()]
    chart = panels[0] if len(panels) == 1 else alt.hconcat(*panels).resolve_scale(x="independent")
    st.altair_chart(chart.properties(usermeta={"embedOptions": {"renderer": "svg"}}),   # SVG: labels are text
                    width="content")


def render_explanation(lab: Lab, ex: Explanation) -> None:
    """The explanation contract, field by field; a field a strategy leaves empty is not shown."""
    st.markdown(f"**Method:** {md(ex.method)}")
    if ex.rounds:
        st.markdown("**The trail** (one line per round: what it searched, what it added, what it followed next)")
        st.markdown("\n".join(f"{r.number}. {md(round_text(asdict(r)))}" for r in ex.rounds))
    if ex.stages:
        st.markdown("**Stages**")
        st.dataframe(pd.DataFrame([{"stage": s.name, "ran": "yes" if s.ran else "no", "why": s.why, "ms": s.ms}
                                   for s in ex.stages]), hide_index=True, width="stretch")
    if ex.evidence:
        st.markdown("**Evidence** (facts or relations weighed for the question)")
        st.dataframe(pd.DataFrame([{"evidence": e.text, "score": e.score, "kept": "yes" if e.kept else "no",
                                    "from": e.detail} for e in ex.evidence]), hide_index=True,
                     width="stretch")
    if ex.seeds:
        st.markdown("**Seeds of the walk** (weight after node specificity)")
        st.dataframe(pd.DataFrame([{"node": s.node, "weight": s.weight} for s in ex.seeds]), hide_index=True,
                     width="stretch")
    if ex.paths:
        st.markdown("**Why each passage: the most probable path from a seed**")
        for pid, path in ex.paths.items():
            st.markdown(f"- **{md(pid)}**: " + (md(path_text([asdict(s) for s in path])) if path
                                                else "reached through its own dense score, not from a seed"))
    build = lab.knowledge_graph
    if build and ex.node_scores:
        g = build.graph
        index = {g.node_label(n): n for n in range(g.n_nodes)}
        scores = {index[k]: v for k, v in ex.node_scores.items() if k in index}
        seeds = {index[s.node] for s in ex.seeds if s.node in index}
        rounds = [{index[n] for n in r.seeds if n in index} for r in ex.rounds]
        colours = ", ".join(f"round {n} {name}" for n, name in enumerate(ROUND_COLOR_NAMES[:len(rounds)], 1))
        st.markdown("**The walk on the graph** (size = PageRank mass: how often a random walker that keeps "
                    "returning to the seeds stands on a node; " +
                    (f"each round's seeds in its colour: {colours})" if rounds else
                     "red = seeds, the nodes the question linked to)"))
        st.markdown("Seeds: " + (", ".join(md(s.node) for s in ex.seeds[:10]) or "none") + " · passages it reached: "
                    + ", ".join(md(pid) for pid in ex.paths))
        html, _ = graph_html(g, scores=scores, seeds=seeds, max_nodes=80, height="420px",
                            titles={p.id: p.title for p in lab.case.passages}, seed_rounds=rounds)
        st.iframe(html, height=460)


# -- cell 6: evaluate ----------------------------------------------------------------------------------------
def cell_evaluate(lab: Lab, config: RunConfig) -> None:
    st.header("6 · Evaluate the whole case")
    st.caption("Every question, every strategy: Recall@k against the gold documents, answer correctness against "
               "the expected answer, and timings. Download the same JSON and Markdown reports as the CLI.")
    if not lab.case.questions:
        st.info("This case has no questions, so nothing can be scored. Ask your own in cell 5.")
        return
    st.caption(f"Cost: {md(lab.cost_estimate(len(lab.case.questions), config))}")
    if st.button("Run every question"):
        bar = st.progress(0.0, text="questions")
        try:
            started = time.perf_counter()
            def advance(i: int, n: int, _: QuestionResult) -> None:
                bar.progress(i / n, text=f"question {i}/{n} · {timing(started, i, n)}")
            results = lab.evaluate(config=config, progress=advance)
            st.session_state["report"] = build_report(lab, results, config)
        except (LLMError, ModelFileError) as exc:
            st.error(f"The model backend failed: {md(exc)}. Answers so far are cached; run again to continue.")
    report = st.session_state.get("report")
    if not report or report["case"]["fingerprint"] != lab.case.fingerprint:
        return
    k = report["settings"]["top_k"]
    verdict = case_verdict(report)
    if verdict:
        st.markdown("**Verdict for this case**\n\n" + "\n".join(f"- {md(v.sentence(k))}" for v in verdict))
        st.caption(f"Recall@{k}: the share of a question's gold documents (the ones its answer needs) among the "
                   f"{k} passages a strategy retrieved, averaged over the questions of each type. Leads under "
                   f"{TIE} are called ties; with a few questions a type, one question moves a mean a lot. Key "
                   "facts: an answer counts as correct when it states the expected answer's facts (names, times, "
                   "amounts), however worded; strict: only when it contains the expected answer word for word.")
    rows = []
    for q in report["questions"]:
        row = {"id": q["id"], "type": q["type"], "question": q["question"]}
        for n, r in q["results"].items():
            row[f"{n} recall"] = r["recall"]
            row[f"{n} correct"] = r["answer_correct"]
        row["why they differ"] = " ".join(q["differences"])
        rows.append(row)
    # Every question visible at once: the table is as tall as its rows, long texts wrap.
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", height=38 + 35 * len(rows),
                 column_config={"question": st.column_config.TextColumn(width="large"),
                                "why they differ": st.column_config.TextColumn(width="large")})
    st.markdown("**Why they differ, question by question**")
    st.markdown("\n".join(f"- **{md(q['id'])}**: {md(' '.join(q['differences']) or 'no difference to explain.')}"
                           for q in report["questions"]))
    by_type = pd.DataFrame([{"strategy": n, "question type": t, f"Recall@{k}": v}
                            for n, m in report["summary"].items() for t, v in m["recall_by_type"].items()])
    scores = pd.DataFrame([{"strategy": n, "measure": label, "value": m[key]} for n, m in report["summary"].items()
                           for key, label in SUMMARY_MEASURES.items() if m.get(key) is not None])
    c1, c2 = st.columns(2)
    c1.markdown(f"**Recall@{k} by question type**")
    c1.altair_chart(grouped_bars(by_type, "question type", f"Recall@{k}"), width="stretch")
    c2.markdown("**Recall and answers**")
    c2.altair_chart(grouped_bars(scores, "measure", "value"), width="stretch")
    st.dataframe(pd.DataFrame([{"strategy": n, **{SUMMARY_COLUMNS.get(key, key): v for key, v in m.items()
                                                  if key != "recall_by_type"}}
                               for n, m in report["summary"].items()]), hide_index=True, width="stretch")
    d1, d2 = st.columns(2)
    d1.download_button("Download JSON report", json.dumps(report, indent=2, ensure_ascii=False),
                       file_name=f"{lab.case.name}-report.json", mime="application/json")
    d2.download_button("Download Markdown report", to_markdown(report), file_name=f"{lab.case.name}-report.md",
                       mime="text/markdown")


SUMMARY_COLUMNS = {"questions": "Questions", "scored_questions": "Questions with gold", "recall": "Recall@k",
                   "answer_accuracy": "Answer accuracy (key facts)", "answer_accuracy_strict": "Strict accuracy",
                   "key_fact_share": "Key facts found (mean share)", "no_answer_rate": "No answer",
                   "answer_f1": "Answer F1", "judge_accuracy": "LLM judge accuracy",
                   "judge_agreement": "Judge agrees with key facts",
                   "median_retrieval_ms": "Median retrieval ms (no LLM)", "median_llm_ms": "Median LLM ms",
                   "median_llm_calls": "Median LLM calls", "median_answer_ms": "Median answer ms"}
SUMMARY_MEASURES = {key: SUMMARY_COLUMNS[key]   # the 0-1 measures charted side by side
                    for key in ("recall", "answer_accuracy", "answer_accuracy_strict", "judge_accuracy")}


def grouped_bars(data: pd.DataFrame, group: str, value: str) -> alt.Chart:
    """One group of bars per category, a bar per strategy, on a 0-1 scale; labels horizontal."""
    return alt.Chart(data).mark_bar().encode(
        x=alt.X(f"{group}:N", title=None, axis=alt.Axis(labelAngle=0, labelLimit=160)),
        xOffset="strategy:N", y=alt.Y(f"{value}:Q", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("strategy:N", legend=alt.Legend(orient="bottom")),
        tooltip=["strategy", group, value]).properties(height=260)


def main() -> None:
    st.title("Detective RAG lab")
    st.markdown("When does knowledge-graph retrieval (**HippoRAG** and the other graph strategies) beat plain vector "
                "search (**naive RAG**) on questions that need several documents, and when does it not? Walk "
                "through the cells top to bottom; cell 6 gives this case's verdict.")
    try:
        settings, config = sidebar()
    except (ValueError, KeyError) as exc:
        st.error(md(exc))
        return
    case = cell_case()
    if case is None:
        return
    backend = cell_models(settings)
    if backend is None:
        return
    lab, config = cell_build(case, settings, config, backend)
    if lab is None:
        return
    cell_graph(lab)
    cell_ask(lab, config)
    cell_evaluate(lab, config)


main()
