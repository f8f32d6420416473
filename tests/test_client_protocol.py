"""Protocol faults no real server produces on demand, against a loopback server the test scripts."""
import json
import time

import pytest

from llm import AuthenticationFailed, BadResponse, LLMError, ModelNotFound, OpenAIClient, RequestTimeout, ServerUnavailable

from conftest import bad_gzip, chat_body, first_token_body, reply

MODELS = {"data": [{"id": "m1"}, {"id": "m2"}]}
ASK = [{"role": "user", "content": "hi"}]


def client_for(server, **kw) -> OpenAIClient:
    kw.setdefault("backoff", 0.01)
    c = OpenAIClient(server.base_url, **kw)
    c._known_models = ["m1", "m2"]  # skip the model-list round trip in protocol tests
    return c


def test_reasoning_content_only(fault_server):
    fault_server.script = [reply(200, chat_body(content="", reasoning="The answer is 42."))]
    assert client_for(fault_server).chat(ASK, model="m1").text == "The answer is 42."


def test_closing_only_think_tag_is_stripped(fault_server):
    fault_server.script = [reply(200, chat_body(content="let me think... </think>\n\nParis"))]
    assert client_for(fault_server).chat(ASK, model="m1").text == "Paris"


def test_500_then_200_is_retried(fault_server):
    fault_server.script = [reply(500, {"error": {"message": "boom"}}), reply(200, chat_body("ok"))]
    c = client_for(fault_server)
    assert c.chat(ASK, model="m1").text == "ok"
    assert len(fault_server.requests) == 2


def test_429_honours_retry_after(fault_server):
    fault_server.script = [reply(429, {"error": "slow down"}, {"Retry-After": "0.3"}), reply(200, chat_body("ok"))]
    started = time.perf_counter()
    assert client_for(fault_server).chat(ASK, model="m1").text == "ok"
    assert time.perf_counter() - started >= 0.3


def test_persistent_500_names_url_and_message(fault_server):
    fault_server.script = [reply(503, {"error": {"message": "model is loading"}})]
    with pytest.raises(BadResponse) as err:
        client_for(fault_server, max_retries=2).chat(ASK, model="m1")
    assert "model is loading" in str(err.value) and fault_server.base_url in str(err.value)
    assert err.value.status == 503 and len(fault_server.requests) == 3


def test_malformed_json_body(fault_server):
    fault_server.script = [reply(200, b"{not json")]
    with pytest.raises(BadResponse, match="not JSON"):
        client_for(fault_server).chat(ASK, model="m1")


def test_body_without_choices(fault_server):
    fault_server.script = [reply(200, {"object": "weird"})]
    with pytest.raises(BadResponse, match="choices"):
        client_for(fault_server).chat(ASK, model="m1")


def test_slow_body_past_the_timeout(fault_server):
    def trickle(h, _req):
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", "1000")
        h.end_headers()
        for _ in range(40):  # a byte every 0.1 s: never idle long enough for a read timeout alone
            h.wfile.write(b" ")
            h.wfile.flush()
            time.sleep(0.1)
    fault_server.script = [trickle]
    started = time.perf_counter()
    with pytest.raises(RequestTimeout) as err:
        client_for(fault_server, timeout=1.0, max_retries=0).chat(ASK, model="m1")
    assert time.perf_counter() - started < 3.0
    assert fault_server.base_url in str(err.value)


def test_bad_key_is_an_authentication_error(fault_server):
    fault_server.script = [reply(401, {"error": {"message": "invalid api key"}})]
    with pytest.raises(AuthenticationFailed, match="invalid api key"):
        client_for(fault_server, api_key="wrong").chat(ASK, model="m1")
    assert fault_server.headers[-1]["Authorization"] == "Bearer wrong"   # the key went as a bearer token


def test_unknown_model_is_checked_against_the_model_list(fault_server):
    fault_server.script = [reply(200, MODELS)]
    c = OpenAIClient(fault_server.base_url)
    with pytest.raises(ModelNotFound) as err:
        c.chat(ASK, model="nope")
    assert "nope" in str(err.value) and "m1" in str(err.value)


