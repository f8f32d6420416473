#!/usr/bin/env python3
"""The app at rest: CPU the Streamlit process uses while a page is open and nobody touches it.

Starts `streamlit run streamlit_app.py` with the project's .streamlit/config.toml (no file watcher), opens the page
in headless Debian chromium (Playwright), waits until cell 1 is drawn and `--settle` seconds more, then reads the
server process's CPU time (utime + stime from /proc, its threads included) over `--seconds` of idling.
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from common import ROOT, write_result


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--settle", type=float, default=10.0)
    args = p.parse_args(argv)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    home = tempfile.mkdtemp()
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "streamlit_app.py"),
                               "--server.port", str(port)], cwd=ROOT, env={**os.environ, "HOME": home},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                         headless=True, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}", wait_until="domcontentloaded")
            page.get_by_role("heading", name="1 · The case files").wait_for(timeout=180_000)
            time.sleep(args.settle)
            before, started = cpu_seconds(server.pid), time.monotonic()
            time.sleep(args.seconds)
            used, elapsed = cpu_seconds(server.pid) - before, time.monotonic() - started
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=20)
        shutil.rmtree(home, ignore_errors=True)
    share = round(100 * used / elapsed, 2)
    print(f"the app's process used {used:.2f} CPU-seconds in {elapsed:.0f} s idle with a page open: {share}% of a core")
    write_result("app_idle", {"idle_seconds": round(elapsed, 1), "cpu_seconds": round(used, 3),
                              "cpu_percent_of_a_core": share, "settle_seconds": args.settle})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
