"""The layout's promise, checked: dependencies point one way and no package imports one that imports it."""
import ast
from pathlib import Path

from conftest import ROOT

# Lower layers never import higher ones; packages on one layer (the strategies) never import each other.
# Any other top-level package is a strategy (layer 3), so adding one needs no change here.
FIXED = {
    "llm": 0,
    "casebook": 1,
    "kg": 2, "indexes": 2,
    "lab": 4,
    "run_comparison": 5, "streamlit_app": 5, "benchmarks": 5,
}
STRATEGY_LAYER = 3
LAYERS = FIXED | {p.name: STRATEGY_LAYER for p in ROOT.iterdir()
                  if (p / "__init__.py").exists() and p.name not in FIXED and p.name != "tests"}


def our_imports(path: Path) -> set[str]:
    """The project's top-level packages that one file imports (relative imports stay inside its package)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found |= {n.split(".")[0] for n in names if n.split(".")[0] in LAYERS}
    return found


def package_of(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def edges() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        if any(part in (".venv", "tests", ".git") for part in path.relative_to(ROOT).parts):
            continue
        package = package_of(path)
        assert package in LAYERS, f"{path.relative_to(ROOT)}: a new top-level package needs a layer in LAYERS"
        out.setdefault(package, set()).update(our_imports(path) - {package})
    return out


def test_imports_point_down_only():
    wrong = [f"{a} (layer {LAYERS[a]}) imports {b} (layer {LAYERS[b]})"
             for a, targets in edges().items() for b in targets if LAYERS[b] >= LAYERS[a]]
    assert not wrong, wrong


def test_no_package_cycle():
    graph = edges()

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in graph.get(start, ()))

    assert not [p for p in graph if reaches(p, p, {p})]


def test_the_check_itself_catches_an_upward_import(tmp_path):
    bad = tmp_path / "mod.py"
    bad.write_text("from lab.runner import Lab\nimport numpy\nfrom . import sibling\n")
    assert our_imports(bad) == {"lab"}
