#!/usr/bin/env python3
"""The article's flagship question on the Purloined Pearl: every strategy's top 3, with and without query expansion.

"Who had both a motive and the opportunity to steal the pearl necklace?" needs D4, D7 and D8. Triples come from
the embedded model's own OpenIE (cached after the first run).
"""
from __future__ import annotations

import argparse
from dataclasses import replace

from casebook.catalog import resolve
from casebook.loader import load_case
from lab.registry import REGISTRY
from lab.runner import Lab, RunConfig
from llm import Settings, connect

from common import write_result

GOLD = ("D4", "D7", "D8")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--question", default="Q4")
    args = p.parse_args(argv)
    settings = Settings.from_env()
    backend = connect(settings)
    case = load_case(resolve("purloined_pearl"))
    question = next(q for q in case.questions if q.id == args.question)
    rows = []
    base = RunConfig(strategies=tuple(REGISTRY), retrieval_only=True, triples="llm")
    lab = Lab(case, settings, base, embedder=backend.embedder, backend=backend)
    lab.build()
    seen = set()
    for expand in (False, True):
        # Every optional LLM step of every strategy off, then on.
        for llm_steps in (False, True):
            config = replace(base, expansion=expand, params={s.name: s.llm_switches(llm_steps)
                                                             for s in REGISTRY.values()})
            result = lab.ask(question, config)
            for name, r in result.results.items():
                ran = [st.name for st in r.explanation.stages if st.ran]
                key = (name, expand, tuple(r.retrieved[:3]), tuple(ran))
                if key in seen:
                    continue  # this strategy has no optional step: the "on" row would repeat the "off" row
                seen.add(key)
                rows.append({"strategy": name, "expansion": expand, "params": r.params, "stages_ran": ran,
                             "top3": r.retrieved[:3], "gold_in_top3": len(set(r.retrieved[:3]) & set(GOLD)),
                             "expansions": result.expansions})
                print(f"{name:<12} expand={expand!s:<5} stages={','.join(ran):<40} top3={r.retrieved[:3]} "
                      f"gold={rows[-1]['gold_in_top3']}/3", flush=True)
    write_result("flagship", {"question": question.text, "gold": list(GOLD), "model": backend.model,
                              "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
