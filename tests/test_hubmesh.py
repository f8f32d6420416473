"""hubmesh over our Chroma collection: spaCy or OpenIE entities, seeds and paths, steering knobs, fallbacks."""
import json

from core.storage import Storage
from hubmesh_rag import entities
from lab.runner import Lab, RunConfig
from llm import Settings, embedder_only

from helpers import BRIDGE_DOCS, BRIDGE_QUESTION, BRIDGE_TRIPLES, make_case


def lab_for(tmp_path, docs=BRIDGE_DOCS, questions=(BRIDGE_QUESTION,), triples=BRIDGE_TRIPLES, **build_params):
    case = make_case(docs, list(questions), triples)
    config = RunConfig(strategies=("hubmesh",), retrieval_only=True, triples="precomputed", top_k=3,
                       params={"hubmesh": build_params})
    lab = Lab(case, Settings(cache_enabled=False), config, embedder=embedder_only(Settings(cache_enabled=False)),
              storage=Storage(data_dir=tmp_path))
    return lab, {r.name: r for r in lab.build()}


def test_spacy_graph_seeds_paths_and_determinism(tmp_path):
    lab, reports = lab_for(tmp_path)
    assert reports["hubmesh entity graph"].counts["entities"] >= 5   # people and firms found by spaCy
    first = lab.ask(lab.case.questions[0]).results["hubmesh"]
    again = lab.ask(lab.case.questions[0]).results["hubmesh"]
    assert first.passages == again.passages and first.scores == again.scores   # deterministic
    ex = first.explanation
    assert "G1" in first.passages and any("Orla Vance" in s.node for s in ex.seeds) and not ex.fallback
    assert ex.paths and all(path[-1].kind == "passage" for path in ex.paths.values())
    assert any(e.text == "question mention 'Orla Vance'" and e.kept for e in ex.evidence)
    assert [s.name for s in ex.stages] == ["embed", "hubmesh"]
    # Steering: an excluded passage never comes back.
    steered = RunConfig(strategies=("hubmesh",), retrieval_only=True, triples="precomputed", top_k=3,
                        params={"hubmesh": {"exclude_docs": "G1"}})
    assert "G1" not in lab.ask(lab.case.questions[0], steered).results["hubmesh"].passages


def test_mentions_are_saved_and_openie_entities_are_an_option(tmp_path):
    lab_for(tmp_path)
    assert list((tmp_path / "ner").glob("ner-*.json"))     # spaCy ran once; its mentions are kept
    lab, reports = lab_for(tmp_path, entities="openie")
    assert reports["hubmesh entity graph"].details["entities from"] == "openie"
    assert "knowledge graph" in reports                          # built from the shared graph's phrases
    assert lab.ask(lab.case.questions[0]).results["hubmesh"].passages


def test_a_spacy_graph_leaves_hubmesh_nothing_to_parse(tmp_path, monkeypatch):
    """The knowledge graph's spaCy extraction saves the entities it parsed; hubmesh builds from them, the same
    entity graph as from its own parse, and loads no spaCy pipeline to parse the passages again."""
    lab_for(tmp_path / "own")                       # hubmesh alone: its own parse
    own = json.loads(next((tmp_path / "own" / "ner").glob("ner-*.json")).read_text())
    case = make_case(BRIDGE_DOCS, [BRIDGE_QUESTION], BRIDGE_TRIPLES)
    graph_only = RunConfig(strategies=("hipporag",), retrieval_only=True, triples="nlp", top_k=3)
    Lab(case, Settings(cache_enabled=False), graph_only, embedder=embedder_only(Settings(cache_enabled=False)),
        storage=Storage(data_dir=tmp_path / "shared")).build()
    assert json.loads(next((tmp_path / "shared" / "ner").glob("ner-*.json")).read_text()) == own

    def no_parse(*args, **kwargs):
        raise AssertionError("hubmesh parsed the passages again")
    monkeypatch.setattr(entities, "load_spacy", no_parse)
    lab, reports = lab_for(tmp_path / "shared")
    assert reports["hubmesh entity graph"].counts["entities"] >= 5
    assert "G1" in lab.ask(lab.case.questions[0]).results["hubmesh"].passages


def test_documents_without_entities_fall_back_to_cosine(tmp_path):
    docs = [{"id": "A", "text": "rain fell all night."}, {"id": "B", "text": "snow covered the hills."}]
    lab, reports = lab_for(tmp_path, docs, [{"id": "Q", "question": "what fell at night?", "supporting_docs": ["A"]}],
                           [{"doc_id": "A", "subject": "rain", "relation": "fell", "object": "night"}])
    assert reports["hubmesh entity graph"].counts["entities"] == 0
    r = lab.ask(lab.case.questions[0]).results["hubmesh"]
    assert "no entity" in r.explanation.fallback and r.passages[0] == "A"


def test_hubmesh_reads_every_vector_in_one_call_and_ranks_as_the_package_adapter_does(tmp_path, monkeypatch):
    """The preloaded store answers hubmesh from one bulk read of the collection: the same vectors, so the same
    ranking as the package's own ChromaStore, which asks Chroma once a passage."""
    from hubmesh.adapters import ChromaStore

    import hubmesh_rag.store as store
    lab, _ = lab_for(tmp_path)
    preloaded = lab.ask(lab.case.questions[0]).results["hubmesh"]
    retriever = lab.retrievers["hubmesh"]
    calls = []
    real_get = retriever.index.collection.get
    monkeypatch.setattr(retriever.index.collection, "get", lambda *a, **k: calls.append(k) or real_get(*a, **k))
    vectors = retriever.index.vectors()
    assert len(calls) == 1 and set(vectors) == {p.id for p in lab.case.passages}
    one_by_one = ChromaStore(retriever.index.client, retriever.index.collection)
    for pid, v in vectors.items():
        assert (one_by_one.vector_of(pid) == v).all()
    # a passage the preloaded vectors lack still comes from Chroma
    assert (store.PreloadedStore(retriever.index.client, retriever.index.collection, {}).vector_of("G1")
            == vectors["G1"]).all()
    made = []
    monkeypatch.setattr(store, "PreloadedStore", lambda client, collection, _: made.append(1) or ChromaStore(
        client, collection))
    lab_plain, _ = lab_for(tmp_path / "plain")
    plain = lab_plain.ask(lab_plain.case.questions[0]).results["hubmesh"]
    assert made and plain.passages == preloaded.passages and plain.scores == preloaded.scores
