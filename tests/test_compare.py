"""'Why they differ': sentences computed from the explanations and the gold marks, on the bridge case."""
from core.storage import Storage
from core.types import Explanation
from lab.compare import why_they_differ
from lab.keyfacts import KeyFact, KeyFactScore
from lab.metrics import AnswerScores
from lab.results import StrategyResult
from lab.runner import Lab, RunConfig
from llm import Settings, embedder_only

from helpers import BRIDGE_DOCS, BRIDGE_QUESTION, BRIDGE_TRIPLES, make_case


def test_the_gold_document_one_strategy_missed_and_the_bridge_that_found_it(tmp_path):
    case = make_case(BRIDGE_DOCS, [BRIDGE_QUESTION], BRIDGE_TRIPLES)
    lab = Lab(case, Settings(cache_enabled=False), RunConfig(strategies=("naive", "hipporag"), retrieval_only=True,
                                                             triples="precomputed", top_k=5),
              embedder=embedder_only(Settings(cache_enabled=False)), storage=Storage(data_dir=tmp_path))
    lab.build()
    result = lab.ask(case.questions[0])
    assert "G2" in result.results["hipporag"].retrieved and "G2" not in result.results["naive"].retrieved
    line = next(x for x in result.differences if x.startswith("G2 "))
    assert line.startswith("G2 was found by hipporag and missed by naive (hipporag reached it through ")
    assert "Kestrel Foundry" in line     # the entity that joins the question to the answer passage


def test_same_documents_and_a_failed_answer_step():
    case = make_case(BRIDGE_DOCS, [BRIDGE_QUESTION], BRIDGE_TRIPLES)
    q = case.questions[0]
    missing = KeyFactScore(missing=[KeyFact("bronze bells", "name", "bronze bells")])
    scores = AnswerScores(exact_match=False, f1=0.0, contains=False, strict_correct=False, key_facts=missing,
                          no_answer=False, correct=False)
    same = {n: StrategyResult(passages=["G1", "G2"], retrieved=["G1", "G2"], scores=[1.0, 0.5], recall=1.0,
                              answer="Furniture.", answer_scores=scores, judge_correct=None, timings_ms={},
                              explanation=Explanation()) for n in ("a", "b")}
    lines = why_they_differ(case, q, same)
    assert lines[0] == "Every strategy found the same gold documents (G1, G2 of G1, G2)."
    assert "a retrieved every gold document, yet its answer missed bronze bells: the answer step failed, not " \
           "retrieval." in lines
