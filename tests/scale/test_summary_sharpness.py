"""Sharpness (and Cv) of a summary at any finite σ: the summary's √(mean σ²) equals the in-memory one (relative
1e-12) for forecasts scaled by 1e-300 … 1e300, whole or merged from partitions (bit for bit the same summary), and
the summary file keeps the scaled sums through writing and reading."""

from __future__ import annotations

import numpy as np
import pytest

import calib_core as cc
from calib_core.base.mergeable import Summary
from calib_core.base.predictions import ALL
from calib_core.metrics.regression import cv
from calib_core.metrics.regression_rows import root_mean_square
from calib_core.scale import summary as S
from calib_core.scale.regression_values import regression_values
from tests.scale.test_summary import assert_same_summary, chunked, gaussian_set, rel_err

SCALES = [1e-300, 1e-250, 1e-200, 1e-170, 1e-154, 1e-100, 1.0, 1e100, 1e154, 1e170, 1e200, 1e250, 1e300, 1e307]


def _scaled(f: float, n: int = 3000) -> cc.PredictionSet:
    base = gaussian_set(n, seed=4)
    mu, sd = base.dist.mean(), base.dist.std()
    return cc.PredictionSet(task="regression", y=base.y * f, dist=cc.Gaussian(mu * f, sd * f), layout="gaussian",
                            row_number=np.arange(1, n + 1))


def _sharpness(summary) -> float:
    return regression_values(summary.parts[("model", ALL)], summary.spec)["sharpness"]


@pytest.mark.parametrize("f", SCALES)
def test_summary_sharpness_equals_the_in_memory_one_at_every_scale(f):
    pset = _scaled(f)
    want = root_mean_square(pset.dist.std())
    assert np.isfinite(want) and want > 0
    spec = S.spec_for(pset)
    whole = S.summarize(pset, spec=spec)
    merged = chunked(pset, [1, 700, 701, 2500], spec)
    assert_same_summary(whole, merged)  # the scaled sums merge exactly
    assert rel_err(_sharpness(whole), want) <= 1e-12, (f, _sharpness(whole), want)
    assert _sharpness(merged) == _sharpness(whole)
    got_cv = regression_values(whole.parts[("model", ALL)], whole.spec)["cv"]
    assert rel_err(got_cv, cv(None, pset.dist)) <= 1e-12, (f, got_cv, cv(None, pset.dist))  # Cv is scale-free too


def test_ordinary_sigma_reads_the_unscaled_sum_bit_for_bit():
    pset = _scaled(1.0)
    part = S.summarize(pset, spec=S.spec_for(pset)).parts[("model", ALL)]
    from calib_core.scale.regression_values import _fr
    assert regression_values(part, S.spec_for(pset))["sharpness"] == float(np.sqrt(float(_fr(part, "var") / 3000)))


def test_mixed_magnitudes_and_extreme_ends():
    sd = np.array([1e300, 1e-300, 5e-324, 1.7e308, 3.0])  # the largest σ rules; the tiny ones add nothing visible
    pset = cc.PredictionSet(task="regression", y=np.zeros(5), dist=cc.Gaussian(np.zeros(5), sd), layout="gaussian",
                            row_number=np.arange(1, 6))
    got = _sharpness(S.summarize(pset, spec=S.spec_for(pset, n_bins=2)))
    assert rel_err(got, root_mean_square(sd)) <= 1e-12
    tiny = np.array([5e-324, 1e-320, 3e-310])  # subnormal σ: scaled by 2^600 they square exactly
    pset = cc.PredictionSet(task="regression", y=np.zeros(3), dist=cc.Gaussian(np.zeros(3), tiny), layout="gaussian",
                            row_number=np.arange(1, 4))
    got = _sharpness(S.summarize(pset, spec=S.spec_for(pset, n_bins=1)))
    assert rel_err(got, root_mean_square(tiny)) <= 1e-12


def test_the_summary_file_keeps_the_scaled_sums():
    pset = _scaled(1e300, 500)
    summ = S.summarize(pset, spec=S.spec_for(pset))
    back = Summary.from_bytes(summ.to_bytes())  # validated by the reader, the scaled sums included
    assert "x:var_hi" in back.parts[("model", ALL)]
    assert rel_err(_sharpness(back), root_mean_square(pset.dist.std())) <= 1e-12


def test_the_report_gives_no_interval_from_block_sums_that_over_or_underflow():
    for f, interval in ((1e-300, False), (1.0, True), (1e300, False)):
        pset = _scaled(f, 800)
        table = S.report(S.summarize(pset, spec=S.spec_for(pset)), n_resamples=30, n_simulations=0,
                         diagrams=False).table()
        row = table.loc["sharpness"]
        assert rel_err(row["value"], root_mean_square(pset.dist.std())) <= 1e-12
        if interval:
            assert row["ci_low"] <= row["value"] <= row["ci_high"]
        else:  # was [0, 0] at 1e-300: an interval that excludes its own value
            assert np.isnan(row["ci_low"]) and "no interval" in row["note"]
