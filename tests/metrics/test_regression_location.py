"""calib_core.metrics.regression_location: the share of targets below the forecast median, per layout."""

from __future__ import annotations

import numpy as np
import pytest

from calib_core.base.regression import Gaussian, QuantileSet, SampleSet
from calib_core.calibrators import registry
from calib_core.metrics.regression import RegressionRows, summary_statistics
from calib_core.metrics.regression_location import below_median, median_counts, stat_below_median


def test_gaussian_counts_targets_below_the_mean():
    y = np.array([-1.0, 0.0, 0.5, 2.0, -3.0])
    d = Gaussian(np.zeros(5), np.ones(5))
    assert median_counts(RegressionRows(y, d)) == (2.0, 3.0, 5.0)  # the tie y = μ bracketed
    assert below_median(y, d) == pytest.approx(2.5 / 5)


def test_quantile_set_reads_the_stated_median_and_brackets_ties():
    tau = np.array([0.25, 0.5, 0.75])
    q = np.array([[0.0, 1.0, 2.0]] * 4)
    y = np.array([0.5, 1.0, 1.0, 3.0])  # one below, two tied, one above q_½ = 1
    r = RegressionRows(y, QuantileSet(tau, q))
    assert median_counts(r) == (1.0, 3.0, 4.0)
    assert stat_below_median(r) == pytest.approx(0.5)


def test_quantile_set_without_the_median_is_undefined():
    d = QuantileSet(np.array([0.1, 0.9]), np.array([[-1.0, 1.0]] * 3))
    assert np.isnan(below_median(np.zeros(3), d))


def test_ensemble_uses_the_randomised_rank_pit():
    rng = np.random.default_rng(0)
    n, m = 20_000, 8
    x = rng.normal(size=(n, m))
    y = rng.normal(size=n)  # exchangeable with the members: P(u < ½) = ½ exactly
    v = below_median(y, SampleSet(x))
    assert abs(v - 0.5) <= 3 * np.sqrt(0.25 / n)
    # rain-like ties (many zeros) stay exactly uniform with the randomised PIT; the test's counts bracket it
    xz, yz = np.maximum(x, 0.0), np.maximum(y, 0.0)
    r = RegressionRows(yz, SampleSet(xz))
    assert abs(stat_below_median(r) - 0.5) <= 3 * np.sqrt(0.25 / n)
    lo, hi, m = median_counts(r)
    assert lo <= np.sum(r.u < 0.5) <= hi and lo < hi
    # without ties: L = U = #{u < ½}, for even and odd ensembles
    for k in (8, 9):
        r = RegressionRows(y, SampleSet(x[:, :k]))
        assert median_counts(r)[:2] == (float(np.sum(r.u < 0.5)),) * 2


def test_weights_give_the_resampled_share():
    rng = np.random.default_rng(1)
    y, mu = rng.normal(size=50), rng.normal(size=50)
    r = RegressionRows(y, Gaussian(mu, np.ones(50)))
    w = rng.multinomial(50, np.full(50, 1 / 50)).astype(float)
    assert stat_below_median(r, w) == pytest.approx(np.sum(w * (y < mu)) / 50)


def test_in_the_summary_and_the_registry():
    rng = np.random.default_rng(2)
    y = rng.normal(size=100)
    d = Gaussian(np.zeros(100), np.ones(100))
    assert summary_statistics(RegressionRows(y, d))["below_median"] == pytest.approx(np.mean(y < 0))
    m = registry.metric("below_median", "regression")
    assert m.kind == "calibration statistic" and m.direction == 0.5
    assert m.fn(y, d) == pytest.approx(np.mean(y < 0))


def test_a_wrong_spread_does_not_move_it_but_a_shift_does():
    rng = np.random.default_rng(3)
    n = 40_000
    mu, s = rng.normal(size=n), np.exp(0.3 * rng.normal(size=n))
    y = mu + s * rng.normal(size=n)
    f = np.where(rng.random(n) < 0.5, 1 / 1.5, 1.0)  # σ too small in one region
    assert abs(below_median(y, Gaussian(mu, s * f)) - 0.5) <= 3 * np.sqrt(0.25 / n)
    assert below_median(y, Gaussian(mu + 0.2 * s, s)) > 0.5 + 0.05  # forecasts too high: more targets below
