"""HippoRAG: PPR against nx.pagerank, graph building, retrieval on a generated bridge case, OpenIE faults."""
import math
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from core.storage import Storage
from core.types import PathStep, Triple
from hipporag import ChatModel, HippoConfig, HippoRAGRetriever
from indexes import VectorIndex, open_chroma
from kg import build_graph, build_or_load, passage_triples
from kg.nlp import CO_OCCURRENCE
from kg.normalize import normalize_entity
from kg.openie import extract
from kg.ppr import PPRMatrix
from kg.walk import dense_prior
from llm import OpenAIClient, Settings, embedder_only
from naive_rag import NaiveRetriever

from conftest import chat_body, reply
from helpers import BRIDGE_DOCS, BRIDGE_QUESTION, BRIDGE_TRIPLES, CountingEmbedder, make_case


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return embedder_only(Settings(cache_enabled=False))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("damping", [0.5, 0.85])
def test_ppr_equals_networkx(seed, damping):
    rng = np.random.default_rng(seed)
    g = nx.gnm_random_graph(300, 900, seed=seed)
    g.add_nodes_from(range(300, 305))  # isolated (dangling) nodes too
    for u, v in g.edges:
        g[u][v]["weight"] = float(rng.uniform(0.1, 3.0))
    p = np.zeros(g.number_of_nodes())
    p[rng.choice(300, size=5, replace=False)] = rng.uniform(0.5, 2.0, size=5)
    rows, cols = zip(*g.edges, strict=True)
    ours = PPRMatrix(g.number_of_nodes(), np.array(rows), np.array(cols),
                     np.array([g[u][v]["weight"] for u, v in g.edges])).run(p, damping=damping, tol=1e-12)
    ref = nx.pagerank(g, alpha=damping, personalization={i: float(p[i]) for i in range(len(p))},
                      weight="weight", tol=1e-13, max_iter=1000)
    assert ours.converged
    assert np.abs(ours.scores - np.array([ref[i] for i in range(len(p))])).max() < 1e-6
    # Chebyshev's rate: well under the damping**n the power iteration needs to shrink the error below tol
    assert ours.iterations <= 0.7 * math.log(1e-12) / math.log(damping)


def test_normalization_is_unicode_safe():
    assert normalize_entity("Zoë Müller") == "zoë müller"
    assert normalize_entity("Mrs. Blackwood") == normalize_entity("Mrs Blackwood") == "mrs blackwood"
    assert normalize_entity("Victoria’s car") == normalize_entity("Victoria's car") == "victorias car"
    assert normalize_entity("  ŁUKASZ   Nowak ") == "łukasz nowak"


def test_graph_on_precomputed_triples(embedder):
    triples = [("D1", "Mrs. Blackwood", "owns", "pearl necklace"), ("D2", "Mrs Blackwood", "hosted", "dinner"),
               ("D2", "the Blackwood mansion", "has", "garden"), ("D3", "Blackwood mansion", "stands in", "Dunmore"),
               ("D3", "Zoë Müller", "visited", "Blackwood mansion")]
    case = make_case([{"id": f"D{i}", "text": f"passage {i}"} for i in (1, 2, 3)])
    g = build_graph(triples, case.passages, embedder)
    assert g.phrase_keys.count("mrs blackwood") == 1           # "Mrs." and "Mrs" are one node
    assert "zoë müller" in g.phrase_keys
    i, j = g.phrase_keys.index("the blackwood mansion"), g.phrase_keys.index("blackwood mansion")
    assert any({a, b} == {i, j} and s >= 0.8 for a, b, s in g.synonyms)  # near-duplicates get a synonymy edge
    stats = g.stats()
    assert stats["synonym_edges"] >= 1 and stats["passages"] == 3 and stats["facts"] == 5
    nxg = g.to_networkx()
    mrs, pearl, d1 = g.phrase_keys.index("mrs blackwood"), g.phrase_keys.index("pearl necklace"), g.passage_node(0)
    assert nxg.nodes[d1] == {"label": "D1", "kind": "passage"} and nxg.nodes[mrs]["kind"] == "entity"
    assert "Mrs. Blackwood owns pearl necklace" in nxg.edges[mrs, pearl]["relations"]
    assert nxg.number_of_edges() == stats["edges"]


