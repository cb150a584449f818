"""The one inference result of both tasks: the Report's columns and words, one multiplicity procedure."""

from __future__ import annotations

import numpy as np
import pytest

from calib_core.base.regression import Gaussian
from calib_core.base.report import INFERENCE_COLUMNS, KINDS, VERDICT_COLUMNS
from calib_core.base.significance import bh_adjust, holm_adjust
from calib_core.inference.classification import infer_classification
from calib_core.inference.regression import infer_regression
from calib_core.inference.result import CALIBRATED, MISCALIBRATED, RESULT_COLUMNS, InferenceResult, adjust_families


@pytest.fixture(scope="module")
def results():
    rng = np.random.default_rng(0)
    mu, s = rng.normal(size=400), rng.uniform(0.5, 2.0, 400)
    reg = infer_regression(mu + 1.5 * s * rng.standard_normal(400), Gaussian(mu, s), n_boot=100, n_null=200)
    p = rng.dirichlet(np.ones(3), size=600)
    y = (p.cumsum(axis=1) < rng.random((600, 1))).sum(axis=1).clip(0, 2)
    cls = infer_classification(labels=y, probs=p, n_null=200, n_boot=100, seed=1)
    return reg, cls


def test_the_result_columns_are_the_reports_inference_columns():
    assert set(RESULT_COLUMNS) == {"value", "perfect_se", *INFERENCE_COLUMNS}
    assert len(RESULT_COLUMNS) == len(set(RESULT_COLUMNS))


def test_both_tasks_return_one_type_with_one_schema(results):
    for res in results:
        assert isinstance(res, InferenceResult)
        assert list(res.table.columns) == RESULT_COLUMNS and res.table.index.name == "metric"
        assert set(res.table["kind"]) <= set(KINDS)
        assert set(res.table["family"]) <= {"primary", "secondary", ""}
        assert res.table["flag"].dtype == bool
        assert res.verdict in (CALIBRATED, MISCALIBRATED) and isinstance(res.direction, str)
        assert res.miscalibrated == (res.verdict == MISCALIBRATED)
        assert res.n_flags == int(res.table.loc[res.table["family"] == "secondary", "flag"].sum())
        row = res.headline_row("m", "all")
        assert set(row) == set(VERDICT_COLUMNS) and row["n_tests"] == res.n_primary
    reg, cls = results
    assert reg.layout == "gaussian" and reg.top_bins is None
    assert cls.layout == "" and cls.top_bins is not None


def test_adjust_families_is_holm_over_primary_and_bh_over_secondary():
    prim = {"a": 0.01, "b": 0.04, "c": np.nan}
    sec = {"x": 0.01, "y": 0.02, "z": 0.5}
    out = adjust_families(prim, sec, 0.05)
    np.testing.assert_array_equal([out[k][0] for k in prim], holm_adjust(list(prim.values())))
    np.testing.assert_array_equal([out[k][0] for k in sec], bh_adjust(list(sec.values())))
    assert [out[k][1] for k in ("a", "b", "c", "x", "y", "z")] == [True, True, False, True, True, False]
    assert adjust_families({}, {}, 0.05) == {}
