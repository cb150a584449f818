"""Quantile sets judged at their stated levels (calib_core.inference.regression_stated): the primary family
(pit_chi2, max_level_deviation, the widest stated coverage; below_median is another module's) keeps its family-wise
level for targets drawn from the TRUE law — continuous or integer-valued with ties — and finds a wrong σ or a
shift; everything that needs the interpolated law is descriptive."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import calib_core as cc
from calib_core.base.regression import QuantileSet
from calib_core.inference import regression_stated as ist
from calib_core.inference.regression import infer_regression, primary_family
from calib_core.metrics import regression_stated as rs
from calib_core.metrics.regression import DEFAULT_COVERAGES

TAU9 = np.arange(1, 10) / 10
TAU19 = np.arange(1, 20) / 20
TAU23 = np.unique(np.round(np.r_[0.01, 0.025, np.arange(1, 20) / 20, 0.975, 0.99], 4))  # the forecast hubs' 23


def binomial_ceiling(rate: float, reps: int) -> float:
    return rate + 2.0 * np.sqrt(rate * (1 - rate) / reps)


def gaussian(n, tau, rng, *, scale=1.0, shift=0.0):
    """Quantiles of N(μ, σ²) at ``tau``; y from N(μ + shift·σ, (scale·σ)²) — the TRUE law when scale = 1, shift = 0."""
    mu, sd = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    q = mu[:, None] + sd[:, None] * special.ndtri(tau)[None, :]
    return mu + shift * sd + scale * sd * rng.standard_normal(n), q


def poisson(n, tau, rng, *, factor=1.0, lam_low=0.5):
    """Exact quantiles of Poisson(λ) (integer, tied); y ~ Poisson(factor·λ)."""
    lam = rng.uniform(lam_low, 8.0, n)
    cdf = special.pdtr(np.arange(40)[None, :], lam[:, None])  # P(Y ≤ k), k < 40
    q = (cdf[:, :, None] < tau[None, None, :]).sum(axis=1).astype(float)  # smallest k with P(Y ≤ k) ≥ τ
    return rng.poisson(factor * lam).astype(float), q


def family_p(y, q, tau, n_null=200, seed=0) -> float:
    """Holm-adjusted smallest p-value of the family this module tests (below_median is tested elsewhere)."""
    rng = np.random.default_rng(seed)
    n = y.size
    lo, hi = rs.stated_level_counts(y, q)
    ps = [ist.max_level_test(lo, hi, n, tau, n_null, rng)[0],
          ist.pit_chi2_test(rs.min_pit_chi2(lo, hi, float(n), tau)[0], n, tau, n_null, rng)[0]]
    pairs = rs.stated_pairs(tau, DEFAULT_COVERAGES)
    if pairs:
        c = max(pairs)
        k_open, k_closed = rs.stated_pair_counts(y, q, {c: pairs[c]})[c]
        ps.append(float(rs.bracket_binomial_p(k_open, k_closed, n, c)))
    ps = np.sort(ps)
    return float(np.maximum.accumulate(np.minimum(1.0, (len(ps) - np.arange(len(ps))) * ps)).min())


def rejection_rate(make, tau, n, reps, seed, **kw) -> float:
    rng = np.random.default_rng(seed)
    hits = [family_p(*make(n, tau, rng, **kw), tau, seed=i) <= 0.05 for i in range(reps)]
    return float(np.mean(hits))


@pytest.mark.parametrize("tau", [TAU9, TAU23], ids=["9 levels", "23 levels"])
def test_family_false_alarms_at_most_alpha_for_the_true_gaussian_law(tau):
    reps = 100
    assert rejection_rate(gaussian, tau, 3_000, reps, seed=len(tau)) <= binomial_ceiling(0.05, reps)


def test_family_false_alarms_with_ties_integer_targets():
    reps = 100
    assert rejection_rate(poisson, TAU9, 1_000, reps, seed=3) <= binomial_ceiling(0.05, reps)


def test_family_finds_a_wrong_sigma_and_a_shift_at_n_3000():
    for kw in (dict(scale=1.25), dict(scale=0.8), dict(shift=0.2)):  # forecast σ = 0.8 true σ; 1.25; a 0.2σ shift
        assert rejection_rate(gaussian, TAU9, 3_000, 12, seed=5, **kw) >= 0.9, kw


def test_max_level_test_is_uniform_or_conservative_under_h0():
    rng = np.random.default_rng(7)
    reps = 200
    p = []
    for _ in range(reps):
        y, q = gaussian(400, TAU19, rng)
        lo, hi = rs.stated_level_counts(y, q)
        p.append(ist.max_level_test(lo, hi, y.size, TAU19, 200, rng)[0])
    p = np.array(p)
    for a in (0.05, 0.2, 0.5):
        assert np.mean(p <= a) <= binomial_ceiling(a, reps), a
    assert np.mean(p <= 0.5) >= 0.5 - 3 * np.sqrt(0.25 / reps)  # not trivially conservative without ties


def test_nine_level_gaussian_set_at_n_1e5_is_calibrated_and_interpolated_statistics_are_descriptive():
    """The failure this module fixes: correct 9-level Gaussian quantile forecasts, N = 1e5, were "miscalibrated"
    (the KS of the interpolated PIT and the extrapolated 90% / 95% tails)."""
    rng = np.random.default_rng(11)
    n = 100_000
    mu, sd = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    q = mu[:, None] + sd[:, None] * special.ndtri(TAU9)[None, :]
    y = rng.normal(mu, sd)
    res = infer_regression(y, QuantileSet(TAU9, q), n_boot=20, n_null=300)
    t = res.table
    assert res.verdict == "calibrated"
    assert set(t.index[t["family"] == "primary"]) == {"pit_chi2", "max_level_deviation", "below_median", "coverage_80"}
    for k in ("max_calibration_deviation", "z_mean", "z_std", "zms", "ence", "calibration_rmse", "coverage_90",
              "coverage_95", "pit_entropy"):
        assert np.isnan(t.loc[k, "p_value"]) and t.loc[k, "note"].startswith("no test"), k
    assert t.loc["pit_chi2", "perfect"] == 9.0 and t.loc["max_level_deviation", "perfect"] == 0.0
    assert primary_family(QuantileSet(TAU23, np.zeros((1, 23)))) == (
        "pit_chi2", "max_level_deviation", "below_median", "coverage_95")


# tied quantiles are atoms of the interpolated law: its NLL is infinite on them and the bootstrap of the smooth
# metrics warns (the interpolated law's business, not the stated-level statistics')
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_diagnosis_shows_the_stated_levels_and_their_cells():
    rng = np.random.default_rng(12)
    y, q = poisson(800, TAU9, rng, lam_low=2.0)  # every row has a spread (no all-equal quantiles)
    rep = cc.diagnose(cc.PredictionSet(task="regression", y=y, dist=cc.QuantileSet(TAU9, q), layout="quantile"),
                      n_resamples=20, n_simulations=200)
    d = rep.diagrams[("model", cc.ALL)]
    st = d["stated_levels"]
    assert st["level"].tolist() == TAU9.tolist()
    assert np.all(st["lower"] <= st["upper"]) and np.all((st["ci_low"] <= st["lower"]) & (st["upper"] <= st["ci_high"]))
    pit = d["pit_histogram"]
    assert pit["left"].tolist() == np.r_[0, TAU9].tolist() and pit["count"].sum() == 800
    assert d["calibration_curve"]["level"].tolist() == np.r_[0, TAU9, 1].tolist()
    m = rep.metrics.set_index("metric")
    assert "ties" in m.loc["max_level_deviation", "note"]


@pytest.mark.slow
@pytest.mark.parametrize("tau", [TAU9, TAU19, TAU23], ids=["9", "19", "23"])
def test_family_false_alarms_large_study(tau):
    reps = 400
    for n in (200, 3_000):
        assert rejection_rate(gaussian, tau, n, reps, seed=n) <= binomial_ceiling(0.05, reps), n
    assert rejection_rate(gaussian, tau, 100_000, 100, seed=1) <= binomial_ceiling(0.05, 100)
    assert rejection_rate(poisson, tau, 3_000, 200, seed=2) <= binomial_ceiling(0.05, 200)
