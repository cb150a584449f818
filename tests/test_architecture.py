"""The house rules, checked on the source with ``ast`` for every module of the project.

The project is four packages stacked on each other, and ``calib_core`` is itself a stack of layer folders:

    pages/  →  dashboard/ (Streamlit)  →  views/ (pure pandas view-models)  →  calib_core/
    calib_core:  base → data → metrics → diagrams → calibrators → inference → diagnosis → evaluation → slices
                 → scale → plots → labs → top (``api``, ``cli``, ``export``, the ``regression`` / ``classification``
                 facades, ``__main__``)

Rules:

* arrows only point down: a module imports modules of its own layer or of a lower one, never a higher one;
* no import cycles anywhere (all four packages and ``app.py`` together);
* every module lives in a known place: a layer folder of ``calib_core``, one of its few top modules, ``views/``,
  ``dashboard/`` or ``pages/`` — a new folder or top module fails until it is placed here;
* each layer folder of ``calib_core`` holds ``regression.py`` and ``classification.py``, which mirror each other, and
  no module of ``calib_core`` passes :data:`MAX_CORE_LINES` (split by concept instead);
* ``calib_core`` and ``views`` never import Streamlit; no private name (``_x``) is imported from another module;
  no ``calib_core`` import inside a function (a lazy import hides a cycle), except in the entry points.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: calib_core's layer folders, bottom to top.
CORE_LAYERS = ["base", "data", "metrics", "diagrams", "calibrators", "inference", "diagnosis", "evaluation",
               "slices", "scale", "plots", "labs"]
#: The modules at the top of calib_core ("" is ``calib_core/__init__.py``): the entry points and the task facades.
CORE_TOP = {"", "__main__", "api", "cli", "export", "regression", "classification"}
#: At most this many top-level modules besides ``__init__``.
MAX_CORE_TOP = 6
#: The stack of the whole project, bottom to top: calib_core's layers, its top, then the dashboard's packages.
LAYERS = [f"calib_core.{layer}" for layer in CORE_LAYERS] + ["calib_core (top)", "views", "dashboard", "pages", "app"]
#: Entry points: imports inside functions are allowed there (they keep ``--help`` fast).
ENTRY_POINTS = {"calib_core.__main__", "calib_core.cli"}
#: Packages that never import Streamlit.
NO_STREAMLIT = ("calib_core", "views")
#: A module of calib_core that would pass about 600 lines is split by concept (``<task>_<topic>.py``).
MAX_CORE_LINES = 650


def _modules() -> dict[str, tuple[Path, bool]]:
    out: dict[str, tuple[Path, bool]] = {"app": (ROOT / "app.py", False)}
    for package in ("calib_core", "views", "dashboard", "pages"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            if is_pkg:
                parts = parts[:-1]
            out[".".join(parts)] = (path, is_pkg)
    return out


MODULES = _modules()


def layer_of(name: str) -> str | None:
    """The layer of a module (``None``: a module in no known place)."""
    parts = name.split(".")
    if parts[0] == "calib_core":
        rest = parts[1:]
        if len(rest) >= 1 and rest[0] in CORE_LAYERS:
            return f"calib_core.{rest[0]}"
        if ".".join(rest) in CORE_TOP:
            return "calib_core (top)"
        return None
    return parts[0] if parts[0] in LAYERS else None


def rank(name: str) -> int:
    return LAYERS.index(layer_of(name))  # type: ignore[arg-type]


@cache
def _imports(name: str) -> list[tuple[str, str | None, bool, int]]:
    """(imported project module, imported name or None, at module level?, line) of every import in ``name``."""
    path, is_pkg = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(n) for n in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                if not is_pkg:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)] + ([node.module] if node.module else [])
                module = ".".join(base)
            else:
                module = node.module or ""
            if module.split(".")[0] not in {"calib_core", "views", "dashboard", "pages"}:
                continue
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                if sub in MODULES:  # "from . import metrics" imports a module
                    found.append((sub, None, id(node) in top, node.lineno))
                else:
                    found.append((module, alias.name, id(node) in top, node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in {"calib_core", "views", "dashboard", "pages"}:
                    found.append((alias.name, None, id(node) in top, node.lineno))
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


def _packages_of(target: str) -> set[str]:
    parts = target.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


@cache
def _graph(implicit: bool = False) -> dict[str, frozenset[str]]:
    """Module → the project modules it imports.  ``implicit``: also the packages whose ``__init__`` such an import
    runs first (importing ``calib_core.metrics.regression`` runs ``calib_core/metrics/__init__.py``), except the
    importer's own packages, which are already initialising."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for m in MODULES:
        own = _packages_of(m) | {m}
        for target, _, _, _ in _imports(m):
            if target != m and target in MODULES:
                graph[m].add(target)
                if implicit:
                    graph[m] |= (_packages_of(target) & set(MODULES)) - own
    return {m: frozenset(t) for m, t in graph.items()}


