"""The public metric functions at their edges: re-derived from their papers.

* class-wise ECE when no probability leaves a class's first bin (the ``np.bincount`` int64 trap);
* one NaN policy for every public metric function of both tasks: ``ValueError`` naming the argument and the rows;
* interval coverage at c = 1; ENCE and Cv scale-free at any magnitude; the PIT entropy at n = 2.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calib_core as cc
from calib_core.base.binning import bin_sums
from calib_core.metrics import classification as cm
from calib_core.metrics import regression as rm


# --------------------------------------------------------------------------------------------- class-wise ECE
def _classwise_ece_by_loops(y: np.ndarray, p: np.ndarray, n_bins: int) -> float:
    """Kull et al. (2019) written out: per class k, per equal-width bin ((m−1)/M, m/M] (first bin [0, 1/M])."""
    n, k = p.shape
    total = 0.0
    for c in range(k):
        for m in range(n_bins):
            lo, hi = m / n_bins, (m + 1) / n_bins
            inside = [i for i in range(n) if (lo < p[i, c] <= hi) or (m == 0 and p[i, c] == 0.0)]
            if inside:
                freq = sum(y[i] == c for i in inside) / len(inside)
                conf = sum(p[i, c] for i in inside) / len(inside)
                total += len(inside) / n * abs(freq - conf)
    return total / k


def test_classwise_ece_when_no_probability_leaves_the_first_bin():
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25]])
    y = np.array([0, 1, 1, 2])
    # n_bins = 1: (|0.4 − 0.25| + |0.3875 − 0.5| + |0.2125 − 0.25|)/3 = 0.1 (was 0.1667: truncated sums)
    assert cm.classwise_ece(y, p, n_bins=1) == pytest.approx(0.1, abs=1e-15)
    for m in (1, 2, 15):
        assert cm.classwise_ece(y, p, n_bins=m) == pytest.approx(_classwise_ece_by_loops(y, p, m), abs=1e-14)
    # 15 bins with every p ≤ 1/15: nothing leaves the first bin of any class
    k = 20
    rng = np.random.default_rng(0)
    q = rng.dirichlet(np.full(k, 400.0), size=40)
    assert q.max() <= 1 / 15
    yy = rng.integers(0, k, 40)
    assert cm.classwise_ece(yy, q) == pytest.approx(_classwise_ece_by_loops(yy, q, 15), abs=1e-14)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6), st.integers(1, 40), st.integers(1, 20), st.integers(0, 2**31 - 1))
def test_classwise_ece_equals_its_definition(k, n, n_bins, seed):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(k, rng.choice([0.2, 1.0, 30.0])), size=n)
    y = rng.integers(0, k, n)
    assert cm.classwise_ece(y, p, n_bins=n_bins) == pytest.approx(_classwise_ece_by_loops(y, p, n_bins), abs=1e-12)


def test_bin_sums_are_float_for_an_empty_index():
    count, total = bin_sums(np.array([], dtype=np.intp), 3, np.array([], dtype=float))
    assert count.dtype == total.dtype == np.float64
    total[0] = 0.5  # a caller's in-place float assignment must not truncate
    assert total[0] == 0.5


# --------------------------------------------------------------------------------------------- NaN policy
def _regression_calls():
    """Every public regression metric function (calib_core.metrics.regression.__all__) as a call on (y, dist)."""
    return {
        "pit": lambda y, d: rm.pit(y, d),
        "nll": rm.nll, "crps": rm.crps, "rmse": rm.rmse, "mae": rm.mae, "ence": rm.ence,
        "sharpness": rm.sharpness, "cv": lambda y, d: rm.cv(None, d),
        "calibration_curve": rm.calibration_curve, "calibration_rmse": rm.calibration_rmse,
        "mean_absolute_calibration_error": rm.mean_absolute_calibration_error,
        "quantile_calibration_error": rm.quantile_calibration_error, "miscalibration_area": rm.miscalibration_area,
        "max_calibration_deviation": rm.max_calibration_deviation, "reliability_score": rm.reliability_score,
        "pit_entropy": rm.pit_entropy, "interval_coverage": rm.interval_coverage, "interval_table": rm.interval_table,
        "standardized_residual_stats": rm.standardized_residual_stats,
        "spearman_sigma_error": rm.spearman_sigma_error, "zms": rm.zms, "mean_log_z2": rm.mean_log_z2,
    }


def test_the_nan_policy_covers_every_public_regression_function():
    public = {name for name in rm.__all__ if callable(getattr(rm, name)) and name[0].islower()}
    # observed_proportions / summary_statistics take RegressionRows; zero_density_rows / zero_density_note are no
    # metrics but say which rows make the NLL infinite; undefined_z_counts (RegressionRows) and
    # undefined_z_note (counts) say why rows have no usable z
    assert public - set(_regression_calls()) <= {"observed_proportions", "summary_statistics", "zero_density_rows",
                                                 "zero_density_note", "undefined_z_counts", "undefined_z_note"}


def _layouts(n: int, rng: np.random.Generator):
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    levels = np.arange(1, 10) / 10
    from calib_core.base.regression import norm_ppf

    return {
        "gaussian": (cc.Gaussian, (mu, s)),
        "quantile": (cc.QuantileSet, (levels, mu[:, None] + s[:, None] * norm_ppf(levels)[None, :])),
        "ensemble": (cc.SampleSet, (mu[:, None] + s[:, None] * rng.standard_normal((n, 8)),)),
    }


@pytest.mark.parametrize("name", sorted(_regression_calls()))
@pytest.mark.parametrize("layout", ["gaussian", "quantile", "ensemble"])
def test_regression_metrics_raise_on_nan_naming_the_argument_and_rows(name, layout):
    call = _regression_calls()[name]
    rng = np.random.default_rng(1)
    n = 60
    cls, args = _layouts(n, rng)[layout]
    y = rng.normal(size=n)
    assert np.all(np.isfinite(np.atleast_1d(np.asarray(call(y, cls(*args)), dtype=object)).size >= 1))
    if name not in ("sharpness", "cv"):  # these ignore y
        bad_y = y.copy()
        bad_y[[4, 9]] = np.nan
        with pytest.raises(ValueError, match=r"^y is NaN in 2 rows \(rows 4, 9\)"):
            call(bad_y, cls(*args))
    bad = [np.array(a, dtype=float, copy=True) for a in args]
    target = bad[-1]  # std / quantile values / members
    target[7] = np.nan
    with pytest.raises(ValueError, match=r"predictive distribution .* NaN in 1 row \(rows 7\)"):
        call(y, cls(*bad))


@pytest.mark.parametrize("name", ["ece", "mce", "classwise_ece", "nll", "brier", "accuracy"])
def test_classification_metrics_raise_on_nan_probabilities(name):
    rng = np.random.default_rng(2)
    p = rng.dirichlet(np.ones(4), size=30)
    y = rng.integers(0, 4, 30)
    f = getattr(cm, name)
    assert np.isfinite(f(y, p))
    p[[2, 3, 11]] = np.nan
    with pytest.raises(ValueError, match=r"^probs is NaN in 3 rows \(rows 2, 3, 11\)"):
        f(y, p)


def test_classification_nll_from_logits_raises_on_nan():
    z = np.zeros((5, 3))
    z[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"^logits is NaN in 1 row \(rows 1\)"):
        cm.nll(np.zeros(5, int), logits=z)


# --------------------------------------------------------------------------------------------- coverage c = 1
def test_interval_coverage_at_full_coverage_and_out_of_range():
    rng = np.random.default_rng(3)
    y = rng.normal(size=200)
    g = cc.Gaussian(np.zeros(200), np.ones(200))
    assert rm.interval_coverage(y, g, coverage=1.0) == 1.0  # the whole real line, as uncertainty-toolbox returns
    table = rm.interval_table(y, g, coverages=(0.9, 1.0)).set_index("coverage")
    assert table.loc[1.0, "observed"] == 1.0 and table.loc[1.0, "mean_width"] == np.inf
    ens = cc.SampleSet(rng.normal(size=(200, 5)))  # [min, max] of 5 members: some targets outside
    c1 = rm.interval_coverage(y, ens, coverage=1.0)
    assert 0 < c1 < 1
    assert rm.interval_table(y, ens, coverages=(1.0,))["interval_score"].iloc[0] == np.inf
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="coverage must be in"):
            rm.interval_coverage(y, g, coverage=bad)


# --------------------------------------------------------------------------------------------- scale-free
@settings(max_examples=60, deadline=None)
@given(st.integers(-1000, 1000), st.integers(0, 2**31 - 1))
def test_ence_and_cv_are_scale_free_at_any_magnitude(power, seed):
    rng = np.random.default_rng(seed)
    n = 300
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    y = mu + 1.3 * s * rng.standard_normal(n)
    c = 2.0**power  # exact scaling: y·c, μ·c, σ·c are the same numbers in another exponent
    base = rm.ence(y, cc.Gaussian(mu, s)), rm.cv(None, cc.Gaussian(mu, s))
    scaled = rm.ence(y * c, cc.Gaussian(mu * c, s * c)), rm.cv(None, cc.Gaussian(mu * c, s * c))
    assert scaled[0] == pytest.approx(base[0], rel=1e-12)
    assert scaled[1] == pytest.approx(base[1], rel=1e-12)


def test_ence_and_cv_beyond_the_square_range():
    rng = np.random.default_rng(4)
    n = 500
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    y = mu + s * rng.standard_normal(n)
    base = rm.ence(y, cc.Gaussian(mu, s)), rm.cv(None, cc.Gaussian(mu, s))
    for exponent in (-300, -160, 160, 300):  # σ² under- / overflows here
        c = 10.0**exponent
        got = rm.ence(y * c, cc.Gaussian(mu * c, s * c)), rm.cv(None, cc.Gaussian(mu * c, s * c))
        assert got[0] == pytest.approx(base[0], rel=1e-9) and got[1] == pytest.approx(base[1], rel=1e-9)


# --------------------------------------------------------------------------------------------- PIT entropy
def test_pit_entropy_is_defined_at_two_rows():
    """QR eq. 6 with n = 2, k = round(√2) = 1: H = log((n + 1)/k · (u_(2) − u_(1)))."""
    y = np.array([-0.3, 0.8])
    g = cc.Gaussian(np.zeros(2), np.ones(2))
    u = np.sort(rm.pit(y, g))
    assert rm.pit_entropy(y, g) == pytest.approx(np.log(3.0 * (u[1] - u[0])), rel=1e-14)
    assert np.isnan(rm.pit_entropy(y[:1], cc.Gaussian([0.0], [1.0])))
