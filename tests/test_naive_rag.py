"""Naive RAG on a real ChromaDB: persistent client in a temp folder, and a real `chroma run` server."""
import json
import sys
from pathlib import Path

import pytest

from casebook.catalog import resolve
from casebook.loader import load_case
from core.storage import Storage
from core.types import Passage
from indexes import IndexStoreError, VectorIndex, open_chroma
from lab.runner import Lab, RunConfig
from llm import Settings, embedder_only
from naive_rag import NaiveRetriever

from helpers import CountingEmbedder, free_port, serving

CHROMA = Path(sys.executable).parent / "chroma"


@pytest.fixture(scope="module")
def case():
    return load_case(resolve("purloined_pearl"))


@pytest.fixture
def store(tmp_path):
    return Storage(data_dir=tmp_path / "index")


def local_embedder():
    return embedder_only(Settings(cache_enabled=False))




def test_incremental_sync(store, case):
    emb = CountingEmbedder(local_embedder())
    index = VectorIndex(open_chroma(store), case.name, emb)
    first = index.sync(case.passages)
    assert first.added == 10 and emb.texts == 10
    again = VectorIndex(open_chroma(store), case.name, emb).sync(case.passages)  # a new client: persisted
    assert again.unchanged == 10 and again.embedded == 0 and emb.texts == 10
    edited = [Passage(p.id, p.doc_id, p.title, p.text + " The safe was left open.") if p.id == "D3" else p
              for p in case.passages]
    report = index.sync(edited)
    assert (report.updated, report.added, report.deleted, report.embedded) == (1, 0, 0, 1) and emb.texts == 11
    removed = [p for p in edited if p.id != "D8"]
    assert index.sync(removed).deleted == 1 and index.count() == 9
    hits = NaiveRetriever(index, emb).retrieve("Victoria lost her job and faces foreclosure", top_k=9)
    assert "D8" not in hits.ids


def test_scores_are_sorted_similarities(store, case):
    emb = local_embedder()
    index = VectorIndex(open_chroma(store), case.name, emb)
    index.sync(case.passages)
    r = NaiveRetriever(index, emb).retrieve("What time did Detective Miller arrive?", top_k=5)
    scores = [s for _, s in r.passages]
    assert len(scores) == 5 and scores == sorted(scores, reverse=True)
    assert all(-1.0 <= s <= 1.0 for s in scores)
    assert r.ids[0] == "D1"
    assert set(r.timings_ms) == {"embed", "search"}


def test_collections_are_separate_per_embedding_model(store, case):
    client = open_chroma(store)
    emb = local_embedder()

    class Other(CountingEmbedder):
        pass
    other = Other(emb)
    other.name = "another-model"
    a, b = VectorIndex(client, case.name, emb), VectorIndex(client, case.name, other)
    assert a.name != b.name
    a.sync(case.passages)
    assert b.count() == 0


def test_embedding_failure_mid_index_keeps_the_index_consistent(store, case):
    real = local_embedder()

    class Flaky:
        name, usage = real.name, real.usage
        calls = 0

        def embed(self, texts):
            Flaky.calls += 1
            if Flaky.calls == 2:
                raise ConnectionError("embedding server went away")
            return real.embed(texts)

    index = VectorIndex(open_chroma(store), case.name, Flaky())
    with pytest.raises(ConnectionError):
        index.sync(case.passages, batch_size=4)
    assert index.count() == 4  # the first batch, complete with its vectors
    report = index.sync(case.passages, batch_size=4)
    assert report.unchanged == 4 and report.added == 6 and index.count() == 10


def test_empty_question_is_rejected_once_for_every_strategy(store, case):
    """The runner checks the question before any strategy sees it (the retrievers repeat no guard)."""
    lab = Lab(case, Settings(cache_enabled=False), RunConfig(strategies=("naive", "bm25"), retrieval_only=True),
              embedder=local_embedder(), storage=store)
    lab.build()
    for q in ("", "   \n"):
        with pytest.raises(ValueError, match="the question is empty"):
            lab.ask(q)


def test_corrupt_chroma_folder_names_the_folder(tmp_path):
    folder = tmp_path / "index" / "chroma"
    folder.mkdir(parents=True)
    (folder / "chroma.sqlite3").write_bytes(b"garbage, not sqlite" * 200)
    with pytest.raises(IndexStoreError) as err:
        open_chroma(Storage(data_dir=tmp_path / "index"))
    assert str(folder) in str(err.value) and "rm -rf" in str(err.value)


@pytest.fixture
def chroma_server(tmp_path):
    port = free_port()
    with serving([str(CHROMA), "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(tmp_path / "server")],
                 port, timeout=30):
        yield port


def test_same_behaviour_against_a_chroma_server(tmp_path, chroma_server, case):
    store = Storage(data_dir=tmp_path / "unused", chroma_host="127.0.0.1", chroma_port=chroma_server)
    emb = CountingEmbedder(local_embedder())
    index = VectorIndex(open_chroma(store), case.name, emb)
    assert index.sync(case.passages).added == 10
    assert VectorIndex(open_chroma(store), case.name, emb).sync(case.passages).embedded == 0
    r = NaiveRetriever(index, emb).retrieve("What time did Detective Miller arrive?", top_k=3)
    assert r.ids[0] == "D1" and not (tmp_path / "unused").exists()


def test_unreachable_chroma_server_is_a_clear_error():
    with pytest.raises(IndexStoreError, match="127.0.0.1:9"):
        open_chroma(Storage(chroma_host="127.0.0.1", chroma_port=9))


def test_two_cases_with_one_name_never_share_a_collection(tmp_path):
    from casebook.loader import load_case as load

    answers = {}
    for folder, text in (("a", "The harbour froze in January."), ("b", "The vineyard flooded in April.")):
        case_dir = tmp_path / folder / "mycase"
        case_dir.mkdir(parents=True)
        (case_dir / "documents.json").write_text(json.dumps([{"id": "D1", "text": text}, {"id": "D2", "text": "x"}]))
        lab = Lab(load(case_dir), Settings(cache_enabled=False), RunConfig(strategies=("naive",), retrieval_only=True),
                  embedder=local_embedder(), storage=Storage(data_dir=tmp_path / "index"))
        report = lab.build()[0]
        assert report.counts["deleted"] == 0            # the other case's vectors were not touched
        answers[folder] = (report.details["collection"], lab.retrievers["naive"].index.collection.get(ids=["D1"])["documents"])
    assert answers["a"][0] != answers["b"][0]
    assert answers["a"][1] == ["The harbour froze in January."] and answers["b"][1] == ["The vineyard flooded in April."]
