"""The 3-stage pipeline on the bridge case: which stages run, why, and what the graph adds."""
import pytest

from core.storage import Storage
from lab.runner import Lab, RunConfig
from llm import Settings, embedder_only

from helpers import BRIDGE_DOCS, BRIDGE_QUESTION, BRIDGE_TRIPLES, make_case


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    case = make_case(BRIDGE_DOCS, [BRIDGE_QUESTION, {"id": "N", "question": "Which things freeze in winter?",
                                                     "supporting_docs": ["X5"]}], BRIDGE_TRIPLES)
    lab = Lab(case, Settings(cache_enabled=False), RunConfig(strategies=("three-stage",), retrieval_only=True,
                                                             triples="precomputed"),
              embedder=embedder_only(Settings(cache_enabled=False)),
              storage=Storage(data_dir=tmp_path_factory.mktemp("index")))
    lab.build()
    return lab


def ask(lab, qid, **params):
    config = RunConfig(strategies=("three-stage",), retrieval_only=True, triples="precomputed", top_k=3,
                       params={"three-stage": params})
    question = next(q for q in lab.case.questions if q.id == qid)
    return lab.ask(question, config).results["three-stage"]


def test_expansion_runs_when_the_question_names_enough_entities(lab):
    r = ask(lab, "B1", min_entities=1, margin=0.0, expand_weight=1.0)
    stages = {s.name: s for s in r.explanation.stages}
    assert stages["graph boost"].ran and stages["graph expand"].ran
    assert "1 linked entities" in stages["graph expand"].why
    assert [s.node for s in r.explanation.seeds] == ["Orla Vance"]
    assert "G2" in r.passages                         # reached through Kestrel Foundry
    assert r.explanation.paths["G2"][0].node == "Orla Vance"


def test_expansion_is_skipped_with_the_reason(lab):
    sure = ask(lab, "B1", min_entities=5, margin=0.0)
    skip = next(s for s in sure.explanation.stages if s.name == "graph expand")
    assert not skip.ran and "hybrid is sure" in skip.why and not sure.explanation.seeds
    none = ask(lab, "N", margin=1.0)
    skip = next(s for s in none.explanation.stages if s.name == "graph expand")
    assert not skip.ran and skip.why.startswith("the question names no graph entity")
    assert none.passages   # still answered from the hybrid stages
