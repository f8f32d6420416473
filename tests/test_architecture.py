"""The layout's promise, checked: dependencies point one way, and no module imports one that imports it back
(type-only imports under ``TYPE_CHECKING`` count: a circle a type checker needs is still a circle)."""
import ast
import tomllib
from pathlib import Path

from conftest import ROOT

# Lower layers never import higher ones; packages on one layer never import each other.
# Any other top-level package is a strategy (layer 3), so adding one needs no change here.
FIXED = {
    "llm": 0,
    "core": 1,
    "casebook": 2, "kg": 2, "indexes": 2,
    "lab": 4,
    "run_comparison": 5, "streamlit_app": 5, "benchmarks": 5,
}
STRATEGY_LAYER = 3
PACKAGES = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists() and p.name != "tests"}
LAYERS = FIXED | {name: STRATEGY_LAYER for name in PACKAGES if name not in FIXED}


def source_files() -> list[Path]:
    return [p for p in ROOT.rglob("*.py")
            if not any(part in (".venv", "tests", ".git", "build") for part in p.relative_to(ROOT).parts)]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """The project modules one file imports, relative imports resolved (``from . import x`` names ``pkg.x``)."""
    inside = path.is_relative_to(ROOT)
    package = "" if not inside else module_name(path) if path.name == "__init__.py" else \
        module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.add(module)
            found |= {f"{module}.{a.name}" for a in node.names}
    return {m for m in found if m.split(".")[0] in LAYERS}


def our_imports(path: Path) -> set[str]:
    """The project's top-level packages that one file imports."""
    return {m.split(".")[0] for m in imported_modules(path)}


def package_of(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def edges() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for path in source_files():
        package = package_of(path)
        assert package in LAYERS, f"{path.relative_to(ROOT)}: a new top-level package needs a layer in LAYERS"
        out.setdefault(package, set()).update(our_imports(path) - {package})
    return out


def module_edges() -> dict[str, set[str]]:
    """Module -> the project modules it imports (a name imported from a package counts as the package)."""
    modules = {module_name(p): p for p in source_files()}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for m in imported_modules(path):
            while m and m not in modules:   # "pkg.mod.Name" -> "pkg.mod"
                m = m.rpartition(".")[0]
            if m and m != name:
                targets.add(m)
        graph[name] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_imports_point_down_only():
    wrong = [f"{a} (layer {LAYERS[a]}) imports {b} (layer {LAYERS[b]})"
             for a, targets in edges().items() for b in targets if LAYERS[b] >= LAYERS[a]]
    assert not wrong, wrong


def test_no_package_cycle():
    assert circles(edges()) == []


def test_no_module_cycle_not_even_a_type_only_one():
    graph = module_edges()
    # A package's __init__ re-exports its modules: an edge back into the __init__ is the circle worth naming.
    assert circles({m: {t for t in ts if not (m.startswith(t + ".") and t in graph)} for m, ts in graph.items()}) == []


def test_the_check_itself_catches_an_upward_import_and_a_circle(tmp_path):
    bad = tmp_path / "mod.py"
    bad.write_text("from lab.runner import Lab\nimport numpy\n")
    assert our_imports(bad) == {"lab"}
    assert circles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_installed_package_list_is_the_folders():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(project["tool"]["setuptools"]["packages"])
    assert listed == PACKAGES - {"benchmarks"}, "pyproject.toml's [tool.setuptools] packages must list every package"
