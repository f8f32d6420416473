"""Smoke tests of the benchmark scripts: they start, and their core runs on tiny inputs. Speed is not tested here."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT

BENCH = ROOT / "benchmarks"   # on the import path through pyproject.toml's pytest pythonpath


SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if "\ndef main(" in p.read_text(encoding="utf-8"))


def test_every_script_is_covered():
    assert len(SCRIPTS) >= 15 and "retrieval.py" in SCRIPTS and "common.py" not in SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_help(script, capsys):
    """Each script imports (a moved module breaks it here first) and documents itself: its --help opens with the
    first line of its docstring, and an unknown flag is refused by name. In-process: a Python start per script
    would cost the fast tier half a minute."""
    import ast
    import importlib
    doc = ast.get_docstring(ast.parse((BENCH / script).read_text(encoding="utf-8"))) or ""
    module = importlib.import_module(script.removesuffix(".py"))
    with pytest.raises(SystemExit) as done:
        module.main(["--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and out.startswith("usage: ")
    assert " ".join(doc.split("\n")[0].split()[:6]) in " ".join(out.split()), out[:400]
    with pytest.raises(SystemExit) as refused:
        module.main(["--no-such-flag"])
    err = capsys.readouterr().err
    # Refused by name: the unknown flag, or first the required arguments it lacks (argparse checks those first).
    assert refused.value.code == 2 and ("--no-such-flag" in err or "arguments are required: --" in err), err


def test_a_script_runs_as_a_script():
    """``python benchmarks/x.py`` (not imported): its own folder is its import path."""
    res = subprocess.run([sys.executable, str(BENCH / "retrieval.py"), "--help"], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0 and res.stdout.startswith("usage: ")


def test_ppr_scale_core_on_a_tiny_graph():
    import ppr_scale

    row = ppr_scale.run(200, 600, queries=2, nx_queries=1)
    assert row["nodes"] == 200 and row["edges"] > 0
    assert row["max_abs_diff_vs_nx_tight"] < 1e-6


def test_retrieval_and_report_on_a_small_case(tmp_path, monkeypatch):
    import common
    import retrieval
    from report_md import render_markdown

    monkeypatch.setattr(common, "RESULTS", tmp_path)
    monkeypatch.setenv("DETECTIVE_DATA_DIR", str(tmp_path / "index"))
    assert retrieval.main(["--cases", "2wiki_first20", "--strategies", "naive,hipporag,bm25", "--out", "retrieval"]) == 0
    rows = json.loads((tmp_path / "retrieval.json").read_text())["rows"]
    assert {r["strategy"] for r in rows} == {"naive", "hipporag", "bm25"}
    assert all(0 <= r["recall"]["@5"] <= 1 for r in rows)
    load = lambda d, name: json.loads((d / f"{name}.json").read_text()) if (d / f"{name}.json").exists() else None
    md = render_markdown(tmp_path, False, load)
    assert "| 2wiki_first20 | hipporag |" in md


def test_the_committed_results_render():
    """BENCHMARKS.md is rebuilt from the committed result files: every section renders from them."""
    import common
    from report_md import render_markdown

    load = lambda d, name: json.loads((d / f"{name}.json").read_text()) if (d / f"{name}.json").exists() else None
    md = render_markdown(common.ROOT / "benchmarks" / "results", False, load)
    generated = load(common.ROOT / "benchmarks" / "results", "generated")
    assert "## Generated mysteries" in md and "Question by question" in md
    assert all(f"| {qid}: " in md for qid in generated["summary"]["by_question"])


def test_the_hand_written_triples_only_say_what_their_documents_say():
    """The bundled case's complete triples (the ceiling's input) name things in their document's own words."""
    import bundled_ceiling

    from casebook.catalog import resolve
    from casebook.loader import load_case

    case = bundled_ceiling.hand_written(load_case(resolve(bundled_ceiling.CASE)))
    texts = {d.id: d.text.casefold() for d in case.documents}
    assert {t.doc_id for t in case.triples} == set(texts)   # every document, and nothing else
    unsaid = [(t.doc_id, part) for t in case.triples for part in (t.subject, t.object)
              if part.casefold() not in texts[t.doc_id]]
    assert not unsaid