def test_times_get_no_synonymy_edges(embedder):
    case = make_case([{"id": "D1", "text": "x"}])
    g = build_graph([("D1", "guest", "arrived at", "8 PM"), ("D1", "guest", "left at", "9:15 PM")], case.passages,
                    embedder)
    times = {g.phrase_keys.index("8 pm"), g.phrase_keys.index("9 15 pm")}
    assert not any({a, b} == times for a, b, _ in g.synonyms)


def test_specificity_lowers_a_hub(embedder):
    docs = [{"id": f"D{i}", "text": f"t{i}"} for i in range(6)]
    triples = [(f"D{i}", "theft", "reported in", f"report {i}") for i in range(6)] + [("D0", "Orla Vance", "filed", "report 0")]
    g = build_graph(triples, make_case(docs).passages, embedder)
    r = HippoRAGRetriever(g, embedder, HippoConfig(llm_filter=False))
    w = np.zeros(len(g.phrases))
    hub, rare = g.phrase_keys.index("theft"), g.phrase_keys.index("orla vance")
    w[[hub, rare]] = 1.0
    out = r._specificity(w)
    assert out[hub] == pytest.approx(1 / 6) and out[rare] == pytest.approx(1.0)


def test_dense_power_keeps_the_closest_passage_prior_and_shrinks_the_middling_ones():
    dense = np.array([0.2, 0.5, 0.8, 0.35])          # min-max: 0, 0.5, 1, 0.25
    linear, squared = dense_prior(dense, 0.1, 1.0), dense_prior(dense, 0.1, 2.0)
    assert linear == pytest.approx([0.0, 0.05, 0.1, 0.025])
    assert squared == pytest.approx([0.0, 0.025, 0.1, 0.00625])
    assert squared.sum() / squared.max() < linear.sum() / linear.max()   # the tail's share of the prior shrinks
    with pytest.raises(ValueError, match="dense_power"):
        HippoConfig(dense_power=0)


def test_the_feedback_walk_reaches_one_hop_past_the_best_passage(embedder):
    docs = [{"id": "A", "text": "Orla Vance founded the Kestrel Foundry in 1881."},
            {"id": "B", "text": "The Kestrel Foundry cast the harbour bells."},
            {"id": "C", "text": "Orla Vance kept a small garden."},
            {"id": "D", "text": "Orla Vance sailed to Lisbon."}]
    triples = [{"doc_id": "A", "subject": "Orla Vance", "relation": "founded in", "object": "1881"},
               {"doc_id": "B", "subject": "Kestrel Foundry", "relation": "cast", "object": "harbour bells"},
               {"doc_id": "C", "subject": "Orla Vance", "relation": "kept", "object": "small garden"},
               {"doc_id": "D", "subject": "Orla Vance", "relation": "sailed to", "object": "Lisbon"}]
    case = make_case(docs, [], triples)
    g = build_graph(passage_triples(case.triples, case.passages), case.passages, embedder)
    assert g.phrases_of("A") == sorted(g.phrase_keys.index(k) for k in ("orla vance", "1881", "kestrel foundry"))
    question = "What did Orla Vance found in 1881?"   # links A's fact; the foundry is one hop past A
    runs = {}
    for weight in (0.0, 2.0):
        config = HippoConfig(llm_filter=False, top_facts=1, passage_weight=0.0, feedback_weight=weight)
        runs[weight] = HippoRAGRetriever(g, embedder, config).retrieve(question, top_k=4)
    off, on = runs[0.0], runs[2.0]
    assert off.ids[0] == on.ids[0] == "A"        # the first walk's best passage stays first
    score = {w: dict(r.passages) for w, r in runs.items()}
    # The foundry, a phrase of A that the question does not name, seeds the second walk: B gains on the founder's
    # other passages, which both walks reach through her name.
    assert score[2.0]["B"] / score[2.0]["C"] > 2 * score[0.0]["B"] / score[0.0]["C"]
    stage = {s.name: s for s in on.explanation.stages}["feedback"]
    assert stage.ran and "A" in stage.why and "Kestrel Foundry" in stage.why
    assert not {s.name: s for s in off.explanation.stages}["feedback"].ran
    assert "Kestrel Foundry" in {s.node for s in on.explanation.seeds}
    with pytest.raises(ValueError, match="feedback"):
        HippoConfig(feedback_passages=0)


