#!/usr/bin/env python3
"""Investigation mode against the one-shot strategies: Recall by question type, LLM calls and seconds per question.

Sets (each with its own top-k, as the other benchmarks use it):
- generated mysteries (``--seeds``; 1-10 report, 100-115 choose), the embedded model's cached OpenIE, Recall@3;
  beside them two ceilings: HippoRAG on the generator's gold facts (perfect extraction) and ``investigate-gold``,
  the loop with a perfect reader (its leads are the offered nodes the gold facts of a not-yet-found supporting
  document name; it says "enough" once every supporting document is on the page);
- the bundled Purloined Pearl (the embedded model's cached OpenIE), Recall@3, with the flagship question's trail;
- musique_train100 (published triples), Recall@5; with ``investigate-gold`` among the strategies, the perfect reader
  beside them (it knows each question's supporting documents and names them by their published triples);
- ``--sets dev``, for choosing only: the hand-written cases (Recall@3) and 2wiki_first20 (Recall@5); ``--sets dev5``
  and ``--sets wide``, for choosing only, at 5: MORE_DEV, and WIDE's questions asked of the whole 2Wiki corpus;
  ``--sets atlas``, for choosing only, at 5: an invented encyclopedia of MuSiQue's shape (benchmarks/atlas.py);
  ``--sets mdev``, for choosing only, at 5: 100 MuSiQue questions of the dev split (benchmarks/make_musique_dev.py).
Strategies: naive, hipporag, investigate-walk (no LLM), investigate (the embedded model reads); on request
investigate-generic (no LLM: the walk's leads and the generic detective's sub-questions asked of every question). LLM
replies are cached (llm/cache.py), so a rerun with the same prompts makes no call.
"""
from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from casebook.catalog import resolve
from casebook.generate import gold_as_triples, load_mystery
from casebook.loader import load_case
from core.contract import Strategy
from core.types import Case, Passage, Question
from investigate import (
    INVESTIGATE,
    LEADS,
    LEADS_ONLY,
    Reader,
    Reading,
    WalkReader,
    build_with,
    leads_only,
    llm_namer,
    llm_readers,
)
from kg.normalize import normalize_entity
from lab.registry import register
from lab.runner import Lab, RunConfig
from llm import Backend, Embedder, Settings, connect, embedder_only

from atlas import load_atlas
from common import assignments_for, write_result
from generated import TYPES, add_case_arguments, mean_by_type, model_triples
from retrieval import with_cached_triples
from suite import CASES, HAND_WRITTEN

ONE_SHOT = ("naive", "hipporag")
LOOPS = ("investigate-walk", "investigate")
FLAGSHIP = "Q4"   # the Purloined Pearl's "motive and opportunity" question (gold D4, D7, D8)


@dataclass
class GoldReader:
    """The perfect investigator of a generated case: it knows, for each question, which documents it needs and
    the entities each one's gold facts name."""
    needs: dict[str, tuple[str, ...]]          # question text -> supporting documents
    names: dict[str, set[str]]                 # document -> normalised entities of its gold facts
    facts: dict[str, str]                      # document -> its first gold fact, as a sentence
    name: str = "gold"
    uses_llm: bool = False

    def read(self, question: str, passages: Sequence[Passage], offered: Sequence[str], *, first: bool,
             judge: bool = False) -> Reading:
        needs = self.needs.get(question, ())
        useful = tuple(n for n, p in enumerate(passages) if p.doc_id in needs)
        missing = [d for d in needs if d not in {p.doc_id for p in passages}]
        if not missing:
            return Reading(enough=True, why="every supporting document is on the page", useful=useful)
        chosen: list[int] = []
        asked: list[str] = []
        for doc in missing:   # a lead that names what the document states, else the fact itself asked about
            lead = next((i for i, text in enumerate(offered) if normalize_entity(text) in self.names.get(doc, ())
                         and i not in chosen), None)
            if lead is not None:
                chosen.append(lead)
            elif doc in self.facts:
                asked.append(self.facts[doc])
        return Reading(tuple(chosen), tuple(asked if first else ()),
                       why=f"leads into {', '.join(missing)}", useful=useful)


@dataclass
class GoldNamer:
    """The perfect investigator naming the suspect: the question's expected answer, once the passages name it."""
    answers: dict[str, str]                    # question text -> expected answer

    def name(self, question: str, passages: Sequence[Passage]) -> Reading:
        answer = self.answers.get(question, "")
        named = bool(answer) and answer.casefold() in " ".join(p.text for p in passages).casefold()
        return Reading(answer=answer) if named else Reading(why="the passages do not name the answer yet")


