"""The Streamlit notebook: AppTest in-process, and a real browser (Debian chromium + Playwright)."""
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect  # polls a locator until it holds: a page draws in steps

from kg import build_graph
from kg.visual import graph_html

from conftest import ROOT
from helpers import free_port, make_case, serving

XSS = "<img src=x onerror=alert(1)>"
THREE = {"naive": "Naive RAG", "hipporag": "HippoRAG", "vector-graph": "Vector Graph RAG"}


def test_app_solves_the_bundled_case(app_env, backend):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=900)
    at.run()
    assert not at.exception
    assert any("Purloined Pearl" in s.value for s in at.subheader)
    at.sidebar.multiselect[0].set_value(list(THREE)).run()          # three strategies side by side
    # Cell 3: every triples source with its cost, and the build's own cost, before the wait.
    radio = next(r for r in at.radio if r.label == "Triples for the graph")
    assert any("spaCy (no LLM): about" in o for o in radio.options), radio.options
    assert any("OpenIE with" in o for o in radio.options), radio.options
    assert any(c.value.startswith("Cost of a first build: embedding") for c in at.caption)
    # spaCy's graph: the suite's other OpenIE tests run the model's extraction on small inputs; here the build is
    # seconds, and the browser walk below builds the same graph, so its first answers come from this test's cache.
    radio.set_value("nlp").run()
    assert any(c.value.startswith("Cost of a first build: embedding") and "spaCy" in c.value for c in at.caption)
    next(b for b in at.button if b.label == "Build the indexes").click()
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any(m.value.startswith("knowledge graph:") for m in at.markdown)
    chosen = at.selectbox(key="question_choice").value
    assert "[multi-hop]" in chosen
    # Three answers; a strategy's own LLM step (off by default), turned on, is counted in the cost too.
    def cost(questions: int = 1) -> str:   # cell 5's (one question) or cell 6's (the whole case)
        return next(c for c in (c.value.replace("\\", "") for c in at.caption)
                    if c.startswith("Cost:") and f" {questions} question(s)" in c)
    assert "1 question(s) x 3 strategies x about" in cost() and "LLM steps" not in cost(), cost()
    at.sidebar.toggle(key="param:vector-graph.rerank").set_value(True).run()
    assert re.search(r"\(3 answers \+ up to 1 strategy LLM steps\)", cost()), cost()
    at.sidebar.toggle(key="param:vector-graph.rerank").set_value(False).run()
    next(b for b in at.button if b.label == "Ask").click()
    at.run()
    assert not at.exception and not at.error
    headers = [s.value for s in at.subheader]
    assert {"Naive RAG", "HippoRAG", "Vector Graph RAG"} <= set(headers)
    assert any(h.startswith(chosen.split()[0]) and "top-3" in h for h in headers)   # answers name their question
    assert len(answers(at)) == 3   # one per column
    assert {e.label for e in at.expander} >= {f"How {label} got there" for label in THREE.values()}
    stages = [df.value for df in at.dataframe if "stage" in df.value.columns and "ran" in df.value.columns]
    assert len(stages) == 3 and all(len(df) >= 2 for df in stages)     # every strategy's stage rows
    assert any("rerank" in " ".join(df["stage"]) for df in stages)
    # A rerun (what a second tab or any widget change does) reuses the built indexes.
    at.run()
    assert not at.exception
    assert not any(b.label == "Build the indexes" for b in at.button)
    # A query-time change answers again on the same indexes: no rebuild prompt, the heading follows.
    next(s for s in at.sidebar.slider if s.label == "top-k passages").set_value(4).run()
    assert not at.exception and not any(b.label == "Build the indexes" for b in at.button)
    assert any("top-4" in s.value for s in at.subheader) and len(answers(at)) == 3
    assert all(len(df.value) == 4 for df in at.dataframe if "passage" in df.value.columns and "gold" in df.value.columns)
    # Another question clears the answers to the previous one.
    other = next(o for o in at.selectbox(key="question_choice").options if o != chosen and "[" in o)
    at.selectbox(key="question_choice").set_value(other).run()
    assert not at.exception and not answers(at)
    assert not any("top-4" in s.value for s in at.subheader)
    # Back to top-3 (no answer follows: none is shown).
    next(s for s in at.sidebar.slider if s.label == "top-k passages").set_value(3).run()
    assert not at.exception and not answers(at)
    # Cell 6 with answers off (the whole case answered by the model is the CLI report docs/purloined_pearl_report.json): every
    # question, with the line that says why the strategies differ, and human column names.
    at.sidebar.toggle(key="answers").set_value(False).run()
    assert not at.exception and not any(b.label == "Build the indexes" for b in at.button)
    # With answers off and the strategies' LLM steps off (their default) the whole case is a retrieval-only run of
    # seconds; a step turned on still runs with answers off (14 questions x 1 call: minutes), and the cost says so.
    assert cost(14) == "Cost: retrieval only: 14 question(s) x 3 strategies, a few seconds", cost(14)
    at.sidebar.toggle(key="param:hipporag.llm_filter").set_value(True).run()
    assert cost(14).startswith("Cost: about") and "(up to 1 strategy LLM steps)" in cost(14), cost(14)
    at.sidebar.toggle(key="param:hipporag.llm_filter").set_value(False).run()
    assert cost(14) == "Cost: retrieval only: 14 question(s) x 3 strategies, a few seconds", cost(14)
    next(b for b in at.button if b.label == "Run every question").click().run()
    assert not at.exception and not at.error
    table = next(df.value for df in at.dataframe if "why they differ" in df.value.columns)
    assert len(table) == 14 and table["why they differ"].str.len().min() > 0
    summary = next(df.value for df in at.dataframe if "Recall@k" in df.value.columns)
    assert list(summary["strategy"]) == list(THREE) and summary["Recall@k"].between(0, 1).all()