def test_phrases_the_question_names_seed_the_walk(embedder):
    case = make_case(BRIDGE_DOCS, [BRIDGE_QUESTION], BRIDGE_TRIPLES)
    g = build_graph(passage_triples(case.triples, case.passages), case.passages, embedder)
    named = {g.phrases[i] for i in g.phrases_named_in("Did the Kestrel Foundry ship bells to harbour towns in dunmore?")}
    assert named == {"Kestrel Foundry", "harbour towns", "Dunmore"}   # not "bells": one lower-case word
    # No single fact holds both names, and one fact is linked: only the question's own names bring both.
    question = "Did Marek Holt ever visit Dunmore?"
    seeds = {}
    for on in (True, False):
        config = HippoConfig(llm_filter=False, top_facts=1, question_mentions=on)
        r = HippoRAGRetriever(g, embedder, config).retrieve(question, top_k=3)
        seeds[on] = {s.node for s in r.explanation.seeds}
    assert {"Marek Holt", "Dunmore"} <= seeds[True]
    assert not {"Marek Holt", "Dunmore"} <= seeds[False]


def test_bridge_question_hipporag_finds_what_naive_misses(tmp_path, backend):
    """The answer passage G2 shares no word with the question; only the graph (via Kestrel Foundry) reaches it."""
    embedder = backend.embedder
    case = make_case(BRIDGE_DOCS, [BRIDGE_QUESTION], BRIDGE_TRIPLES)
    q = case.questions[0].text
    assert not set(q.lower().rstrip("?").split()) & set(case.document("G2").text.lower().rstrip(".").split())
    index = VectorIndex(open_chroma(Storage(data_dir=tmp_path)), case.name, embedder)
    index.sync(case.passages)
    naive = NaiveRetriever(index, embedder).retrieve(q, top_k=len(case.passages)).ids
    build = build_or_load(passages=case.passages, fingerprint=case.fingerprint, embedder=embedder,
                          folder=tmp_path / "graphs", precomputed=case.triples)
    chat = ChatModel(backend.client, backend.model)
    hippo = HippoRAGRetriever(build.graph, embedder, HippoConfig(), chat=chat).retrieve(q, top_k=len(case.passages))
    assert naive.index("G2") >= 3, naive          # naive RAG ranks the answer passage below the top 3
    assert set(hippo.ids[:3]) >= {"G1", "G2"}, hippo.ids   # the real LLM filter keeps the Orla Vance fact
    path = hippo.explanation.paths["G2"]
    assert path[0].kind == "entity" and path[-1] == PathStep("G2", "passage")
    assert any(s.node in ("Orla Vance", "Kestrel Foundry") for s in hippo.explanation.seeds)
    # Without the filter the distractors' facts are linked too; the graph still lifts G2 above naive's rank.
    unfiltered = HippoRAGRetriever(build.graph, embedder, HippoConfig(llm_filter=False)).retrieve(q, top_k=7).ids
    assert unfiltered.index("G2") < naive.index("G2")


def test_saved_graph_loads_without_embedding(tmp_path, embedder):
    case = make_case(BRIDGE_DOCS, [BRIDGE_QUESTION], BRIDGE_TRIPLES)
    counting = CountingEmbedder(embedder)
    kwargs = dict(passages=case.passages, fingerprint=case.fingerprint, embedder=counting, folder=tmp_path,
                  precomputed=case.triples)
    first = build_or_load(**kwargs)
    spent = counting.texts
    second = build_or_load(**kwargs)
    assert not first.loaded and second.loaded and spent > 0 and counting.texts == spent
    assert second.graph.stats() == first.graph.stats()
    assert np.allclose(second.graph.fact_vectors, first.graph.fact_vectors)


