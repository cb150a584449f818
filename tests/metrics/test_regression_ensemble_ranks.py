"""Ensembles judged as ensembles (calib_core.metrics.regression_ensemble_ranks): the randomised rank histogram, its
Pearson χ², the member-range coverage and the finite-M expected coverage, checked by worked examples and by seeded
simulation with targets and members drawn from the TRUE law (binomial tolerances)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from calib_core.base.regression import Gaussian, SampleSet
from calib_core.metrics.regression import RegressionRows, summary_statistics
from calib_core.metrics.regression_ensemble_ranks import (
    ensemble_ranks,
    order_interval_probability,
    range_coverage,
    range_coverage_expected,
    rank_chi2,
    rank_counts,
)


def exchangeable(kind: str, n: int, m: int, rng: np.random.Generator) -> tuple[np.ndarray, SampleSet]:
    """Target and members: M + 1 independent draws of each row's TRUE law (Gaussian, or rain: an atom at 0 and
    amounts rounded to 0.1 mm, so ties between the target and members and among members are common)."""
    loc = rng.normal(size=(n, 1)) * 3
    if kind == "gauss":
        x = loc + np.exp(rng.normal(size=(n, 1)) * 0.5) * rng.standard_normal((n, m + 1))
    else:
        dry = rng.random((n, m + 1)) < rng.uniform(0.2, 0.9, (n, 1))
        x = np.where(dry, 0.0, np.round(rng.gamma(0.7, 2.0, (n, m + 1)), 1))
    return x[:, 0], SampleSet(x[:, 1:])


def test_worked_example_of_ranks_chi2_and_range():
    members = SampleSet(np.array([[0.0, 1.0, 2.0]] * 6))
    y = np.array([-1.0, -2.0, 0.5, 1.5, 3.0, 4.0])  # ranks 0, 0, 1, 2, 3, 3
    rows = RegressionRows(y, members)
    assert ensemble_ranks(rows).tolist() == [0, 0, 1, 2, 3, 3]
    np.testing.assert_array_equal(rank_counts(rows), [2, 1, 1, 2])
    # E = 1.5 per rank: X² = (0.25 + 0.25 + 0.25 + 0.25)/1.5
    assert rank_chi2(y, members) == pytest.approx(1.0 / 1.5)
    assert range_coverage(y, members) == pytest.approx(2 / 6)
    assert range_coverage_expected(3) == pytest.approx(0.5)
    assert np.isnan(rank_chi2(y, Gaussian(np.zeros(6), np.ones(6))))  # not an ensemble


def test_ties_are_broken_at_random_within_the_tied_ranks():
    members = SampleSet(np.zeros((4000, 4)))  # every member 0, every target 0: each rank 0..4 equally likely
    rows = RegressionRows(np.zeros(4000), members, pit_seed=3)
    counts = rank_counts(rows)
    assert counts.sum() == 4000
    assert stats.chisquare(counts).pvalue > 1e-3


@pytest.mark.parametrize("kind", ["gauss", "rain"])
@pytest.mark.parametrize("m", [8, 51])
def test_ranks_of_exchangeable_draws_are_uniform_and_the_range_covers_m_minus_1_over_m_plus_1(kind, m):
    rng = np.random.default_rng([11, m, len(kind)])
    n = 40_000
    y, d = exchangeable(kind, n, m, rng)
    rows = RegressionRows(y, d, pit_seed=5)
    values = summary_statistics(rows)
    # X² of a uniform multinomial: χ²_M (expected counts ≥ 700 here)
    assert stats.chi2.sf(values["rank_chi2"], m) > 1e-4, values["rank_chi2"]
    p0 = range_coverage_expected(m)
    k = values["range_coverage"] * n
    assert stats.binomtest(int(round(k)), n, p0).pvalue > 1e-4, (values["range_coverage"], p0)


def test_order_interval_probability_is_the_finite_m_coverage():
    rng = np.random.default_rng(4)
    y, d = exchangeable("gauss", 2_000, 8, rng)
    p = order_interval_probability(y, d.samples, 0.9)  # [x_(1), x_(8)] of 8 members: 7/9 without ties
    np.testing.assert_allclose(p, 7 / 9)
    np.testing.assert_allclose(order_interval_probability(y, d.samples, 0.5), (6 - 2) / 9)  # [x_(3), x_(6)]
    # with ties the per-row probability is exact given the pooled values: its mean is the expected coverage
    y, d = exchangeable("rain", 20_000, 8, rng)
    lo, hi = d.interval(0.9)
    hits = ((y >= lo) & (y <= hi)).sum()
    p = order_interval_probability(y, d.samples, 0.9)
    sd = np.sqrt(np.sum(p * (1 - p)))
    assert abs(hits - p.sum()) < 4 * sd
    assert p.mean() > 7 / 9 + 0.02  # tied zeros are inside more often than the continuous 7/9
