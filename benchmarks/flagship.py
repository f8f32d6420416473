#!/usr/bin/env python3
"""The article's flagship question on the Purloined Pearl: every strategy's top 3, with and without query expansion.

"Who had both a motive and the opportunity to steal the pearl necklace?" needs D4, D7 and D8. Triples come from
the embedded model's own OpenIE (cached after the first run).
"""
from __future__ import annotations

import argparse

from common import write_result

from casebook.catalog import resolve
from casebook.loader import load_case
from casebook.runner import Lab, RunConfig
from casebook.strategies import REGISTRY
from llm import Settings, connect

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
    for expand in (False, True):
        for llm_filter in (False, True):
            from hipporag import HippoConfig
            lab = Lab(case, settings, RunConfig(strategies=tuple(REGISTRY), retrieval_only=True, triples="llm",
                                                expand_query=expand, hippo=HippoConfig(llm_filter=llm_filter)),
                      embedder=backend.embedder, backend=backend)
            lab.build()
            result = lab.ask(question)
            for name, r in result.results.items():
                if not llm_filter or name == "hipporag":  # the filter only changes hipporag (v2 linking)
                    rows.append({"strategy": name, "expansion": expand, "llm_filter": llm_filter and name == "hipporag",
                                 "top3": r.retrieved[:3], "gold_in_top3": len(set(r.retrieved[:3]) & set(GOLD)),
                                 "expansions": result.expansions})
                    print(f"{name:<12} expand={expand!s:<5} filter={llm_filter!s:<5} top3={r.retrieved[:3]} "
                          f"gold={rows[-1]['gold_in_top3']}/3", flush=True)
    write_result("flagship", {"question": question.question, "gold": list(GOLD), "model": backend.model,
                              "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