def test_co_occurrence_facts_join_the_walk_but_get_no_vector(tmp_path, embedder):
    triples = [("D1", "Hucbert", CO_OCCURRENCE, "St. Maurice"), ("D1", "Hucbert", "was abbot of", "St. Maurice Abbey"),
               ("D2", "St. Maurice", CO_OCCURRENCE, "Valais"), ("D2", "Valais", "is a canton of", "Switzerland")]
    case = make_case([{"id": "D1", "text": "Hucbert, St. Maurice"}, {"id": "D2", "text": "St. Maurice, Valais"}])
    counting = CountingEmbedder(embedder)
    build = build_or_load(passages=case.passages, fingerprint=case.fingerprint, embedder=counting, folder=tmp_path,
                          precomputed=[Triple(d, s, r, o) for d, s, r, o in triples])
    g = build.graph
    assert [f.relation for f in g.facts] == ["was abbot of", "is a canton of", CO_OCCURRENCE, CO_OCCURRENCE]
    assert g.matched_facts == 2 and g.fact_vectors.shape[0] == 2
    assert g.stats()["relation_edges"] == 4 and g.stats()["embedded_facts"] == 2   # every fact is an edge
    every = g.all_fact_vectors()                               # what Vector Graph RAG stores: one per relation
    assert every.shape == (4, g.phrase_vectors.shape[1]) and np.array_equal(every[:2], g.fact_vectors)
    assert np.allclose(np.linalg.norm(every, axis=1), 1.0, atol=1e-5)
    last = g.facts[3]                                          # St. Maurice appears with Valais: its two names
    assert set(np.argsort(-(g.phrase_vectors @ every[3]))[:2]) == {last.subject, last.object}
    assert build_or_load(passages=case.passages, fingerprint=case.fingerprint, embedder=counting, folder=tmp_path,
                         precomputed=[Triple(d, s, r, o) for d, s, r, o in triples]).loaded
    only_edges = build_graph([t for t in triples if t[2] == CO_OCCURRENCE], case.passages, embedder)
    r = HippoRAGRetriever(only_edges, embedder, HippoConfig(llm_filter=False)).retrieve("Hucbert?", top_k=2)
    assert "no facts to match" in r.explanation.fallback and len(r.ids) == 2


def test_no_seed_falls_back_to_dense(embedder):
    case = make_case([{"id": "D1", "text": "alpha"}, {"id": "D2", "text": "beta"}])
    g = build_graph([], case.passages, embedder)
    r = HippoRAGRetriever(g, embedder, HippoConfig(llm_filter=False)).retrieve("alpha?", top_k=2)
    assert "dense" in r.explanation.fallback and len(r.ids) == 2


def test_precomputed_triples_attach_to_the_right_passage():
    long_text = "Alpha met Beta in Rome. " * 60 + "\n\n" + "Gamma sailed to Oslo. " * 60
    case = make_case([{"id": "L", "text": long_text}],
                     triples=[{"doc_id": "L", "subject": "Gamma", "relation": "sailed to", "object": "Oslo"}])
    assert len(case.passages) > 1
    attached = passage_triples(case.triples, case.passages)
    assert {pid for pid, *_ in attached} == {p.id for p in case.passages if "Gamma" in p.text}


MALFORMED = [
    "```json\n{\"named_entities\": [\"Orla Vance\"]}\n```",           # fenced: fine
    "Sure, here you go: {\"triples\": [[\"Orla Vance\", \"founded\", \"Kestrel Foundry\"], [\"Kest",  # truncated
    "I could not find anything useful.",                                 # prose
    "{\"entities_list\": 3}",                                          # wrong keys
    "",                                                                  # empty
]


def test_malformed_llm_outputs_never_crash_the_build(fault_server, embedder):
    answers = iter(MALFORMED + MALFORMED * 4)
    fault_server.script = [lambda h, req: reply(200, chat_body(next(answers, "")))(h, req)]
    client = OpenAIClient(fault_server.base_url, backoff=0.01)
    client._known_models = ["m"]
    case = make_case([{"id": f"D{i}", "text": "Orla Vance founded the Kestrel Foundry."} for i in range(4)])
    result = extract(client, "m", case.passages)
    assert len(result.passages) == 4
    first = result.passages[0]
    assert first.entities == ["Orla Vance"] and first.triples == [("Orla Vance", "founded", "Kestrel Foundry")]
    assert result.failures and all(f.failed_stage in ("ner", "triples") for f in result.failures)
    assert all(f.raw is not None for f in result.failures)
    graph = build_graph(result.triples(), case.passages, embedder)  # the graph still builds
    assert graph.stats()["facts"] >= 1


