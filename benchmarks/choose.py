#!/usr/bin/env python3
"""The rule every default is chosen by: a value is kept only if the development suite's mean Recall@5 rises and
no set of the suite falls by more than 0.02.

    python benchmarks/choose.py --strategy hipporag --grid dense_power=1,2,3

runs the suite (benchmarks/suite.py) with the strategy's defaults and once per value, and says for each value
the suite mean, its gain over the default, the set that fell most, and whether the rule keeps it. A value equal
to the default is the baseline, not a candidate. With several values kept, the one with the highest mean wins.
"""
from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass

from lab.registry import get
from llm import Settings, embedder_only

from common import write_result
from suite import run_set, suite_mean, suite_sets

MAX_DROP = 0.02


@dataclass(frozen=True)
class Judgement:
    value: str
    mean: float
    gain: float
    worst_set: str
    worst_drop: float
    kept: bool


def judge(value: str, base: list[dict], candidate: list[dict], strategy: str, max_drop: float = MAX_DROP) -> Judgement:
    """The rule, on two runs of the suite (rows in the same set order)."""
    drops = {b["set"]: round(b["strategies"][strategy]["recall"] - c["strategies"][strategy]["recall"], 4)
             for b, c in zip(base, candidate, strict=True)}
    worst = max(drops, key=lambda s: drops[s])
    gain = round(suite_mean(candidate, strategy) - suite_mean(base, strategy), 4)
    return Judgement(value, suite_mean(candidate, strategy), gain, worst, drops[worst],
                     kept=gain > 0 and drops[worst] <= max_drop)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--strategy", required=True)
    p.add_argument("--grid", required=True, metavar="PARAM=V1,V2,...", help="one parameter and its values")
    p.add_argument("--sets", default="", help="a subset of the suite (for a quick look; the rule needs them all)")
    p.add_argument("--out", default="")
    args = p.parse_args(argv)
    strategy = get(args.strategy)
    param, _, values = args.grid.partition("=")
    strategy.param(param)   # an unknown name is refused here, before any work
    settings = Settings.from_env()
    suite = [s for s in suite_sets(settings) if not args.sets or s.name in args.sets.split(",")]
    embedder = embedder_only(settings)
    run = lambda assignments: [run_set(s, (strategy.name,), assignments, settings, embedder) for s in suite]
    default = str(strategy.values()[param])
    base = run([])
    print(f"{strategy.name}.{param} default {default}: suite mean {suite_mean(base, strategy.name):.4f}", flush=True)
    verdicts = []
    for value in values.split(","):
        if strategy.param(param).parse(value, strategy.name) == strategy.values()[param]:
            continue
        verdicts.append(judge(value, base, run([f"{strategy.name}.{param}={value}"]), strategy.name))
        v = verdicts[-1]
        print(f"  {param}={value}: mean {v.mean:.4f} ({v.gain:+.4f}), worst {v.worst_set} -{v.worst_drop:.4f}: "
              f"{'kept' if v.kept else 'not kept'}", flush=True)
    kept = [v for v in verdicts if v.kept]
    pick = max(kept, key=lambda v: v.mean).value if kept else default
    print(f"{strategy.name}.{param}: {'change to ' + pick if kept else 'the default stays: ' + default}")
    write_result(args.out or f"choose_{strategy.name}_{param}",
                 {"strategy": strategy.name, "param": param, "default": default, "pick": pick,
                  "sets": [s.name for s in suite], "base": base, "verdicts": [asdict(v) for v in verdicts]})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