def test_schema_rejected_with_400_falls_back_to_plain(fault_server):
    def handler(h, req):
        if "response_format" in req:
            reply(400, {"error": {"message": "response_format not supported"}})(h, req)
        else:
            reply(200, chat_body('{"a": 1}'))(h, req)
    fault_server.script = [handler]
    c = client_for(fault_server)
    assert c.chat(ASK, model="m1", json_schema={"type": "object"}).text == '{"a": 1}'
    bodies = [b for _, _, b in fault_server.requests]
    assert "response_format" in bodies[0] and "response_format" not in bodies[1]
    assert all(b.get("response_format", {}).get("type") != "json_object" for b in bodies)


def test_connection_refused_is_server_unavailable():
    c = OpenAIClient("http://127.0.0.1:9/v1", max_retries=1, backoff=0.01)
    c._known_models = ["m1"]
    with pytest.raises(ServerUnavailable) as err:
        c.chat(ASK, model="m1")
    assert "127.0.0.1:9" in str(err.value)


def test_embeddings_are_batched_ordered_and_normalized(fault_server):
    def handler(h, req):
        data = [{"index": i, "embedding": [float(len(t)), 0.0, 1.0]} for i, t in enumerate(req["input"])]
        reply(200, {"data": list(reversed(data))})(h, req)
    fault_server.script = [handler]
    c = client_for(fault_server)
    vecs = c.embed(["a", "bbb", "cc", "dddd", "e"], model="m2", batch_size=2)
    assert vecs.shape == (5, 3)
    assert len(fault_server.requests) == 3
    import numpy as np
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0)
    assert vecs[1, 0] > vecs[2, 0] > vecs[0, 0]  # order follows "index", not arrival