def test_triples_mode_keeps_every_triple_and_names_its_failures(fault_server):
    answers = iter(['{"triples": [["the figure", "wore", "a long coat"], ["Orla Vance", "founded", "Kestrel Foundry"]]}'])
    fault_server.script = [lambda h, req: reply(200, chat_body(next(answers, "I found no facts.")))(h, req)]
    client = OpenAIClient(fault_server.base_url, backoff=0.01)
    client._known_models = ["m"]
    case = make_case([{"id": "A", "text": "The figure wore a long coat. Orla Vance founded Kestrel Foundry."},
                      {"id": "B", "text": "Nothing here."}])
    result = extract(client, "m", case.passages, mode="triples")
    a, b = result.passages
    assert a.entities == [] and a.triples == [("the figure", "wore", "a long coat"),   # no entity list filters it
                                              ("Orla Vance", "founded", "Kestrel Foundry")]
    assert a.llm_calls == 1 and b.failed_stage == "triples" and "no facts" in b.raw
    with pytest.raises(ValueError, match="two-step, joint, triples"):
        extract(client, "m", case.passages, mode="fast")


# two-step runs with the real model wherever a test builds the bundled case (it ships no triples): the app tests
@pytest.mark.parametrize("mode", ["joint", "triples"])
def test_one_call_openie_modes_extract_with_the_real_model(backend, mode):
    case = make_case([{"id": "A", "text": "Orla Vance founded the Kestrel Foundry in Dunmore in 1998."},
                      {"id": "B", "text": "The Kestrel Foundry cast the bell of St. Brigid's Church."}])
    result = extract(backend.client, backend.extraction_model, case.passages, mode=mode)
    assert not result.failures and len(result.passages) == 2
    for p in result.passages:
        text = normalize_entity(case.document(p.passage_id).text)
        assert p.triples and all(normalize_entity(s) in text or normalize_entity(o) in text for s, _, o in p.triples)


def test_changed_precomputed_triples_make_a_new_graph(tmp_path, embedder):
    case = make_case(BRIDGE_DOCS, [BRIDGE_QUESTION], BRIDGE_TRIPLES)
    kwargs = dict(passages=case.passages, fingerprint=case.fingerprint, embedder=embedder, folder=tmp_path)
    first = build_or_load(precomputed=case.triples, **kwargs)
    fewer = build_or_load(precomputed=case.triples[:3], **kwargs)
    assert not fewer.loaded and fewer.key != first.key and fewer.graph.stats()["facts"] == 3
    assert build_or_load(precomputed=case.triples, **kwargs).loaded


def test_synonymy_never_joins_other_numbers_or_other_people():
    from kg.linking import may_be_synonyms

    assert not may_be_synonyms("9 45 pm", "9 15 pm")           # embeddings put these at cosine 0.97
    assert not may_be_synonyms("january 1960", "august 15 1960")
    assert not may_be_synonyms("mr blackwood", "mrs blackwood")
    assert may_be_synonyms("mr blackwood", "blackwood") and may_be_synonyms("ms crane", "victoria crane")
    assert may_be_synonyms("1990 season", "1990 campaign")


def test_text_mentions_join_what_the_model_extracted_from_one_passage_only(embedder):
    docs = [{"id": "A", "text": "The camera caught a figure in a long coat in the hallway."},
            {"id": "B", "text": "Officers found a long coat in the trunk while the gardener watched."},
            {"id": "C", "text": "The gardener trimmed the hedges."}]
    triples = [{"doc_id": "A", "subject": "figure", "relation": "wore", "object": "long coat"},
               {"doc_id": "C", "subject": "gardener", "relation": "trimmed", "object": "hedges"}]
    case = make_case(docs, [], triples)
    plain = build_graph(passage_triples(case.triples, case.passages), case.passages, embedder, text_mentions=False)
    linked = build_graph(passage_triples(case.triples, case.passages), case.passages, embedder)
    coat = plain.phrase_keys.index("long coat")
    assert plain.phrase_passages[coat] == ["A"] and linked.phrase_passages[coat] == ["A", "B"]
    assert linked.meta["mention_edges_from"] == {"llm": 4, "text": 1}
    gardener = linked.phrase_keys.index("gardener")   # one common word, not a name: B mentions it, no link
    assert linked.phrase_passages[gardener] == ["C"]