@dataclass
class RememberingReader:
    """The LLM reader, reading each distinct page once for as long as one built case lives. The grid asks the same
    reading under every configuration, and a reply the model gave unreadably is never cached (llm/structured.py), so
    without this memory each of the grid's configurations would ask it again, at temperature 0 for the same answer."""
    inner: Reader
    memory: dict[tuple, Reading] = field(default_factory=dict)
    name: str = field(init=False)
    uses_llm: bool = field(init=False)

    def __post_init__(self) -> None:
        self.name, self.uses_llm = self.inner.name, self.inner.uses_llm

    def read(self, question: str, passages: Sequence[Passage], offered: Sequence[str], *, first: bool,
             judge: bool = False) -> Reading:
        key = (question, tuple(p.id for p in passages), tuple(offered), first, judge)
        if key not in self.memory:
            self.memory[key] = self.inner.read(question, passages, offered, first=first, judge=judge)
        return self.memory[key]


# a loop whose reader only picks leads (and names a suspect only if it is given a namer)
READS_LEADS = tuple(p for p in INVESTIGATE.params if p.name != "reading")
# The decomposition the reader's prompt gives as its example (investigate/readers.py), asked of every question.
GENERIC_SUB_QUESTIONS = ("Who had a reason: who needed money, held a grudge or stood to gain?",
                         "Who was at the place at the time?", "Who had the means?")


@dataclass
class GenericReader:
    """No model: the walk's best leads (as ``investigate-walk``) and, on the first reading, the generic detective's
    sub-questions whatever the question (``investigate-generic``, benchmarks only): does asking them blindly help?"""
    name: str = "generic"
    uses_llm: bool = False

    def read(self, question: str, passages: Sequence[Passage], offered: Sequence[str], *, first: bool,
             judge: bool = False) -> Reading:
        walk = WalkReader().read(question, passages, offered, first=first)
        return replace(walk, sub_questions=GENERIC_SUB_QUESTIONS if first else ())


INVESTIGATE_GENERIC = Strategy(
    "investigate-generic", "Investigate (generic questions)", "the loop asking the generic detective's sub-questions "
    "of every question, no model", build_with(leads_only(GenericReader()), LEADS), params=READS_LEADS,
    uses_triples=True, products=INVESTIGATE.products)


def gold_strategy(case: Case, gold: list[dict]) -> Strategy:
    reader = gold_reader(case, gold)
    namer = GoldNamer({q.text: q.expected_answer for q in case.questions})
    return Strategy("investigate-gold", "Investigate (perfect reader)", "the loop with leads from the gold facts",
                    build_with(leads_only(reader), LEADS, lambda ctx: namer), params=READS_LEADS, uses_triples=True,
                    products=INVESTIGATE.products)


def gold_reader(case: Case, gold: list[dict]) -> GoldReader:
    """The perfect investigator of ``case``: its questions' supporting documents, and each document's entities and
    first fact as ``gold`` (triples.json's shape) gives them."""
    names: dict[str, set[str]] = {}
    for t in gold:
        names.setdefault(t["doc_id"], set()).update(normalize_entity(t[k]) for k in ("subject", "object"))
    facts: dict[str, str] = {}
    for t in gold:
        facts.setdefault(t["doc_id"], f"{t['subject']} {t['relation']} {t['object']}")
    return GoldReader({q.text: q.supporting_docs for q in case.questions}, names, facts)


def published_as_gold(case: Case) -> list[dict]:
    """A benchmark's published triples in the gold facts' shape, for ``investigate-gold`` on a case the generator did
    not make: the reader still knows which documents each question needs (the benchmark's supporting documents); it
    names a missing one by the entities of its published triples, or asks about its first triple."""
    return [{"doc_id": t.doc_id, "subject": t.subject, "relation": t.relation, "object": t.object}
            for t in case.triples]


def run_case(case: Case, strategies: Sequence[str], top_k: int, settings: Settings, embedder: Embedder,
             backend: Backend | None, assignments: list[str], triples: str = "precomputed") -> dict[str, dict]:
    """Per strategy: Recall@top_k per question and by type, LLM calls and seconds per question, the trails."""
    config = case_config(strategies, top_k, assignments, triples)
    lab = Lab(case, settings, config, embedder=embedder, backend=backend if "investigate" in strategies else None)
    lab.build()
    return scores(lab, case, config)


