"""Hybrid retrieval: RRF by hand, and the strategy over the real Chroma and BM25 indexes."""
import pytest

from core.storage import Storage
from indexes import rrf
from lab.runner import Lab, RunConfig
from llm import Settings, embedder_only

from helpers import make_case


def test_rrf_by_hand():
    fused = dict(rrf([["a", "b", "c"], ["c", "a"]], k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62) and fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert fused["b"] == pytest.approx(1 / 62)
    assert [i for i, _ in rrf([["a", "b", "c"], ["c", "a"]], k=60)] == ["a", "c", "b"]
    # A weighted list counts less: with the second list at 0.01, "b" (first list only) beats "c".
    assert [i for i, _ in rrf([["a", "b", "c"], ["c", "a"]], k=60, weights=[1.0, 0.01])] == ["a", "b", "c"]


DOCS = [{"id": "P1", "title": "Ledger", "text": "The ledger lists payment 7731 to the Harlow shipping office."},
        {"id": "P2", "title": "Weather", "text": "Rain fell on the harbour all evening."},
        {"id": "P3", "title": "Clerk", "text": "The clerk said the money went to a shipping firm by the docks."}]


def test_hybrid_explains_both_ranks(tmp_path):
    case = make_case(DOCS, [{"id": "Q", "question": "Where did payment 7731 go?", "supporting_docs": ["P1"]}])
    lab = Lab(case, Settings(cache_enabled=False), RunConfig(strategies=("hybrid",), retrieval_only=True),
              embedder=embedder_only(Settings(cache_enabled=False)), storage=Storage(data_dir=tmp_path))
    assert {r.name for r in lab.build()} == {"vector index", "bm25 index"}
    result = lab.ask(case.questions[0]).results["hybrid"]
    assert result.passages[0] == "P1" and result.recall == 1.0   # the rare number "7731" is BM25's
    ex = result.explanation
    assert [s.name for s in ex.stages] == ["embed", "dense search", "bm25 search", "fusion"]
    top = ex.evidence[0]
    assert top.text.startswith("P1: dense rank ") and "BM25 rank 1" in top.text and top.detail == "both lists"
    # Only the dense list: the weight parameter reaches the fusion at query time.
    dense_only = lab.ask(case.questions[0], RunConfig(strategies=("hybrid",), retrieval_only=True,
                                                      params={"hybrid": {"bm25_weight": 0.0}}))
    assert "BM25 weight 0.0" in dense_only.results["hybrid"].explanation.method


def test_bm25_returns_nothing_rather_than_score_zero_passages_and_says_why(tmp_path):
    case = make_case(DOCS, [{"id": "Q", "question": "真珠はどこ?", "supporting_docs": ["P1"]}])
    lab = Lab(case, Settings(cache_enabled=False), RunConfig(strategies=("bm25",), retrieval_only=True),
              embedder=embedder_only(Settings(cache_enabled=False)), storage=Storage(data_dir=tmp_path))
    lab.build()
    cjk = lab.ask(case.questions[0]).results["bm25"]
    assert cjk.passages == [] and "no word of the question occurs" in cjk.explanation.fallback
    emoji = lab.ask("🔍🕵️").results["bm25"]
    assert emoji.passages == [] and emoji.explanation.fallback == "no searchable word in the question"
