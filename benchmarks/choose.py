#!/usr/bin/env python3
"""The rule every default is chosen by: a value is kept only if the development suite's mean Recall@5 rises and
no set of the suite falls by more than 0.02 (a rise: at least MIN_GAIN, more than one document of one question
moves the mean).

    python benchmarks/choose.py --strategy hipporag --grid dense_power=1,2,3

runs the suite (benchmarks/suite.py) with the strategy's defaults and once per value, and says for each value
the suite mean, its gain over the default, the set that fell most, and whether the rule keeps it. A value equal
to the default is the baseline, not a candidate. With several values kept, the one with the highest mean wins.

    python benchmarks/choose.py --embed-model all-MiniLM-L6-v2-int8

judges a change made for speed, not recall (another local embedder): it runs the whole suite, every strategy, with
the default embedder and with the candidate, and keeps the candidate only if, for every strategy, no set falls by
more than MAX_DROP and the suite mean falls by no more than MIN_GAIN (what one document of one question moves it):
faster, and no worse than noise anywhere.

    python benchmarks/choose.py --speed-change suite_before_edge_only suite --out edge_only_choice

judges a code change made for speed by the same rule, on two saved runs of the whole suite (benchmarks/suite.py
--out NAME before the change, then after it): results/NAME.json.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass

from lab.registry import get
from llm import Settings, embedder_only

from common import RESULTS, write_result
from suite import STRATEGIES, run_set, suite_mean, suite_sets

MAX_DROP = 0.02
# "Rises" means by more than one question can move the mean: one of a multi-hop question's two documents, on a
# 15-question hand-written case, moves that case by 1/30 and the mean of 10 sets by 0.0033. A smaller gain is one
# document of one question: noise, not a better default (the rule needs a rise; this says how much is a rise).
MIN_GAIN = 0.004


@dataclass(frozen=True)
class Judgement:
    value: str
    mean: float
    gain: float
    worst_set: str
    worst_drop: float
    kept: bool
    by_set: dict[str, float]    # the candidate's Recall@5 set by set


def judge(value: str, base: list[dict], candidate: list[dict], strategy: str, max_drop: float = MAX_DROP,
          min_gain: float = MIN_GAIN) -> Judgement:
    """The rule, on two runs of the suite (rows in the same set order)."""
    drops = {b["set"]: round(b["strategies"][strategy]["recall"] - c["strategies"][strategy]["recall"], 4)
             for b, c in zip(base, candidate, strict=True)}
    worst = max(drops, key=lambda s: drops[s])
    gain = round(suite_mean(candidate, strategy) - suite_mean(base, strategy), 4)
    return Judgement(value, suite_mean(candidate, strategy), gain, worst, drops[worst],
                     kept=gain >= min_gain and drops[worst] <= max_drop,
                     by_set={c["set"]: c["strategies"][strategy]["recall"] for c in candidate})


def say(label: str, v: Judgement) -> None:
    print(f"  {label}: mean {v.mean:.4f} ({v.gain:+.4f}), worst {v.worst_set} {-v.worst_drop:+.4f}: "
          f"{'kept' if v.kept else 'not kept'}", flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--strategy", help="the strategy whose --grid or --layer is judged")
    p.add_argument("--embed-model", default="", help="judge this local embedder against the default, for speed")
    p.add_argument("--grid", action="append", default=[], metavar="PARAM=V1,V2,...",
                   help="a parameter and its values (repeatable: each is judged on its own against the defaults)")
    p.add_argument("--layer", action="store_true", help="judge the build option: the deterministic layer under the "
                   "sets' OpenIE and published triples (--triples precomputed+nlp)")
    p.add_argument("--sets", default="", help="a subset of the suite (for a quick look; the rule needs them all)")
    p.add_argument("--speed-change", nargs=2, metavar=("BEFORE", "AFTER"),
                   help="judge a change made for speed on two saved suite runs (results/BEFORE.json, AFTER.json)")
    p.add_argument("--out", default="", help="the result's name (one --grid only; default choose_STRATEGY_PARAM)")
    args = p.parse_args(argv)
    if args.speed_change:
        if args.strategy or args.grid or args.layer or args.embed_model or not args.out:
            p.error("--speed-change judges two saved runs: give it alone, with --out")
        before, after = args.speed_change
        if args.out in (before, after):
            p.error(f"--out {args.out} would overwrite one of the runs it judges: name the verdict otherwise")
        return judge_speed_change(before, after, args.out)
    if args.embed_model:
        if args.strategy or args.grid or args.layer:
            p.error("--embed-model judges every strategy at its defaults: give it alone")
        return choose_embedder(args.embed_model, args.sets, args.out)
    if not args.strategy:
        p.error("give --strategy (with --grid or --layer) or --embed-model")
    strategy = get(args.strategy)
    grids = [(param, values.split(",")) for param, _, values in (g.partition("=") for g in args.grid)]
    for param, _ in grids:
        strategy.param(param)   # an unknown name is refused here, before any work
    if not grids and not args.layer:
        p.error("give a --grid or --layer")
    if args.out and len(grids) + args.layer > 1:
        p.error("--out names one result: give one --grid (or --layer) with it")
    settings = Settings.from_env()
    suite = [s for s in suite_sets(settings) if not args.sets or s.name in args.sets.split(",")]
    embedder = embedder_only(settings)
    run = lambda assignments, layer=False: [run_set(s, (strategy.name,), assignments, settings, embedder, layer)
                                            for s in suite]
    base = run([])
    print(f"{strategy.name} at its defaults: suite mean {suite_mean(base, strategy.name):.4f}", flush=True)
    if args.layer:
        v = judge("on", base, run([], layer=True), strategy.name)
        say("deterministic layer", v)
        write_result(args.out or f"choose_{strategy.name}_layer",
                     {"strategy": strategy.name, "param": "nlp layer (build)", "default": "off",
                      "pick": "on" if v.kept else "off", "sets": [s.name for s in suite], "base": base,
                      "verdicts": [asdict(v)]})
    for param, values in grids:
        default = str(strategy.values()[param])
        verdicts = []
        for value in values:
            if strategy.param(param).parse(value, strategy.name) == strategy.values()[param]:
                continue
            verdicts.append(judge(value, base, run([f"{strategy.name}.{param}={value}"]), strategy.name))
            say(f"{param}={value}", verdicts[-1])
        kept = [v for v in verdicts if v.kept]
        pick = max(kept, key=lambda v: v.mean).value if kept else default
        print(f"{strategy.name}.{param}: {'change to ' + pick if kept else 'the default stays: ' + default}",
              flush=True)
        write_result(args.out or f"choose_{strategy.name}_{param}",
                     {"strategy": strategy.name, "param": param, "default": default, "pick": pick,
                      "sets": [s.name for s in suite], "base": base, "verdicts": [asdict(v) for v in verdicts]})
    return 0


def choose_embedder(candidate: str, sets: str, out: str) -> int:
    """The speed rule (module docstring) for another local embedder, every strategy of the suite at its defaults."""
    settings = Settings.from_env().replace(embed_model="")
    suite = [s for s in suite_sets(settings) if not sets or s.name in sets.split(",")]
    runs = {}
    for name in ("", candidate):
        chosen = settings.replace(embed_model=name)
        embedder = embedder_only(chosen)
        runs[embedder.name] = [run_set(s, STRATEGIES, [], chosen, embedder) for s in suite]
    if len(runs) != 2:
        raise SystemExit(f"--embed-model {candidate!r} is the default embedder: nothing to compare")
    (base_name, base), (_, rows) = runs.items()
    kept, verdicts = speed_rule(candidate, base, rows, STRATEGIES)
    print(f"embeddings: {'change to ' + candidate if kept else 'the default stays: ' + base_name}", flush=True)
    write_result(out or "embedder_choice",   # not choose_*: those are the strategies' parameter runs
                 {"param": "local embedder (speed rule)", "default": base_name, "candidate": candidate,
                  "pick": candidate if kept else base_name, "sets": [s.name for s in suite],
                  "base": base, "candidate_rows": rows, "verdicts": verdicts})
    return 0


def judge_speed_change(before: str, after: str, out: str) -> int:
    """The speed rule on two saved runs of the whole suite, every strategy both have."""
    runs = [json.loads((RESULTS / f"{name}.json").read_text()) for name in (before, after)]
    sets = [[r["set"] for r in run["rows"]] for run in runs]
    if sets[0] != sets[1]:
        raise SystemExit(f"{before} and {after} ran other sets ({sets[0]} vs {sets[1]}): run the whole suite twice")
    strategies = tuple(s for s in runs[0]["mean"] if s in runs[1]["mean"])
    kept, verdicts = speed_rule(after, runs[0]["rows"], runs[1]["rows"], strategies)
    print(f"{after} against {before}: {'kept' if kept else 'not kept'}", flush=True)
    write_result(out, {"param": f"code change (speed rule): {after} against {before}", "default": before,
                       "candidate": after, "pick": after if kept else before, "sets": sets[0],
                       "base": runs[0]["rows"], "candidate_rows": runs[1]["rows"], "verdicts": verdicts,
                       "environments": {before: runs[0].get("environment"), after: runs[1].get("environment")}})
    return 0


def speed_rule(candidate: str, base: list[dict], rows: list[dict], strategies: tuple[str, ...]
               ) -> tuple[bool, dict[str, dict]]:
    """Each strategy judged with a fall of up to MIN_GAIN allowed; kept when every strategy is."""
    verdicts = {strategy: judge(candidate, base, rows, strategy, min_gain=-MIN_GAIN) for strategy in strategies}
    for strategy, v in verdicts.items():
        say(strategy, v)
    return all(v.kept for v in verdicts.values()), {strategy: asdict(v) for strategy, v in verdicts.items()}


if __name__ == "__main__":
    raise SystemExit(main())
