"""Labels of registry metrics come from the metric registry only: no page defines its own label for a metric key,
and the lab scaffold shows the registry's label for every registry metric column."""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest

from calib_core.calibrators import registry
from dashboard.labs import column_labels, is_registry_metric

PAGES = Path(__file__).resolve().parents[2] / "pages"


def _label_entries(path: Path) -> list[tuple[int, str]]:
    """(line, key) of every dict-literal entry in ``path`` whose key is a string constant and whose value is a
    label (a string constant or an f-string)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if (isinstance(key, ast.Constant) and isinstance(key.value, str)
                        and (isinstance(value, ast.JoinedStr)
                             or isinstance(value, ast.Constant) and isinstance(value.value, str))):
                    out.append((key.lineno, key.value))
    return out


def test_no_page_labels_a_registry_metric():
    offending = [f"{path.name}:{line}: {key!r}" for path in sorted(PAGES.glob("*.py"))
                 for line, key in _label_entries(path) if is_registry_metric(key)]
    assert not offending, "labels of registry metrics belong to calib_core.calibrators.registry:\n" + "\n".join(
        offending)


def test_the_scan_sees_label_dicts():
    """The scan is not vacuous: the lab pages' lab-only labels are found (and are no registry keys)."""
    found = {key for path in PAGES.glob("lab_*.py") for _, key in _label_entries(path)}
    assert {"truncation_u", "spike_ratio", "min_bin_coverage", "nll_before", "reliability"} <= found


def test_is_registry_metric():
    assert is_registry_metric("calibration_rmse") and is_registry_metric("coverage_90")
    assert is_registry_metric("ece") and is_registry_metric("nll", "classification")
    assert not is_registry_metric("ece", "regression") and not is_registry_metric("rmse", "classification")
    assert not is_registry_metric("nll_before") and not is_registry_metric("reliability")


@pytest.mark.parametrize("task", registry.TASKS)
def test_column_labels_registry_wins(task):
    keys = registry.metric_keys(task)
    lab = {k: "lab wording" for k in keys} | {"spike_ratio": "spikes"}
    labels = column_labels([*keys, "model", "spike_ratio"], lab, task=task)
    assert labels == {**{k: registry.metric_label(k, task) for k in keys}, "model": "model", "spike_ratio": "spikes"}


def test_lab_table_shows_registry_labels():
    """LabPage.table renames registry metric columns to the registry's labels (also without any labels given)."""
    from dashboard.labs import LabPage

    frame = pd.DataFrame({"model": ["a"], "calibration_rmse": [0.1], "max_calibration_deviation": [0.2],
                          "min_bin_coverage": [0.8]})
    shown = LabPage.table(frame, {"min_bin_coverage": "min coverage over x-bins"}, "%.3f")
    assert list(shown.columns) == ["model", "calibration RMSE", "max deviation (KS)", "min coverage over x-bins"]