def case_config(strategies: Sequence[str], top_k: int, assignments: list[str],
                triples: str = "precomputed") -> RunConfig:
    config = RunConfig(strategies=tuple(strategies), retrieval_only=True, triples=triples, top_k=top_k)
    return config.with_assignments(assignments_for(assignments, strategies))


def scores(lab: Lab, case: Case, config: RunConfig) -> dict[str, dict]:
    """``run_case``'s figures from a built ``lab`` asked with ``config`` (query-time settings may differ from the
    build's: a grid builds once a case)."""
    strategies = config.strategies
    out: dict[str, dict] = {name: {"questions": {}, "calls": [], "llm_s": [], "rounds": [], "trails": {}}
                            for name in strategies}
    for q in case.questions:
        result = lab.ask(q, config)
        for name, r in result.results.items():
            row = out[name]
            row["questions"][q.id] = r.recall
            rounds = r.explanation.rounds
            row["calls"].append(sum(max(x.reads, x.reader == "llm") for x in rounds))   # reads, cached or not
            row["llm_s"].append(round(r.llm_ms / 1000, 2))
            row["rounds"].append(len(rounds) or 1)
            if rounds:
                row["trails"][q.id] = [{"searched": list(x.searched), "added": list(x.added),
                                        "chosen": list(x.chosen), "sub_questions": list(x.sub_questions),
                                        "why": x.why} for x in rounds]
    for row in out.values():
        row["by_type"] = by_type(case.questions, row["questions"])
        row["median_calls"] = statistics.median(row["calls"])
        row["median_llm_s"] = statistics.median(row["llm_s"])
        row["median_rounds"] = statistics.median(row["rounds"])
    return out


def without_trails(result: dict[str, dict]) -> dict[str, dict]:
    """``run_case``'s figures without the trails (kept for the sets whose trails the report shows)."""
    return {name: {k: v for k, v in row.items() if k != "trails"} for name, row in result.items()}


def by_type(questions: Sequence[Question], recalls: dict[str, float | None]) -> dict[str, float]:
    """The mean recall of each question type of ``questions`` and of all of them (``recalls`` by question id)."""
    values = [recalls[q.id] for q in questions]
    out = mean_by_type(questions, values, sorted({q.type for q in questions}))
    present = [v for v in values if v is not None]
    out["all"] = round(statistics.mean(present), 3) if present else 0.0
    return out


def generated_rows(seeds: Sequence[int], strategies: Sequence[str], settings: Settings, embedder: Embedder,
                   backend: Backend | None, assignments: list[str], timeline: bool = False) -> list[dict]:
    rows = []
    for seed in seeds:
        triples = model_triples(seed, 4, settings)
        case, gold = load_mystery(seed, 4, triples, timeline)
        register(gold_strategy(case, gold))
        names = list(dict.fromkeys([*strategies, "investigate-gold"]))
        results = run_case(case, names, 3, settings, embedder, backend, assignments)
        gold_case, _ = load_mystery(seed, 4, gold_as_triples(gold), timeline)
        results["hipporag_gold"] = run_case(gold_case, ["hipporag"], 3, settings, embedder, None,
                                            assignments)["hipporag"]
        rows.append({"seed": seed, **results})
        print(f"seed {seed}: " + "  ".join(f"{n} {r['by_type']}" for n, r in results.items()), flush=True)
    return rows


def summary(rows: list[dict], names: Sequence[str]) -> dict[str, dict]:
    out = {}
    for name in names:
        present = [r[name] for r in rows if name in r]
        if not present:
            continue
        types = [t for t in (*TYPES, "all") if all(t in p["by_type"] for p in present)]
        out[name] = {**{t: round(statistics.fmean(p["by_type"][t] for p in present), 3) for t in types},
                     "Q7": round(statistics.fmean(p["questions"]["Q7"] for p in present), 3)
                     if all("Q7" in p["questions"] for p in present) else None,
                     "median_calls": statistics.median(c for p in present for c in p["calls"]),
                     "median_llm_s": statistics.median(c for p in present for c in p["llm_s"])}
    return out


# The choosing grid (``--choose``): every combination of these for each loop, on the choosing seeds.
GRID = {"merge": ("trail", "rrf"), "leads": (0, 1, 2, 3), "sub_questions": (0, 1, 3), "set_aside": (False, True)}
# A step reader has no leads, sub-questions or judgements to count: the merge and the rounds vary.
STEP_GRID = {"merge": ("trail", "rrf"), "steps": (2, 3)}
TIE_TOLERANCE = 0.02   # the rule: the mean over question types must rise, and no type fall by more than this


