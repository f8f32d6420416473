"""An OpenAI-compatible HTTP client (chat completions, embeddings, model list) on ``requests``.

Works the same against LM Studio, Ollama, llama.cpp's server (including our embedded one) and vLLM.
"""
from __future__ import annotations

import email.utils
import json
import logging
import math
import random
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import requests
import urllib3

from .cache import ResponseCache, cache_key
from .errors import (
    AuthenticationFailed,
    BadResponse,
    EndpointNotFound,
    LLMError,
    ModelNotFound,
    RequestTimeout,
    ServerUnavailable,
)
from .jsonparse import strip_think
from .settings import public_url, url_credentials

log = logging.getLogger(__name__)

Message = dict[str, str]


@dataclass
class ChatResult:
    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    elapsed_ms: float = 0.0


@dataclass
class Verdict:
    """A Yes/No question's answer as a share: how much of the model's weight on "yes" or "no" went to "yes"."""
    yes: float           # 0.5 when the reply is neither
    model: str
    cached: bool = False
    elapsed_ms: float = 0.0


@dataclass
class Usage:
    """Counters a client keeps so benchmarks and tests can see what really went over the wire."""
    chat_calls: int = 0
    embed_calls: int = 0
    embedded_texts: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0    # prompt tokens the server reused from its prefix cache (llama.cpp reports them)
    completion_tokens: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        with self.lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)

    def snapshot(self) -> dict[str, int]:
        with self.lock:
            return {k: getattr(self, k) for k in
                    ("chat_calls", "embed_calls", "embedded_texts", "cache_hits", "prompt_tokens",
                     "cached_prompt_tokens", "completion_tokens")}


def _cut(resp: requests.Response, expired: threading.Event) -> None:
    """Past the deadline: end a streamed reply's connection so a blocked read returns now."""
    expired.set()
    sock = getattr(getattr(getattr(getattr(resp.raw, "_fp", None), "fp", None), "raw", None), "_sock", None)
    try:
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
        else:
            resp.close()
    except OSError:
        pass


# Characters kept per requested token: English runs ~4 a token, so 12 is room for any tokenizer, and a reply
# past it came from a server that did not honour max_tokens.
CHARS_PER_TOKEN_CAP = 12