def test_a_possessive_in_the_text_mentions_its_owner():
    from kg.linking import text_mention_links
    passages = make_case([{"id": "A", "text": "A camera recorded Victoria Crane\u2019s car on Lombard Street."},
                          {"id": "B", "text": "Mud matched the soil of the Blackwood mansion's garden."},
                          {"id": "C", "text": "The Cranes left; Victoria Cranes is another name."}]).passages
    keys, surfaces = ["victoria crane", "blackwood mansion", "victoria cranes car"], \
        ["Victoria Crane", "Blackwood mansion", "Victoria Crane's car"]
    links = text_mention_links(keys, surfaces, passages)
    # The owner is found through the possessive, and the possessive phrase itself still matches as written.
    assert links[0] == {"A"} and links[1] == {"B"} and links[2] == {"A"}


def test_a_name_too_common_to_join_passages_depends_on_the_case_size():
    from kg.linking import MENTION_MIN_LIMIT, text_mention_links

    def linked(n_passages: int, naming: int) -> set[str]:
        passages = make_case([{"id": f"P{i}", "text": f"Report {i} was filed at Wexley Court." if i < naming
                               else f"Report {i} says nothing of the house."} for i in range(n_passages)]).passages
        return text_mention_links(["wexley court"], ["Wexley Court"], passages).get(0, set())

    # A small case: the house every witness names still joins its passages, up to the floor.
    assert len(linked(19, MENTION_MIN_LIMIT)) == MENTION_MIN_LIMIT
    assert linked(19, MENTION_MIN_LIMIT + 1) == set()
    # A large one: 5% of the passages, however many that is.
    assert len(linked(400, 20)) == 20 and linked(400, 21) == set()


def test_a_graph_built_with_other_thresholds_is_never_loaded_as_this_one(monkeypatch):
    import kg.storage as kgraph
    key = kgraph.graph_key("case", "precomputed", "", "embedder", triples="t")
    assert kgraph.graph_key("case", "precomputed", "", "embedder", triples="t") == key
    for name, other in (("MENTION_MIN_LIMIT", 8), ("MENTION_MAX_SHARE", 0.1), ("SYNONYM_THRESHOLD", 0.9)):
        with monkeypatch.context() as m:
            m.setattr(kgraph, name, other)
            assert kgraph.graph_key("case", "precomputed", "", "embedder", triples="t") != key, name


def test_a_graph_built_by_other_code_is_never_loaded_as_this_one(tmp_path):
    """The key digests the build modules: a copy of them keys the same, a copy with one line changed does not."""
    import kg.storage as kgraph
    here = Path(kgraph.__file__).parent
    same, edited = tmp_path / "same", tmp_path / "edited"
    for folder in (same, edited):
        folder.mkdir()
        for name in kgraph.BUILD_MODULES:
            (folder / name).write_bytes((here / name).read_bytes())
    source = (edited / "linking.py").read_text(encoding="utf-8")
    assert "SYNONYM_TOP_K = 10" in source
    (edited / "linking.py").write_text(source.replace("SYNONYM_TOP_K = 10", "SYNONYM_TOP_K = 11"), encoding="utf-8")
    assert kgraph.build_code_digest(same) == kgraph.build_code_digest()
    assert kgraph.build_code_digest(edited) != kgraph.build_code_digest()