def test_each_model_caches_its_triples_in_its_own_folder():
    from llm.model_file import QWEN_CODER_1_5B

    from generated import OPENIE, triples_path

    assert triples_path(3, 4, QWEN_CODER_1_5B.name) == OPENIE / "mystery-3-4.json"   # the committed cache
    other = triples_path(3, 4, "../../Llama 3.1:8b/instruct")   # a server's model name never leaves openie/
    assert other.parent.parent == OPENIE and other.name == "mystery-3-4.json"
    assert other.parent.name.startswith("llama-3.1-8b-instruct-")
    assert triples_path(3, 4, "a/b") != triples_path(3, 4, "a-b")   # the hash keeps look-alike names apart


def _suite_row(name: str, recall: float) -> dict:
    return {"set": name, "strategies": {"s": {"recall": recall}}}


def test_the_rule_keeps_a_change_only_if_the_mean_rises_and_no_set_falls_much():
    from choose import judge
    base = [_suite_row("a", 0.5), _suite_row("b", 0.5)]
    small_loss = judge("x", base, [_suite_row("a", 0.6), _suite_row("b", 0.49)], "s")
    assert small_loss.kept and small_loss.gain == 0.045 and (small_loss.worst_set, small_loss.worst_drop) == ("b", 0.01)
    assert not judge("x", base, [_suite_row("a", 0.7), _suite_row("b", 0.47)], "s").kept   # one set falls 0.03
    assert not judge("x", base, base, "s").kept                                            # no gain is no change
    assert not judge("x", base, [_suite_row("a", 0.505), _suite_row("b", 0.5)], "s").kept  # +0.0025: noise


def test_a_speed_change_is_judged_on_two_saved_suite_runs(tmp_path, monkeypatch):
    import choose
    import common
    monkeypatch.setattr(common, "RESULTS", tmp_path)
    monkeypatch.setattr(choose, "RESULTS", tmp_path)

    def save(name: str, recalls: dict[str, float]) -> None:
        rows = [_suite_row(s, r) for s, r in recalls.items()]
        (tmp_path / f"{name}.json").write_text(json.dumps({"rows": rows, "mean": {"s": 0.0}}))
    save("before", {"a": 0.5, "b": 0.5})
    save("noise", {"a": 0.49, "b": 0.505})        # the mean falls 0.0025, no set by more than 0.02: kept
    save("worse", {"a": 0.47, "b": 0.55})         # one set falls 0.03: not kept, whatever the mean
    save("other", {"a": 0.5})
    for after, kept in (("noise", True), ("worse", False)):
        assert choose.main(["--speed-change", "before", after, "--out", f"verdict_{after}"]) == 0
        verdict = json.loads((tmp_path / f"verdict_{after}.json").read_text())
        assert verdict["verdicts"]["s"]["kept"] is kept and verdict["pick"] == (after if kept else "before")
    with pytest.raises(SystemExit, match="other sets"):
        choose.main(["--speed-change", "before", "other", "--out", "verdict_other"])
    saved = (tmp_path / "noise.json").read_text()
    with pytest.raises(SystemExit):   # the verdict never overwrites a run it judges
        choose.main(["--speed-change", "before", "noise", "--out", "noise"])
    assert (tmp_path / "noise.json").read_text() == saved