def test_a_generated_mystery_can_build_its_graph_from_the_generators_facts(app_env, backend):
    """Perfect extraction, beside the model's: the toggle hands the gold facts to the graph, and no OpenIE runs."""
    from streamlit.testing.v1 import AppTest

    from casebook.generate import load_mystery

    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=600)
    at.run()
    at.radio(key="case_source").set_value("Generated mystery").run()
    assert not at.exception
    triples = lambda: next(m.value for m in at.metric if m.label == "Precomputed triples")
    assert triples() == "0"                                       # the model extracts them, by default
    at.toggle(key="mystery_gold").set_value(True).run()
    gold = load_mystery(int(at.number_input(key="mystery_seed").value), 4)[1]
    assert triples() == str(len(gold))
    at.sidebar.multiselect[0].set_value(["hipporag", "investigate-walk"]).run()
    next(b for b in at.button if b.label == "Build the indexes").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    graph = next(m.value for m in at.markdown if m.value.startswith("knowledge graph:"))
    assert "0 openie llm calls" in graph and "triples precomputed" in graph
    # The loop runs in a column like any strategy, its trail a numbered list (answers off: no model call).
    at.sidebar.toggle(key="answers").set_value(False).run()
    next(b for b in at.button if b.label == "Ask").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert {"HippoRAG", "Investigate (walk reads)"} <= {s.value for s in at.subheader}
    trail = next(m.value for m in at.markdown if m.value.startswith("1. searched"))
    assert re.search(r"^2\. searched .+; added ", trail, re.MULTILINE), trail
    assert sum(m.value.startswith("**The trail**") for m in at.markdown) == 1   # hipporag has no trail
    # No model call, no LLM panel: the timing chart is the retrieval panel alone, not beside an empty one.
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    assert "hconcat" not in spec and spec["title"] == "retrieval per strategy", spec.get("title")


