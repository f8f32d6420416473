"""The mystery generator: valid cases, questions whose supporting documents state what the answer needs."""
import json
import re

import pytest

from casebook.__main__ import main as casebook_main
from casebook.generate import generate
from casebook.loader import load_case


@pytest.mark.parametrize("seed,suspects,timeline", [(1, 3, False), (2, 4, False), (7, 5, False), (11, 6, False),
                                                    (1, 4, True), (3, 4, True)])
def test_generated_cases_validate_and_their_questions_are_answerable(seed, suspects, timeline, tmp_path, capsys):
    out = tmp_path / "case"
    more = ["--timeline"] if timeline else []
    assert casebook_main(["generate", "--seed", str(seed), "--suspects", str(suspects), "--out", str(out), *more]) == 0
    assert casebook_main(["validate", str(out)]) == 0
    case = load_case(out)
    assert {q.type for q in case.questions} == {"simple", "multi-hop", "sense-making"}
    assert len([d for d in case.documents if d.title.startswith("Interview")]) == suspects
    gold = json.loads((out / "gold_triples.json").read_text(encoding="utf-8"))
    docs = {d.id: d.text.casefold() for d in case.documents}
    for q in case.questions:
        needed = [t for t in gold if q.id in t["questions"]]
        assert needed, q.id
        assert {t["doc_id"] for t in needed} == set(q.supporting_docs)      # every supporting document is needed
        for t in needed:                                                    # and states the fact, in its words
            assert t["subject"].casefold() in docs[t["doc_id"]] and t["object"].casefold() in docs[t["doc_id"]]
    multi = [q for q in case.questions if q.type != "simple"]
    assert all(len(q.supporting_docs) >= 2 for q in multi)


def test_two_seeds_give_different_cases_and_one_seed_the_same():
    a, b, again = generate(1), generate(2), generate(1)
    assert a == again
    assert a["documents.json"] != b["documents.json"] and a["questions.json"] != b["questions.json"]


def test_the_timeline_question_changes_no_document_and_needs_what_happened_in_its_stretch():
    """With ``timeline`` a tenth question asks what happened between an hour and the report: the sighting, the
    footage and the report itself by the clock, and an aside whose time is said in words when it falls inside (rain
    "shortly after ten", guests who "left by half past eight")."""
    asides = {"Weather report": 22 * 60 + 5, "Dinner guests": 20 * 60 + 30}
    in_words = 0
    for seed in range(1, 31):
        plain, timed = generate(seed), generate(seed, timeline=True)
        assert timed["documents.json"] == plain["documents.json"]
        assert timed["questions.json"][:-1] == plain["questions.json"]
        q = timed["questions.json"][-1]
        hour, end = (int(x) for x in re.findall(r"between (\d+):00 PM and (\d+):45 PM", q["question"])[0])
        assert (q["id"], q["type"], end) == ("Q10", "sense-making", hour + 1)
        titles = {d["id"]: d["title"] for d in timed["documents.json"]}
        inside = {t for t, when in asides.items() if t in titles.values() and (hour + 12) * 60 <= when <= (end + 12) * 60 + 45}
        in_words += len(inside)
        assert {titles[d] for d in q["supporting_docs"]} == {"Neighbour's statement", "Security footage",
                                                            "Report of the theft", *inside}
    assert in_words > 0   # some seeds' stretch holds an aside whose time only words say


def test_bad_arguments_are_clear_errors(tmp_path, capsys):
    assert casebook_main(["generate", "--suspects", "9", "--out", str(tmp_path / "x")]) == 2
    assert "suspects must be between 3 and 6" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert casebook_main(["generate", "--out", str(tmp_path / "file")]) == 2
    assert "is a file" in capsys.readouterr().err


def test_the_app_generates_a_new_mystery(app_env, backend):
    from streamlit.testing.v1 import AppTest

    from conftest import ROOT

    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=300)
    at.run()
    at.radio(key="case_source").set_value("Generated mystery").run()
    first = at.subheader[0].value
    assert not at.exception and at.number_input(key="mystery_seed").value == 1
    assert first == generate(1, 4)["case.json"]["title"]
    next(b for b in at.button if b.label == "Generate a new mystery").click().run()
    seed = at.number_input(key="mystery_seed").value
    assert not at.exception and seed != 1
    assert at.subheader[0].value == generate(seed, 4)["case.json"]["title"]
