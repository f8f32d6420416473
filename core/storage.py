"""Where indexes live: the local data folder, or a `chroma run` server. Read from the environment once."""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
# In a checkout, indexes live in its data/ folder; installed (pip install .), the packages sit in site-packages,
# which is no place for them: the user's cache folder then.
DEFAULT_DATA_DIR = PROJECT_ROOT / "data" / "index" if (PROJECT_ROOT / "data" / "cases").is_dir() else \
    Path.home() / ".cache" / "detective-rag" / "index"


@dataclass(frozen=True)
class Storage:
    data_dir: Path = DEFAULT_DATA_DIR   # the Chroma folder and saved graphs
    chroma_host: str = ""                              # set: use this Chroma server instead of the folder
    chroma_port: int = 8000

    def __post_init__(self) -> None:
        object.__setattr__(self, "data_dir", Path(self.data_dir))
        if self.data_dir.exists() and not self.data_dir.is_dir():
            raise ValueError(f"DETECTIVE_DATA_DIR={self.data_dir} is a file; it must be a folder (or not exist)")
        if not 0 < self.chroma_port < 65536:
            raise ValueError(f"CHROMA_PORT must be a port number (1-65535), not {self.chroma_port}")

    @property
    def graphs_dir(self) -> Path:
        return self.data_dir / "graphs"

    @property
    def ner_dir(self) -> Path:
        """spaCy's named entities of each set of passages (kg/mentions.py)."""
        return self.data_dir / "ner"

    def replace(self, **changes) -> Storage:
        """A copy with some fields changed; ``None`` values are ignored (unset CLI flags)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Storage:
        env = os.environ if env is None else env
        port = (env.get("CHROMA_PORT") or "").strip()
        if port and not port.isdigit():
            raise ValueError(f"environment variable CHROMA_PORT={port!r} is not a port number")
        data_dir = (env.get("DETECTIVE_DATA_DIR") or "").strip()
        return cls(data_dir=Path(data_dir).expanduser() if data_dir else cls.data_dir,
                   chroma_host=(env.get("CHROMA_HOST") or "").strip(),
                   chroma_port=int(port) if port else cls.chroma_port)
