"""Triples without an LLM (kg/nlp.py): what spaCy's parse gives, what a build with it calls, what it costs."""
import pytest

from core.storage import Storage
from core.types import Passage
from kg import nlp
from kg.build import NLP_ABOVE_PASSAGES, duration_text, extraction_estimate, triples_source
from lab.estimates import EMBED_RATES, GRAPH_TEXTS_PER_WORD, build_estimate
from lab.runner import Lab, RunConfig
from llm import Settings, connect, embedder_only
from llm.settings import LOCAL_EMBED_MODEL, LOCAL_EMBED_MODEL_INT8

from conftest import reply
from helpers import BRIDGE_DOCS, BRIDGE_QUESTION, make_case

REPORT = [
    Passage("R1", "R1", "Register", "Victoria Crane, the sister of Mrs. Blackwood, signed the hotel register at "
                                    "9:46 pm. The owner identified Victoria Crane as the woman."),
    Passage("R2", "R2", "CCTV", "At 21:46 a grey Ford with the plate WX66 LMK was seen on Lombard Street. "
                                "The necklace was not sold by the clerk."),
]


@pytest.fixture(scope="module")
def extraction():
    return nlp.extract(REPORT)


def by_rule(extraction, rule):
    """The facts one rule made (rules run in a fixed order per sentence, so re-extracting tells them apart)."""
    out = set()
    for p in REPORT:
        doc = nlp.load_spacy()(p.text)
        out |= {(s, r, o) for k, s, r, o in nlp.passage_triples(doc) if k == rule}
    return out


def test_identity_facts_from_appositions_and_as(extraction):
    assert ("Victoria Crane", "is", "sister of Blackwood") in by_rule(extraction, "apposition")
    assert ("Victoria Crane", "is", "woman") in by_rule(extraction, "as_identity")
    assert extraction.by_rule["apposition"] >= 1 and extraction.by_rule["as_identity"] >= 1


def test_values_meet_across_documents_in_one_normal_form(extraction):
    nodes = {x for _, s, _, o in extraction.triples for x in (s, o)}
    assert "21:46" in nodes                              # "9:46 pm" in R1 and "21:46" in R2 are one node
    r1 = {x for pid, s, _, o in extraction.triples if pid == "R1" for x in (s, o)}
    r2 = {x for pid, s, _, o in extraction.triples if pid == "R2" for x in (s, o)}
    assert "21:46" in r1 and "21:46" in r2
    assert "WX66LMK" in r2                               # the plate, without its space


def test_passive_and_negation_stay_in_the_relation(extraction):
    svo = by_rule(extraction, "svo")
    assert ("necklace", "was not sold by", "clerk") in svo      # passive, negated, its agent as the object
    assert ("Ford", "was seen on", "Lombard Street") in svo     # a prepositional object in the relation


def test_overlapping_values_keep_the_longest(extraction):
    nodes = {x for _, s, _, o in extraction.triples for x in (s, o)}
    assert "WX66LMK" in nodes and "WX66" not in nodes


@pytest.mark.parametrize("text", ["", "   ", "x" * 1_000_000, "😀🔍🕵️" * 50, "夜に真珠が盗まれた。犯人は姉だった。"])
def test_text_spacy_cannot_read_yields_no_fact_and_is_counted(text):
    out = nlp.extract([Passage("B", "B", "bad", text), REPORT[0]])
    assert all(pid == "R1" for pid, *_ in out.triples)
    assert out.empty_passages == 1 and out.cut_passages == (1 if len(text) > nlp.MAX_PASSAGE_CHARS else 0)


def test_the_estimate_is_said_in_words_before_the_work():
    case = make_case(BRIDGE_DOCS, [BRIDGE_QUESTION])
    words = sum(len(p.text.split()) for p in case.passages)
    assert extraction_estimate(case, "nlp") == f"spaCy (no LLM): about 1 s for {len(case.passages)} passages " \
                                               f"({words} words)"
    llm = extraction_estimate(case, "llm", "qwen")
    assert llm.startswith(f"OpenIE with qwen: about 45 s a document on the embedded model, {len(case.documents)} "
                          f"documents: about ")
    assert extraction_estimate(case, "precomputed") == ""