def answers(at) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("**Answer**")]


def test_graph_html_keeps_hostile_labels_as_text(backend):
    case = make_case([{"id": "D1", "text": "A visitor came."}])
    graph = build_graph([("D1", XSS, "visited", "the </script> house")], case.passages, backend.embedder)
    html, drawn = graph_html(graph)
    assert drawn["nodes"] == 3
    assert XSS not in html and "</script> house" not in html       # serialised with <, > escaped
    assert "\\u003cimg src=x onerror=alert(1)\\u003e" in html
    assert 'src="http' not in html and "vis.DataSet" in html   # vis-network is in line: renders offline


@pytest.fixture
def streamlit_server(app_env, tmp_path):
    port = free_port()
    env = {**os.environ, **app_env, "HOME": str(tmp_path)}
    with serving([sys.executable, "-m", "streamlit", "run", str(ROOT / "streamlit_app.py"), "--server.port", str(port),
                  "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                 port, cwd=ROOT, env=env):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def browser(tmp_path):
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        missing = "Debian's chromium is not installed (.ci/run installs it with apt-get)"
        if os.environ.get("CI"):   # a CI without the browser must not pass without its tests
            pytest.fail(missing)
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"],  # Playwright gives each launch a fresh profile
            env={**os.environ, "HOME": str(tmp_path)})
        yield b
        b.close()


def shoot(page, heading: str, name: str, tmp_path) -> None:
    """A 1500x1000 screenshot with the cell's heading at the top; copied to SAVE_SCREENSHOTS when set."""
    page.get_by_role("heading", name=heading).evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)
    shot = tmp_path / name
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 10_000
    if os.environ.get("SAVE_SCREENSHOTS"):
        shutil.copy(shot, Path(os.environ["SAVE_SCREENSHOTS"]) / name)


