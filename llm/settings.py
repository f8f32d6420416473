"""One settings object for the whole project, read from the environment once.

Every other module receives a ``Settings`` instance; nothing else reads ``os.environ``.
CLI flags and the app's sidebar override fields with ``settings.replace(...)``.
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

PRESETS: dict[str, str] = {
    "lmstudio": "http://127.0.0.1:1234/v1",
    "ollama": "http://127.0.0.1:11434/v1",
    "llamacpp": "http://127.0.0.1:8080/v1",
    "vllm": "http://127.0.0.1:8000/v1",
}

def public_url(url: str) -> str:
    """``url`` without the user and password a base URL may carry (http://user:key@host/v1 -> http://host/v1):
    the form every printed, logged or saved URL takes."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


BACKENDS = ("auto", "openai", "embedded")
EMBED_BACKENDS = ("auto", "openai", "local")
LOCAL_EMBED_MODEL = "all-MiniLM-L6-v2"             # float32 compute (llm/embedders.py: LocalMiniLM)
LOCAL_EMBED_MODEL_INT8 = "all-MiniLM-L6-v2-int8"   # the same weights multiplied in int8: 1.6-1.8x faster
LOCAL_EMBED_MODELS = (LOCAL_EMBED_MODEL, LOCAL_EMBED_MODEL_INT8)


def url_credentials(url: str) -> tuple[str, str] | None:
    """The (user, password) a base URL carries, for HTTP basic auth, or None."""
    parts = urlsplit(url)
    if parts.username is None:
        return None
    return unquote(parts.username), unquote(parts.password or "")


@dataclass(frozen=True)
class Settings:
    backend: str = "auto"
    base_url: str = field(default=PRESETS["lmstudio"], repr=False)   # may carry credentials: see public_url
    api_key: str = field(default="", repr=False)
    model: str = ""                  # answers; empty = the server's first model
    extraction_model: str = ""       # OpenIE; empty = same as model
    embed_backend: str = "auto"
    embed_model: str = ""            # empty = local all-MiniLM-L6-v2
    model_path: str = ""             # embedded: any GGUF instead of the bundled Qwen2.5-Coder 1.5B
    request_timeout: float = 180.0
    probe_timeout: float = 1.5
    max_retries: int = 3
    max_tokens: int = 512
    cache_dir: Path = Path.home() / ".cache" / "detective-rag"
    cache_enabled: bool = True
    models_dir: Path | None = None   # where the joined GGUF lives; None = cache_dir/models (see gguf_dir)
    embedded_threads: int = 0        # 0 = all cores
    embedded_ctx: int = 8192
    embedded_parallel: int = 2

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"LLM_BACKEND must be one of {', '.join(BACKENDS)}, not {self.backend!r}")
        if self.embed_backend not in EMBED_BACKENDS:
            raise ValueError(
                f"EMBED_BACKEND must be one of {', '.join(EMBED_BACKENDS)}, not {self.embed_backend!r}")
        if self.cache_dir.exists() and not self.cache_dir.is_dir():
            raise ValueError(f"DETECTIVE_CACHE_DIR={self.cache_dir} is a file; it must be a folder (or not exist)")
        # A bound per variable: a value outside it would fail later, after the expensive work.
        for name, value, low, high in (("LLM_TIMEOUT", self.request_timeout, 0.1, 86_400),
                                       ("LLM_PROBE_TIMEOUT", self.probe_timeout, 0.05, 600),
                                       ("LLM_MAX_RETRIES", self.max_retries, 0, 20),
                                       ("LLM_MAX_TOKENS", self.max_tokens, 16, 1_000_000),
                                       ("EMBEDDED_THREADS", self.embedded_threads, 0, 1024),
                                       ("EMBEDDED_CTX", self.embedded_ctx, 512, 1_048_576),
                                       ("EMBEDDED_PARALLEL", self.embedded_parallel, 1, 64)):
            if not low <= value <= high:   # also False for NaN
                raise ValueError(f"{name}={value} is out of range; it must be between {low} and {high}")

    @property
    def gguf_dir(self) -> Path:
        """The folder the embedded model file is joined into."""
        return self.models_dir or self.cache_dir / "models"

    @property
    def effective_extraction_model(self) -> str:
        return self.extraction_model or self.model

    def replace(self, **changes) -> Settings:
        """A copy with some fields changed; ``None`` values are ignored (unset CLI flags)."""
        changes = {k: v for k, v in changes.items() if v is not None}
        if "base_url" in changes:
            changes["base_url"] = PRESETS.get(changes["base_url"], changes["base_url"])
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        d = cls()

        def get(name: str, default):
            raw = env.get(name)
            if raw is None or raw.strip() == "":
                return default
            raw = raw.strip()
            try:
                if isinstance(default, bool):
                    return raw.lower() not in ("0", "false", "no", "off")
                if isinstance(default, int):
                    return int(raw)
                if isinstance(default, float):
                    return float(raw)
            except ValueError:
                raise ValueError(f"environment variable {name}={raw!r} is not a valid number") from None
            if isinstance(default, Path):
                return Path(raw).expanduser()
            return raw

        base_url = get("LLM_BASE_URL", d.base_url)
        return cls(
            backend=get("LLM_BACKEND", d.backend).lower(),
            base_url=PRESETS.get(base_url, base_url).rstrip("/"),
            api_key=get("LLM_API_KEY", d.api_key),
            model=get("LLM_MODEL", d.model),
            extraction_model=get("LLM_EXTRACTION_MODEL", d.extraction_model),
            embed_backend=get("EMBED_BACKEND", d.embed_backend).lower(),
            embed_model=get("EMBED_MODEL", d.embed_model),
            model_path=get("LLM_MODEL_PATH", d.model_path),
            request_timeout=get("LLM_TIMEOUT", d.request_timeout),
            probe_timeout=get("LLM_PROBE_TIMEOUT", d.probe_timeout),
            max_retries=get("LLM_MAX_RETRIES", d.max_retries),
            max_tokens=get("LLM_MAX_TOKENS", d.max_tokens),
            cache_dir=get("DETECTIVE_CACHE_DIR", d.cache_dir),
            cache_enabled=get("LLM_CACHE", d.cache_enabled),
            models_dir=Path(env["LLM_MODELS_DIR"]).expanduser() if env.get("LLM_MODELS_DIR") else None,
            embedded_threads=get("EMBEDDED_THREADS", d.embedded_threads),
            embedded_ctx=get("EMBEDDED_CTX", d.embedded_ctx),
            embedded_parallel=get("EMBEDDED_PARALLEL", d.embedded_parallel),
        )