def sse(pieces, delay=0.0, usage=None, end=b"data: [DONE]\n\n"):
    """A streamed chat completion: one event per piece, ``delay`` seconds apart."""
    def handler(h, _req):
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.end_headers()
        h.wfile.write(b": keep-alive comment\n\n")
        for piece in pieces:
            h.wfile.write(b"data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": piece}}]}).encode()
                          + b"\n\n")
            h.wfile.flush()
            time.sleep(delay)
        if usage:
            h.wfile.write(b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n")
        h.wfile.write(end)
    return handler


def test_a_streamed_reply_arrives_piece_by_piece(fault_server):
    fault_server.script = [sse(["The ", "butler ", "did it."], usage={"prompt_tokens": 7, "completion_tokens": 3})]
    got = []
    c = client_for(fault_server)
    result = c.chat(ASK, model="m1", on_text=got.append)
    assert got == ["The ", "butler ", "did it."] and result.text == "The butler did it."
    assert fault_server.requests[-1][2]["stream"] is True
    assert (result.prompt_tokens, result.completion_tokens) == (7, 3)


def test_a_cached_reply_streams_in_one_piece(fault_server, tmp_path):
    from llm.cache import ResponseCache
    fault_server.script = [sse(["Paris"])]
    c = client_for(fault_server, cache=ResponseCache(tmp_path / "r.sqlite"))
    c.chat(ASK, model="m1", on_text=lambda _: None)
    got = []
    assert c.chat(ASK, model="m1", on_text=got.append).cached and got == ["Paris"]
    assert len(fault_server.requests) == 1


def test_a_500_before_the_first_piece_is_retried(fault_server):
    fault_server.script = [reply(500, {"error": {"message": "busy"}}), sse(["ok"])]
    assert client_for(fault_server).chat(ASK, model="m1", on_text=lambda _: None).text == "ok"
    assert len(fault_server.requests) == 2


def test_a_reply_cut_after_its_first_piece_is_not_retried(fault_server):
    fault_server.script = [sse(["The "], end=b'data: {"choices": [{"delta": {"content": "bu'), sse(["again"])]
    with pytest.raises(BadResponse, match="not JSON"):
        client_for(fault_server).chat(ASK, model="m1", on_text=lambda _: None)
    assert len(fault_server.requests) == 1


def test_an_unreadable_event_names_the_server(fault_server):
    fault_server.script = [sse([], end=b"data: [1, 2]\n\n")]
    with pytest.raises(BadResponse, match="not an object") as err:
        client_for(fault_server).chat(ASK, model="m1", on_text=lambda _: None)
    assert fault_server.base_url in str(err.value)


def test_a_progress_deadline_lets_a_slow_model_finish(fault_server):
    """12 pieces 0.2 s apart take 2.4 s: past a 1 s whole-request deadline, never 1 s without a token."""
    fault_server.script = [sse(["x"] * 12, delay=0.2)]
    assert client_for(fault_server, timeout=1.0, progress_deadline=True).chat(ASK, model="m1").text == "x" * 12
    fault_server.script = [sse(["x"] * 12, delay=0.2)]
    with pytest.raises(RequestTimeout, match="within 1s"):
        client_for(fault_server, timeout=1.0, max_retries=0).chat(ASK, model="m1", on_text=lambda _: None)


def test_a_progress_deadline_still_stops_a_stalled_server(fault_server):
    fault_server.script = [sse(["x", "y"], delay=2.5)]
    started = time.perf_counter()
    with pytest.raises(RequestTimeout, match="no token for 1s"):
        client_for(fault_server, timeout=1.0, progress_deadline=True, max_retries=0).chat(ASK, model="m1")
    assert time.perf_counter() - started < 2.4


def test_a_server_that_does_not_stream_still_answers(fault_server):
    fault_server.script = [reply(200, chat_body("Whole reply."))]
    got = []
    assert client_for(fault_server).chat(ASK, model="m1", on_text=got.append).text == "Whole reply."
    assert got == ["Whole reply."]


def test_a_stream_that_just_stops_is_not_an_answer_and_is_not_cached(fault_server, tmp_path):
    """No [DONE] and no finish_reason after "The thief is": an error, and the next ask goes to the server again."""
    from llm.cache import ResponseCache
    fault_server.script = [sse(["The thief is"], end=b""), sse(["Victoria."])]
    c = client_for(fault_server, cache=ResponseCache(tmp_path / "r.sqlite"), max_retries=0)
    with pytest.raises(BadResponse, match="ended before the reply was complete"):
        c.chat(ASK, model="m1", on_text=lambda _: None)
    again = c.chat(ASK, model="m1", on_text=lambda _: None)
    assert again.text == "Victoria." and not again.cached and len(fault_server.requests) == 2


def test_a_finish_reason_without_done_is_a_whole_reply(fault_server):
    end = b"data: " + json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}).encode() + b"\n\n"
    fault_server.script = [sse(["Paris."], end=end)]
    assert client_for(fault_server).chat(ASK, model="m1", on_text=lambda _: None).text == "Paris."


def test_an_empty_data_line_is_skipped(fault_server):
    fault_server.script = [sse(["A", "B"], end=b"data:\n\ndata: [DONE]\n\n")]
    assert client_for(fault_server).chat(ASK, model="m1", on_text=lambda _: None).text == "AB"


def test_a_stream_that_is_not_utf8_names_the_server(fault_server):
    fault_server.script = [sse(["A"], end=b"data: {\"choices\": \xff\xfe}\n\n")]
    with pytest.raises(BadResponse, match="not UTF-8") as err:
        client_for(fault_server).chat(ASK, model="m1", on_text=lambda _: None)
    assert fault_server.base_url in str(err.value)


def trickle(h, _req):
    """A reply with no chunked encoding and no line break, one byte every 1.5 s: never idle long enough for a
    read timeout."""
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream")
    h.end_headers()
    for _ in range(60):
        h.wfile.write(b"x")
        h.wfile.flush()
        time.sleep(1.5)


