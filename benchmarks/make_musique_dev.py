#!/usr/bin/env python3
"""Build data/benchmarks/musique_dev100: 100 MuSiQue questions of the dev split, a choosing set of MuSiQue's own kind.

MuSiQue's train questions (musique_train100) are a report set. The choosing sets at 5 are 2Wiki, HotpotQA and an
invented encyclopedia, and on them the loop almost never loses a passage HippoRAG's walk had. This set is real
MuSiQue text: questions of two to four hops, 20 paragraphs each (2 to 4 supporting, the rest distractors chosen to
look alike), several paragraphs under one title.

Input: a copy of MuSiQue's answerable dev questions in MuSiQue's own JSON-lines form (``id``, ``paragraphs`` with
``idx``, ``title``, ``paragraph_text``, ``is_supporting``, ``question``, ``answer``, ``answer_aliases``). The one used
is GitHub AdelWang/MIGRES, data/musique.json at commit 1de6265c (200 questions, sorted by type). The rule that picks
the 100, fixed before any run: every second question of the file (positions 0, 2, ..., 198), so the set keeps the
file's mix of types. The corpus is the union of those questions' paragraphs, a paragraph repeated across questions
(same title and text) kept once, so it has the report set's density: 100 questions over about 2,000 paragraphs.

Usage: python benchmarks/make_musique_dev.py --source PATH_TO_musique.json [--other-half --out FOLDER]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.files import write_text_whole

NAME = "musique_dev100"
OUT = Path(__file__).resolve().parents[1] / "data" / "benchmarks" / NAME
SOURCE = "GitHub AdelWang/MIGRES, data/musique.json, commit 1de6265c9ca1014054d6ba875738e785830908f8"


def build(rows: list[dict], start: int = 0, name: str = NAME) -> tuple[list[dict], list[dict]]:
    """Documents and questions in the project's case format from every second of MuSiQue's rows from ``start``."""
    documents: list[dict] = []
    doc_id: dict[tuple[str, str], str] = {}
    questions: list[dict] = []
    for line in range(start, len(rows), 2):
        row = rows[line]
        try:
            supporting: list[str] = []
            for p in row["paragraphs"]:
                key = (p["title"].strip(), " ".join(p["paragraph_text"].split()))
                if key not in doc_id:
                    doc_id[key] = f"{name}:{len(documents):05d}"
                    documents.append({"id": doc_id[key], "title": key[0], "text": key[1]})
                if p["is_supporting"] and doc_id[key] not in supporting:
                    supporting.append(doc_id[key])
            answers = [row["answer"], *[a for a in row.get("answer_aliases") or [] if a != row["answer"]]]
            questions.append({"id": row["id"], "question": row["question"], "type": row["id"].split("__")[0],
                              "supporting_docs": supporting, "expected_answer": row["answer"], "answers": answers})
        except KeyError as e:
            raise ValueError(f"line {line + 1}: no field {e}") from None
        except (TypeError, AttributeError) as e:
            raise ValueError(f"line {line + 1}: not a MuSiQue question ({e})") from None
    return documents, questions


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", type=Path, required=True, help="MuSiQue JSON lines (the copy named above)")
    p.add_argument("--out", type=Path, help=f"the case folder to write (default {OUT.relative_to(OUT.parents[2])})")
    p.add_argument("--other-half", action="store_true",
                   help="the other 100 (positions 1, 3, ..., 199), to confirm a change chosen on the set; not "
                        "committed, so --out is needed")
    args = p.parse_args(argv)
    if args.other_half and args.out is None:
        p.error("--other-half needs --out: the other half must not overwrite the committed set")
    out = args.out or OUT
    start, name = (1, "musique_dev_other100") if args.other_half else (0, NAME)
    try:
        text = args.source.read_text(encoding="utf-8")
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        documents, questions = build(rows, start, name)
    except (OSError, ValueError) as e:
        print(f"{args.source}: not MuSiQue JSON lines: {e}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    case = {"title": f"MuSiQue, 100 questions of the dev split (every second of a 200-question copy, from position "
                     f"{start})",
            "source": f"MuSiQue (Trivedi et al. 2022), answerable dev questions; read from {SOURCE}",
            "license": "CC BY 4.0 (MuSiQue)"}
    for file, data in (("documents.json", documents), ("questions.json", questions), ("case.json", case)):
        write_text_whole(out / file, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"{out}: {len(questions)} questions, {len(documents)} documents")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
