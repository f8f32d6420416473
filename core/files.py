"""Writing a file whole or not at all: a temp file beside it, then a rename.

A crash, a cancelled run or a full disk mid-write leaves the old file (or none) and no temp file, never a half-written
one: saved graphs, NER mentions, reports, benchmark results and the OpenIE cache all write through here. (llm/ keeps
its own for the model file: it imports nothing of ours.)
"""
from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path


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
