"""Shared fixtures: real embedded llama.cpp backend, isolated caches, a loopback fault server."""
from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from core.storage import Storage
from llm import Settings, connect

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def session_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("session")


@pytest.fixture(scope="session")
def base_settings(session_dir) -> Settings:
    """Embedded backend; responses cached per test session; the model file in the user's cache."""
    defaults = Settings.from_env({})
    return Settings(backend="embedded", cache_dir=session_dir / "cache", models_dir=defaults.gguf_dir,
                    embedded_parallel=2)


@pytest.fixture(scope="session")
def storage(session_dir) -> Storage:
    """Indexes and saved graphs of this test session, apart from the user's."""
    return Storage(data_dir=session_dir / "index")


@pytest.fixture(scope="session")
def backend(base_settings):
    """The real embedded llama.cpp server, reached over HTTP like any OpenAI-compatible server."""
    return connect(base_settings)


Handler = Callable[[BaseHTTPRequestHandler, dict | None], None]


class _QuietServer(ThreadingHTTPServer):
    """A client that gives up on purpose (a timeout test) leaves its handler writing to a closed socket: that is
    the test working, not an error to print into whatever test runs next."""

    def handle_error(self, request, client_address):
        pass


class FaultServer:
    """A loopback HTTP server whose answers a test scripts, for protocol faults no real server makes on demand."""

    def __init__(self):
        self.script: list[Handler] = []
        self.requests: list[tuple[str, str, dict | None]] = []
        self.headers: list[dict[str, str]] = []   # each request's headers, in order
        outer = self

        class _H(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                outer.requests.append((self.command, self.path, body))
                outer.headers.append(dict(self.headers.items()))
                handler = outer.script.pop(0) if len(outer.script) > 1 else outer.script[0]
                handler(self, body)

            do_GET = do_POST = _handle

        self.httpd = _QuietServer(("127.0.0.1", 0), _H)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def reply(status: int, body, headers: dict | None = None) -> Handler:
    def handler(h: BaseHTTPRequestHandler, _req):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)
    return handler


def bad_gzip(h: BaseHTTPRequestHandler, _req) -> None:
    """A reply that says it is gzip and is not: the body cannot be decoded."""
    data = b"\x1f\x8b\x08\x00 not really gzip at all"
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Encoding", "gzip")
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    h.wfile.write(data)


def chat_body(content=None, reasoning=None) -> dict:
    message = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return {"choices": [{"index": 0, "message": message}], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}


def first_token_body(text: str, top: dict[str, float]) -> dict:
    """A chat reply of ``text`` whose first token's likeliest carry ``top`` (token -> probability) as logprobs."""
    body = chat_body(content=text)
    body["choices"][0]["logprobs"] = {"content": [{"token": text, "logprob": -0.1, "top_logprobs": [
        {"token": token, "logprob": math.log(p)} for token, p in top.items()]}]}
    return body


@pytest.fixture
def fault_server():
    server = FaultServer()
    yield server
    server.close()


@pytest.fixture
def app_env(base_settings, storage, monkeypatch):
    """The app's environment: the embedded backend and this session's caches and indexes."""
    env = {"LLM_BACKEND": "embedded", "DETECTIVE_CACHE_DIR": str(base_settings.cache_dir),
           "DETECTIVE_DATA_DIR": str(storage.data_dir), "LLM_MODELS_DIR": str(base_settings.gguf_dir)}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return env


# Fixtures that reach a chat model (the embedded llama.cpp server, started on first use), and the browser.
_LLM_FIXTURES = {"backend", "app_env", "browser_app"}


def pytest_collection_modifyitems(config, items):
    """Mark every test that needs the model as ``llm`` (``make test-fast`` leaves them out), by the fixtures it
    uses, so a new test is classed without anyone remembering a marker."""
    for item in items:
        if _LLM_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.llm)
