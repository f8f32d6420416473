"""Typed errors for talking to models; each names the server and model involved."""
from __future__ import annotations


class LLMError(RuntimeError):
    """Base class: something went wrong talking to a model server."""

    def __init__(self, message: str, *, url: str = "", model: str = "", status: int | None = None):
        self.url, self.model, self.status, self.detail = url, model, status, message
        where = f" [{url}" + (f", model {model!r}" if model else "") + "]" if url else ""
        super().__init__(message + where)


class ServerUnavailable(LLMError):
    """Nothing answers at the URL (connection refused, DNS, server stopped)."""


class RequestTimeout(LLMError):
    """The server accepted the request but did not answer in time."""


class ModelNotFound(LLMError):
    """The server answered that the requested model does not exist or is not loaded."""


class AuthenticationFailed(LLMError):
    """The server rejected the API key (401/403)."""


class BadResponse(LLMError):
    """The server answered with an error status or a body we cannot read."""


class EndpointNotFound(BadResponse):
    """HTTP 404 for an endpoint, not a model: the base URL is wrong (it usually ends in /v1)."""


class ModelFileError(RuntimeError):
    """The embedded model's GGUF file is missing, incomplete or fails its checksum."""
