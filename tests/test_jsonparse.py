import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm.jsonparse import JSONExtractionError, extract_json, strip_think

TRIPLES = {"triples": [["Victoria Crane", "visited", "the mansion"], ["Mr. Blackwood", "refused", "a loan"]]}


@pytest.mark.parametrize("text", [
    json.dumps(TRIPLES),
    "```json\n" + json.dumps(TRIPLES) + "\n```",
    "Sure! Here are the triples:\n" + json.dumps(TRIPLES, indent=2) + "\nHope this helps.",
    "<think>the user wants triples</think>" + json.dumps(TRIPLES),
    "I should list them carefully.</think>\n" + json.dumps(TRIPLES),
    json.dumps(TRIPLES)[:-2] + ",]}",          # trailing comma
    str(TRIPLES),                               # Python-style single quotes
])
def test_recovers_the_object(text):
    assert extract_json(text) == TRIPLES


def test_apostrophes_in_prose_do_not_confuse_the_scanner():
    text = "Here's Victoria's list: " + json.dumps({"entities": ["Victoria's car", "Lombard Street"]})
    assert extract_json(text) == {"entities": ["Victoria's car", "Lombard Street"]}


def test_truncated_array_keeps_complete_items():
    full = json.dumps(TRIPLES)
    cut = full[: full.index("Mr. Blackwood") + 5]
    assert extract_json(cut) == {"triples": [TRIPLES["triples"][0]]}
    assert extract_json('[{"a": 1}, {"b": 2}, {"c"') == [{"a": 1}, {"b": 2}]


@pytest.mark.parametrize("text", ["", "no json here", "<think>{\"a\": 1}</think>", "{{{", "__import__('os')"])
def test_no_json_raises(text):
    with pytest.raises(JSONExtractionError):
        extract_json(text)


def test_never_evaluates_code():
    with pytest.raises(JSONExtractionError):
        extract_json("[__import__('os').system('echo pwned')]")


def test_strip_think_variants():
    assert strip_think("<think>x</think>answer") == "answer"
    assert strip_think("reasoning...</think> answer") == "answer"
    assert strip_think("<THINK>a</THINK>b<think>c</think>d") == "bd"
    assert strip_think("<think>never closed") == ""


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=15)
containers = st.one_of(st.lists(json_values, min_size=1, max_size=5),
                       st.dictionaries(st.text(max_size=8), json_values, min_size=1, max_size=5))
# Prose that cannot itself start a JSON value.
prose = st.text(alphabet=st.characters(blacklist_characters="[]{}\"'`<>", blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=200, deadline=None)
@given(value=containers, before=prose, after=prose, fenced=st.booleans(), think=st.booleans())
def test_round_trip_any_container_in_noise(value, before, after, fenced, think):
    body = json.dumps(value, ensure_ascii=False)
    if fenced:
        body = f"```json\n{body}\n```"
    text = ("<think>pondering {\"x\": 1}</think>" if think else "") + before + "\n" + body + "\n" + after
    assert extract_json(text) == value


@settings(max_examples=200, deadline=None)
@given(items=st.lists(st.dictionaries(st.text(max_size=6), st.text(max_size=6), min_size=1, max_size=3),
                      min_size=2, max_size=6), cut=st.integers(min_value=1, max_value=30))
def test_truncation_keeps_a_prefix_of_the_items(items, cut):
    text = json.dumps(items, ensure_ascii=False)
    truncated = text[: max(1, len(text) - cut)]
    # How many items the cut left whole: their JSON, and the comma after them, are all still there.
    whole = max((k for k in range(len(items) + 1)
                 if truncated.startswith(json.dumps(items[:k], ensure_ascii=False)[:-1] + (", " if k else ""))),
                default=0)
    if whole == 0:
        return  # cut inside the first item: nothing complete to keep
    recovered = extract_json(truncated)
    assert isinstance(recovered, list) and len(recovered) >= whole
    assert recovered == items[: len(recovered)]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_never_crashes(text):
    """Any text gives a JSON object or array, or the typed error; text that is itself one comes back exactly."""
    try:
        exact = json.loads(text)
    except ValueError:
        exact = None
    try:
        value = extract_json(text)
    except JSONExtractionError:
        assert not isinstance(exact, (dict, list)), "a valid JSON object or array was refused"
        return
    assert isinstance(value, (dict, list))
    if isinstance(exact, (dict, list)):
        assert value == exact


def test_think_tags_inside_json_strings_are_data():
    assert extract_json('[{"note": "</think>"}]') == [{"note": "</think>"}]
    assert extract_json('<think>draft {"a": 0}</think>{"note": "<think>x</think>"}') == {"note": "<think>x</think>"}
