"""Writing whole or not at all (core/files.py): what every saved graph, report and result writes through."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.files import held, replacing, write_text_whole

from conftest import ROOT


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


HOLDER = """
import sys, time
from pathlib import Path
from core.files import held
with held(Path(sys.argv[1]), "a test"):
    print("holding", flush=True)
    time.sleep(60)
"""


def test_a_held_lock_makes_another_process_wait_until_its_holder_dies(tmp_path: Path, caplog) -> None:
    """The lock is the operating system's: a holder killed mid-work (a crash, a cancelled run) frees it."""
    lock = tmp_path / "store.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        entered = threading.Event()

        def wait_for_it() -> None:
            with held(lock, "the waiting side"):
                entered.set()

        with caplog.at_level(logging.INFO, logger="core.files"):
            waiter = threading.Thread(target=wait_for_it)
            waiter.start()
            assert not entered.wait(1.5)   # still held by the other process
            holder.kill()
            assert entered.wait(30)
            waiter.join()
        assert "waiting for another process to finish the waiting side" in caplog.text
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_that_cannot_be_made_is_not_held(tmp_path: Path) -> None:
    """A folder that is missing or read-only: the guarded work runs and fails, if it must, with its own error."""
    ran = []
    with held(tmp_path / "no such folder" / "store.lock", "a test"):
        ran.append(True)
    assert ran == [True]


def test_two_threads_of_one_process_take_the_lock_in_turn(tmp_path: Path) -> None:
    """Two app sessions are two threads of one process: the lock orders them as it orders processes."""
    lock, order = tmp_path / "store.lock", []
    first_in = threading.Event()

    def first() -> None:
        with held(lock, "first"):
            order.append("first in")
            first_in.set()
            threading.Event().wait(0.8)
            order.append("first out")

    def second() -> None:
        first_in.wait(10)
        with held(lock, "second"):
            order.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert order == ["first in", "first out", "second in"]
