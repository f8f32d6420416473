"""Writing a file whole or not at all, and one process at a time where a store is not safe to share.

A crash, a cancelled run or a full disk mid-write leaves the old file (or none) and no temp file, never a half-written
one: saved graphs, NER mentions, reports, benchmark results and the OpenIE cache all write through here. (llm/ keeps
its own for the model file: it imports nothing of ours.) ``held`` is an exclusive lock on a file, across processes
and threads, released by the operating system if its holder dies.
"""
from __future__ import annotations

import contextlib
import logging
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import filelock

log = logging.getLogger(__name__)


@contextlib.contextmanager
def replacing(path: Path, suffix: str = ".tmp") -> Iterator[Path]:
    """A temp path beside ``path`` to write to; on a clean exit it replaces ``path`` in one rename, on an exception
    it is removed and ``path`` is left as it was."""
    # Not mkstemp: its files are private (0600), and a report or a case folder should get the umask's mode.
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}{suffix}"
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_whole(path: Path, text: str) -> None:
    """``path`` holds ``text`` (UTF-8) or, if writing fails, what it held before."""
    with replacing(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


@contextlib.contextmanager
def held(lock: Path, what: str) -> Iterator[None]:
    """``lock`` held exclusively for the block (``what``: what it guards, for the log line said while waiting). A lock
    file that cannot be made (a read-only or full folder) is not held: the guarded work then fails with its own,
    clearer error, or only reads."""
    guard = filelock.FileLock(lock)   # a new one each time: two threads of one process wait for each other too
    acquired = _acquire(guard, what)
    try:
        yield
    finally:
        if acquired:
            guard.release()


def _acquire(guard: filelock.FileLock, what: str) -> bool:
    try:
        try:
            guard.acquire(timeout=0.5)
        except filelock.Timeout:
            log.info("waiting for another process to finish %s (it holds %s)", what, guard.lock_file)
            guard.acquire()
    except OSError as exc:   # filelock.Timeout is one too, but is handled above
        log.debug("%s goes on without the lock %s (%s)", what, guard.lock_file, exc)
        return False
    return True
