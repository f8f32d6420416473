"""Against the REAL embedded llama.cpp server on 127.0.0.1, over HTTP."""
import subprocess
import sys
import time

import numpy as np
import pytest

from llm import ModelNotFound, OpenAIClient, ServerUnavailable, Settings, chat_json, connect


def test_chat_answers(backend):
    result = backend.client.chat([{"role": "user", "content": "What is 2 + 3? Answer with the number only."}],
                                 model=backend.model, max_tokens=10, use_cache=False)
    assert "5" in result.text
    assert result.completion_tokens > 0


def test_json_schema_output_parses(backend):
    schema = {"type": "object", "properties": {"colors": {"type": "array", "items": {"type": "string"},
                                                          "maxItems": 5}},
              "required": ["colors"], "additionalProperties": False}
    out = chat_json(backend.client, [{"role": "user", "content": "List three colours of the rainbow as JSON."}],
                    model=backend.model, schema=schema, max_tokens=80)
    assert isinstance(out.value, dict) and isinstance(out.value["colors"], list) and out.value["colors"]
    assert all(isinstance(c, str) for c in out.value["colors"])


def test_embeddings_have_the_right_shape(backend):
    server_vectors = backend.client.embed(["a pearl necklace", "a stolen necklace", "irrigation"],
                                          model=backend.model)
    assert server_vectors.shape[0] == 3 and server_vectors.shape[1] > 100
    assert np.allclose(np.linalg.norm(server_vectors, axis=1), 1.0, atol=1e-4)
    local = backend.embedder.embed(["a pearl necklace", "a stolen necklace"])
    assert local.shape == (2, 384)


def test_wrong_model_name_is_a_typed_error(backend):
    with pytest.raises(ModelNotFound) as err:
        backend.client.chat([{"role": "user", "content": "hi"}], model="no-such-model", max_tokens=5)
    assert "no-such-model" in str(err.value) and backend.model in str(err.value)


@pytest.mark.llm   # starts the embedded server without the fixtures conftest marks by
def test_auto_falls_back_to_embedded_on_a_closed_port(base_settings):
    b = connect(base_settings.replace(backend="auto", base_url="http://127.0.0.1:9/v1"))
    assert b.kind == "embedded"
    assert "127.0.0.1:9" in b.reason and "embedded" in b.reason


def test_openai_backend_on_a_closed_port_refuses(base_settings):
    with pytest.raises(ServerUnavailable, match="127.0.0.1:9"):
        connect(base_settings.replace(backend="openai", base_url="http://127.0.0.1:9/v1"))


def test_openai_backend_talks_to_a_real_server(backend, base_settings):
    """Point the 'openai' backend at the embedded server's URL: the same code path as LM Studio."""
    b = connect(base_settings.replace(backend="openai", base_url=backend.base_url))
    assert b.kind == "openai" and b.model == backend.model
    assert b.client.chat([{"role": "user", "content": "Say yes."}], model=b.model, max_tokens=5).text


@pytest.mark.llm   # starts the embedded server without the fixtures conftest marks by
def test_stopped_server_gives_a_typed_error_within_the_timeout(base_settings):
    """A second embedded server in its own process, killed: the client must say so, quickly and by name."""
    script = ("import sys, time; from llm import Settings; "
              "from llm.embedded import ensure_server; "
              "s = ensure_server(Settings(models_dir=sys.argv[1], embedded_parallel=1)); "
              "print(s.base_url, s.model, flush=True); time.sleep(600)")
    proc = subprocess.Popen([sys.executable, "-c", script, str(base_settings.gguf_dir)],
                            stdout=subprocess.PIPE, text=True)
    try:
        base_url, model = proc.stdout.readline().split()
        client = OpenAIClient(base_url, timeout=5, max_retries=1, backoff=0.05)
        assert client.chat([{"role": "user", "content": "Say hi."}], model=model, max_tokens=5).text
    finally:
        proc.kill()
        proc.wait(timeout=30)
    started = time.perf_counter()
    with pytest.raises(ServerUnavailable) as err:
        client.chat([{"role": "user", "content": "hi"}], model=model, max_tokens=5, use_cache=False)
    assert time.perf_counter() - started < 5
    assert base_url in str(err.value)


def test_settings_from_env_and_presets(tmp_path):
    s = Settings.from_env({"LLM_BASE_URL": "ollama", "LLM_MODEL": "qwen", "LLM_TIMEOUT": "12",
                           "DETECTIVE_CACHE_DIR": str(tmp_path), "LLM_CACHE": "0"})
    assert s.base_url == "http://127.0.0.1:11434/v1" and s.model == "qwen"
    assert s.effective_extraction_model == "qwen" and s.request_timeout == 12.0
    assert s.cache_dir == tmp_path and s.cache_enabled is False
    with pytest.raises(ValueError, match="LLM_BACKEND"):
        Settings.from_env({"LLM_BACKEND": "magic"})
    with pytest.raises(ValueError, match="LLM_TIMEOUT"):
        Settings.from_env({"LLM_TIMEOUT": "soon"})