def test_the_suite_scores_a_hand_written_case_by_question_type(tmp_path, monkeypatch):
    from llm import Settings, embedder_only

    import suite

    monkeypatch.setenv("DETECTIVE_DATA_DIR", str(tmp_path / "index"))
    monkeypatch.setenv("DETECTIVE_CACHE_DIR", str(tmp_path / "cache"))
    settings = Settings.from_env()
    one = suite.SuiteSet("ledgerline_outage", "hand-written", "nlp", suite.hand_written("ledgerline_outage"))
    row = suite.run_set(one, ("bm25",), [], settings, embedder_only(settings))   # no index to embed: the fast tier
    for name in ("bm25",):
        result = row["strategies"][name]
        assert result["questions"] == 15 and 0 <= result["recall"] <= 1
        assert set(result["by_type"]) == {"simple", "multi-hop", "sense-making"} and 0 < result["hub_share"] <= 1


def test_the_investigation_grid_says_whether_looping_helps_and_which_loop_is_best():
    """choose: a loop must beat the walk alone with no type down by more than 0.02; best_loop: the loop with the
    highest mean whatever that verdict, a tie going to the first in grid order."""
    from investigation import best_loop, choose
    base = {"config": "steps=1", "simple": 1.0, "multi-hop": 0.9, "sense-making": 0.4, "mean": 0.767}
    rows = [base,
            {"config": "a", "simple": 0.9, "multi-hop": 1.0, "sense-making": 0.5, "mean": 0.8},   # simple -0.1
            {"config": "b", "simple": 1.0, "multi-hop": 0.9, "sense-making": 0.38, "mean": 0.76},
            {"config": "c", "simple": 0.9, "multi-hop": 1.0, "sense-making": 0.5, "mean": 0.8}]
    assert choose(rows, "steps=1") is None and best_loop(rows, "steps=1") == "a"
    rows.append({"config": "d", "simple": 0.99, "multi-hop": 0.9, "sense-making": 0.45, "mean": 0.78})
    assert choose(rows, "steps=1") == "d" and best_loop(rows, "steps=1") == "a"
    assert best_loop([base], "steps=1") is None