class OpenAIClient:
    """Chat and embeddings against one OpenAI-compatible base URL."""

    def __init__(self, base_url: str, *, api_key: str = "", timeout: float = 180.0, max_retries: int = 3,
                 backoff: float = 0.5, cache: ResponseCache | None = None, cache_namespace: str | None = None,
                 extra_body: dict[str, Any] | None = None, server_kind: str = "openai",
                 progress_deadline: bool = False):
        """``progress_deadline``: chat replies stream and ``timeout`` counts from the last byte received, not from
        the request (for a local model: a slow machine still producing tokens is not a dead server)."""
        # Credentials in the URL become the session's basic auth, so the URL this client names in its messages,
        # logs and cache keys never carries them.
        self.base_url = public_url(base_url).rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.progress_deadline = progress_deadline
        self.max_retries = max_retries
        self.backoff = backoff
        self.cache = cache
        self.cache_namespace = cache_namespace or self.base_url
        self.extra_body = dict(extra_body or {})
        self.server_kind = server_kind
        self.usage = Usage()
        self._session = requests.Session()
        self._session.auth = url_credentials(base_url)
        self._known_models: list[str] | None = None
        self._schema_unsupported = False
        self._lock = threading.Lock()

    # -- public API ---------------------------------------------------------------------------
    def list_models(self, timeout: float | None = None) -> list[str]:
        body = self._request("GET", "/models", None, timeout=timeout or self.timeout, model="", retries=0)
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise BadResponse("GET /models returned no 'data' list", url=self.base_url)
        return [str(m.get("id")) for m in data if isinstance(m, dict) and m.get("id")]

    def default_model(self) -> str:
        models = self._models()
        if not models:
            raise ModelNotFound("the server lists no models; load one first", url=self.base_url)
        return models[0]

    def chat(self, messages: list[Message], *, model: str, max_tokens: int = 512, temperature: float = 0.0,
             json_schema: dict | None = None, use_cache: bool = True,
             on_text: Callable[[str], None] | None = None,
             accept: Callable[[str], bool] | None = None) -> ChatResult:
        """One chat completion. ``json_schema`` constrains output where the server supports it.

        ``on_text`` receives the reply as it streams, piece by piece (a cached reply in one piece). A reply is
        cached only when it is not empty and ``accept`` (the caller's check) takes it; a cached reply the check
        refuses is asked again.
        """
        self.check_model(model)
        params = {"max_tokens": max_tokens, "temperature": temperature, "schema": json_schema,
                  "extra": self.extra_body}
        key = cache_key("chat", self.cache_namespace, model, messages, params)
        if use_cache and self.cache is not None:
            hit = self.cache.get_chat(key)
            if hit is not None and hit.get("text") and (accept is None or accept(hit["text"])):
                self.usage.add(cache_hits=1)
                if on_text is not None:
                    on_text(hit["text"])
                return ChatResult(text=hit["text"], model=model, cached=True)
        stream = on_text is not None or self.progress_deadline
        payload: dict[str, Any] = {"model": model, "messages": messages, "max_tokens": max_tokens,
                                   "temperature": temperature, "stream": stream, **self.extra_body}
        if stream:
            payload["stream_options"] = {"include_usage": True}
        if json_schema is not None and not self._schema_unsupported:
            # A JSON schema, never response_format json_object: LM Studio answers that with HTTP 400.
            payload["response_format"] = {"type": "json_schema",
                                          "json_schema": {"name": "output", "strict": True,
                                                          "schema": json_schema}}
        started = time.perf_counter()
        send = (lambda: self._stream_chat(payload, model, on_text)) if stream else \
            (lambda: self._request("POST", "/chat/completions", payload, model=model))
        try:
            body = send()
        except BadResponse as exc:
            if "response_format" in payload and exc.status == 400:
                log.info("%s rejected response_format; retrying without a schema", self.base_url)
                self._schema_unsupported = True
                payload.pop("response_format")
                body = send()
            else:
                raise
        elapsed = (time.perf_counter() - started) * 1000
        text = self._message_text(body, model)
        limit = max_tokens * CHARS_PER_TOKEN_CAP
        if len(text) > limit:   # a server that ignores max_tokens: keep what the limit allows, say so
            log.warning("%s sent %d characters for max_tokens=%d; kept the first %d", self.base_url, len(text),
                        max_tokens, limit)
            text = text[:limit]
        prompt_tokens, completion_tokens = self._count_call(body)
        result = ChatResult(text=text, model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                            elapsed_ms=elapsed)
        if use_cache and self.cache is not None and text and (accept is None or accept(text)):
            self.cache.put_chat(key, {"text": text})
        return result

    def yes_share(self, messages: list[Message], *, model: str, use_cache: bool = True) -> Verdict:
        """One token's answer to a Yes/No question, as the share of "yes" in the model's weight on yes and no among
        its ten likeliest first tokens (the server's logprobs). A server that sends no logprobs is read by its text:
        1.0 for yes, 0.0 for no, 0.5 for anything else."""
        self.check_model(model)
        key = cache_key("yes", self.cache_namespace, model, messages, self.extra_body)
        if use_cache and self.cache is not None:
            hit = self.cache.get_chat(key)
            if hit is not None and isinstance(hit.get("yes"), float):
                self.usage.add(cache_hits=1)
                return Verdict(hit["yes"], model, cached=True)
        payload: dict[str, Any] = {"model": model, "messages": messages, "max_tokens": 1, "temperature": 0.0,
                                   "logprobs": True, "top_logprobs": 10, **self.extra_body}
        started = time.perf_counter()
        body = self._request("POST", "/chat/completions", payload, model=model)
        elapsed = (time.perf_counter() - started) * 1000
        yes = _yes_share(body)
        if yes is None:
            said = self._message_text(body, model).strip().lower()
            yes = 1.0 if said.startswith("yes") else 0.0 if said.startswith("no") else 0.5
        self._count_call(body)
        if use_cache and self.cache is not None:
            self.cache.put_chat(key, {"text": f"{yes:.6f}", "yes": yes})
        return Verdict(yes, model, elapsed_ms=elapsed)

    def embed(self, texts: list[str], *, model: str, batch_size: int = 64) -> np.ndarray:
        """Embeddings for ``texts`` as an (n, d) float32 array, L2-normalized."""
        self.check_model(model)
        out: list[list[float]] = []
        for start in range(0, len(texts), batch_size):
            batch = texts[start:start + batch_size]
            body = self._request("POST", "/embeddings", {"model": model, "input": batch}, model=model)
            data = body.get("data") if isinstance(body, dict) else None
            if not isinstance(data, list) or len(data) != len(batch):
                raise BadResponse(f"/embeddings returned {0 if not isinstance(data, list) else len(data)} "
                                  f"vectors for {len(batch)} texts", url=self.base_url, model=model)
            data = sorted(data, key=lambda d: d.get("index", 0))
            out.extend(d["embedding"] for d in data)
            self.usage.add(embed_calls=1, embedded_texts=len(batch))
        arr = np.asarray(out, dtype=np.float32)
        if arr.ndim != 2:
            raise BadResponse("embeddings are not a list of equal-length vectors", url=self.base_url, model=model)
        return normalize_rows(arr)

    def check_model(self, model: str) -> None:
        """Raise ModelNotFound unless the server lists ``model`` (checked once per client)."""
        if not model:
            raise ModelNotFound("no model name given", url=self.base_url)
        models = self._models()
        if models and model not in models:
            raise ModelNotFound(f"the server does not serve model {model!r}; it lists: {', '.join(models[:10])}",
                                url=self.base_url, model=model)

    # -- internals ----------------------------------------------------------------------------
    def _count_call(self, body: Any) -> tuple[int, int]:
        """One chat call in ``usage``, its tokens as the reply's usage says; (prompt, completion) tokens."""
        reply: dict = body if isinstance(body, dict) else {}
        usage: dict = reply["usage"] if isinstance(reply.get("usage"), dict) else {}
        details: dict = usage["prompt_tokens_details"] if isinstance(usage.get("prompt_tokens_details"), dict) else {}
        prompt, completion = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
        self.usage.add(chat_calls=1, prompt_tokens=prompt, cached_prompt_tokens=_count(details.get("cached_tokens")),
                       completion_tokens=completion)
        return prompt, completion

    def _models(self) -> list[str]:
        with self._lock:
            if self._known_models is None:
                self._known_models = self.list_models()
            return self._known_models

    def _message_text(self, body: Any, model: str) -> str:
        try:
            message = body["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise BadResponse("chat response has no choices[0].message", url=self.base_url, model=model) from None
        if not isinstance(message, dict):
            raise BadResponse("chat response's choices[0].message is not an object", url=self.base_url, model=model)
        content = message.get("content") or ""
        if not content and message.get("tool_calls"):
            raise BadResponse("the model answered with a tool call, not text (this project asks for none): use a "
                              "chat model without forced tool use", url=self.base_url, model=model)
        text = strip_think(content) if isinstance(content, str) else ""
        if not text:
            # Reasoning models sometimes put everything in reasoning_content and leave content empty.
            reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
            text = strip_think(reasoning) if isinstance(reasoning, str) else ""
            if not text and isinstance(reasoning, str):
                text = reasoning.strip()
        return text

    def _request(self, method: str, path: str, payload: dict | None, *, model: str,
                 timeout: float | None = None, retries: int | None = None) -> Any:
        url = self.base_url + path
        timeout = self.timeout if timeout is None else timeout
        headers = self._headers()

        def once() -> Any:
            status, text, resp_headers = self._send(method, url, payload, headers, timeout)
            if status == 429 or status >= 500:
                raise _Retryable(self._error(status, text, url, model), resp_headers.get("Retry-After"))
            if status >= 400:
                raise self._error(status, text, url, model)
            return _json_body(status, text, url, model)
        return self._retrying(once, url, model, self.max_retries if retries is None else retries)

    def _retrying(self, once: Callable[[], Any], url: str, model: str, retries: int,
                  give_up: Callable[[], bool] = lambda: False) -> Any:
        """``once()`` again after a connection failure or an HTTP 429/5xx, with backoff, up to ``retries`` times
        (never once ``give_up()`` says so)."""
        attempt = 0
        while True:
            try:
                return once()
            except (ServerUnavailable, _Retryable) as exc:
                if give_up() or attempt >= retries:
                    if isinstance(exc, _Retryable):
                        raise exc.error from None
                    raise ServerUnavailable(f"cannot reach the model server ({exc.detail})", url=url,
                                            model=model) from None
                self._sleep(attempt, exc.retry_after if isinstance(exc, _Retryable) else None)
                attempt += 1

    def _stream_chat(self, payload: dict, model: str, on_text: Callable[[str], None] | None) -> dict:
        """A streamed chat completion, read as server-sent events and returned as the non-streamed body.

        Failures before the first piece are retried like any request; after it, they raise (the caller has
        shown part of a reply). Without ``progress_deadline`` the whole reply must arrive within ``timeout``.
        """
        url = self.base_url + "/chat/completions"
        pieces: list[str] = []

        def once() -> dict:
            pieces.clear()
            return self._read_events(url, payload, model, pieces, on_text)
        return self._retrying(once, url, model, self.max_retries, give_up=lambda: bool(pieces))

    def _read_events(self, url: str, payload: dict, model: str, pieces: list[str],
                     on_text: Callable[[str], None] | None) -> dict:
        """The reply as a chat-completion body; ``pieces`` collects the text as it arrives."""
        deadline = None if self.progress_deadline else time.monotonic() + self.timeout
        try:
            resp = self._session.post(url, json=payload, headers=self._headers(), stream=True,
                                      timeout=(min(self.timeout, 10.0), self.timeout))
        except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise _transport_error(exc, url, f"no answer within {self.timeout:g}s", model) from None
        # The whole-reply deadline is kept by a timer that cuts the connection: a read timeout alone never fires
        # for a server that trickles a byte a second, and iter_lines only looks at the clock between lines.
        expired = threading.Event()
        watchdog = None
        if deadline is not None:
            watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), _cut, (resp, expired))
            watchdog.daemon = True
            watchdog.start()
        late = RequestTimeout(f"no complete answer within {self.timeout:g}s", url=url, model=model)
        try:
            if resp.status_code >= 400:
                error = self._error(resp.status_code, resp.text, url, model)
                if resp.status_code == 429 or resp.status_code >= 500:
                    raise _Retryable(error, resp.headers.get("Retry-After"))
                raise error
            if "json" in resp.headers.get("Content-Type", ""):   # a server that does not stream answers at once
                body = _json_body(resp.status_code, resp.text, url, model)
                pieces.append(self._message_text(body, model))
                if on_text is not None and pieces[-1]:
                    on_text(pieces[-1])
                return body
            usage, finished = self._read_lines(resp, url, model, pieces, on_text, deadline, late)
        except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            if expired.is_set():
                raise late from None
            raise _transport_error(exc, url, f"no token for {self.timeout:g}s", model) from None
        except ValueError:
            if expired.is_set():
                raise late from None
            raise
        finally:
            if watchdog is not None:
                watchdog.cancel()
            resp.close()
        if expired.is_set():
            raise late
        if not finished:
            raise BadResponse(f"the reply stream ended before the reply was complete (no finish_reason, no [DONE]) "
                              f"after {len(''.join(pieces))} characters: the partial reply is not kept", url=url,
                              model=model)
        return {"choices": [{"message": {"content": "".join(pieces)}}], "usage": usage}

    @staticmethod
    def _read_lines(resp: requests.Response, url: str, model: str, pieces: list[str],
                    on_text: Callable[[str], None] | None, deadline: float | None,
                    late: RequestTimeout) -> tuple[dict, bool]:
        """The server-sent events of one reply: (its usage block, whether it ended with [DONE] or a
        finish_reason); every piece of text goes to ``pieces`` and ``on_text`` as it arrives."""
        usage: dict = {}
        finished = False
        for line in resp.iter_lines():
            if deadline is not None and time.monotonic() > deadline:
                raise late
            if not line.startswith(b"data:"):
                continue   # blank separators and SSE comments (keep-alives)
            data = line[5:].strip()
            if not data:
                continue   # an empty data line carries nothing
            if data == b"[DONE]":
                return usage, True
            event = _sse_event(data, url, model)
            if isinstance(event.get("usage"), dict):
                usage = event["usage"]
            piece, done = _delta(event)
            finished = finished or done
            if piece:
                pieces.append(piece)
                if on_text is not None:
                    on_text(piece)
        return usage, finished

    def _headers(self) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _send(self, method: str, url: str, payload: dict | None, headers: dict, timeout: float):
        """Send one request; ``timeout`` bounds the whole exchange, not just the gaps between bytes."""
        deadline = time.monotonic() + timeout
        try:
            resp = self._session.request(method, url, json=payload, headers=headers, stream=True,
                                         timeout=(min(timeout, 10.0), timeout))
            try:
                chunks = []
                # read1 returns whatever has arrived, so a server trickling bytes still meets the deadline.
                while chunk := resp.raw.read1(65536, decode_content=True):
                    chunks.append(chunk)
                    if time.monotonic() > deadline:
                        raise RequestTimeout(f"no complete answer within {timeout:g}s", url=url)
                body = b"".join(chunks).decode("utf-8", errors="replace")
            finally:
                resp.close()
        except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise _transport_error(exc, url, f"no answer within {timeout:g}s") from None
        return resp.status_code, body, resp.headers

    def _sleep(self, attempt: int, retry_after: str | None) -> None:
        delay = self.backoff * (2 ** attempt) * (1 + 0.1 * random.random())
        if retry_after:
            delay = _retry_after_seconds(retry_after, default=delay)
        time.sleep(min(delay, 30.0, self.timeout))   # a long Retry-After must not outlast the request deadline

    def _error(self, status: int, text: str, url: str, model: str) -> LLMError:
        message = _server_message(text)
        lowered = message.lower()
        if status in (401, 403):
            return AuthenticationFailed(f"HTTP {status}: the server rejected the API key: {message}",
                                        url=url, model=model, status=status)
        if "model" in lowered and ("not found" in lowered or "does not exist" in lowered or "not loaded" in lowered):
            return ModelNotFound(f"HTTP {status}: {message}", url=url, model=model, status=status)
        if status == 404:
            return EndpointNotFound(f"HTTP 404: the server has no {url.rsplit('/v1', 1)[-1] or url} ({message}); "
                                    "check the base URL, which usually ends in /v1", url=url, model=model,
                                    status=status)
        return BadResponse(f"HTTP {status}: {message}", url=url, model=model, status=status)


