"""The docstring contract of ``calib_core``: numpydoc sections on every public function and class, papers cited where
the statistics come from, doctested Examples on the entry points — and every Example in the package runs.

Public: the names of a module's ``__all__`` that the module itself defines (no ``__all__``: every name without a
leading underscore).  Sections (numpydoc): ``Parameters`` for a function that takes any (a class: ``Parameters`` or
``Attributes``), ``Returns`` or ``Yields`` for a function that returns something, ``References`` in the layers whose
numbers come from papers, ``Examples`` on the entry points (``load_predictions``, ``diagnose``, ``evaluate`` and
every calibrator of ``cc.__all__``).  Every ``>>>`` example anywhere in ``calib_core`` is run by :mod:`doctest`.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import calib_core as cc

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "calib_core"
#: Layers whose public names carry a References section (the numbers there come from papers).
REFERENCE_LAYERS = ("base", "metrics", "diagrams", "calibrators", "inference", "diagnosis", "evaluation", "slices",
                    "scale", "labs")
#: Modules of those layers that hold plumbing rather than statistics (containers, file formats, registries).
REFERENCE_EXEMPT = {"calib_core.base.predictions", "calib_core.base.report", "calib_core.base.mergeable",
                    "calib_core.calibrators.registry", "calib_core.diagnosis.tables", "calib_core.evaluation.tables"}
ENTRY_POINTS = ["load_predictions", "diagnose", "evaluate"]


def _module_names() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__main__":
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append(".".join(parts))
    return out


MODULES = _module_names()


def _public(module_name: str) -> list[tuple[str, ast.FunctionDef | ast.ClassDef]]:
    path = PACKAGE.parent.joinpath(*module_name.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            names = set(ast.literal_eval(node.value))
    return [(node.name, node) for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.ClassDef)
            and (node.name in names if names is not None else not node.name.startswith("_"))]


def _sections(doc: str) -> set[str]:
    return set(re.findall(r"^\s*([A-Z][A-Za-z ]+)\n\s*-{3,}\s*$", doc, re.M))


def _missing(module_name: str, name: str, node: ast.FunctionDef | ast.ClassDef) -> list[str]:
    doc = ast.get_docstring(node) or ""
    if not doc:
        return ["docstring"]
    sections = _sections(doc)
    out = []
    if isinstance(node, ast.FunctionDef):
        args = [a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs] if a.arg != "self"]
        if (args or node.args.vararg or node.args.kwarg) and "Parameters" not in sections:
            out.append("Parameters")
        returns_none = isinstance(node.returns, ast.Constant) and node.returns.value is None
        if not returns_none and not ({"Returns", "Yields"} & sections):
            out.append("Returns")
    elif not ({"Parameters", "Attributes"} & sections):
        out.append("Parameters or Attributes")
    layer = module_name.split(".")[1] if module_name.count(".") >= 1 else ""
    if layer in REFERENCE_LAYERS and module_name not in REFERENCE_EXEMPT and "References" not in sections:
        out.append("References")
    return out


@pytest.mark.parametrize("module_name", MODULES)
def test_public_names_have_numpydoc_sections(module_name):
    missing = {name: m for name, node in _public(module_name) if (m := _missing(module_name, name, node))}
    assert missing == {}, f"{module_name}: missing numpydoc sections {missing}"


CALIBRATORS = [name for name in cc.__all__ if inspect.isclass(getattr(cc, name))
               and hasattr(getattr(cc, name), "fit") and name not in {"PredictionSet", "Report"}]


@pytest.mark.parametrize("name", ENTRY_POINTS + CALIBRATORS)
def test_entry_points_have_a_doctested_example(name):
    doc = inspect.getdoc(getattr(cc, name)) or ""
    assert "Examples" in _sections(doc) and ">>>" in doc, f"cc.{name} has no Examples section with >>> lines"


@pytest.mark.parametrize("module_name", MODULES)
def test_examples_run(module_name):
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with np.printoptions(legacy="1.25"):
        for test in finder.find(module, module_name, extraglobs={"np": np, "cc": cc}):
            if test.examples and test.name.startswith(module_name):
                runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {module_name}"