def test_the_loop_rule_keeps_a_rise_over_the_choosing_sets_and_says_what_it_could_not_judge(tmp_path):
    """loop_rule: the mean over the ten choosing sets must rise by MIN_GAIN with no set down by more than
    MAX_DROP; a set one side never ran is not judged, unless the change cannot act on it (--unchanged); a verdict
    made on the seven sets before --sets wide joined, the eight before --sets atlas, or the nine before --sets mdev,
    is reproduced with them (--seven, --eight, --nine)."""
    import loop_rule
    from choose import MIN_GAIN

    def run(generated: float, dev: dict[str, float], dev5: dict[str, float] | None, seeds=range(100, 124),
            wide: float | None = 0.85, atlas: float | None = 0.5, mdev: float | None = 0.7) -> str:
        rows = [{"seed": s, "investigate": {"questions": {f"Q{n}": generated for n in range(1, 10)}}} for s in seeds]
        payload = {"generated": {"rows": rows},
                   "dev": {k: {"investigate": {"by_type": {"all": v}}} for k, v in dev.items()}}
        if dev5 is not None:
            payload["dev5"] = {k: {"investigate": {"by_type": {"all": v}}} for k, v in dev5.items()}
        if wide is not None:
            payload["wide"] = {"2wiki_q121_220_wide": {"investigate": {"by_type": {"all": wide}}}}
        if atlas is not None:
            payload["atlas"] = {"atlas": {"investigate": {"by_type": {"all": atlas}}}}
        if mdev is not None:
            payload["mdev"] = {"musique_dev100": {"investigate": {"by_type": {"all": mdev}}}}
        path = tmp_path / f"run{len(list(tmp_path.iterdir()))}.json"
        path.write_text(json.dumps(payload))
        return str(path)

    dev = {"ashcombe_hoard": 0.6, "ledgerline_outage": 0.7, "marlow_road": 0.5, "2wiki_first20": 0.9}
    dev5 = {"2wiki_q121_220": 0.9, "hotpotqa_train100": 0.9}
    base = loop_rule.load(run(0.8, dev, dev5))
    up = loop_rule.judge(base, loop_rule.load(run(0.8 + 10 * MIN_GAIN, dev, dev5)))
    assert up.kept and up.gain == pytest.approx(MIN_GAIN) and not up.missing and up.confirming[1] > up.confirming[0]
    assert len(up.base) == 10 and "wide 2wiki_q121_220_wide" in up.base and "mdev musique_dev100" in up.base
    small = loop_rule.judge(base, loop_rule.load(run(0.8 + 9 * MIN_GAIN, dev, dev5)))
    assert not small.kept and not small.missing                     # a rise under the margin
    before = loop_rule.load(run(0.8, dev, dev5, wide=None, atlas=None, mdev=None))   # the seven sets' days
    seven = loop_rule.judge(before, loop_rule.load(run(0.8 + 7 * MIN_GAIN, dev, dev5, wide=None, atlas=None,
                                                       mdev=None)), sets=loop_rule.SEVEN)
    assert seven.kept and len(seven.base) == 7
    assert loop_rule.judge(before, before).missing == ("wide 2wiki_q121_220_wide", "atlas atlas",
                                                       "mdev musique_dev100")
    eight = loop_rule.judge(loop_rule.load(run(0.8, dev, dev5, atlas=None, mdev=None)),
                            loop_rule.load(run(0.8 + 8 * MIN_GAIN, dev, dev5, atlas=None, mdev=None)),
                            sets=loop_rule.EIGHT)
    assert eight.kept and len(eight.base) == 8 and not eight.missing
    nine = loop_rule.judge(loop_rule.load(run(0.8, dev, dev5, mdev=None)),
                           loop_rule.load(run(0.8 + 9 * MIN_GAIN, dev, dev5, mdev=None)), sets=loop_rule.NINE)
    assert nine.kept and len(nine.base) == 9 and not nine.missing
    down = loop_rule.judge(base, loop_rule.load(run(0.9, {**dev, "marlow_road": 0.47}, dev5)))
    assert down.gain > MIN_GAIN and down.worst == "dev marlow_road" and not down.kept   # one set down 0.03
    partial = loop_rule.load(run(0.9, dev, None, seeds=range(100, 116)))
    unjudged = loop_rule.judge(base, partial)
    assert not unjudged.kept and set(unjudged.missing) == {"dev5 2wiki_q121_220", "dev5 hotpotqa_train100"}
    assert "not judged" in loop_rule.show(unjudged) and unjudged.confirming[1] is None
    assumed = loop_rule.judge(base, partial, unchanged=("dev5",))
    assert assumed.kept and assumed.assumed == ("dev5 2wiki_q121_220", "dev5 hotpotqa_train100")
    assert "unchanged by construction" in loop_rule.show(assumed)
    fallen = loop_rule.judge(base, loop_rule.load(run(0.9, {**dev, "marlow_road": 0.47}, None)))
    assert fallen.missing and "verdict: not kept (a set falls" in loop_rule.show(fallen)   # partial, yet decided
    with pytest.raises(SystemExit, match="no such result"):
        loop_rule.load(str(tmp_path / "nowhere.json"))


def test_the_loop_rule_lists_the_questions_that_moved(tmp_path, capsys):
    """--questions: every question both sides ran whose Recall differs, generated and case questions alike; a
    question only one side ran is not a change."""
    import loop_rule

    def run(q7: float, hotpot: dict[str, float], seeds=(100, 101)) -> str:
        rows = [{"seed": s, "investigate": {"questions": {"Q1": 1.0, "Q7": q7 if s == 101 else 0.0}}} for s in seeds]
        payload = {"generated": {"rows": rows},
                   "dev5": {"hotpotqa_train100": {"investigate": {"questions": hotpot, "by_type": {"all": 0.5}}}}}
        path = tmp_path / f"run{len(list(tmp_path.iterdir()))}.json"
        path.write_text(json.dumps(payload))
        return str(path)
    base, candidate = run(0.0, {"a": 1.0, "b": 0.5}), run(1 / 3, {"a": 0.5, "b": 0.5, "c": 1.0}, seeds=(100, 101, 102))
    changes = loop_rule.question_changes(loop_rule.load(base), loop_rule.load(candidate))
    assert changes == [("generated 101", "Q7", 0.0, 1 / 3), ("dev5 hotpotqa_train100", "a", 1.0, 0.5)]
    loop_rule.main(["--base", base, "--candidate", candidate, "--questions"])
    out = capsys.readouterr().out
    assert "2 questions differ" in out and "dev5 hotpotqa_train100 a: 1.000 -> 0.500" in out