def test_name_variants_join_one_person_and_only_when_the_surname_is_unique(embedder):
    from kg.linking import name_variant_pairs

    surfaces = ["Victoria Crane", "Ms. Crane", "Victoria Crane's car", "Mr. Hale", "Daniel Hale", "Ruth Hale",
                "long coat"]
    keys = [normalize_entity(x) for x in surfaces]
    assert name_variant_pairs(keys, surfaces) == [(0, 1), (0, 2)]   # "Mr. Hale": two Hales, no guess
    docs = [{"id": "A", "text": "Statement of Victoria Crane, the victim's sister."},
            {"id": "B", "text": "Friends say Ms. Crane had seemed desperate."},
            {"id": "C", "text": "Mr. Hale was at the club."}]
    g = build_graph([("A", "Victoria Crane", "is sister of", "victim"), ("B", "Ms. Crane", "seemed", "desperate"),
                     ("C", "Mr. Hale", "was at", "club")], make_case(docs).passages, embedder)
    victoria, ms = g.phrase_keys.index("victoria crane"), g.phrase_keys.index("ms crane")
    assert any({a, b} == {victoria, ms} for a, b, _ in g.synonyms)    # the walk crosses from B's name to A's


def test_the_hub_penalty_does_not_lift_a_passage_with_no_link(embedder):
    """A passage without a single phrase has strength 0: discounting hubs must not divide it by ~0 into first
    place (it did, and HippoRAG fell to Recall@5 0 on a 2Wiki set with the penalty on)."""
    docs = [*BRIDGE_DOCS, {"id": "Z", "text": "..."}]   # no triple names Z: no edge reaches it
    case = make_case(docs, [BRIDGE_QUESTION], BRIDGE_TRIPLES)
    g = build_graph(passage_triples(case.triples, case.passages), case.passages, embedder)
    assert g.phrases_of("Z") == []
    for penalty in (0.0, 0.5):
        config = HippoConfig(llm_filter=False, hub_penalty=penalty)
        r = HippoRAGRetriever(g, embedder, config).retrieve(BRIDGE_QUESTION["question"], top_k=3)
        assert "Z" not in r.ids and r.ids[0] in ("G1", "G2"), (penalty, r.ids)


LANE_DOCS = [{"id": "A", "text": "A white van, plate WX66 LMK, waited in the rear lane at 02:05."},
             {"id": "B", "text": "The rear lane runs behind the museum; vans deliver there every morning."},
             {"id": "C", "text": "A white van belonging to the bakery parks in the lane most days."},
             {"id": "D", "text": "The museum's loading bay opens onto the rear lane."}]
# What a small model's OpenIE gives: the van and the lane, not the plate that bridges to the keeper's record.
LANE_TRIPLES = [{"doc_id": "A", "subject": "white van", "relation": "waited in", "object": "rear lane"},
                {"doc_id": "B", "subject": "rear lane", "relation": "runs behind", "object": "museum"},
                {"doc_id": "C", "subject": "white van", "relation": "parks in", "object": "lane"},
                {"doc_id": "D", "subject": "loading bay", "relation": "opens onto", "object": "rear lane"}]


def test_the_lexical_prior_lifts_the_passage_that_carries_the_questions_code(embedder):
    from indexes import BM25Index
    case = make_case(LANE_DOCS, [], LANE_TRIPLES)
    g = build_graph(passage_triples(case.triples, case.passages), case.passages, embedder)
    question = "Which white van in the rear lane had the plate WX66 LMK?"
    lexical = BM25Index(case.passages)
    share = {}
    for weight in (0.0, 0.5):
        r = HippoRAGRetriever(g, embedder, HippoConfig(llm_filter=False, feedback_weight=0.0, lexical_weight=weight),
                              lexical=lexical).retrieve(question, top_k=4)
        scores = dict(r.passages)
        share[weight] = scores["A"] / sum(scores.values())
    assert share[0.5] > share[0.0]          # the plate is in no fact: only the literal match lifts A
    # Without a lexical index the weight has nothing to read: the walk is the one with the prior off.
    alone = HippoRAGRetriever(g, embedder, HippoConfig(llm_filter=False, feedback_weight=0.0, lexical_weight=0.5))
    off = HippoRAGRetriever(g, embedder, HippoConfig(llm_filter=False, feedback_weight=0.0, lexical_weight=0.0))
    assert alone.retrieve(question, 4).passages == off.retrieve(question, 4).passages


