import json

import pytest

from casebook.__main__ import main as validate_main
from casebook.catalog import available
from casebook.loader import MAX_DOCUMENT_CHARS, CaseError, load_case, load_files, split_passages
from core.types import Document

DOCS = [{"id": "D1", "title": "One", "text": "Alpha met Beta."}, {"id": "D2", "title": "Two", "text": "Beta met Gamma."}]


def write_case(folder, docs=DOCS, questions=None, triples=None, raw=None):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "documents.json").write_text(json.dumps(docs) if raw is None else raw, encoding="utf-8")
    if questions is not None:
        (folder / "questions.json").write_text(json.dumps(questions), encoding="utf-8")
    if triples is not None:
        (folder / "triples.json").write_text(json.dumps(triples), encoding="utf-8")
    return folder


def problems_of(path):
    with pytest.raises(CaseError) as err:
        load_case(path)
    return [str(p) for p in err.value.problems]


def test_bundled_and_benchmark_cases_load():
    names = available()
    assert {"purloined_pearl", "musique_train100", "musique_tiny20", "2wiki_first20", "hotpotqa_train100"} <= set(names)
    for _name, path in names.items():
        case = load_case(path)
        assert case.documents and case.questions and len(case.fingerprint) == 16


def test_invalid_json_names_line_and_column(tmp_path):
    probs = problems_of(write_case(tmp_path / "c", raw='[{"id": "D1",\n  "text": }]'))
    assert len(probs) == 1 and "documents.json" in probs[0] and "line 2, column" in probs[0]


def test_missing_empty_and_wrong_type_fields(tmp_path):
    docs = [{"id": "D1", "text": ""}, {"title": "no id", "text": "x"}, {"id": "D3", "text": 42}]
    probs = problems_of(write_case(tmp_path / "c", docs=docs))
    assert "documents.json, item 0 (id 'D1'), field 'text': empty" in probs
    assert "documents.json, item 1, field 'id': missing" in probs
    assert "documents.json, item 2 (id 'D3'), field 'text': expected a string, got a number" in probs


def test_duplicate_document_id(tmp_path):
    probs = problems_of(write_case(tmp_path / "c", docs=DOCS + [{"id": "D1", "text": "again"}]))
    assert any("'D1'" in p and "duplicate document id" in p for p in probs)


def test_unknown_supporting_doc_and_triple_doc(tmp_path):
    q = [{"id": "Q1", "question": "Who?", "supporting_docs": ["D1", "D9"]}]
    t = [{"doc_id": "D7", "subject": "a", "relation": "b", "object": "c"}]
    probs = problems_of(write_case(tmp_path / "c", questions=q, triples=t))
    assert "questions.json, item 0 (id 'Q1'), field 'supporting_docs': names unknown document 'D9'" in probs
    assert "triples.json, item 0, field 'doc_id': names unknown document 'D7'" in probs


def test_duplicate_question_and_bad_answers(tmp_path):
    q = [{"id": "Q1", "question": "a?"}, {"id": "Q1", "question": "b?", "answers": "x"}]
    probs = problems_of(write_case(tmp_path / "c", questions=q))
    assert any("item 1 (id 'Q1'), field 'id': duplicate question id" in p for p in probs)
    assert any("item 1 (id 'Q1'), field 'answers'" in p for p in probs)


def test_non_utf8_bytes(tmp_path):
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "documents.json").write_bytes(b'[{"id": "D1", "text": "caf\xe9"}]')
    probs = problems_of(folder)
    assert "documents.json" in probs[0] and "not UTF-8" in probs[0] and "0xe9" in probs[0]


def test_empty_case_and_missing_path(tmp_path):
    assert "no documents" in problems_of(write_case(tmp_path / "c", docs=[]))[0]
    assert "no such file" in problems_of(tmp_path / "nope")[0]
    (tmp_path / "empty").mkdir()
    assert "not a case" in problems_of(tmp_path / "empty")[0]


def test_absurd_document_size(tmp_path):
    probs = problems_of(write_case(tmp_path / "c", docs=[{"id": "D1", "text": "x" * (MAX_DOCUMENT_CHARS + 1)}]))
    assert "item 0 (id 'D1'), field 'text'" in probs[0] and "limit" in probs[0]


def test_text_folder_and_uploaded_json(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "alibi.md").write_text("# The Alibi\nShe was at the gala.", encoding="utf-8")
    (folder / "coat.txt").write_text("A coat was found.", encoding="utf-8")
    case = load_case(folder)
    assert [(d.id, d.title) for d in case.documents] == [("alibi", "The Alibi"), ("coat", "A coat was found.")]
    # The Markdown heading became the title and left the text; a plain first line stays in the text.
    assert [d.text for d in case.documents] == ["She was at the gala.", "A coat was found."]
    (folder / "only.md").write_text("# Only a heading", encoding="utf-8")
    only = next(d for d in load_case(folder).documents if d.id == "only")
    assert (only.title, only.text) == ("Only a heading", "# Only a heading")   # nothing else to keep
    uploaded = load_files([("docs.json", json.dumps(DOCS).encode())])
    assert [d.id for d in uploaded.documents] == ["D1", "D2"] and not uploaded.questions


def test_unicode_names_survive_loading_and_fingerprinting(tmp_path):
    docs = [{"id": "D1", "title": "Zoë", "text": "Zoë Müller met Łukasz in Kraków."}]
    case = load_case(write_case(tmp_path / "c", docs=docs))
    assert case.documents[0].text == "Zoë Müller met Łukasz in Kraków."
    again = load_case(write_case(tmp_path / "d", docs=docs))
    assert case.fingerprint == again.fingerprint
    changed = load_case(write_case(tmp_path / "e", docs=[{**docs[0], "text": "Zoe Muller met Łukasz in Kraków."}]))
    assert changed.fingerprint != case.fingerprint


def test_long_documents_split_into_passages_keeping_doc_id():
    text = "\n\n".join(f"Paragraph {i}. " + "word " * 150 for i in range(6))
    passages = split_passages([Document("L", "Long", text)], max_chars=1000)
    assert len(passages) > 1 and all(p.doc_id == "L" and len(p.text) <= 1000 for p in passages)
    assert " ".join(p.text for p in passages).split() == text.split()


def test_validate_cli_exit_codes(tmp_path, capsys):
    assert validate_main(["validate", "purloined_pearl"]) == 0
    assert "documents:   10" in capsys.readouterr().out
    bad = write_case(tmp_path / "c", docs=DOCS + [{"id": "D2", "text": "dup"}],
                     questions=[{"id": "Q1", "question": "?", "supporting_docs": ["D404"]}])
    assert validate_main(["validate", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "duplicate document id" in err and "D404" in err