def test_the_narrow_rule_judges_a_change_where_it_acts_and_on_the_fresh_seeds():
    """--narrow: no choosing set lower, the mean up, and on the fresh seeds a whole question's Recall gained with no
    type down by more than MAX_DROP; the fresh seeds unrun on one side leave it unjudged."""
    import loop_rule
    fresh_seeds = loop_rule.FRESH_SEEDS

    def run(q7: dict[int, float], q1: dict[int, float] | None = None, marlow: float = 0.6,
            seeds=range(100, fresh_seeds[-1] + 1)) -> list[dict]:
        """Every question at 0.5 but Q1 (simple) and Q7 (sense-making) as given seed by seed (1.0 and 0.5 else)."""
        rows = [{"seed": s, "investigate": {"questions": {**{f"Q{n}": 0.5 for n in range(1, 10)},
                                                         "Q1": (q1 or {}).get(s, 1.0), "Q7": q7.get(s, 0.5)}}}
                for s in seeds]
        dev = {k: {"investigate": {"by_type": {"all": 0.6}}} for k in
               ("ashcombe_hoard", "ledgerline_outage", "2wiki_first20")}
        dev["marlow_road"] = {"investigate": {"by_type": {"all": marlow}}}
        dev5 = {k: {"investigate": {"by_type": {"all": 0.9}}} for k in ("2wiki_q121_220", "hotpotqa_train100")}
        wide = {"2wiki_q121_220_wide": {"investigate": {"by_type": {"all": 0.85}}}}
        atlas = {"atlas": {"investigate": {"by_type": {"all": 0.5}}}}
        mdev = {"musique_dev100": {"investigate": {"by_type": {"all": 0.7}}}}
        return [{"generated": {"rows": rows}, "dev": dev, "dev5": dev5, "wide": wide, "atlas": atlas, "mdev": mdev}]

    base, up = run({}), 0.5 + 1 / 3
    fresh = {s: up for s in fresh_seeds[:6]}   # a third of a question on six fresh seeds: 2.0 summed
    kept = loop_rule.judge_narrow(base, run({100: up, **fresh}))
    assert kept.kept and kept.fresh_change == pytest.approx(2.0, abs=1e-3) and len(kept.changed) == 6
    assert "verdict (narrow rule): kept" in loop_rule.show_narrow(kept)
    small = loop_rule.judge_narrow(base, run({100: up, fresh_seeds[0]: up, fresh_seeds[1]: up}))
    assert not small.kept and small.fresh_change == pytest.approx(2 / 3, abs=1e-3)      # under a whole question
    unseen = loop_rule.judge_narrow(base, run(fresh))
    assert not unseen.kept and unseen.choosing.gain == 0                      # the choosing sets did not rise
    lower = loop_rule.judge_narrow(base, run({100: 1.0, **fresh}, marlow=0.599))
    assert lower.choosing.gain > 0 and not lower.kept                         # one choosing set lower by 0.001
    fell = loop_rule.judge_narrow(base, run({100: up, **{s: 1.0 for s in fresh_seeds}},
                                            q1={s: 0.8 for s in fresh_seeds}))
    assert fell.fresh_change > 1 and fell.fresh_by_type["simple"] < -0.02 and not fell.kept   # a fresh type down
    unrun = loop_rule.judge_narrow(base, run({100: up}, seeds=range(100, 124)))
    assert unrun.fresh_change is None and not unrun.kept and "not judged" in loop_rule.show_narrow(unrun)
    # the steady form: some fresh questions up and none down, and STEADY_UP up and none down on the other seeds
    seen_up = {s: up for s in range(100, 100 + loop_rule.STEADY_UP)}
    steady = loop_rule.judge_narrow(base, run({**seen_up, fresh_seeds[0]: up}))
    assert steady.kept and steady.steady and steady.seen[1:] == (loop_rule.STEADY_UP, 0)
    assert steady.fresh_change < loop_rule.NARROW_GAIN and "holds" in loop_rule.show_narrow(steady)
    assert not small.steady                                                   # one question up on the other seeds
    one_down = loop_rule.judge_narrow(base, run({**seen_up, 120: 0.0, fresh_seeds[0]: up}))
    assert not one_down.kept and one_down.seen[2] == 1                        # a question down on a seen seed
    fresh_down = loop_rule.judge_narrow(base, run({**seen_up, fresh_seeds[0]: up, fresh_seeds[1]: 0.0}))
    assert not fresh_down.kept                                                # a fresh question down