def test_browser_walks_cells_1_to_6(streamlit_server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1500, "height": 1000})
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(streamlit_server, wait_until="domcontentloaded")
    page.get_by_role("heading", name="1 · The case files").wait_for(timeout=120_000)
    picker = page.locator('[data-testid="stSidebar"] [data-testid="stMultiSelect"]').first
    picker.locator("input").click()
    picker.locator("input").fill("Vector Graph")   # the AppTest's three strategies: their LLM calls are cached
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    # Cell 3: every triples source with its cost; spaCy's, as in the AppTest (whose answers are cached).
    page.locator('[data-testid="stRadio"] label').filter(has_text=re.compile(r"no LLM\): about")).first.click(
        timeout=120_000)
    # The cost is said beside Build before the wait: the embedding and the triples, each with its time.
    page.get_by_text(re.compile(r"^Cost of a first build: embedding \d+ passages, about \d+ s")).wait_for(
        timeout=60_000)
    # A progress line with a count shows within 10 s of pressing Build.
    page.get_by_role("button", name="Build the indexes").click(timeout=120_000)
    page.locator('[data-testid="stProgress"]').filter(has_text=re.compile(r"\d+/\d+")).first.wait_for(
        timeout=10_000, state="attached")
    # Every planned stage is listed from the start, the graph's last one included.
    page.locator('[data-testid="stProgress"]').filter(has_text="embed passages").first.wait_for(
        timeout=10_000, state="attached")
    page.get_by_text("knowledge graph:").wait_for(timeout=900_000)
    assert page.get_by_text("nlp:spacy", exact=False).count() > 0   # the graph was built from spaCy's triples
    shoot(page, "3 · Build the indexes", "cell3-build.png", tmp_path)
    # Cell 4: the graph draws offline.
    frame = page.locator("iframe").first.content_frame
    frame.locator("#mynetwork canvas").wait_for(timeout=60_000)
    assert frame.locator("#mynetwork").evaluate("() => network.body.data.nodes.length") > 10
    page.wait_for_timeout(2000)   # the layout settles and fits the frame
    shoot(page, "4 · The knowledge graph", "cell4-graph.png", tmp_path)
    # Cell 5: three columns under a heading that names the question; an explanation opened.
    page.get_by_role("button", name="Ask", exact=True).click()
    page.get_by_text("How Vector Graph RAG got there").wait_for(timeout=600_000)
    heading = page.get_by_role("heading", name=re.compile(r"^Q\d+ · top-3 · naive, hipporag, vector-graph$"))
    qid = heading.inner_text().split(" · ")[0]
    question_box = page.get_by_role("combobox", name="Question")
    assert question_box.input_value().startswith(f"{qid} [multi-hop]")   # the heading names the selected question
    for name in THREE.values():
        assert page.get_by_role("heading", name=name, exact=True).is_visible()
    answer_marks = page.locator("strong").filter(has_text=re.compile(r"^Answer$"))   # "**Answer**" above each answer
    assert answer_marks.count() == 3
    # Every stage that ran, as each explanation's stage table lists it, is in the timing chart's legend.
    chart = page.locator('[data-testid="stVegaLiteChart"]').first
    chart.locator("svg text").filter(has_text="answer").first.wait_for(timeout=60_000)
    texts = chart.locator("svg text").all_text_contents()
    legend = set(texts)
    # One labelled row per strategy in each panel (retrieval, LLM), and each row's total printed at its end:
    # milliseconds to one decimal for retrieval, seconds to two for the model.
    assert all(texts.count(label) == 2 for label in THREE.values()), texts
    totals = chart.locator("svg g.mark-text.role-mark text").all_text_contents()   # not the axes' labels
    assert sorted(len(t.rpartition(".")[2]) for t in totals) == [1, 1, 1, 2, 2, 2], totals
    assert all(re.fullmatch(r"[\d,]+\.\d{1,2}", t) for t in totals), totals
    for name in THREE.values():
        box = page.locator('[data-testid="stExpander"]').filter(has_text=f"How {name} got there")
        box.get_by_text(f"How {name} got there").click()
        box.locator('[data-testid="stDataFrame"] tbody tr').first.wait_for(timeout=30_000, state="attached")
        rows = [row.locator("td").all_text_contents()
                for row in box.locator('[data-testid="stDataFrame"]').first.locator("tbody tr").all()]
        ran = {row[0] for row in rows if row[1] == "yes"}
        assert ran and ran <= legend, (name, ran - legend)
    shoot(page, "5 · Ask a question", "cell5-ask.png", tmp_path)
    # A query-time change answers again without a rebuild.
    page.get_by_role("slider", name="top-k passages").focus()
    page.keyboard.press("ArrowRight")
    page.get_by_role("heading", name=re.compile(rf"^{qid} · top-4 · ")).wait_for(timeout=600_000)
    assert page.get_by_role("button", name="Build the indexes").count() == 0
    # Another question clears the answers to the last one.
    question_box.click()
    question_box.fill("Q11")
    page.get_by_role("option", name=re.compile(r"^Q11 ")).click()
    page.wait_for_timeout(3000)
    assert page.get_by_role("heading", name=re.compile(rf"^{qid} · top-")).count() == 0
    assert answer_marks.count() == 0
    # A question of one's own (no answer of it is cached) at top-3: the first words stream in before the rest.
    page.get_by_role("slider", name="top-k passages").focus()
    page.keyboard.press("ArrowLeft")
    question_box.click()
    question_box.fill("Type my own")
    page.get_by_role("option", name="Type my own question").click()
    page.get_by_role("textbox", name="Your question").fill("Who could have taken the pearl, and when?")
    page.keyboard.press("Enter")
    page.get_by_role("button", name="Ask", exact=True).click()
    started = time.perf_counter()
    streaming = page.locator("p").filter(has_text=re.compile(r"\(streaming\):\s*\S"))
    streaming.first.wait_for(timeout=600_000)
    first_words_s = time.perf_counter() - started
    page.get_by_role("heading", name=re.compile(r"^ask · top-3 · ")).wait_for(timeout=600_000)
    # the full results replace the live answers; the page draws them after the heading, so wait for all three
    expect(answer_marks).to_have_count(3, timeout=60_000)
    expect(streaming).to_have_count(0)
    if os.environ.get("SAVE_SCREENSHOTS"):
        (ROOT / "benchmarks" / "results" / "first_words.json").write_text(json.dumps(
            {"seconds_to_first_answer_words": round(first_words_s, 1), "top_k": 3,
             "strategies": list(THREE), "case": "purloined_pearl", "backend": "embedded"}, indent=2) + "\n")
    # Cell 6, answers off (the strategies' own LLM steps are off by default): every question, each with its "why
    # they differ" line, in seconds.
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("Answer with the model").click()
    page.get_by_text(re.compile(r"^Cost: retrieval only: 14 question")).wait_for(timeout=60_000)
    page.get_by_role("button", name="Run every question").click()
    page.get_by_text("Why they differ, question by question").wait_for(timeout=900_000)
    lines = page.locator("li").filter(has_text=re.compile(r"^Q\d+: ")).all_inner_texts()
    assert len(lines) == 14 and all(len(line) > 10 for line in lines)
    shoot(page, "6 · Evaluate the whole case", "cell6-evaluate.png", tmp_path)
    # No stray Markdown escapes anywhere on the page.
    assert not re.search(r"\\[.$()\[]", page.inner_text("body"))
    assert not dialogs