def test_the_whole_build_is_estimated_from_words_and_the_embedder_rate():
    case = make_case(BRIDGE_DOCS, [BRIDGE_QUESTION])
    words = sum(len(p.embedding_text.split()) for p in case.passages)
    n = len(case.passages)
    assert build_estimate(case, ("naive",), "auto", LOCAL_EMBED_MODEL) == f"embedding {n} passages, about 1 s"
    graph = build_estimate(case, ("naive", "hipporag"), "nlp", LOCAL_EMBED_MODEL).split("; ")
    assert graph[1] == extraction_estimate(case, "nlp")
    assert graph[2] == f"embedding the graph's ~{round(words * GRAPH_TEXTS_PER_WORD, -1):,.0f} entities and facts, " \
                       "about 1 s"
    # a server's embedder has no measured rate here: the size is said, not a time
    assert build_estimate(case, ("naive",), "auto", "nomic-embed") == f"embedding {n} passages with nomic-embed"
    # a long corpus in minutes: 455,000 words at the measured rate
    big = make_case([{"id": f"D{i}", "title": "Report", "text": " ".join(["word"] * 500)} for i in range(910)])
    big_words = sum(len(p.embedding_text.split()) for p in big.passages)
    assert big_words >= 455_000
    assert build_estimate(big, ("naive",), "auto", LOCAL_EMBED_MODEL) == \
        f"embedding {len(big.passages):,} passages, about {duration_text(big_words / EMBED_RATES[LOCAL_EMBED_MODEL][0])}"
    # minutes of embedding: the faster embedder is named, and not where it is already the one
    graph_build = build_estimate(big, ("naive", "hipporag"), "nlp", LOCAL_EMBED_MODEL)
    assert "minutes" in graph_build and f"EMBED_MODEL={LOCAL_EMBED_MODEL_INT8} embeds" in graph_build
    assert "EMBED_MODEL=" not in build_estimate(big, ("naive", "hipporag"), "nlp", LOCAL_EMBED_MODEL_INT8)
    assert "EMBED_MODEL=" not in build_estimate(case, ("naive", "hipporag"), "nlp", LOCAL_EMBED_MODEL)


def test_auto_takes_spacy_for_a_large_case_or_without_a_chat_model():
    small = make_case(BRIDGE_DOCS, [BRIDGE_QUESTION])
    large = make_case([{"id": f"D{i}", "title": "t", "text": f"Record {i} names Orla Vance."}
                       for i in range(NLP_ABOVE_PASSAGES + 1)])
    assert triples_source("auto", small, has_chat=True) == "llm"
    assert triples_source("auto", small, has_chat=False) == "nlp"
    assert triples_source("auto", large, has_chat=True) == "nlp"
    assert triples_source("nlp", small, has_chat=True) == "nlp"


def test_a_graph_from_nlp_triples_makes_no_llm_call(fault_server, tmp_path):
    """Every strategy on the graph builds and answers retrieval questions while any chat request would fail."""
    fault_server.script = [lambda h, body: reply(200, {"data": [{"id": "m"}]})(h, body) if h.command == "GET"
                           else reply(500, {"error": "no chat expected"})(h, body)]
    settings = Settings(backend="openai", base_url=fault_server.base_url, model="m", cache_enabled=False)
    backend = connect(settings)
    case = make_case(BRIDGE_DOCS, [BRIDGE_QUESTION])
    config = RunConfig(strategies=("hipporag", "three-stage", "vector-graph"), retrieval_only=True, triples="nlp")
    lab = Lab(case, settings, config, embedder=embedder_only(settings), backend=backend,
              storage=Storage(data_dir=tmp_path))
    graph = next(r for r in lab.build() if r.name == "knowledge graph")
    assert graph.details["triples"] == nlp.SOURCE and graph.counts["openie_llm_calls"] == 0
    assert graph.counts["facts"] > 0 and graph.counts.get("nlp_svo_facts", 0) > 0
    result = lab.ask(case.questions[0])
    assert all(r.passages for r in result.results.values())
    assert not [path for method, path, _ in fault_server.requests if path.endswith("/chat/completions")]