def test_the_grid_reader_reads_each_page_once_and_keeps_the_readers_name():
    from core.types import Passage
    from investigate import WalkReader

    from investigation import RememberingReader
    calls = []

    class Counting(WalkReader):
        def read(self, question, passages, offered, *, first, judge=False):
            calls.append(question)
            return super().read(question, passages, offered, first=first, judge=judge)
    reader = RememberingReader(Counting())
    page = [Passage(id="P1", doc_id="D1", title="t", text="x")]
    first = reader.read("q", page, ["a", "b"], first=True)
    assert reader.read("q", page, ["a", "b"], first=True) is first and calls == ["q"]
    reader.read("q", page, ["a"], first=True)            # another page of leads is read anew
    reader.read("q", page, ["a", "b"], first=True, judge=True)
    assert calls == ["q", "q", "q"] and (reader.name, reader.uses_llm) == ("walk", False)


def test_a_result_never_lands_on_an_input(tmp_path):
    """--out is a plain name in results/ or a path outside the project; a name reaching the OpenIE cache or a case
    folder is refused before anything is written."""
    from common import RESULTS, ROOT, write_result
    cache = RESULTS / "openie" / "mystery-1-4.json"
    before = cache.read_bytes()
    for name in ("openie/mystery-1-4", "../cases/marlow_road/questions"):
        with pytest.raises(SystemExit, match="inputs"):
            write_result(name, {"x": 1})
    assert cache.read_bytes() == before and (ROOT / "benchmarks" / "cases" / "marlow_road" / "questions.json").exists()
    assert write_result(str(tmp_path / "scratch"), {"x": 1}) == tmp_path / "scratch.json"

def test_the_generic_reader_asks_the_detectives_questions_once_and_follows_the_walks_leads():
    from core.types import Passage

    from investigation import GENERIC_SUB_QUESTIONS, GenericReader
    page = [Passage(id="P1", doc_id="D1", title="t", text="x")]
    first = GenericReader().read("Who did it?", page, ["a", "b"], first=True)
    later = GenericReader().read("Who did it?", page, ["a", "b"], first=False)
    assert first.sub_questions == GENERIC_SUB_QUESTIONS and later.sub_questions == ()
    assert first.leads == later.leads == (0, 1) and not first.enough


