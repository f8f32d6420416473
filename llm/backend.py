"""Choose and connect the backend: a configured OpenAI-compatible server, or the embedded one."""
from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from pathlib import Path

from .cache import ResponseCache
from .client import OpenAIClient
from .embedders import CachingEmbedder, Embedder, LocalMiniLM, ServerEmbedder
from .errors import LLMError, ServerUnavailable
from .settings import LOCAL_EMBED_MODEL, LOCAL_EMBED_MODEL_INT8, LOCAL_EMBED_MODELS, Settings, public_url

log = logging.getLogger(__name__)

# Stops the small models' schema-constrained output from looping on the same item (see DESIGN.md).
EMBEDDED_SAMPLING = {"repeat_penalty": 1.1}


@dataclass
class Backend:
    kind: str              # "openai" or "embedded"
    reason: str            # why this backend was chosen, for the CLI line and the app banner
    base_url: str
    client: OpenAIClient
    model: str             # answers
    extraction_model: str  # OpenIE
    embedder: Embedder

    @property
    def embed_model(self) -> str:
        return self.embedder.name

    def describe(self) -> str:
        return (f"backend: {self.kind} at {self.base_url} (model {self.model}, extraction {self.extraction_model}, "
                f"embeddings {self.embed_model}) - {self.reason}")


@functools.lru_cache(maxsize=4)
def response_cache(cache_dir: Path) -> ResponseCache:
    """One cache object per cache folder and process, shared by every client."""
    return ResponseCache(Path(cache_dir) / "responses.sqlite")


@functools.lru_cache(maxsize=2)
def local_embedder(name: str = LOCAL_EMBED_MODEL) -> LocalMiniLM:
    """One local MiniLM per name and process (LOCAL_EMBED_MODELS)."""
    return LocalMiniLM(int8_matmuls=name == LOCAL_EMBED_MODEL_INT8)


def probe(base_url: str, api_key: str, timeout: float) -> tuple[bool, str, list[str]]:
    """Does an OpenAI-compatible server answer GET {base}/models? Returns (ok, reason, models)."""
    client = OpenAIClient(base_url, api_key=api_key, timeout=timeout, max_retries=0)
    try:
        models = client.list_models(timeout=timeout)
    except LLMError as exc:
        return False, str(exc), []
    return True, f"{public_url(base_url)} answered with {len(models)} model(s)", models


def connect(settings: Settings) -> Backend:
    """Resolve ``settings.backend`` to a working backend; raise LLMError with the reason if none."""
    cache = response_cache(settings.cache_dir) if settings.cache_enabled else None
    if settings.backend in ("auto", "openai"):
        ok, why, models = probe(settings.base_url, settings.api_key, settings.probe_timeout)
        if ok and models:
            client = OpenAIClient(settings.base_url, api_key=settings.api_key, timeout=settings.request_timeout,
                                  max_retries=settings.max_retries, cache=cache)
            model = settings.model or models[0]
            reason = "configured server answered" if settings.backend == "openai" else \
                f"auto: {client.base_url} answered, so it is used"
            return Backend(kind="openai", reason=reason, base_url=client.base_url, client=client,
                           model=model, extraction_model=settings.extraction_model or model,
                           embedder=_embedder(settings, "openai", client, cache))
        if settings.backend == "openai":
            raise ServerUnavailable(f"LLM_BACKEND=openai but no usable server: {why or 'it lists no models'}",
                                    url=public_url(settings.base_url))
        reason = (f"auto: nothing usable at {public_url(settings.base_url)} ({why or 'no models listed'}); using the "
                  "embedded model")
    else:
        reason = "LLM_BACKEND=embedded"
    from .embedded import ensure_server  # lazy: xllamacpp and the model file only when needed

    server = ensure_server(settings)
    client = OpenAIClient(server.base_url, timeout=settings.request_timeout, max_retries=settings.max_retries,
                          cache=cache, cache_namespace=f"embedded:{server.model}", extra_body=EMBEDDED_SAMPLING,
                          server_kind="embedded", progress_deadline=True)
    return Backend(kind="embedded", reason=reason, base_url=server.base_url, client=client, model=server.model,
                   extraction_model=server.model, embedder=_embedder(settings, "embedded", client, cache))


def _embedder(settings: Settings, kind: str, client: OpenAIClient, cache: ResponseCache | None) -> Embedder:
    want_server = settings.embed_backend == "openai" or (
        settings.embed_backend == "auto" and kind == "openai" and settings.embed_model
        and settings.embed_model not in LOCAL_EMBED_MODELS)
    if want_server:
        if not settings.embed_model:
            raise ValueError("EMBED_BACKEND=openai needs EMBED_MODEL (the server's embedding model name)")
        inner: Embedder = ServerEmbedder(client, settings.embed_model)
    else:
        inner = _local(settings)
    return CachingEmbedder(inner, cache)


def _local(settings: Settings) -> Embedder:
    """The local MiniLM the settings name (LOCAL_EMBED_MODEL when they name none); another model only a server
    could serve is an error."""
    if settings.embed_model and settings.embed_model not in LOCAL_EMBED_MODELS:
        raise ValueError(f"EMBED_MODEL={settings.embed_model!r} is not a local model ({', '.join(LOCAL_EMBED_MODELS)}),"
                         " and no server embeds here: set EMBED_BACKEND=openai with a server that serves it, or leave "
                         "EMBED_MODEL empty")
    return local_embedder(settings.embed_model or LOCAL_EMBED_MODEL)


def embedder_only(settings: Settings) -> Embedder:
    """Just the embedder (for retrieval-only runs that need no chat model)."""
    cache = response_cache(settings.cache_dir) if settings.cache_enabled else None
    if settings.embed_backend == "openai":
        client = OpenAIClient(settings.base_url, api_key=settings.api_key, timeout=settings.request_timeout,
                              max_retries=settings.max_retries, cache=cache)
        return _embedder(settings, "openai", client, cache)
    return CachingEmbedder(_local(settings), cache)