def choose(rows: list[dict], baseline: str) -> str | None:
    """The rule: of the configurations whose mean Recall over the question types beats ``baseline``'s and whose
    every type is within TIE_TOLERANCE of it, the one with the highest mean (None: keep the baseline)."""
    base = next(r for r in rows if r["config"] == baseline)
    fair = [r for r in rows if r["mean"] > base["mean"] and all(r[t] >= base[t] - TIE_TOLERANCE for t in TYPES)]
    return max(fair, key=lambda r: r["mean"])["config"] if fair else None


def best_loop(rows: list[dict], baseline: str) -> str | None:
    """The loop's candidate settings, whatever the rule says of looping at all: of the configurations that follow leads
    (every row but ``baseline``), the one with the highest mean Recall over the question types; a tie goes to the
    first in grid order (trail before rrf, fewer leads and sub-questions first: fewer searches). A candidate
    replaces the defaults only if it also holds on the other development sets (``--sets dev``, the suite rule)."""
    loops = [r for r in rows if r["config"] != baseline]
    return max(loops, key=lambda r: r["mean"])["config"] if loops else None


def grid_rows(seeds: Sequence[int], loop: str, steps: int, settings: Settings, embedder: Embedder,
              backend: Backend | None) -> list[dict]:
    """Recall@3 by question type of ``loop`` for each grid configuration, averaged over ``seeds``."""
    configs: list[dict] = [dict(reading="leads", merge=m, leads=n, sub_questions=q, set_aside=a, steps=steps)
                           for m in GRID["merge"] for n in GRID["leads"] for q in GRID["sub_questions"]
                           for a in GRID["set_aside"] if n or q]
    if loop == "investigate":   # the model reads either way
        configs += [dict(reading="step", merge=m, steps=n) for m in STEP_GRID["merge"] for n in STEP_GRID["steps"]]
    else:   # a loop that only picks leads has no reading to choose
        configs = [{k: v for k, v in c.items() if k != "reading"} for c in configs]
    if loop == "investigate-walk":   # no reader: no sub-questions, nothing judged
        configs = [{k: v for k, v in c.items() if k not in LEADS_ONLY} for c in configs
                   if c.get("sub_questions", 0) == 0 and not c.get("set_aside")]
    elif loop == INVESTIGATE_GENERIC.name:   # fixed sub-questions, nothing judged
        configs = [{k: v for k, v in c.items() if k != "set_aside"} for c in configs if not c.get("set_aside")]
    configs.insert(0, dict(steps=1))
    per_config: dict[str, list[dict]] = {}
    for seed in seeds:
        case, gold = load_mystery(seed, 4, model_triples(seed, 4, settings))
        register(gold_strategy(case, gold))
        lab = Lab(case, settings, case_config([loop], 3, []), embedder=embedder,
                  backend=backend if loop == "investigate" else None)
        lab.build()   # once a case: the grid varies query-time settings only
        for c in configs:
            config = case_config([loop], 3, [f"{loop}.{k}={v}" for k, v in c.items()])
            per_config.setdefault(_label(c), []).append(scores(lab, case, config)[loop]["by_type"])
    out = []
    for label, results in per_config.items():
        row: dict = {"config": label, **{t: round(statistics.fmean(r[t] for r in results), 3) for t in TYPES}}
        row["mean"] = round(statistics.fmean(row[t] for t in TYPES), 3)
        out.append(row)
    return out


def _label(config: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in config.items())


# Development benchmarks the suite reads on spaCy's triples (no LLM builds them), at the suite's top-k of 5: a
# second opinion for a setting that acts only beyond the passages the reader read, which the sets at 3 cannot see.
MORE_DEV = ("2wiki_q121_220", "hotpotqa_train100")
# The same 2Wiki questions asked of the whole 6,119-passage corpus their passages come from (2wiki_corpus6119's
# documents): at 5 the small sets sit at 0.90-0.95, where a change past the passages read has few questions to move;
# among seven times the distractors the walk's top 5 misses more, as on MuSiQue (HippoRAG 0.78 there).
WIDE = ("2wiki_q121_220", "2wiki_corpus6119")
# An invented encyclopedia with MuSiQue's shape (benchmarks/atlas.py): several paragraphs under one title, questions
# of two to four hops; no other choosing set has either.
ATLAS = "atlas"
# MuSiQue's own text and questions, of the dev split (the report set is of the train split): on every other choosing
# set at 5 the loop almost never loses a passage HippoRAG's walk had, and on MuSiQue it does (12 questions down, 15 up,
# at 31857d4), so no other choosing set can see that cost.
MUSIQUE_DEV = "musique_dev100"
CHOOSING_GROUPS = ("dev", "dev5", "wide", ATLAS, "mdev")


