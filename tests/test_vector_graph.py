"""Vector Graph RAG: three Chroma collections linked by id, expansion by look-ups, one LLM rerank."""
import pytest

from core.storage import Storage
from lab.runner import Lab, RunConfig
from llm import Backend, OpenAIClient, Settings, embedder_only

from conftest import chat_body, reply
from helpers import BRIDGE_DOCS, BRIDGE_QUESTION, BRIDGE_TRIPLES, make_case

# Retrieval only, with the LLM steps asked for: they run whenever the run has a chat model.
LLM_STEPS = {"vector-graph": {"rerank": True, "name_entities": True}}
CONFIG = RunConfig(strategies=("vector-graph",), retrieval_only=True, triples="precomputed", top_k=3, params=LLM_STEPS)


def build(tmp_path, backend=None):
    case = make_case(BRIDGE_DOCS, [BRIDGE_QUESTION], BRIDGE_TRIPLES)
    embedder = backend.embedder if backend else embedder_only(Settings(cache_enabled=False))
    lab = Lab(case, Settings(cache_enabled=False), CONFIG, embedder=embedder, backend=backend,
              storage=Storage(data_dir=tmp_path))
    return lab, {r.name: r for r in lab.build()}


def test_collections_reference_each_other_and_are_reused(tmp_path):
    lab, reports = build(tmp_path)
    made = reports["vector graph collections"]
    assert not made.reused and made.counts == {"entities": 15, "relations": 9, "passages": 7}
    store = lab.retrievers["vector-graph"].store
    founded = next(n for n in store.get("relations", [f"r{i}" for i in range(9)]).values()
                   if n.text == "Orla Vance founded Kestrel Foundry")
    assert founded.ids("passage_ids") == ["G1"]
    foundry = store.get("entities", [founded.meta["object_id"]])[founded.meta["object_id"]]
    assert foundry.text == "Kestrel Foundry" and len(foundry.ids("relation_ids")) == 3   # founded, located, casts
    assert set(store.get("passages", ["G2"])["G2"].ids("entity_ids")) >= {founded.meta["object_id"]}
    _, again = build(tmp_path)
    assert again["vector graph collections"].reused


def test_retrieval_only_expands_and_says_the_rerank_did_not_run(tmp_path):
    lab, _ = build(tmp_path)
    graph_only = RunConfig(strategies=("vector-graph",), retrieval_only=True, triples="precomputed", top_k=3,
                           params={"vector-graph": {**LLM_STEPS["vector-graph"], "passage_weight": 0.0}})
    r = lab.ask(lab.case.questions[0], graph_only).results["vector-graph"]
    stages = {s.name: s for s in r.explanation.stages}
    assert not stages["llm rerank"].ran and "no chat model" in stages["llm rerank"].why
    assert stages["expand"].ran and stages["seed"].ran
    assert {"G1", "G2"} <= set(r.passages)          # G2 comes through the Kestrel Foundry relations
    assert any(e.text == "Kestrel Foundry casts bronze bells" for e in r.explanation.evidence)
    path = r.explanation.paths["G2"]
    assert path[-1].node == "G2" and path[0].kind == "entity"


def test_the_embedded_model_reranks(tmp_path, backend):
    lab, _ = build(tmp_path, backend)
    r = lab.ask(lab.case.questions[0], CONFIG).results["vector-graph"]
    stages = {s.name: s for s in r.explanation.stages}
    assert stages["llm rerank"].ran and stages["name entities"].ran
    assert r.passages and all(isinstance(e.kept, bool) for e in r.explanation.evidence)


def test_an_unreadable_rerank_keeps_the_similarity_order(tmp_path, fault_server):
    fault_server.script = [reply(200, chat_body("I think numbers two and five, probably."))]
    client = OpenAIClient(fault_server.base_url, backoff=0.01)
    client._known_models = ["m"]
    local = embedder_only(Settings(cache_enabled=False))
    fake = Backend(kind="openai", reason="test", base_url=fault_server.base_url, client=client, model="m",
                   extraction_model="m", embedder=local)
    lab, _ = build(tmp_path, fake)
    r = lab.ask(lab.case.questions[0]).results["vector-graph"]
    assert "unreadable" in r.explanation.fallback and not any(e.kept for e in r.explanation.evidence)
    plain, _ = build(tmp_path)
    assert r.passages == plain.ask(plain.case.questions[0]).results["vector-graph"].passages


@pytest.mark.parametrize("docs", [[{"id": "A", "text": "Rain."}, {"id": "B", "text": "Snow."}]])
def test_a_graph_without_relations_falls_back_to_passage_similarity(tmp_path, docs):
    # The only triple has no usable entity (punctuation only): the graph ends up with no relation at all.
    case = make_case(docs, [{"id": "Q", "question": "What fell?", "supporting_docs": ["A"]}],
                     [{"doc_id": "A", "subject": "...", "relation": "is", "object": "!"}])
    lab = Lab(case, Settings(cache_enabled=False), CONFIG, embedder=embedder_only(Settings(cache_enabled=False)),
              storage=Storage(data_dir=tmp_path))
    lab.build()
    r = lab.ask(case.questions[0]).results["vector-graph"]
    assert "no relation" in r.explanation.fallback and sorted(r.passages) == ["A", "B"]
