"""Writing whole or not at all (core/files.py): what every saved graph, report and result writes through."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.files import replacing, write_text_whole


def test_a_write_replaces_the_file_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")
    write_text_whole(target, "new ✓")
    assert target.read_text(encoding="utf-8") == "new ✓"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_write_that_fails_midway_leaves_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "graph.json"
    target.write_text("complete")
    with pytest.raises(RuntimeError), replacing(target) as tmp:
        tmp.write_text("half of it")
        raise RuntimeError("the disk filled up")
    assert target.read_text() == "complete"
    assert [p.name for p in tmp_path.iterdir()] == ["graph.json"]


def test_a_new_file_gets_the_umasks_mode_not_a_private_one(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_text_whole(tmp_path / "case.json", "{}")
    finally:
        os.umask(old)
    assert (tmp_path / "case.json").stat().st_mode & 0o777 == 0o644
