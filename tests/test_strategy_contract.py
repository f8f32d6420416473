"""A throwaway strategy, registered in this test only, reaches the CLI, the reports and the app with no other change."""
import json
from dataclasses import dataclass, replace

import pytest

import run_comparison
from core.contract import Param, Strategy, params_of, setting
from core.types import Evidence, Explanation, Retrieval
from investigate.strategy import WALK
from lab import registry
from lab.report import validate_report
from lab.runner import RunConfig

from conftest import ROOT

NAME = "throwaway"


class WordOverlap:
    """Ranks passages by shared words times ``boost``: enough to exercise every part of the contract."""

    def __init__(self, passages):
        self.passages = passages

    def retrieve(self, question, top_k, expansions=(), params=None):
        boost = (params or {}).get("boost", 1.0)
        ex = Explanation(method=f"shared words x {boost}", queries=[question])
        with ex.stage("tokenize", "lower-cased words"):
            words = set(question.lower().split())
        with ex.stage("score") as stage:   # a stage may say what it found once it has found it
            scored = sorted(((p.id, boost * len(words & set(p.text.lower().split()))) for p in self.passages),
                            key=lambda kv: -kv[1])[:top_k]
            stage.why = f"{sum(score > 0 for _, score in scored)} of the top {top_k} share a word"
        ex.evidence = [Evidence(f"{pid} shares words", score, score > 0, pid) for pid, score in scored]
        return Retrieval(scored, ex)


THROWAWAY = Strategy(NAME, "Throwaway", "Word overlap, for the contract test.",
                     build=lambda ctx, params: WordOverlap(ctx.case.passages),
                     params=(Param("boost", 1.0, "multiplies every score", minimum=0.0, maximum=10.0, step=0.5),))


@pytest.fixture
def throwaway():
    registry.register(THROWAWAY)
    yield THROWAWAY
    registry.unregister(NAME)


def test_list_params_shows_it(throwaway, capsys):
    assert run_comparison.main(["--list-params"]) == 0
    assert "throwaway.boost=1.0  [float 0.0..10.0; query time] multiplies every score" in capsys.readouterr().out


def test_set_changes_it_and_the_report_carries_the_explanation(throwaway, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DETECTIVE_DATA_DIR", str(tmp_path / "index"))
    out = tmp_path / "report.json"
    code = run_comparison.main(["--case", "purloined_pearl", "--strategies", f"naive,{NAME}", "--retrieval-only",
                                "--questions", "Q1", "--set", f"{NAME}.boost=2.5", "--json", str(out), "--quiet"])
    assert code == 0, capsys.readouterr().err
    report = json.loads(out.read_text())
    validate_report(report)
    assert report["params"][NAME] == {"boost": 2.5}
    result = report["questions"][0]["results"][NAME]
    assert result["params"] == {"boost": 2.5}
    ex = result["explanation"]
    assert ex["method"] == "shared words x 2.5"
    assert [s["name"] for s in ex["stages"]] == ["tokenize", "score"] and all(s["ran"] for s in ex["stages"])
    assert ex["stages"][0]["why"] == "lower-cased words" and ex["stages"][1]["why"].endswith("share a word")
    assert ex["evidence"] and all(e["score"] % 2.5 == 0 for e in ex["evidence"])
    assert set(result["timings_ms"]) == {"tokenize", "score"}


def test_bad_assignments_name_the_parameter(throwaway):
    with pytest.raises(ValueError, match="throwaway.boost must be at most 10.0"):
        RunConfig(strategies=(NAME,)).with_assignments([f"{NAME}.boost=11"])
    with pytest.raises(ValueError, match="'fast' is not a valid float"):
        RunConfig(strategies=(NAME,)).with_assignments([f"{NAME}.boost=fast"])
    with pytest.raises(KeyError, match="has no parameter 'speed'"):
        RunConfig(strategies=(NAME,)).with_assignments([f"{NAME}.speed=1"])
    with pytest.raises(ValueError, match="STRATEGY.PARAMETER=VALUE"):
        RunConfig(strategies=(NAME,)).with_assignments(["boost=1"])


def test_query_time_parameters_leave_the_build_key_alone(throwaway):
    base = RunConfig(strategies=(NAME, "hipporag"))
    changed = base.with_assignments([f"{NAME}.boost=3", "hipporag.damping=0.7"])
    assert changed.build_key() == base.build_key()
    assert RunConfig(strategies=(NAME,)).build_key() != base.build_key()


def test_app_renders_its_column_with_evidence_and_stages(throwaway, app_env, backend):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=600)
    at.run()
    at.sidebar.multiselect[0].set_value([NAME]).run()
    boost = next(s for s in at.sidebar.slider if s.label == "boost")
    boost.set_value(2.0).run()
    next(b for b in at.button if b.label == "Build the indexes").click().run()
    next(b for b in at.button if b.label == "Ask").click().run()
    assert not at.exception, at.exception
    assert "Throwaway" in [s.value for s in at.subheader]
    frames = [df.value for df in at.dataframe]
    evidence = next(f for f in frames if "evidence" in f.columns)
    assert len(evidence) == 3 and set(evidence["kept"]) <= {"yes", "no"}
    stages = next(f for f in frames if "stage" in f.columns and "ran" in f.columns)
    assert list(stages["stage"]) == ["tokenize", "score"] and list(stages["ran"]) == ["yes", "yes"]
    assert any(m.value.startswith("**Method:** shared words x 2") for m in at.markdown)