def dev_cases(group: str, atlas_seed: int = 1) -> list[tuple[str, Case, int, str]]:
    """The development sets of the suite that are neither generated nor this benchmark's report sets, each with
    its top-k and the triples its graph reads. ``dev``: the hand-written cases (the embedded model's cached OpenIE)
    at 3, 2wiki_first20 (published triples) at 5; ``dev5``: MORE_DEV at 5; ``wide``: WIDE's questions asked of its
    corpus, at 5; ``atlas``: the invented encyclopedia, at 5 (of ``atlas_seed``: 1 is the choosing set, "atlas"; another
    seed's world, "atlas<seed>", confirms a change on a world no one has looked at); ``mdev``: MUSIQUE_DEV at 5."""
    if group == "dev5":
        return [(name, load_case(resolve(name)), 5, "nlp") for name in MORE_DEV]
    if group == "wide":
        asked, corpus = (load_case(resolve(name)) for name in WIDE)
        corpus.questions = asked.questions
        return [(f"{WIDE[0]}_wide", corpus, 5, "nlp")]
    if group == "mdev":
        return [(MUSIQUE_DEV, load_case(resolve(MUSIQUE_DEV)), 5, "nlp")]
    if group == ATLAS:
        return [(ATLAS if atlas_seed == 1 else f"{ATLAS}{atlas_seed}", load_atlas(atlas_seed), 5, "nlp")]
    cases = [(name, with_cached_triples(load_case(CASES / name)), 3, "precomputed") for name in HAND_WRITTEN]
    return [*cases, ("2wiki_first20", load_case(resolve("2wiki_first20")), 5, "precomputed")]


def add_choosing_arguments(p: argparse.ArgumentParser, strategy_help: str) -> None:
    """The arguments of a script that reads a strategy's top k on the choosing sets (trails.py, headroom.py):
    ``--sets``, ``--atlas-seed``, ``--strategy`` and ``--set``."""
    p.add_argument("--sets", default=ATLAS, help=f"comma list of {', '.join(CHOOSING_GROUPS)} (the choosing sets; "
                                                 "the report sets are not offered)")
    p.add_argument("--atlas-seed", type=int, default=1, help="with --sets atlas: the world's seed")
    p.add_argument("--strategy", default="investigate", help=strategy_help)
    p.add_argument("--set", action="append", default=[], metavar="STRATEGY.PARAM=VALUE")


def choosing_cases(p: argparse.ArgumentParser, args: argparse.Namespace) -> list[tuple[str, str, Case, int, str]]:
    """The cases ``--sets`` names, each as (group, name, case, top k, triples); a set that is not a choosing set is
    refused by name, before anything is built, so a report set stays unread."""
    groups = [g for g in args.sets.split(",") if g]
    unknown = [g for g in groups if g not in CHOOSING_GROUPS]
    if unknown:
        p.error(f"--sets: {', '.join(unknown)} is not a choosing set ({', '.join(CHOOSING_GROUPS)})")
    return [(group, *found) for group in groups for found in dev_cases(group, args.atlas_seed)]