def test_the_perfect_reader_of_a_benchmark_names_a_missing_document_by_its_published_triples():
    """On a case the generator did not make, ``investigate-gold`` knows the supporting documents and names the one
    not yet read: by an offered lead its published triples name, else (first reading) by asking its first triple;
    with every supporting document read it says enough."""
    from casebook.catalog import resolve
    from casebook.loader import load_case
    from kg.normalize import normalize_entity

    from investigation import gold_reader, published_as_gold
    case = load_case(resolve("musique_tiny20"))
    gold = published_as_gold(case)
    assert len(gold) == len(case.triples) and set(gold[0]) == {"doc_id", "subject", "relation", "object"}
    reader = gold_reader(case, gold)
    q = next(q for q in case.questions if len(q.supporting_docs) >= 2)
    have, missing = q.supporting_docs[0], q.supporting_docs[1]
    read = [p for p in case.passages if p.doc_id == have]
    theirs = next(t for t in case.triples if t.doc_id == missing)
    lead = next(e for e in (theirs.subject, theirs.object)
                if not any(normalize_entity(e) in {normalize_entity(t.subject), normalize_entity(t.object)}
                           for t in case.triples if t.doc_id == have))
    offered = ["nothing of theirs", lead]
    by_lead = reader.read(q.text, read, offered, first=True)
    assert 1 in by_lead.leads and not by_lead.enough and missing in by_lead.why
    asked = reader.read(q.text, read, ["nothing of theirs"], first=True)
    assert asked.leads == () and asked.sub_questions[0] == f"{theirs.subject} {theirs.relation} {theirs.object}"
    everything = [p for p in case.passages if p.doc_id in q.supporting_docs]
    assert reader.read(q.text, everything, offered, first=False).enough


def test_the_trails_place_each_supporting_passage_and_offer_no_report_set(capsys):
    """Each supporting passage is in the top k at the place the trail says, or missed; Recall agrees; the rounds
    are listed. A report set, or a question in none of the sets asked, is refused by name, before anything is built.
    (The blind loop: no model needed.)"""
    from llm import Settings, embedder_only

    from investigation import dev_cases
    from trails import main, render, trails
    _, case, k, triples = dev_cases("dev")[0]
    settings = Settings.from_env()
    found = trails(case, "investigate-walk", k, [], triples, settings, embedder_only(settings))
    assert len(found) == len(case.questions) and all(len(t.top) == k and t.rounds for t in found)
    for t in found:
        docs = [case.passage(pid).doc_id for pid in t.top]
        for s in t.supports:
            doc = case.passage(s.passage).doc_id
            assert (docs.index(doc) + 1 if doc in docs else None) == s.place
        placed = sum(s.place is not None for s in t.supports)
        assert t.recall == pytest.approx(placed / len(t.supports))
    missed = next(t for t in found if any(s.place is None for s in t.supports))
    text = render(case, missed)
    assert text.startswith(f"== {missed.question.id}") and "missed" in text and "round 1: searched" in text
    with pytest.raises(SystemExit) as refused:
        main(["--sets", "musique"])
    assert refused.value.code == 2 and "musique is not a choosing set" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        main(["--sets", "dev", "--question", "no-such-question"])
    assert refused.value.code == 2 and "no-such-question is in none of the sets" in capsys.readouterr().err


