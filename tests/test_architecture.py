"""The architecture rules of ``calib_core`` (README, "Architecture"), checked on the source with ``ast``.

* no import cycles between the modules of ``calib_core``;
* no private name (``_x``) imported from another module;
* no ``calib_core`` import inside a function (lazy imports that would hide a cycle), except in the entry points;
* ``calib_core`` never imports Streamlit;
* layers only depend downwards: a module imports modules of its own layer or of a lower one (``LAYERS``).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "calib_core"

#: Bottom to top.  A module not listed here is treated as the top layer (it may import anything, nothing listed
#: may import it): place a new module here when a lower layer needs it.
LAYERS: list[tuple[str, list[str]]] = [
    ("base", ["special", "distributions", "predictions", "binning", "resampling", "significance", "templates",
              "regression.toy", "mergeable", "ecdf_bands", "groupwise"]),
    ("neutral", ["reading", "report", "protocol", "timecol"]),
    ("task reading, metrics, diagram tables", [
        "regression.reading", "classification.reading", "regression.metrics", "classification.metrics",
        "regression.diagrams", "classification.diagrams", "regression.recalibrated", "selection", "training",
        "regression.heavy_tails", "regression.decomposition",
        "examples", "regression.summary", "classification.summary",
        "classification.smooth", "classification.ratio", "slices"]),
    ("calibrators, registry, inference", ["regression.calibrators", "classification.calibrators", "registry",
                                          "regression.inference", "classification.inference",
                                          "classification.corp", "regression.slices", "classification.slices"]),
    ("diagnose, evaluate", ["regression.diagnose", "classification.diagnose", "regression.evaluate",
                            "classification.evaluate", "summary", "slice_summary"]),
    ("api", ["api", "regression", "classification"]),
]
#: Entry points: imports inside functions are allowed there (they keep ``--help`` fast).
ENTRY_POINTS = {"__main__", "cli"}


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_pkg)  # "" is calib_core/__init__.py
    return out


MODULES = _modules()


@cache
def _imports(name: str) -> list[tuple[str, str | None, bool, int]]:
    """(imported calib_core module, imported name or None, at module level?, line) of every import in ``name``."""
    path, is_pkg = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(n) for n in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if name else []
                if not is_pkg:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)] + ([node.module] if node.module else [])
                module = ".".join(base)
            elif node.module == "calib_core" or (node.module or "").startswith("calib_core."):
                module = node.module[len("calib_core."):] if node.module != "calib_core" else ""
            else:
                continue
            for alias in node.names:
                sub = f"{module}.{alias.name}" if module else alias.name
                if sub in MODULES:  # "from . import metrics" imports a module
                    found.append((sub, None, id(node) in top, node.lineno))
                else:
                    found.append((module, alias.name, id(node) in top, node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "calib_core" or alias.name.startswith("calib_core."):
                    found.append((alias.name[len("calib_core."):] if "." in alias.name else "", None,
                                  id(node) in top, node.lineno))
    return found


def _third_party(name: str) -> set[str]:
    tree = ast.parse(MODULES[name][0].read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
    return out


@cache
def _graph(implicit: bool = False) -> dict[str, set[str]]:
    """Module → the calib_core modules it imports.  ``implicit``: also the packages whose ``__init__`` such an
    import runs first (importing ``regression.metrics`` runs ``regression/__init__.py``), except the root and the
    importer's own packages, which are already initialising."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for m in MODULES:
        own = {".".join(m.split(".")[:i]) for i in range(len(m.split(".")) + 1)}
        for target, _, _, _ in _imports(m):
            if target != m and target in MODULES:
                graph[m].add(target)
                parts = target.split(".")
                if implicit:
                    graph[m] |= {".".join(parts[:i]) for i in range(1, len(parts))} - own
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def _layer(name: str) -> int:
    for rank, (_, names) in enumerate(LAYERS):
        if name in names:
            return rank
    return len(LAYERS)


def _label(name: str) -> str:
    return "calib_core" + (f".{name}" if name else "")


def test_the_checker_sees_the_package():
    assert {"", "api", "reading", "regression.reading", "classification.reading", "plots.regression"} <= set(MODULES)
    assert ("predictions", "iter_subsets", True) in {t[:3] for t in _imports("classification.diagnose")}
    listed = [m for _, names in LAYERS for m in names]
    assert len(listed) == len(set(listed)) and set(listed) <= set(MODULES), set(listed) - set(MODULES)


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_every_internal_import_names_an_existing_module():
    bad = [f"{_label(m)}:{line} imports from {_label(t)}" for m in MODULES for t, _, _, line in _imports(m)
           if t not in MODULES]
    assert bad == []


def test_no_import_cycles():
    assert _cycles(_graph(implicit=True)) == []


def test_no_private_names_imported_across_modules():
    bad = [
        f"{_label(m)}:{line} imports {name} from {_label(target)}"
        for m in MODULES
        for target, name, _, line in _imports(m)
        if name is not None and name.startswith("_") and not name.startswith("__") and target != m
    ]
    assert bad == []


def test_no_calib_core_imports_inside_functions():
    bad = [
        f"{_label(m)}:{line} imports {_label(target)} inside a function"
        for m in MODULES
        if m not in ENTRY_POINTS
        for target, _, at_top, line in _imports(m)
        if not at_top
    ]
    assert bad == []


def test_calib_core_never_imports_streamlit():
    assert [_label(m) for m in MODULES if "streamlit" in _third_party(m)] == []


@pytest.mark.parametrize("name", [m for _, names in LAYERS for m in names])
def test_layers_only_depend_downwards(name):
    rank = _layer(name)
    upward = [
        f"{_label(name)} ({LAYERS[rank][0]}) imports {_label(t)} "
        f"({LAYERS[_layer(t)][0] if _layer(t) < len(LAYERS) else 'top: plots, export, labs, …'})"
        for t in sorted(_graph()[name])
        if _layer(t) > rank and not t.startswith(name + ".")  # a package's __init__ may re-export its modules
    ]
    assert upward == []