def _cycles(graph: dict[str, frozenset[str]] | dict[str, set[str]]) -> list[list[str]]:
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
        for w in sorted(graph[v]):
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


def test_the_checker_sees_the_whole_project():
    assert {"calib_core", "calib_core.api", "calib_core.metrics.regression", "calib_core.data.classification",
            "views.pages", "dashboard.state", "pages.regression", "app"} <= set(MODULES)
    assert ("calib_core.base.predictions", "iter_subsets", True) in {
        t[:3] for t in _imports("calib_core.diagnosis.classification")}


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_layer_rule_catches_an_upward_import():
    assert rank("calib_core.metrics.regression") < rank("calib_core.inference.regression") < rank("views.pages")
    assert rank("calib_core.api") < rank("views.pages") < rank("dashboard.cache") < rank("pages.data")


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_lives_in_a_known_place(name):
    assert layer_of(name) is not None, (
        f"{name} is in no layer: put it in a layer folder of calib_core (or views/, dashboard/, pages/)")


def test_calib_core_has_few_top_modules():
    top = sorted(m for m in MODULES if m.startswith("calib_core") and layer_of(m) == "calib_core (top)")
    assert len(top) - 1 <= MAX_CORE_TOP, top  # - 1: calib_core/__init__.py


def test_core_modules_stay_readable():
    long = {m: n for m, (path, _) in MODULES.items() if m.startswith("calib_core")
            and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_CORE_LINES}
    assert long == {}, f"split these by concept into <task>_<topic>.py modules: {long}"


@pytest.mark.parametrize("layer", CORE_LAYERS)
def test_each_layer_folder_holds_both_task_files(layer):
    assert {f"calib_core.{layer}.regression", f"calib_core.{layer}.classification"} <= set(MODULES)


def test_every_internal_import_names_an_existing_module():
    bad = [f"{m}:{line} imports from {t}" for m in MODULES for t, _, _, line in _imports(m) if t not in MODULES]
    assert bad == []


def test_no_import_cycles():
    assert _cycles(_graph(implicit=True)) == []


def test_no_private_names_imported_across_modules():
    bad = [
        f"{m}:{line} imports {name} from {target}"
        for m in MODULES
        for target, name, _, line in _imports(m)
        if name is not None and name.startswith("_") and not name.startswith("__") and target != m
    ]
    assert bad == []


def test_no_calib_core_imports_inside_functions():
    bad = [
        f"{m}:{line} imports {target} inside a function"
        for m in MODULES
        if m.startswith("calib_core") and m not in ENTRY_POINTS
        for target, _, at_top, line in _imports(m)
        if not at_top
    ]
    assert bad == []


def test_calib_core_and_views_never_import_streamlit():
    assert [m for m in MODULES if m.startswith(NO_STREAMLIT) and "streamlit" in _third_party(m)] == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_arrows_only_point_down(name):
    upward = [
        f"{name} ({layer_of(name)}) imports {t} ({layer_of(t)})"
        for t in sorted(_graph()[name])
        if layer_of(t) is not None and layer_of(name) is not None and rank(t) > rank(name)
    ]
    assert upward == []