def test_the_whole_reply_deadline_holds_whatever_the_framing(fault_server):
    fault_server.script = [trickle]
    started = time.perf_counter()
    with pytest.raises(RequestTimeout, match="within 1s"):
        client_for(fault_server, timeout=1.0, max_retries=0).chat(ASK, model="m1", on_text=lambda _: None)
    assert time.perf_counter() - started < 2.0   # within 1 s of the timeout


def test_credentials_in_the_base_url_are_sent_as_basic_auth_and_never_shown(fault_server):
    from llm import OpenAIClient
    fault_server.script = [reply(401, {"error": {"message": "no"}})]
    url = fault_server.base_url.replace("http://", "http://user:s3cret@")
    client = OpenAIClient(url, max_retries=0)
    assert "s3cret" not in client.base_url
    with pytest.raises(LLMError) as err:
        client.chat(ASK, model="m1")
    assert "s3cret" not in str(err.value)
    assert fault_server.headers[-1]["Authorization"].startswith("Basic ")


def test_a_tool_call_instead_of_text_is_an_error_not_an_empty_answer(fault_server):
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}}]}}]}
    fault_server.script = [reply(200, body)]
    with pytest.raises(BadResponse, match="tool call"):
        client_for(fault_server).chat(ASK, model="m1")


def test_a_reply_far_past_max_tokens_is_cut_to_what_it_allows(fault_server, tmp_path, caplog):
    from llm.cache import ResponseCache
    from llm.client import CHARS_PER_TOKEN_CAP
    fault_server.script = [reply(200, chat_body("x" * 1_000_000))]
    c = client_for(fault_server, cache=ResponseCache(tmp_path / "r.sqlite"))
    result = c.chat(ASK, model="m1", max_tokens=200)
    assert len(result.text) == 200 * CHARS_PER_TOKEN_CAP and "max_tokens=200" in caplog.text
    assert len(c.chat(ASK, model="m1", max_tokens=200).text) == 200 * CHARS_PER_TOKEN_CAP   # what was cached


def test_a_404_for_the_endpoint_says_to_check_the_base_url(fault_server):
    from llm import EndpointNotFound
    fault_server.script = [reply(404, {"error": {"message": "Not Found"}})]
    with pytest.raises(EndpointNotFound, match="ends in /v1"):
        client_for(fault_server).chat(ASK, model="m1")


def test_a_damaged_gzip_body_is_not_called_an_unreachable_server(fault_server):
    fault_server.script = [bad_gzip]
    with pytest.raises(BadResponse, match="could not be decoded") as err:
        client_for(fault_server, max_retries=0).chat(ASK, model="m1")
    assert not isinstance(err.value, ServerUnavailable)


def test_a_yes_or_no_is_read_as_the_share_of_yes_and_cached(fault_server, tmp_path):
    from llm.cache import ResponseCache
    fault_server.script = [reply(200, first_token_body("Yes", {"Yes": 0.6, " yes": 0.1, "No": 0.1, "Maybe": 0.2}))]
    c = client_for(fault_server, cache=ResponseCache(tmp_path / "r.sqlite"))
    verdict = c.yes_share(ASK, model="m1")
    assert verdict.yes == pytest.approx(0.7 / 0.8) and not verdict.cached   # "Maybe" is neither
    sent = fault_server.requests[0][2]
    assert sent["logprobs"] is True and sent["max_tokens"] == 1 and sent["temperature"] == 0.0
    again = c.yes_share(ASK, model="m1")
    assert again.cached and again.yes == pytest.approx(verdict.yes) and len(fault_server.requests) == 1


@pytest.mark.parametrize("text, yes", [("No.", 0.0), ("Yes", 1.0), ("Perhaps", 0.5)])
def test_a_server_without_logprobs_is_read_by_its_words(fault_server, text, yes):
    fault_server.script = [reply(200, chat_body(content=text))]
    assert client_for(fault_server).yes_share(ASK, model="m1").yes == yes
