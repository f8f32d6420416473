import hashlib
import shutil
import sqlite3
import threading

import numpy as np
import pytest

from llm.cache import ResponseCache
from llm.errors import ModelFileError
from llm.model_file import QWEN_CODER_1_5B, ModelSpec, assemble, chunk_paths


def _spec_for(chunks, sha=None):
    data = b"".join(p.read_bytes() for p in chunks)
    return ModelSpec(name="tiny", filename="tiny.gguf", size=len(data),
                     sha256=sha or hashlib.sha256(data).hexdigest(), packages=())


def _chunks(tmp_path, n=3):
    paths = []
    for i in range(n):
        p = tmp_path / f"part{i:02d}.bin"
        p.write_bytes(bytes([i]) * 1000 + b"x" * i)
        paths.append(p)
    return paths


def test_assembles_and_reuses(tmp_path):
    chunks = _chunks(tmp_path)
    spec = _spec_for(chunks)
    out = assemble(spec, tmp_path / "models", chunks)
    assert out.read_bytes() == b"".join(p.read_bytes() for p in chunks)
    chunks[0].unlink()  # a second call uses the verified file and never touches the chunks
    assert assemble(spec, tmp_path / "models", chunks) == out


def test_refuses_a_corrupted_chunk_and_leaves_nothing(tmp_path):
    chunks = _chunks(tmp_path)
    spec = _spec_for(chunks)
    data = bytearray(chunks[1].read_bytes())
    data[10] ^= 0xFF
    chunks[1].write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="sha256"):
        assemble(spec, tmp_path / "models", chunks)
    assert list((tmp_path / "models").iterdir()) == []


def test_refuses_a_corrupted_copy_of_a_real_chunk(tmp_path):
    """The real 1.5B spec and the installed chunks, with a damaged COPY of the last one."""
    real = chunk_paths(QWEN_CODER_1_5B)
    bad = tmp_path / "part22.bin"
    shutil.copy(real[-1], bad)
    with open(bad, "r+b") as f:
        f.seek(12345)
        byte = f.read(1)
        f.seek(12345)
        f.write(bytes([byte[0] ^ 0x01]))
    with pytest.raises(ModelFileError, match="does not match the official"):
        assemble(QWEN_CODER_1_5B, tmp_path / "models", real[:-1] + [bad])
    assert not any((tmp_path / "models").glob("*.gguf"))


def test_wrong_total_size_is_refused(tmp_path):
    chunks = _chunks(tmp_path)
    with pytest.raises(ModelFileError, match="add up to"):
        assemble(_spec_for(chunks[:2]), tmp_path / "m", chunks)


def test_cache_round_trip_and_threads(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    wrong = []   # collected here: an assert inside a thread would only be a warning

    def work(i):
        for j in range(30):
            cache.put_chat(f"k{i}-{j}", {"text": f"v{i}-{j}"})
            if cache.get_chat(f"k{i}-{j}") != {"text": f"v{i}-{j}"}:
                wrong.append((i, j))
    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong
    assert all(cache.get_chat(f"k{i}-{j}") == {"text": f"v{i}-{j}"} for i in range(6) for j in range(30))
    cache.put_embeddings({"e": np.arange(4, dtype=np.float32)})
    assert np.array_equal(cache.get_embeddings(["e", "missing"])["e"], np.arange(4, dtype=np.float32))


def test_corrupt_cache_file_is_rebuilt_with_a_warning(tmp_path, caplog):
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    cache = ResponseCache(path)
    assert "unreadable" in caplog.text
    cache.put_chat("k", {"text": "v"})
    assert cache.get_chat("k") == {"text": "v"}
    assert list(tmp_path.glob("c.sqlite.corrupt-*"))


def test_locked_cache_degrades_to_a_miss(tmp_path, caplog):
    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)
    cache._conn.execute("PRAGMA busy_timeout = 50")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        cache.put_chat("k", {"text": "v"})  # must not raise
        assert "locked" in caplog.text
    finally:
        other.execute("ROLLBACK")
        other.close()
    cache.put_chat("k", {"text": "v"})
    assert cache.get_chat("k") == {"text": "v"}


def test_a_cache_another_process_holds_exclusively_is_never_renamed(tmp_path, caplog):
    """locking_mode=EXCLUSIVE held by another process: skipped for the call, the file kept, the rows intact."""
    path = tmp_path / "c.sqlite"
    first = ResponseCache(path)
    first.put_chat("old", {"text": "hours of OpenIE"})
    first.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        cache = ResponseCache(path, busy_timeout=0.05, retry_after=0.0)
        assert cache.get_chat("old") is None            # a miss for this call, not an error
        cache.put_chat("new", {"text": "v"})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert not list(tmp_path.glob("*.corrupt-*")) and "locked" in caplog.text
    assert cache.get_chat("old") == {"text": "hours of OpenIE"}   # the same file, reachable again


def test_a_cache_locked_at_open_is_left_alone_for_a_while(tmp_path, monkeypatch):
    """One wait for the lock, not one per call: until ``retry_after`` has passed no call tries to open it."""
    path = tmp_path / "c.sqlite"
    ResponseCache(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        cache = ResponseCache(path, busy_timeout=0.05, retry_after=3600)
        assert cache._conn is None
        tries = []
        monkeypatch.setattr(cache, "_connect", lambda: tries.append(1) or (_ for _ in ()).throw(
            sqlite3.OperationalError("database is locked")))
        assert [cache.get_chat(f"k{i}") for i in range(5)] == [None] * 5 and not tries
        cache._retry_at = 0.0                           # the hour has passed: the next call tries again
        assert cache.get_chat("k") is None and tries == [1]
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_full_disk_is_not_called_corruption(tmp_path, caplog):
    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)
    cache.put_chat("old", {"text": "kept"})
    cache._conn.execute("PRAGMA max_page_count = 3")   # what a full disk looks like to SQLite
    cache.put_embeddings({f"e{i}": np.ones(384, dtype=np.float32) for i in range(200)})
    assert "full" in caplog.text and not list(tmp_path.glob("*.corrupt-*"))
    assert cache.get_chat("old") == {"text": "kept"} and cache.get_embeddings(["e0"]) == {}   # rolled back whole


def test_many_embeddings_are_written_in_one_transaction(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    statements = []
    cache._conn.set_trace_callback(statements.append)
    cache.put_embeddings({f"e{i}": np.full(4, i, dtype=np.float32) for i in range(5000)})
    assert statements.count("BEGIN") == 1 and statements.count("COMMIT") == 1
    assert len(cache.get_embeddings([f"e{i}" for i in range(5000)])) == 5000
