"""A small SQLite cache for chat responses and embeddings, shared by threads.

Only a file SQLite itself calls corrupt ("file is not a database", "malformed") is moved aside and rebuilt. A
locked file (another process holds it), a full disk, an I/O or permission error is skipped for that call and
tried again on the next: the file may be healthy and another process's, so it is never renamed. Either way the
caller gets a warning in the log, never an exception. Many rows are written in one transaction.
"""
from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chat (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS embedding (key TEXT PRIMARY KEY, dim INTEGER NOT NULL, vector BLOB NOT NULL);
"""


def _corrupt(exc: sqlite3.DatabaseError) -> bool:
    """Does SQLite say the file itself is damaged (as opposed to locked, full or unreadable for now)?"""
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text


def storage_trouble(exc: BaseException) -> str:
    """What is wrong with a store when it is not its files (a full disk, a lock, an I/O error), or '': SQLite's
    words, which Chroma's errors carry too."""
    text = str(exc).lower()
    for needles, what in ((("locked", "busy"), "another process holds it locked"),
                          (("full", "no space"), "the disk is full"), (("disk i/o",), "a disk I/O error")):
        if any(n in text for n in needles):
            return what
    return ""


def cache_key(*parts: Any) -> str:
    """A stable hash of JSON-serialisable parts."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, path: Path | str, busy_timeout: float = 5.0, retry_after: float = 10.0):
        """``busy_timeout``: how long one call waits for another process's lock; ``retry_after``: how long a cache
        that could not be opened is left alone before the next try (so a locked file costs one wait, not one per
        call)."""
        self.path = Path(path)
        self.busy_timeout, self.retry_after = busy_timeout, retry_after
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._retry_at = 0.0
        self._open()

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = self._connect()
        except sqlite3.DatabaseError as exc:
            if _corrupt(exc):
                self._rebuild(exc)
            else:
                log.warning("response cache %s cannot be opened now (%s); running without it until it can",
                            self.path, storage_trouble(exc) or exc)
                self._conn = None
                self._retry_at = time.monotonic() + self.retry_after
        except OSError as exc:
            log.warning("response cache disabled: cannot create %s (%s)", self.path, exc)
            self._conn = None

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(_SCHEMA)
        conn.execute("SELECT count(*) FROM chat").fetchone()
        return conn

    def _rebuild(self, exc: Exception) -> None:
        aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
        log.warning("response cache %s is unreadable (%s); moved it to %s and starting a new one",
                    self.path, exc, aside.name)
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                p.replace(Path(str(aside) + suffix))
        try:
            self._conn = self._connect()
        except sqlite3.Error as exc2:  # e.g. read-only folder: run without a cache
            log.warning("response cache disabled: cannot create %s (%s)", self.path, exc2)
            self._conn = None

    def _run(self, sql: str, params: Iterable = (), many: bool = False) -> list | None:
        with self._lock:
            if self._conn is None:
                if time.monotonic() < self._retry_at:
                    return None
                try:   # a cache that was locked or unreachable at open: try again
                    self._conn = self._connect()
                except (sqlite3.Error, OSError):
                    self._retry_at = time.monotonic() + self.retry_after
                    return None
            conn = self._conn
            try:
                if many:
                    conn.execute("BEGIN")
                    try:
                        conn.executemany(sql, params)
                        conn.execute("COMMIT")
                    except BaseException:
                        if conn.in_transaction:
                            conn.execute("ROLLBACK")
                        raise
                    return []
                return conn.execute(sql, tuple(params)).fetchall()
            except sqlite3.DatabaseError as exc:
                if _corrupt(exc):
                    self._rebuild(exc)
                else:
                    log.warning("response cache %s skipped for this call: %s", self.path, storage_trouble(exc) or exc)
            return None

    def get_chat(self, key: str) -> dict | None:
        rows = self._run("SELECT value FROM chat WHERE key = ?", (key,))
        if not rows:
            return None
        try:
            return json.loads(rows[0][0])
        except json.JSONDecodeError:
            return None

    def put_chat(self, key: str, value: dict) -> None:
        self._run("INSERT OR REPLACE INTO chat (key, value, created) VALUES (?, ?, ?)",
                  (key, json.dumps(value, ensure_ascii=False), time.time()))

    def get_embeddings(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):  # SQLite's bound-parameter limit
            chunk = keys[start:start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._run(f"SELECT key, dim, vector FROM embedding WHERE key IN ({marks})", chunk) or []
            for key, dim, blob in rows:
                vec = np.frombuffer(blob, dtype=np.float32)
                if vec.size == dim:
                    found[key] = vec
        return found

    def put_embeddings(self, items: dict[str, np.ndarray]) -> None:
        rows = [(k, int(v.size), np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()]
        self._run("INSERT OR REPLACE INTO embedding (key, dim, vector) VALUES (?, ?, ?)", rows, many=True)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
