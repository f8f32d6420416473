"""`python -m casebook validate PATH`: check a case folder or file and summarise it."""
from __future__ import annotations

import argparse
import sys
from collections import Counter

from .catalog import resolve
from .loader import CaseError, load_case


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m casebook")
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("validate", help="check a case and print a summary, or every problem found")
    v.add_argument("path", help="a case folder, a folder of .md/.txt files, a JSON file, or a bundled case name")
    args = parser.parse_args(argv)
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
