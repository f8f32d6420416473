"""Everything about talking to models: settings, the OpenAI-compatible client, the embedded
llama.cpp server, the local embedder, the response cache and lenient JSON parsing."""
from .backend import Backend, connect, embedder_only
from .client import ChatResult, OpenAIClient, Verdict
from .embedders import Embedder
from .errors import (
                     AuthenticationFailed,
                     BadResponse,
                     EndpointNotFound,
                     LLMError,
                     ModelFileError,
                     ModelNotFound,
                     RequestTimeout,
                     ServerUnavailable,
)
from .jsonparse import JSONExtractionError, extract_json, strip_think
from .settings import PRESETS, Settings
from .structured import JSONResult, chat_json, select_relevant

__all__ = [
    "AuthenticationFailed", "Backend", "BadResponse", "ChatResult", "Embedder", "EndpointNotFound", "JSONExtractionError",
    "JSONResult", "LLMError", "ModelFileError", "ModelNotFound", "OpenAIClient", "PRESETS", "RequestTimeout",
    "ServerUnavailable", "Settings", "Verdict", "chat_json", "select_relevant", "connect", "embedder_only",
    "extract_json", "strip_think",
]
