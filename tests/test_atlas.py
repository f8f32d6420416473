"""The invented encyclopedia of MuSiQue's shape (benchmarks/atlas.py), a choosing set: the same world from the same
seed, several paragraphs under one title, and every question a chain through its supporting paragraphs."""
from collections import Counter

from atlas import QUESTIONS, build, load_atlas


def test_the_same_seed_makes_the_same_world_with_shared_titles():
    files, _ = build(1)
    assert files == build(1)[0] and files["documents.json"] != build(2)[0]["documents.json"]
    docs = files["documents.json"]
    titles = Counter(d["title"] for d in docs)
    assert sum(n for n in titles.values() if n > 1) > len(docs) / 4   # a page of several paragraphs is common
    assert Counter(q["type"] for q in files["questions.json"]) == QUESTIONS
    case = load_atlas(1)
    assert len(case.passages) == len(docs) and len(case.questions) == sum(QUESTIONS.values())


def test_every_question_is_a_chain_through_its_supporting_paragraphs():
    """The question names the first paragraph's page; each paragraph names the page of the next (the bridge the
    question does not name); the last names the answer. One paragraph a hop."""
    files, _ = build(1)
    docs = {d["id"]: d for d in files["documents.json"]}
    starts = set()
    for q in files["questions.json"]:
        chain = [docs[d] for d in q["supporting_docs"]]
        assert len(chain) == int(q["type"][0]), q
        assert chain[0]["title"] in q["question"] and q["expected_answer"] not in q["question"], q
        for here, after in zip(chain, chain[1:], strict=False):
            assert after["title"] in here["text"] and after["title"] not in q["question"], q
        assert q["expected_answer"] in chain[-1]["text"], q
        starts.add(chain[0]["title"])
    assert len(starts) == len(files["questions.json"])   # no page is the start of two questions