def test_browser_hostile_entity_shows_as_text(streamlit_server, browser, tmp_path):
    case = {"documents": [{"id": "H1", "title": XSS, "text": f"{XSS} visited the harbour at noon."},
                          {"id": "H2", "title": "Harbour", "text": "The harbour was closed at noon."}],
            "triples": [{"doc_id": "H1", "subject": XSS, "relation": "visited", "object": "harbour"},
                        {"doc_id": "H2", "subject": "harbour", "relation": "closed at", "object": "noon"}]}
    upload = tmp_path / "hostile.json"
    upload.write_text(json.dumps(case))
    # The uploader states the loader's own limit (50 MB a file), not Streamlit's 200 MB.
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(streamlit_server, wait_until="domcontentloaded")
    page.get_by_text("Upload", exact=True).click(timeout=120_000)
    limit = page.get_by_text(re.compile(r"MB per file"))
    limit.first.wait_for(timeout=60_000)
    assert limit.count() == 1 and "50MB per file" in limit.inner_text(), limit.all_inner_texts()
    page.locator("input[type=file]").set_input_files(str(upload))
    page.get_by_role("heading", name="Uploaded: hostile.json").wait_for(timeout=60_000)
    page.get_by_role("button", name="Build the indexes").click(timeout=120_000)
    page.get_by_text("knowledge graph:").wait_for(timeout=300_000)
    frame = page.locator("iframe").first.content_frame
    frame.locator("#mynetwork canvas").wait_for(timeout=60_000)
    labels = frame.locator("#mynetwork").evaluate("() => network.body.data.nodes.get().map(n => n.label)")
    assert XSS in labels                                  # the label is the literal text...
    assert frame.locator("img").count() == 0              # ...and no element was made of it
    assert page.locator("img[src='x']").count() == 0
    # The lead-following strategy's trail, a numbered list, offers the hostile node as a lead: as text.
    picker = page.locator('[data-testid="stSidebar"] [data-testid="stMultiSelect"]').first
    picker.locator("input").click()
    picker.locator("input").fill("walk reads")
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    page.locator('[data-testid="stSidebar"]').get_by_text("Answer with the model").click()
    page.get_by_role("button", name="Build the indexes").click(timeout=120_000)
    page.get_by_role("textbox", name="Your question").fill("Who visited the harbour at noon?", timeout=300_000)
    page.keyboard.press("Enter")
    # Two passages at top-3: the page says the comparison cannot tell the strategies apart.
    page.get_by_text("covers all 2 passages of this case").wait_for(timeout=60_000)
    page.get_by_role("button", name="Ask", exact=True).click(timeout=60_000)
    page.get_by_text("How Investigate (walk reads) got there").click(timeout=300_000)
    steps = page.locator("ol li").filter(has_text=re.compile(r"^searched "))
    steps.first.wait_for(timeout=60_000)
    assert steps.count() >= 2
    assert page.locator("img[src='x']").count() == 0
    time.sleep(1)
    assert not dialogs