class _Retryable(Exception):
    """An HTTP 429/5xx before the first streamed piece: worth another try."""

    def __init__(self, error: LLMError, retry_after: str | None):
        super().__init__(str(error))
        self.error, self.retry_after = error, retry_after


def _transport_error(exc: Exception, url: str, timed_out: str, model: str = "") -> LLMError:
    """A requests/urllib3 failure as ours: a timeout (requests reports one mid-stream as a ConnectionError whose
    text says so), else a server that cannot be reached."""
    if isinstance(exc, requests.exceptions.Timeout) or "timed out" in str(exc).lower():
        return RequestTimeout(timed_out, url=url, model=model)
    if isinstance(exc, (requests.exceptions.ContentDecodingError, urllib3.exceptions.DecodeError)):
        return BadResponse(f"the server's reply could not be decoded ({_reason(exc)}): it answered, but with a "
                           "damaged body (a broken gzip stream, say)", url=url, model=model)
    return ServerUnavailable(_reason(exc), url=url)


def _sse_event(data: bytes, url: str, model: str) -> dict:
    """One streamed event's JSON object; BadResponse naming the server for anything else."""
    try:
        event = json.loads(data)
    except UnicodeDecodeError:
        raise BadResponse(f"a streamed event that is not UTF-8 text: {data[:80]!r}", url=url, model=model) from None
    except json.JSONDecodeError:
        raise BadResponse(f"a streamed event that is not JSON: {data[:200]!r}", url=url, model=model) from None
    if not isinstance(event, dict):
        raise BadResponse(f"a streamed event that is not an object: {data[:200]!r}", url=url, model=model)
    if isinstance(event.get("error"), dict):
        raise BadResponse(f"the server stopped the reply: {_server_message(data.decode())}", url=url, model=model)
    return event


