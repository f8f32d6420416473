"""The embedded backend: llama.cpp's own OpenAI-compatible server, in-process via xllamacpp.

One server per process, started lazily on a free 127.0.0.1 port, health-checked, stopped at exit.
Everything else talks to it over HTTP exactly as it would to LM Studio.
"""
from __future__ import annotations

import atexit
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import requests

from .errors import ModelFileError, ServerUnavailable
from .model_file import QWEN_CODER_1_5B, assemble
from .settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EmbeddedServer:
    base_url: str
    model: str
    model_path: Path
    started_s: float


_lock = threading.Lock()
_server: EmbeddedServer | None = None
_handle = None  # the xllamacpp.Server object: keeping a reference keeps the server alive


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def resolve_model(settings: Settings) -> tuple[Path, str]:
    """The GGUF file to serve and the alias to serve it under."""
    if settings.model_path:
        path = Path(settings.model_path).expanduser()
        if not path.is_file():
            raise ModelFileError(f"LLM_MODEL_PATH points at {path}, which is not a file")
        with open(path, "rb") as fh:
            if fh.read(4) != b"GGUF":   # llama.cpp would fail deep inside with a bare RuntimeError
                raise ModelFileError(f"LLM_MODEL_PATH points at {path}, which is not a GGUF model file")
        return path, path.stem.lower()
    return assemble(QWEN_CODER_1_5B, settings.gguf_dir), QWEN_CODER_1_5B.name


def ensure_server(settings: Settings) -> EmbeddedServer:
    """Start the embedded server once per process (thread-safe) and return where it listens."""
    global _server, _handle
    with _lock:
        if _server is not None:
            wanted = Path(settings.model_path).expanduser() if settings.model_path else None
            if wanted is not None and wanted != _server.model_path:
                resolve_model(settings)   # a bad file is named as such
                raise ModelFileError(f"the embedded server of this process already serves {_server.model_path}; "
                                     f"LLM_MODEL_PATH={wanted} takes effect after a restart")
            return _server
        import xllamacpp  # imported here: only the embedded backend needs it

        path, alias = resolve_model(settings)
        started = time.perf_counter()
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.model_alias = {alias}
        params.hostnames = ["127.0.0.1"]
        params.port = _free_port()
        params.n_ctx = settings.embedded_ctx
        params.n_parallel = max(1, settings.embedded_parallel)
        threads = settings.embedded_threads or (os.cpu_count() or 2)
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.verbosity = -1
        params.warmup = False
        params.cache_prompt = True
        # Serve /v1/embeddings too (mean-pooled), so the embedded server is a complete OpenAI-style backend.
        params.embedding = True
        params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
        log.info("starting embedded llama.cpp server with %s on 127.0.0.1:%d", path.name, params.port)
        _handle = xllamacpp.Server(params)
        base_url = f"http://127.0.0.1:{params.port}/v1"
        _wait_healthy(base_url, timeout=120.0)
        _server = EmbeddedServer(base_url=base_url, model=alias, model_path=path,
                                 started_s=time.perf_counter() - started)
        log.info("embedded server ready at %s in %.1fs", base_url, _server.started_s)
        return _server


def _wait_healthy(base_url: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    health = base_url.rsplit("/v1", 1)[0] + "/health"
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            r = requests.get(health, timeout=2.0)
            if r.status_code == 200:
                return
            last = f"HTTP {r.status_code}"
        except requests.RequestException as exc:
            last = type(exc).__name__
        time.sleep(0.2)
    raise ServerUnavailable(f"embedded llama.cpp server did not become healthy in {timeout:g}s ({last})",
                            url=base_url)


def stop_server() -> None:
    """Stop the embedded server (also runs at interpreter exit)."""
    global _server, _handle
    with _lock:
        _handle, _server = None, None  # xllamacpp stops the server when the object is released


def current_server() -> EmbeddedServer | None:
    return _server


atexit.register(stop_server)
