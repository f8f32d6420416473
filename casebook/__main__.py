"""`python -m casebook validate PATH`: check a case folder or file and summarise it.
`python -m casebook generate --seed N --suspects K [--timeline] --out DIR`: write a generated mystery with ground truth."""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from .catalog import resolve
from .generate import generate, write
from .loader import CaseError, load_case


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m casebook")
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("validate", help="check a case and print a summary, or every problem found")
    v.add_argument("path", help="a case folder, a folder of .md/.txt files, a JSON file, or a bundled case name")
    g = sub.add_parser("generate", help="write a seeded mystery with its answers and gold triples")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--suspects", type=int, default=4, help="3 to 6")
    g.add_argument("--out", type=Path, required=True, help="the case folder to write (created if missing)")
    g.add_argument("--timeline", action="store_true", help="one question more: what happened in a stretch of the "
                                                           "evening")
    args = parser.parse_args(argv)
    if args.command == "generate":
        if args.out.exists() and not args.out.is_dir():
            print(f"error: --out {args.out} is a file", file=sys.stderr)
            return 2
        try:
            files = generate(args.seed, args.suspects, args.timeline)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        write(files, args.out)
        print(f"wrote {args.out}: {len(files['documents.json'])} documents, {len(files['questions.json'])} "
              f"questions, {len(files['gold_triples.json'])} gold triples")
        return 0
    try:
        case = load_case(resolve(args.path))
    except CaseError as exc:
        print(f"INVALID: {args.path}", file=sys.stderr)
        for problem in exc.problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    types = Counter(q.type for q in case.questions)
    print(f"OK: {case.title} ({args.path})")
    print(f"  documents:   {len(case.documents)}")
    print(f"  passages:    {len(case.passages)}")
    print(f"  questions:   {len(case.questions)}" +
          (f" ({', '.join(f'{t}: {n}' for t, n in sorted(types.items()))})" if types else ""))
    print(f"  triples:     {len(case.triples)}")
    print(f"  fingerprint: {case.fingerprint}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