def _yes_share(body: Any) -> float | None:
    """The share of "yes" in a reply's first-token weight on yes and no; None when the reply carries no logprobs."""
    try:
        top = body["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        weights = {str(t["token"]): float(t["logprob"]) for t in top}
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    yes = sum(math.exp(lp) for token, lp in weights.items() if token.strip().lower() == "yes")
    no = sum(math.exp(lp) for token, lp in weights.items() if token.strip().lower() == "no")
    return yes / (yes + no) if yes + no > 0 else 0.5


def _delta(event: dict) -> tuple[str, bool]:
    """The text a streamed event adds, and whether it ends the reply (a finish_reason)."""
    choices = event.get("choices")
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    delta = first.get("delta")
    piece = delta.get("content") if isinstance(delta, dict) else None
    return (piece if isinstance(piece, str) else ""), bool(first.get("finish_reason"))


def _json_body(status: int, text: str, url: str, model: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise BadResponse(f"HTTP {status} with a body that is not JSON: {text[:200]!r}", url=url, model=model,
                          status=status) from None


def _count(value: object) -> int:
    """A token count from a server's usage block; anything that is not a non-negative number counts 0."""
    try:
        number = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        return 0
    return max(number, 0)


def normalize_rows(arr: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (arr / norms).astype(np.float32)


def _reason(exc: Exception) -> str:
    text = str(exc)
    for marker in ("Connection refused", "Name or service not known", "Connection reset",
                   "Remote end closed connection"):
        if marker in text:
            return marker.lower()
    return type(exc).__name__


def _server_message(text: str) -> str:
    try:
        body = json.loads(text)
    except json.JSONDecodeError:
        return text.strip()[:300] or "(empty body)"
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return str(err.get("message") or err)[:300]
        return str(err)[:300]
    return str(body)[:300]


def _retry_after_seconds(value: str, default: float) -> float:
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return default