TWO_CASES = {
    "lighthouse": [{"id": "LH-1", "title": "Keeper's log", "text": "Agnes Moor kept the lamp of the Skerry lighthouse."},
                   {"id": "LH-2", "title": "Supply boat", "text": "The supply boat reached the Skerry every Tuesday."},
                   {"id": "LH-3", "title": "Storm", "text": "A storm broke the lighthouse lens in March."},
                   {"id": "LH-4", "title": "Inspector", "text": "Inspector Venn praised Agnes Moor's log book."}],
    "bakery": [{"id": "BK-1", "title": "Ovens", "text": "Tomas Reyes lit the bakery ovens at four each morning."},
               {"id": "BK-2", "title": "Flour", "text": "The flour came from the Halden mill by cart."},
               {"id": "BK-3", "title": "Fire", "text": "A chimney fire closed the bakery for a week."},
               {"id": "BK-4", "title": "Guild", "text": "The bakers' guild fined Tomas Reyes for short loaves."}],
}


def test_browser_two_sessions_build_and_answer_their_own_cases(streamlit_server, browser, tmp_path):
    """Two people on one app: one builds an upload while the other uploads and builds another; each answers from
    its own documents, and neither sees an error."""
    pages = {}
    for name, docs in TWO_CASES.items():
        upload = tmp_path / f"{name}.json"
        triples = [{"doc_id": d["id"], "subject": d["text"].split()[0], "relation": "appears in", "object": d["title"]}
                   for d in docs]   # given, so neither build waits on the model's OpenIE
        upload.write_text(json.dumps({"documents": docs, "triples": triples}))
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()   # its own session
        page.goto(streamlit_server, wait_until="domcontentloaded")
        page.get_by_text("Upload", exact=True).click(timeout=120_000)
        page.locator("input[type=file]").set_input_files(str(upload))
        page.get_by_role("heading", name=f"Uploaded: {name}.json").wait_for(timeout=60_000)
        page.get_by_role("button", name="Build the indexes").click(timeout=120_000)   # the first builds on
        pages[name] = page
    questions = {"lighthouse": "Who kept the lamp of the lighthouse?", "bakery": "Who lit the bakery ovens?"}
    for name, page in pages.items():
        page.get_by_text("knowledge graph:").wait_for(timeout=300_000)
        page.get_by_role("textbox", name="Your question").fill(questions[name], timeout=300_000)
        page.keyboard.press("Enter")
        page.get_by_role("button", name="Ask", exact=True).click()
    for name, page in pages.items():
        page.get_by_role("heading", name=re.compile(r"^ask · top-3 · ")).wait_for(timeout=600_000)
        # naive's and hipporag's answers, drawn after the heading
        expect(page.locator("strong").filter(has_text=re.compile(r"^Answer$"))).to_have_count(2, timeout=60_000)
        cells = " ".join(page.locator('[data-testid="stDataFrame"] td').all_text_contents())
        own, other = (("LH-", "BK-") if name == "lighthouse" else ("BK-", "LH-"))
        assert own in cells and other not in cells, (name, cells[:500])
        assert other not in page.inner_text("body")
        assert page.locator('[data-testid="stException"], [data-testid="stAlertContentError"]').count() == 0