def models_for(strategy: str, settings: Settings) -> tuple[Backend | None, Embedder]:
    """The chat model (only ``investigate`` reads with one) and the embedder a run of ``strategy`` needs."""
    backend = connect(settings) if strategy == "investigate" else None
    return backend, backend.embedder if backend else embedder_only(settings)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    add_case_arguments(p, "1-10")
    p.add_argument("--sets", default="generated,pearl,musique",
                   help="comma list of generated, pearl, musique, dev (the hand-written cases and 2wiki_first20: "
                        "for choosing, never reported), dev5 (2wiki_q121_220 and hotpotqa_train100 on spaCy's "
                        "triples at 5: for choosing, never reported), wide (2wiki_q121_220's questions asked of "
                        "the whole 6,119-passage corpus, spaCy's triples, at 5: for choosing, never reported), atlas "
                        "(an invented encyclopedia of MuSiQue's shape, benchmarks/atlas.py, spaCy's triples, at 5: "
                        "for choosing, never reported), mdev (100 MuSiQue questions of the dev split, spaCy's triples, "
                        "at 5: for choosing, never reported)")
    p.add_argument("--atlas-seed", type=int, default=1,
                   help="with --sets atlas: the world's seed (1, the choosing set; another, a fresh world)")
    p.add_argument("--strategies", default=",".join(ONE_SHOT + LOOPS))
    p.add_argument("--timeline", action="store_true",
                   help="the generated cases with one question more, what happened in a stretch of the evening "
                        "(Q10; casebook.generate's timeline)")
    p.add_argument("--limit", type=int, default=0, help="only the first N questions of musique_train100")
    p.add_argument("--set", action="append", default=[], metavar="STRATEGY.PARAM=VALUE")
    p.add_argument("--out", default="investigation", help="result name (with --choose: investigation_choose unless "
                                                          "given)")
    p.add_argument("--choose", action="store_true",
                   help="run the choosing grid of each loop on --seeds (use 100-115): GRID (reading by leads) at "
                        "--steps, STEP_GRID (reading by steps); apply the rule, write results/investigation_choose.json")
    p.add_argument("--steps", type=int, default=2, help="the rounds of the --choose grid's rows that read leads")
    args = p.parse_args(argv)
    register(INVESTIGATE_GENERIC)
    settings = Settings.from_env()
    strategies = [s for s in args.strategies.split(",") if s]
    backend = connect(settings) if "investigate" in strategies else None
    embedder = backend.embedder if backend else embedder_only(settings)
    if args.choose:
        # each page read once a built case: see RememberingReader
        register(replace(INVESTIGATE, build=build_with(
            lambda ctx: {how: RememberingReader(reader) for how, reader in llm_readers(ctx).items()},
            namer_for=llm_namer)))
        baseline = _label(dict(steps=1))   # the walk alone: following leads has to beat not following them
        chosen: dict = {"seeds": args.seeds, "steps": args.steps, "grid": GRID, "step_grid": STEP_GRID,
                        "rule": choose.__doc__,
                        "baseline": baseline, "loops": {}}
        for loop in [s for s in strategies if s.startswith("investigate")] + ["investigate-gold"]:
            rows = grid_rows(args.seeds, loop, args.steps, settings, embedder, backend)
            pick, own = choose(rows, baseline), best_loop(rows, baseline)
            chosen["loops"][loop] = {"rows": rows, "chosen": pick, "best_loop": own}
            print(f"{loop}: chosen {pick or 'the baseline'}; the loop's best {own}", flush=True)
        write_result(args.out if args.out != p.get_default("out") else "investigation_choose", chosen)
        return 0
    payload: dict = {"seeds": args.seeds, "params": args.set, "strategies": strategies,
                     "model": backend.model if backend else "", "timeline": args.timeline}
    sets = args.sets.split(",")
    if "generated" in sets:
        rows = generated_rows(args.seeds, strategies, settings, embedder, backend, args.set, args.timeline)
        payload["generated"] = {"rows": rows, "summary": summary(rows, [*strategies, "investigate-gold",
                                                                         "hipporag_gold"])}
        print("generated:", payload["generated"]["summary"], flush=True)
    if "pearl" in sets:
        case = with_cached_triples(load_case(resolve("purloined_pearl")))
        result = run_case(case, strategies, 3, settings, embedder, backend, args.set)
        payload["pearl"] = result
        for name, r in result.items():
            print(f"pearl {name}: {r['by_type']} flagship {r['questions'].get(FLAGSHIP)} "
                  f"calls {r['median_calls']} llm {r['median_llm_s']} s", flush=True)
    # development sets of other kinds than the generated grid's, for choosing: never reported
    for group in [g for g in CHOOSING_GROUPS if g in sets]:
        payload[group] = {}
        for name, case, k, triples in dev_cases(group, args.atlas_seed):
            result = run_case(case, strategies, k, settings, embedder, backend, args.set, triples)
            payload[group][name] = without_trails(result)
            for n, r in result.items():
                print(f"{group} {name} {n}: {r['by_type']} calls {r['median_calls']} llm {r['median_llm_s']} s",
                      flush=True)
    if "musique" in sets:
        case = load_case(resolve("musique_train100"))
        if args.limit:
            case.questions = case.questions[:args.limit]
        if "investigate-gold" in strategies:   # the loop's ceiling there: see published_as_gold
            register(gold_strategy(case, published_as_gold(case)))
        result = run_case(case, strategies, 5, settings, embedder, backend, args.set)
        payload["musique"] = without_trails(result)
        for name, r in result.items():
            print(f"musique {name}: {r['by_type']} calls {r['median_calls']} llm {r['median_llm_s']} s", flush=True)
    write_result(args.out, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