def test_the_build_plan_lists_every_stage_a_build_reports(tmp_path):
    """The app lists the plan before building: every stage a build reports must be in it, in the same order."""
    from core.storage import Storage
    from lab.runner import Lab
    from llm import Settings, embedder_only

    from helpers import BRIDGE_DOCS, BRIDGE_QUESTION, BRIDGE_TRIPLES, make_case

    names = tuple(n for n, s in registry.REGISTRY.items() if not s.needs_llm)
    case = make_case(BRIDGE_DOCS, [BRIDGE_QUESTION], BRIDGE_TRIPLES)
    settings = Settings(cache_enabled=False)
    config = RunConfig(strategies=names, retrieval_only=True, triples="precomputed",
                       params={"hubmesh": {"entities": "openie"}})
    embedder, storage = embedder_only(settings), Storage(data_dir=tmp_path)
    lab = Lab(case, settings, config, embedder=embedder, storage=storage)
    plan = [stage for stage, _ in lab.plan()]
    assert {"vector index", "embed passages"} <= set(plan) and "openie" not in plan   # triples from the case file
    reported = []
    lab.build(progress=lambda u: reported.append(u.stage) if u.stage not in reported else None)
    assert reported and reported == [s for s in plan if s in reported]
    again = Lab(case, settings, config, embedder=embedder, storage=storage)
    assert again.plan() == lab.plan()
    reported.clear()
    again.build(progress=lambda u: reported.append(u.stage))
    assert "embed passages" not in reported        # the saved graph is loaded, so the app marks it "nothing to do"


def test_params_of_an_instance_default_to_its_values():
    """Two strategies sharing one settings type may default differently: the instance's values are the defaults."""
    @dataclass(frozen=True)
    class Knobs:
        rounds: int = setting(3, "rounds", minimum=1)
        merge: str = setting("trail", "merge", choices=("trail", "rrf"))
        note: str = "not a parameter"

    assert [(p.name, p.default) for p in params_of(Knobs)] == [("rounds", 3), ("merge", "trail")]
    own = params_of(replace(Knobs(), rounds=2), exclude=("merge",))
    assert [(p.name, p.default, p.minimum) for p in own] == [("rounds", 2, 1)]
    # the blind loop's own defaults are its parameters' defaults
    assert all(p.default == getattr(WALK, p.name) for p in registry.get("investigate-walk").params)