def test_the_musique_dev_set_keeps_every_second_question_and_each_paragraph_once(tmp_path, capsys):
    """make_musique_dev: every second row of MuSiQue's JSON lines, a paragraph two questions share kept once (both
    point at it), the supporting paragraphs in order, the aliases after the answer; a file that is not JSON lines, or a
    row without a field, is refused by name and line before anything is written; the other half needs its own folder;
    the committed set loads as a case."""
    from make_musique_dev import OUT, main

    from casebook.loader import load_case

    def row(qid: str, paragraphs: list[tuple[str, str, bool]]) -> dict:
        return {"id": qid, "question": f"question {qid}?", "answer": "A", "answer_aliases": ["A", "a"],
                "paragraphs": [{"idx": i, "title": t, "paragraph_text": x, "is_supporting": s}
                               for i, (t, x, s) in enumerate(paragraphs)]}
    shared = ("Shared", "A  paragraph both questions hold.", True)
    rows = [row("2hop__1_2", [shared, ("One", "first only", True)]), row("2hop__skipped", [("Gone", "skipped", True)]),
            row("3hop1__3_4_5", [("Two", "second only", False), shared, ("Three", "third", True)])]
    source = tmp_path / "musique.json"
    source.write_text("\n".join(json.dumps(r) for r in rows))
    assert main(["--source", str(source), "--out", str(tmp_path / "set")]) == 0
    case = load_case(tmp_path / "set")
    assert [q.id for q in case.questions] == ["2hop__1_2", "3hop1__3_4_5"]
    assert [q.type for q in case.questions] == ["2hop", "3hop1"]
    titles = {d.id: d.title for d in case.documents}
    assert sorted(titles.values()) == ["One", "Shared", "Three", "Two"]   # the skipped row's paragraph is not there
    first, third = case.questions
    assert [titles[d] for d in first.supporting_docs] == ["Shared", "One"]
    assert [titles[d] for d in third.supporting_docs] == ["Shared", "Three"] and list(first.answers) == ["A", "a"]
    source.write_text("not json")
    assert main(["--source", str(source), "--out", str(tmp_path / "bad")]) == 2
    assert str(source) in capsys.readouterr().err and not (tmp_path / "bad").exists()
    source.write_text(json.dumps({k: v for k, v in rows[0].items() if k != "answer"}))
    assert main(["--source", str(source), "--out", str(tmp_path / "bad")]) == 2
    assert "line 1: no field 'answer'" in capsys.readouterr().err and not (tmp_path / "bad").exists()
    with pytest.raises(SystemExit) as refused:   # the other half never lands on the committed set
        main(["--source", str(source), "--other-half"])
    assert refused.value.code == 2 and "--other-half needs --out" in capsys.readouterr().err
    committed = load_case(OUT)
    assert len(committed.questions) == 100 and all(len(q.supporting_docs) >= 2 for q in committed.questions)


def test_the_headroom_reads_the_walks_deeper_ranking_against_the_loops_top_k(capsys):
    """The perfect pick adds only supporting documents from the pool, up to k; a place past 20 counts as past 20; on a
    hand-written case the figures agree with each other (Recall grows with depth, the pick never lowers the passages
    read, the missed documents are the loop's); a report set is refused by name. (The blind loop: no model needed.)"""
    from headroom import BUCKETS, bucket, headroom, main, recall, with_perfect_pick

    from llm import Settings, embedder_only

    from investigation import dev_cases
    assert recall(["a", "b", "c"], ["a", "d"], 2) == 0.5
    assert with_perfect_pick(["a", "x"], ["y", "d", "z", "e"], ["a", "d", "e"], 3) == pytest.approx(2 / 3)
    assert with_perfect_pick(["a", "x"], ["y", "d", "z", "e"], ["a", "d", "e"], 4) == 1.0
    assert [bucket(p, 5) for p in (1, 5, 6, 10, 11, 20, 21, None)] == \
        [BUCKETS[0], BUCKETS[0], BUCKETS[1], BUCKETS[1], BUCKETS[2], BUCKETS[2], BUCKETS[3], BUCKETS[3]]
    name, case, k, triples = dev_cases("dev")[0]
    settings = Settings.from_env()
    h = headroom(name, case, "investigate-walk", k, [], triples, settings, embedder_only(settings))
    assert h.questions == len(case.questions) and h.k == k == h.show
    assert h.walk[f"@{k}"] <= h.walk["@10"] <= h.walk["@20"]
    assert h.loop_read <= h.perfect_pick and h.perfect_pick == pytest.approx(h.loop)   # no places after the read
    supporting = sum(len(q.supporting_docs) for q in case.questions)
    assert 0 < sum(h.missed.values()) < supporting
    with pytest.raises(SystemExit) as refused:
        main(["--sets", "musique"])
    assert refused.value.code == 2 and "musique is not a choosing set" in capsys.readouterr().err
