"""The cases that ship with the project, found by name."""
from __future__ import annotations

import json
from pathlib import Path

from .loader import CaseError, Problem

DATA = Path(__file__).resolve().parents[1] / "data"
BUNDLED = DATA / "cases"
BENCHMARKS = DATA / "benchmarks"
DEFAULT_CASE = "purloined_pearl"


def available() -> dict[str, Path]:
    """Bundled cases first, then benchmark sets: name -> folder."""
    found: dict[str, Path] = {}
    for root in (BUNDLED, BENCHMARKS):
        if root.is_dir():
            for p in sorted(root.iterdir()):
                if (p / "documents.json").exists():
                    found.setdefault(p.name, p)
    return found


def title(folder: Path) -> str:
    """A case folder's title from its case.json, without loading the case; the folder name otherwise."""
    try:
        meta = json.loads((folder / "case.json").read_text(encoding="utf-8"))
        return str(meta.get("title") or folder.name) if isinstance(meta, dict) else folder.name
    except (OSError, ValueError):
        return folder.name


def resolve(name_or_path: str | Path) -> Path:
    """A path as given if it exists, else a bundled or benchmark case of that name."""
    p = Path(name_or_path)
    if p.exists():
        return p
    cases = available()
    if str(name_or_path) in cases:
        return cases[str(name_or_path)]
    raise CaseError([Problem(str(name_or_path), "", "",
                             f"no such file, folder or bundled case (bundled: {', '.join(cases) or 'none'})")])
