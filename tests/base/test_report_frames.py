"""The report's small tables built column by column are the frames pandas builds from records and dicts: the metric
rows (``inference_metric_rows``), the float diagram tables and the empty dropped-row summary — values
bit for bit, dtypes, index, column order and attrs — on real diagnoses (Gaussian, quantiles, ensemble,
classification with 2 and 10 classes, with and without intervals and tests) and on hand-made edge cases."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

import calib_core as cc
import calib_core.diagnosis.classification as diagnosis_classification
import calib_core.diagnosis.regression as diagnosis_regression
from calib_core.base import report
from calib_core.base.ecdf_bands import ecdf_band
from calib_core.base.frames import STR_DTYPE, float_frame, typed_column
from calib_core.base.predictions import DropReport, PredictionSet
from calib_core.base.regression import norm_ppf
from calib_core.diagrams.regression import calibration_curve_table, qq_table
from calib_core.metrics.regression import DEFAULT_LEVELS, RegressionRows, observed_proportions

nan = np.nan


def records_metric_rows(model, group, values, inference, *, kinds=None, extra=()) -> pd.DataFrame:
    """The metric rows as they were built before: one record per metric, ``from_records``, ``flag`` cast to bool."""
    kinds = kinds or {}
    inf = inference if inference is not None else pd.DataFrame()
    names = list(values) + [k for k in extra if k in inf.index and k not in values]
    defaults = report._INFERENCE_DEFAULTS
    records = []
    for name in names:
        rec: dict[str, Any] = {"model": model, "group": group, "metric": name}
        rec["value"] = float(values[name]) if name in values else float(inf.loc[name, "value"])
        row = inf.loc[name] if name in inf.index else None
        found = {col: row[col] for col in defaults if row is not None and col in row.index}
        for col, default in defaults.items():
            v = found.get(col, default)
            rec[col] = default if (v is None or (isinstance(v, float) and not isinstance(default, float)
                                                 and np.isnan(v))) else v
        if not rec["kind"]:
            rec["kind"] = kinds.get(name, "")
        records.append(rec)
    frame = pd.DataFrame.from_records(records, columns=report.METRIC_COLUMNS)
    frame["flag"] = frame["flag"].astype(bool)
    return frame


def assert_same_frame(new: pd.DataFrame, old: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(new, old, check_exact=True)
    assert list(new.columns) == list(old.columns)
    assert list(new.dtypes) == list(old.dtypes)
    assert type(new.index) is type(old.index) and new.index.equals(old.index)
    assert new.columns.dtype == old.columns.dtype
    assert new.attrs == old.attrs
    # the same layout too (one block per dtype where pandas consolidates): later operations cost what they did
    assert sorted(str(b.dtype) for b in new._mgr.blocks) == sorted(str(b.dtype) for b in old._mgr.blocks)


def _regression_set(kind: str, n: int = 600) -> PredictionSet:
    rng = np.random.default_rng(3)
    x = rng.uniform(0.1, 1.0, n)
    mean, std = np.sin(3 * x), 0.2 * x + 0.02
    y = mean + 1.3 * std * rng.standard_normal(n)
    if kind == "gaussian":
        dist = cc.Gaussian(mean, std)
    elif kind == "quantile":
        levels = np.round(np.linspace(0.05, 0.95, 19), 10)
        dist = cc.QuantileSet(levels, mean[:, None] + std[:, None] * stats.norm.ppf(levels)[None, :])
    else:
        dist = cc.SampleSet(mean[:, None] + std[:, None] * rng.standard_normal((n, 20)))
    return PredictionSet(task="regression", y=y, dist=dist)


def _classification_set(k: int, n: int = 600) -> PredictionSet:
    rng = np.random.default_rng(k)
    probs = rng.dirichlet(np.ones(k), n)
    labels = (probs.cumsum(axis=1) < rng.uniform(size=(n, 1))).sum(axis=1).clip(0, k - 1)
    return PredictionSet(task="classification", labels=labels, probs=probs)


CASES = [("regression", kind) for kind in ("gaussian", "quantile", "ensemble")] + [("classification", 2),
                                                                                   ("classification", 10)]


@pytest.mark.parametrize("inference", [(0, 0), (40, 20)], ids=["point", "intervals-and-tests"])
@pytest.mark.parametrize("task,kind", CASES)
def test_diagnosis_tables_equal_the_record_built_ones(monkeypatch, task, kind, inference):
    calls, verdict_lists = [], []
    build = report.inference_metric_rows

    def spy(*args, **kwargs):
        calls.append((args, kwargs))
        return build(*args, **kwargs)

    def spy_report(task_, pset, *, tables, verdicts, diagrams, options):
        verdict_lists.append(list(verdicts))
        return report.diagnosis_report(task_, pset, tables=tables, verdicts=verdicts, diagrams=diagrams,
                                       options=options)

    module = diagnosis_regression if task == "regression" else diagnosis_classification
    monkeypatch.setattr(module, "inference_metric_rows", spy)
    monkeypatch.setattr(module, "diagnosis_report", spy_report)
    pset = _regression_set(kind) if task == "regression" else _classification_set(kind)
    rep = cc.diagnose(pset, n_resamples=inference[0], n_simulations=inference[1])
    assert calls and verdict_lists
    tables = []
    for args, kwargs in calls:
        new = build(*args, **kwargs)
        assert_same_frame(new, records_metric_rows(*args, **kwargs))
        tables.append(new)
    assert_same_frame(rep.metrics, pd.concat([records_metric_rows(*a, **k) for a, k in calls], ignore_index=True))
    assert_same_frame(rep.verdicts, pd.DataFrame(verdict_lists[0]))  # unchanged: the report's own stacking
    assert_same_frame(rep.dropped, pd.DataFrame([], columns=["reason", "count", "rows"]))
    if task == "regression":
        for figures in rep.diagrams.values():
            for name in ("calibration_curve", "qq"):
                if name in figures:
                    t = figures[name]
                    rebuilt = pd.DataFrame({c: t[c].to_numpy(copy=True) for c in t.columns})
                    rebuilt.attrs.update(t.attrs)
                    assert_same_frame(t, rebuilt)


EDGE_INFERENCE = pd.DataFrame({"value": [1.0, 2.0, 3.0], "ci_low": [0.1, nan, 0.3], "p_mc_se": [0, 0, 0],
                               "family": ["primary", None, nan], "flag": [True, None, False],
                               "note": ["x", "", nan]}, index=["a", "b", "t"])
FLOAT_INFERENCE = EDGE_INFERENCE.assign(p_mc_se=[0.0, -0.0, np.inf], flag=[True, False, True],
                                        family=["primary", "secondary", "primary"])


@pytest.mark.parametrize("args,kwargs", [
    (("m", "g", {}, None), {}),  # no rows: object columns, as from no records
    (("m", "g", {"a": 1.0}, None), {"kinds": {"a": "descriptive"}}),
    (("m", "g", {"a": 1.5, "b": 2}, EDGE_INFERENCE), {"extra": ("t", "missing")}),
    (("m", "g", {"a": 1.5, "b": 2, "t": 3}, EDGE_INFERENCE), {}),  # integer column, None and NaN strings
    (("m", "g", {"a": 1.5, "c": 2.0}, EDGE_INFERENCE), {}),  # a metric the inference table lacks
    (("m", "g", {"a": 1.5, "b": 2, "t": 3}, FLOAT_INFERENCE), {}),  # every metric found: the float columns taken
    (("m", "g", {"a": 1.5, "b": 2}, FLOAT_INFERENCE), {"extra": ("t",)}),
    (("m", "g", {"a": 1.5}, pd.DataFrame({"value": [1.0, 2.0], "ci_low": [0.1, 0.2], "kind": ["", "score"]},
                                         index=["a", "a"])), {"kinds": {"a": "x"}}),  # repeated labels
    (("m", "g", {"a": 1.5}, pd.DataFrame({"value": [1.0], "test": [np.str_("t")],
                                          "p_value": np.array([0.5], dtype=np.float32)}, index=["a"])), {}),
    (("m", "g", {"a": np.float32(1.5), "b": np.inf, "c": -0.0, "d": nan}, pd.DataFrame(index=["b"])), {}),
    (("m", "g", {"a": 1.0}, pd.DataFrame({"flag": [1], "kind": [2]}, index=["a"])), {}),  # odd cell types
])
def test_metric_rows_edge_cases_equal_the_record_built_ones(args, kwargs):
    assert_same_frame(report.inference_metric_rows(*args, **kwargs), records_metric_rows(*args, **kwargs))


def test_empty_drop_summary_equals_the_one_from_no_records():
    assert_same_frame(DropReport().summary(), pd.DataFrame([], columns=["reason", "count", "rows"]))
    drop = DropReport()
    drop.add("missing y", np.arange(1, 14))
    assert drop.summary().loc[0, "rows"].endswith(" …") and drop.summary()["count"].tolist() == [13]


def test_typed_column_only_for_plain_cells():
    assert typed_column(["a", ""], "str").dtype == STR_DTYPE == pd.Series(["x"]).dtype
    assert typed_column(["a", np.str_("b")], "str") is None
    assert typed_column([1.0, np.float64(2)], "float").dtype == np.float64
    assert typed_column([1.0, 2], "float") is None and typed_column([np.float32(1)], "float") is None
    assert typed_column([True, np.bool_(False)], "bool").dtype == bool and typed_column([1], "bool") is None
    assert typed_column([1, 2], "int").dtype == np.int64 and typed_column([True], "int") is None
    assert typed_column(np.zeros(2, dtype=np.float32), "float") is None


SPECIAL = st.sampled_from([0.0, -0.0, np.inf, -np.inf, nan, 5e-324, 1.7976931348623157e308, -1e-300])
FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), SPECIAL)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 40), width=st.integers(1, 5), data=st.data())
def test_float_frame_equals_the_dict_built_one(n, width, data):
    columns = {f"c{j}": data.draw(hnp.arrays(np.float64, n, elements=FLOATS)) for j in range(width)}
    new = float_frame(columns)
    assert_same_frame(new, pd.DataFrame(columns))
    for j in range(width):  # bit for bit, NaN payloads and signed zeros included
        assert new[f"c{j}"].to_numpy().tobytes() == columns[f"c{j}"].tobytes()


@pytest.mark.parametrize("columns", [
    {"a": np.zeros(3, dtype=np.float32), "b": np.zeros(3)},  # not float64: pandas builds it
    {"a": np.arange(3), "b": np.zeros(3)},
    {"a": [0.0, 1.0], "b": np.zeros(2)},
    {"a": np.zeros(1), "b": np.zeros(1)},
    {},
])
def test_float_frame_falls_back_to_pandas(columns):
    assert_same_frame(float_frame(columns), pd.DataFrame(columns))


def test_float_frame_shares_labels_not_values():
    a = float_frame({"x": np.zeros(2), "y": np.ones(2)})
    b = float_frame({"x": np.zeros(2), "y": np.ones(2)})
    a.loc[0, "x"] = 5.0
    a["z"] = 1.0
    assert b.loc[0, "x"] == 0.0 and list(b.columns) == ["x", "y"]
    a.columns.name = "renamed"  # an Index's name can be set in place: each frame has its own Index object
    assert b.columns.name is None and float_frame({"x": np.zeros(1), "y": np.ones(1)}).columns.name is None
    first = DropReport().summary()
    first.columns.name = "renamed"
    assert DropReport().summary().columns.name is None


@pytest.mark.parametrize("simultaneous", [True, False])
@pytest.mark.parametrize("n", [1, 2, 7, 600])
def test_diagram_float_tables_equal_the_dict_built_ones(n, simultaneous):
    pset = _regression_set("gaussian", n=max(n, 2))
    rows = RegressionRows(pset.y[:n], pset.dist.take(np.arange(pset.n_rows) < n))
    levels = np.asarray(DEFAULT_LEVELS, dtype=float)
    lo, hi, gamma = ecdf_band(rows.n, levels, 0.95, simultaneous=simultaneous)
    old = pd.DataFrame({"level": levels, "observed": observed_proportions(rows, None, levels, "quantile"),
                        "band_low": lo, "band_high": hi})
    old.attrs.update(band="simultaneous" if simultaneous else "pointwise", gamma=gamma)
    assert_same_frame(calibration_curve_table(rows, simultaneous=simultaneous), old)
    for max_points in (1, 3, 512):
        idx = np.unique(np.linspace(0, n - 1, min(n, max_points)).round().astype(np.int64))
        old = pd.DataFrame({"theoretical": norm_ppf((idx + 0.5) / n), "observed": rows.z_sorted[idx]})
        assert_same_frame(qq_table(rows, max_points=max_points), old)