def test_link_confidence_scales_the_fact_seeds_by_the_best_facts_cosine(embedder):
    case = make_case(LANE_DOCS, [], LANE_TRIPLES)
    g = build_graph(passage_triples(case.triples, case.passages), case.passages, embedder)
    question = "What was unusual about that night?"     # names nothing: no phrase is matched word for word
    best = float((g.fact_vectors @ embedder.embed([question])[0]).max())
    seeds = {}
    for power in (0.0, 4.0):
        config = HippoConfig(llm_filter=False, feedback_weight=0.0, link_confidence=power)
        r = HippoRAGRetriever(g, embedder, config).retrieve(question, top_k=4)
        seeds[power] = {s.node: s.weight for s in r.explanation.seeds}
    assert seeds[0.0].keys() == seeds[4.0].keys() and 0 < best < 1
    for node, weight in seeds[0.0].items():
        assert seeds[4.0][node] == pytest.approx(weight * best ** 4, rel=1e-3, abs=1e-6)


def test_hub_lift_lowers_a_passage_that_every_walk_reaches(embedder):
    people = ["Orla Vance", "Marek Holt", "Ines Varga", "Tomas Reed"]
    docs = [{"id": f"P{i}", "text": f"{name} was questioned on Monday."} for i, name in enumerate(people)]
    docs.append({"id": "HUB", "text": "Appeal: " + ", ".join(people) + " all came forward."})
    triples = [{"doc_id": f"P{i}", "subject": name, "relation": "questioned on", "object": f"Monday {i}"}
               for i, name in enumerate(people)]
    triples += [{"doc_id": "HUB", "subject": "appeal", "relation": "names", "object": name} for name in people]
    case = make_case(docs, [], triples)
    g = build_graph(passage_triples(case.triples, case.passages), case.passages, embedder)
    ratio = {}
    for lift in (0.0, 0.5):
        config = HippoConfig(llm_filter=False, feedback_weight=0.0, hub_lift=lift)
        scores = dict(HippoRAGRetriever(g, embedder, config).retrieve("When was Marek Holt questioned?", 5).passages)
        ratio[lift] = scores["HUB"] / scores["P1"]
    assert ratio[0.5] < ratio[0.0]     # the appeal, reached from every name, loses ground to Holt's own passage


def test_synonym_pairs_are_the_same_whatever_the_block_of_rows(monkeypatch):
    import kg.linking as linking
    rng = np.random.default_rng(0)
    base = rng.normal(size=(40, 16))
    cluster = rng.normal(size=16) + rng.normal(scale=0.1, size=(8, 16))   # 8 alike: each keeps only 4 of 7
    vectors = np.concatenate([base, base + rng.normal(scale=0.05, size=base.shape), cluster])   # 40 near pairs
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    keys = [f"phrase {chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(len(vectors))]   # no digits
    whole = linking.synonym_pairs(vectors, keys, 0.8, 3)
    monkeypatch.setattr(linking, "SYNONYM_BLOCK_CELLS", 16 * len(vectors))   # blocks of 16 rows: 5 blocks
    blocked = linking.synonym_pairs(vectors, keys, 0.8, 3)
    # The same pairs; each cosine to float32 rounding only (BLAS may sum a 16-row block in another order than the
    # whole matrix: on AVX-512 machines the last bit differs)
    assert [(a, b) for a, b, _ in blocked] == [(a, b) for a, b, _ in whole]
    np.testing.assert_allclose([s for *_, s in blocked], [s for *_, s in whole], rtol=0, atol=1e-6)
    assert {(i, i + 40) for i in range(40)} <= {(a, b) for a, b, _ in whole}
    # the definition, from the whole matrix: each phrase's 4 (top_k + 1) most similar others at or above 0.8
    full = vectors.astype(np.float32) @ vectors.astype(np.float32).T
    np.fill_diagonal(full, -np.inf)
    expected = set()
    for r, row in enumerate(full):
        for c in [c for c in np.argsort(-row, kind="stable") if row[c] >= 0.8][:4]:
            expected.add((min(r, int(c)), max(r, int(c))))
    assert {(a, b) for a, b, _ in whole} == expected
    assert all(abs(s - full[a, b]) < 1e-5 for a, b, s in whole)
