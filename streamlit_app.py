"""Detective RAG lab: solve a case two ways, naive RAG and HippoRAG, step by step, side by side.

Thin by design: every computation lives in casebook/, naive_rag/, hipporag/ and llm/; this file lays out cells.
"""
from __future__ import annotations

import dataclasses
import json
import threading

import altair as alt
import pandas as pd
import streamlit as st
import streamlit.components.v1 as components

from casebook import catalog
from casebook.loader import CaseError, load_case, load_files
from casebook.report import build_report, to_markdown
from casebook.runner import Lab, RunConfig
from casebook.strategies import DEFAULT_STRATEGIES, REGISTRY
from casebook.types import Case, Question
from hipporag import HippoConfig
from hipporag.visual import graph_html
from llm import PRESETS, Backend, LLMError, ModelFileError, Settings, connect

st.set_page_config(page_title="Detective RAG lab", page_icon="🔎", layout="wide")

_MD_SPECIAL = "\\`*_{}[]()#+-.!|<>~$"


def md(text: str) -> str:
    """Escape Markdown so document and model text is shown as written, never rendered as links or HTML."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))


# -- resources shared by every session (cache owned by this one place) ----------------------------------------
@st.cache_resource(show_spinner=False)
def backend_for(settings: Settings) -> Backend:
    return connect(settings)


@st.cache_resource(show_spinner=False)
def lab_store() -> tuple[dict, threading.Lock]:
    """Built labs by key: a rerun or a second browser tab reuses them instead of rebuilding."""
    return {}, threading.Lock()


@st.cache_data(show_spinner=False)
def bundled_case(path: str) -> Case:
    return load_case(path)


def lab_key(case: Case, settings: Settings, config: RunConfig) -> str:
    return json.dumps([case.name, case.fingerprint, len(case.triples), repr(settings), repr(config)])


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
    top_k = sb.slider("top-k passages", 1, 10, 3)
    damping = sb.slider("PPR damping", 0.1, 0.95, HippoConfig.damping, 0.05,
                        help="probability of following an edge at each step (nx.pagerank's alpha)")
    passage_weight = sb.slider("Passage node weight", 0.0, 0.5, HippoConfig.passage_weight, 0.01,
                               help="how much each passage's own dense score seeds the walk")
    top_facts = sb.slider("Facts linked per query", 1, 10, HippoConfig.top_facts)
    llm_filter = sb.toggle("LLM fact filter", value=HippoConfig.llm_filter,
                           help="one LLM call keeps only the linked facts relevant to the question")
    expand = sb.toggle("Query expansion", value=False,
                       help="one LLM call rewrites the question as statements of the facts that would answer it; "
                            "every strategy then searches with them too")
    strategies = sb.multiselect("Strategies", list(REGISTRY), default=list(DEFAULT_STRATEGIES))
    settings = env.replace(backend=backend, base_url=base_url, model=model, extraction_model=extraction)
    hippo = HippoConfig(damping=damping, passage_weight=passage_weight, top_facts=top_facts, llm_filter=llm_filter)
    config = RunConfig(strategies=tuple(strategies) or DEFAULT_STRATEGIES, top_k=top_k, expand_query=expand,
                       hippo=hippo)
    return settings, config


# -- cell 1: the case ----------------------------------------------------------------------------------------
def cell_case() -> Case | None:
    st.header("1 · The case files")
    st.caption("Every strategy reads the same documents. Pick the bundled mystery, a real multi-hop benchmark, or "
               "bring your own (a JSON list of {id, title, text}, or .md / .txt files).")
    cases = catalog.available()
    bundled = [n for n, p in cases.items() if p.parent == catalog.BUNDLED]
    benchmarks = [n for n in cases if n not in bundled]
    source = st.radio("Source", ["Bundled case", "Benchmark set", "Upload"], horizontal=True, key="case_source")
    try:
        if source == "Upload":
            files = st.file_uploader("Documents", type=["json", "md", "txt"], accept_multiple_files=True)
            if not files:
                st.info("Upload documents to continue.")
                return None
            case = load_files([(f.name, f.getvalue()) for f in files], name="upload")
            case.name = f"upload-{case.fingerprint}"
        else:
            names = bundled if source == "Bundled case" else benchmarks
            name = st.selectbox("Case", names, key=f"case_{source}")
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
    st.dataframe(pd.DataFrame([{"id": d.id, "title": d.title, "text": d.text} for d in case.documents]),
                 hide_index=True, use_container_width=True, height=min(400, 40 + 35 * len(case.documents)))
    if len(case.documents) <= 20:
        for d in case.documents:
            with st.expander(f"{md(d.id)} · {md(d.title)}"):
                st.text(d.text)
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
    if backend.kind == "embedded" and settings.backend == "auto":
        st.warning(f"The configured server did not answer, so the embedded model is used. {md(backend.reason)}")
    else:
        st.success(f"Using {backend.kind}: {md(backend.reason)}")
    cols = st.columns(3)
    cols[0].metric("Answer model", backend.model)
    cols[1].metric("Extraction model", backend.extraction_model)
    cols[2].metric("Embeddings", backend.embed_model)
    return backend


# -- cell 3: build -------------------------------------------------------------------------------------------
def cell_build(case: Case, settings: Settings, config: RunConfig, backend: Backend) -> Lab | None:
    st.header("3 · Build the indexes")
    st.caption("Naive RAG embeds each passage into ChromaDB. HippoRAG asks the LLM for the entities and "
               "(subject, relation, object) triples of every passage, joins them into a knowledge graph and embeds "
               "its entities and facts. Everything is cached: a rebuild only redoes what changed.")
    triples = "auto"
    if case.triples:
        choice = st.radio("Triples for the graph", ["precomputed (the case's triples.json)", "extract with the LLM"],
                          horizontal=True)
        triples = "precomputed" if choice.startswith("precomputed") else "llm"
    elif len(case.passages) > 60:
        st.warning(f"This case has no precomputed triples: OpenIE will make about {2 * len(case.passages)} LLM "
                   "calls the first time.")
    config = dataclasses.replace(config, triples=triples)
    key = lab_key(case, settings, config)
    store, lock = lab_store()
    lab = store.get(key)
    if lab is None and not st.button("Build the indexes", type="primary"):
        st.info("Press the button to build (cached afterwards).")
        return None
    if lab is None:
        with lock:
            lab = store.get(key) or build_lab(case, settings, config, backend)
            if lab is not None:
                store[key] = lab
    if lab is None:
        return None
    reports = lab.context.reports
    cols = st.columns(2)
    if "naive" in reports:
        r = reports["naive"]
        cols[0].markdown(f"**Vector index** · {r['embedded']} embedded, {r['unchanged']} unchanged, "
                         f"{r['deleted']} removed · {r['elapsed_ms']:.0f} ms")
    if "graph" in reports:
        g = reports["graph"]
        cols[1].markdown(f"**Knowledge graph** · {'loaded from disk' if g['loaded'] else 'built'} · "
                         f"{g['entities']} entities, {g['facts']} facts, {g['edges']} edges "
                         f"({g['synonym_edges']} synonymy) · {g['openie_llm_calls']} OpenIE calls")
        if g["openie_failures"]:
            with cols[1].expander(f"{len(g['openie_failures'])} passage(s) failed OpenIE"):
                st.dataframe(pd.DataFrame(g["openie_failures"]), hide_index=True)
    return lab


def build_lab(case: Case, settings: Settings, config: RunConfig, backend: Backend) -> Lab | None:
    bars: dict = {}
    recent: list[dict] = []
    with st.status("Building...", expanded=True) as status:
        triples_box = st.empty()

        def progress(stage: str, done: int, total: int, detail=None):
            if stage not in bars:
                bars[stage] = st.progress(0.0, text=stage)
            bars[stage].progress(min(1.0, done / max(total, 1)), text=f"{stage}: {done}/{total}")
            if detail is not None and getattr(detail, "triples", None) is not None:
                recent.extend({"passage": detail.passage_id, "subject": s, "relation": r, "object": o}
                              for s, r, o in detail.triples)
                triples_box.dataframe(pd.DataFrame(recent[-12:]), hide_index=True, use_container_width=True)

        try:
            lab = Lab(case, settings, config, embedder=backend.embedder, backend=backend)
            lab.build(progress=progress)
        except (LLMError, ModelFileError) as exc:
            status.update(label="Build stopped", state="error")
            st.error(f"The model backend failed: {md(exc)}. What was extracted so far is cached; build again "
                     "to continue.")
            return None
        except (ValueError, RuntimeError) as exc:
            status.update(label="Build failed", state="error")
            st.error(md(exc))
            return None
        status.update(label="Indexes ready", state="complete", expanded=False)
    return lab


# -- cell 4: the graph ---------------------------------------------------------------------------------------
def cell_graph(lab: Lab) -> None:
    st.header("4 · The knowledge graph")
    st.caption("Blue dots are entities, orange boxes are passages. Grey lines: an entity is mentioned in a "
               "passage; dark lines: a relation between two entities; dashed purple: near-synonyms by embedding. "
               "Hover a node for its facts.")
    build = (lab.context.shared or {}).get("graph") if lab.context else None
    if build is None:
        st.info("No HippoRAG strategy selected.")
        return
    search = st.text_input("Highlight entities containing", key="graph_search")
    html, drawn = graph_html(build.graph, highlight=search)
    note = "" if drawn["nodes"] == drawn["total_nodes"] else \
        f" (showing {drawn['nodes']} of {drawn['total_nodes']} nodes: the search matches and best-connected first)"
    st.markdown(f"**{drawn['total_nodes']} nodes, {drawn['total_edges']} edges**{md(note)}"
                + (f" · {drawn['matches']} match(es)" if search else ""))
    components.html(html, height=580, scrolling=False)


# -- cell 5: ask ---------------------------------------------------------------------------------------------
def cell_ask(lab: Lab) -> None:
    st.header("5 · Ask a question")
    st.caption("Each strategy retrieves its top-k passages; then the same model answers from them with the same "
               "prompt. Gold documents (the ones the answer needs) are marked ✓.")
    case = lab.case
    options = [f"{q.id} [{q.type}] {q.question}" for q in case.questions] + ["Type my own question"]
    default = next((i for i, q in enumerate(case.questions) if q.type == "multi-hop"), 0)
    choice = st.selectbox("Question", options, index=default, key="question_choice")
    if choice == options[-1]:
        text = st.text_input("Your question", key="free_question")
        question = Question(id="ask", question=text, type="free") if text.strip() else None
    else:
        question = case.questions[options.index(choice)]
    if st.button("Ask", type="primary", disabled=question is None):
        try:
            with st.spinner("Retrieving and answering..."):
                st.session_state["last_answer"] = lab.ask(question)
        except (LLMError, ModelFileError) as exc:
            st.error(f"The model backend failed: {md(exc)}")
        except ValueError as exc:
            st.error(md(exc))
    result = st.session_state.get("last_answer")
    if result is None or result.question.question not in [q.question for q in case.questions] + [
            st.session_state.get("free_question", "")]:
        return
    if result.expansions:
        st.markdown("**Query expansion:** " + " · ".join(md(e) for e in result.expansions))
    cols = st.columns(len(result.results))
    gold = set(result.question.supporting_docs)
    for col, (name, r) in zip(cols, result.results.items()):
        with col:
            st.subheader(REGISTRY[name].label)
            recall = "" if r.recall is None else f" · Recall@{lab.config.top_k} {r.recall:.2f}"
            st.caption(md(REGISTRY[name].description) + recall)
            rows = [{"gold": "✓" if case.passage(pid).doc_id in gold else "", "passage": pid,
                     "title": case.passage(pid).title, "score": round(score, 4)}
                    for pid, score in zip(r.passages, r.scores)]
            st.dataframe(pd.DataFrame(rows), hide_index=True, use_container_width=True)
            if r.answer is not None:
                verdict = {True: "✓ matches the expected answer", False: "✗ does not match",
                           None: ""}[r.answer_scores["correct"] if r.answer_scores else None]
                st.markdown(f"**Answer** {verdict}")
                st.text(r.answer)
            timings = pd.DataFrame([{"strategy": name, "stage": k, "ms": v} for k, v in r.timings_ms.items()])
            st.altair_chart(alt.Chart(timings).mark_bar().encode(
                x=alt.X("sum(ms):Q", title="milliseconds"), y=alt.Y("strategy:N", title=None),
                color="stage:N", tooltip=["stage", "ms"]).properties(height=80), use_container_width=True)
            if "seeds" in r.trace or "query_facts" in r.trace:
                hippo_details(lab, name, r)
            elif r.trace.get("fallback"):
                st.info(md(r.trace["fallback"]))


def hippo_details(lab: Lab, name: str, r) -> None:
    trace = r.trace
    if trace.get("fallback"):
        st.info(md(trace["fallback"]))
    if trace.get("query_facts"):
        st.markdown("**Facts linked to the question**")
        st.dataframe(pd.DataFrame(trace["query_facts"]), hide_index=True, use_container_width=True)
    if trace.get("question_entities"):
        st.markdown("**Question entities**")
        st.dataframe(pd.DataFrame(trace["question_entities"]), hide_index=True, use_container_width=True)
    if trace.get("seeds"):
        st.markdown("**Seeds of the PageRank walk** (weight after node specificity)")
        st.dataframe(pd.DataFrame(trace["seeds"]), hide_index=True, use_container_width=True)
    if trace.get("paths"):
        st.markdown("**Why each passage: the most probable path from a seed**")
        for pid, path in trace["paths"].items():
            steps = " → ".join(f"*{md(p['edge'])}*" if "edge" in p else f"`{md(p['node'])}`" for p in path) \
                if path else "reached through its own dense score, not from a seed"
            st.markdown(f"- **{md(pid)}**: {steps}")
    build = lab.context.shared.get("graph")
    if build and trace.get("node_scores"):
        g = build.graph
        index = {label: i for i, label in enumerate(g.phrases)}
        index.update({pid: g.passage_node(j) for j, pid in enumerate(g.passage_ids)})
        scores = {index[k]: v for k, v in trace["node_scores"].items() if k in index}
        seeds = {index[s["entity"]] for s in trace.get("seeds", []) if s["entity"] in index}
        with st.expander("The walk on the graph (size = PPR mass, red = seeds)"):
            html, _ = graph_html(g, scores=scores, seeds=seeds, max_nodes=80, height="420px")
            components.html(html, height=440)


# -- cell 6: evaluate ----------------------------------------------------------------------------------------
def cell_evaluate(lab: Lab) -> None:
    st.header("6 · Evaluate the whole case")
    st.caption("Every question, every strategy: Recall@k against the gold documents, answer correctness against "
               "the expected answer, and timings. Download the same JSON and Markdown reports as the CLI.")
    if not lab.case.questions:
        st.info("This case has no questions, so nothing can be scored. Ask your own in cell 5.")
        return
    if st.button("Run every question"):
        bar = st.progress(0.0, text="questions")
        try:
            results = lab.evaluate(progress=lambda i, n, _: bar.progress(i / n, text=f"question {i}/{n}"))
            st.session_state["report"] = build_report(lab, results, lab.context.reports)
        except (LLMError, ModelFileError) as exc:
            st.error(f"The model backend failed: {md(exc)}. Answers so far are cached; run again to continue.")
    report = st.session_state.get("report")
    if not report or report["case"]["fingerprint"] != lab.case.fingerprint:
        return
    rows = []
    for q in report["questions"]:
        row = {"id": q["id"], "type": q["type"], "question": q["question"]}
        for n, r in q["results"].items():
            row[f"{n} recall"] = r["recall"]
            row[f"{n} correct"] = r["answer_correct"]
        rows.append(row)
    st.dataframe(pd.DataFrame(rows), hide_index=True, use_container_width=True)
    by_type = pd.DataFrame([{"strategy": n, "type": t, "recall": v} for n, m in report["summary"].items()
                            for t, v in m["recall_by_type"].items()])
    acc = pd.DataFrame([{"strategy": n, "metric": k, "value": m[k]} for n, m in report["summary"].items()
                        for k in ("recall", "answer_accuracy") if m[k] is not None])
    c1, c2 = st.columns(2)
    c1.altair_chart(alt.Chart(by_type).mark_bar().encode(x="strategy:N", y=alt.Y("recall:Q", scale=alt.Scale(domain=[0, 1])),
                                                         column="type:N", color="strategy:N"))
    c2.altair_chart(alt.Chart(acc).mark_bar().encode(x="strategy:N", y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1])),
                                                     column="metric:N", color="strategy:N"))
    st.dataframe(pd.DataFrame([{"strategy": n, **{k: v for k, v in m.items() if k != "recall_by_type"}}
                               for n, m in report["summary"].items()]), hide_index=True)
    d1, d2 = st.columns(2)
    d1.download_button("Download JSON report", json.dumps(report, indent=2, ensure_ascii=False),
                       file_name=f"{lab.case.name}-report.json", mime="application/json")
    d2.download_button("Download Markdown report", to_markdown(report), file_name=f"{lab.case.name}-report.md",
                       mime="text/markdown")


def main() -> None:
    st.title("🔎 Detective RAG lab")
    st.markdown("Why does knowledge-graph retrieval (**HippoRAG**) beat plain vector search (**naive RAG**) on "
                "questions that need several documents, and when does it not? Walk through the cells top to "
                "bottom.")
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
    lab = cell_build(case, settings, config, backend)
    if lab is None:
        return
    cell_graph(lab)
    cell_ask(lab)
    cell_evaluate(lab)


main()
