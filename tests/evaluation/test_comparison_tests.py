"""Statistics of ``calib_core/evaluation/comparison_tests.py`` tested as statistics.

Seeded simulations with binomial tolerances (targets drawn from the true law): the Diebold–Mariano test with the
Harvey–Leybourne–Newbold correction holds its size on cluster means when score differences share a date effect and
over-rejects when the same rows are taken as independent; it has power against a clearly better model; the model
confidence set holds the best models with probability at least 1 − α; relative scores are invariant to the units of
the score and follow the geometric-mean definition by hand.  Cross-checks: ``scores`` (its HLN statistic) and
``arch`` (its model confidence set).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from calib_core.base.significance import block_bootstrap_weights
from calib_core.evaluation.comparison_tests import (
    cluster_pair_sums,
    diebold_mariano,
    model_confidence_set,
    overlap_lag,
    relative_scores,
)
from tests.peers import require_peer


def binomial_band(p: float, n: int, sigmas: float = 3.0) -> tuple[float, float]:
    sd = np.sqrt(p * (1 - p) / n)
    return p - sigmas * sd, p + sigmas * sd


def clustered_differences(rng, n_sims, g, per, tau=1.0, shift=0.0):
    """Score differences d_{g,l} = shift + δ_g + ε_{g,l}: one date effect δ_g shared by every location l."""
    delta = rng.normal(0.0, tau, (n_sims, g, 1))
    return shift + delta + rng.normal(0.0, 1.0, (n_sims, g, per))


# ------------------------------------------------------------------------------------------------------------------
# Diebold–Mariano with the HLN correction
# ------------------------------------------------------------------------------------------------------------------


def test_dm_size_on_cluster_means_and_over_rejection_of_rows():
    rng = np.random.default_rng(1)
    n_sims, g, per = 2000, 30, 20
    d = clustered_differences(rng, n_sims, g, per)
    clustered = diebold_mariano(d.mean(axis=2).T)          # T = 30 cluster means per series
    rows = diebold_mariano(d.reshape(n_sims, g * per).T)   # the 600 rows taken as independent
    size = float((clustered.p_value < 0.05).mean())
    lo, hi = binomial_band(0.05, n_sims)
    assert lo <= size <= hi, size
    naive = float((rows.p_value < 0.05).mean())
    assert naive > 0.4, naive   # design effect 1 + 19·½ ≈ 10: P(|Z| > 1.96/√10.5) ≈ 0.55
    assert clustered.df.tolist() == [g - 1] * n_sims


def test_dm_size_with_overlapping_horizons():
    """h-step forecast errors: d_t an MA(h − 1) series; lag h − 1 keeps the size near 5% (HLN 1997, Table 1)."""
    rng = np.random.default_rng(2)
    n_sims, t, h = 4000, 64, 3
    e = rng.normal(size=(t + h - 1, n_sims))
    d = sum(e[k: k + t] for k in range(h))  # MA(2), equal weights
    with_lag = float((diebold_mariano(d, lag=h - 1).p_value < 0.05).mean())
    without = float((diebold_mariano(d, lag=0).p_value < 0.05).mean())
    assert 0.025 <= with_lag <= 0.085, with_lag
    assert without > 0.15, without


def test_dm_power_against_a_clearly_better_model():
    rng = np.random.default_rng(3)
    n_sims, g, per = 1000, 30, 20
    d = clustered_differences(rng, n_sims, g, per, shift=-0.8)   # the model scores 0.8 lower on average
    r = diebold_mariano(d.mean(axis=2).T)
    power = float(((r.p_value < 0.05) & (r.statistic < 0)).mean())
    assert power >= 0.95, power


def test_dm_matches_scores_hln():
    """``scores.stats.statistical_tests.diebold_mariano(method="HLN", statistic_distribution="t")`` on the same
    series: the same statistic and the same two-sided p-value."""
    from scores.stats.statistical_tests import diebold_mariano as scores_dm

    rng = np.random.default_rng(4)
    for t, h in [(20, 1), (30, 3), (100, 5), (12, 2)]:
        d = rng.normal(0.3, 1.0, (t, 4)) + 0.1 * np.cumsum(rng.normal(0.0, 0.3, (t, 4)), axis=0)
        ours = diebold_mariano(d, lag=h - 1)
        da = xr.DataArray(d.T, dims=["series", "t"], coords={"series": range(4), "h": ("series", [h] * 4)})
        peer = scores_dm(da, "series", "h", method="HLN", statistic_distribution="t")
        stat = peer["dm_test_stat"].values
        ok = np.isfinite(stat)   # scores gives NaN where the rectangular variance is not positive; we use Bartlett
        assert ok.sum() >= 2 and (ours.kernel[~ok] == "bartlett").all() and (ours.kernel[ok] == "rectangular").all()
        np.testing.assert_allclose(ours.statistic[ok], stat[ok], rtol=1e-12)
        conf = peer["confidence_gt_0"].values[ok]
        np.testing.assert_allclose(ours.p_value[ok], 2 * np.minimum(conf, 1 - conf), rtol=1e-10)


def test_dm_bartlett_when_the_rectangular_variance_is_not_positive_and_nan_when_too_short():
    d = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -0.5])   # strongly negative autocorrelation
    r = diebold_mariano(d, lag=1)
    assert r.kernel[0] == "bartlett" and np.isfinite(r.statistic[0])
    assert np.isnan(diebold_mariano(np.array([1.0, 2.0]), lag=1).p_value[0])   # h = 2 = T
    assert np.isnan(diebold_mariano(np.zeros(10)).p_value[0])                  # no differences


def test_overlap_lag_is_h_minus_one_for_h_step_forecasts():
    for h in (1, 2, 5):
        assert overlap_lag(np.arange(20), np.arange(20) + h) == h - 1
    weeks = np.arange(0, 70, 7)
    assert overlap_lag(weeks, weeks + 21) == 2   # weekly rounds, targets up to 3 weeks ahead
    assert overlap_lag(weeks, weeks + 14) == 1   # the real hub: 14 days ahead, weekly rounds


# ------------------------------------------------------------------------------------------------------------------
# Relative scores
# ------------------------------------------------------------------------------------------------------------------


def test_relative_scores_by_hand_with_missing_units():
    """Three models, four units, model c lacks unit 3: θ_i = (Π_j r_ij)^{1/3}, r_ij on the units i and j share."""
    s = np.array([[1.0, 2.0, 4.0],
                  [3.0, 2.0, 2.0],
                  [2.0, 4.0, 6.0],
                  [2.0, 8.0, np.nan]])
    r = relative_scores(cluster_pair_sums(s, np.arange(4), 4), baseline=1)
    r_ab, r_ac, r_bc = 8 / 16, 6 / 12, 8 / 12
    theta = np.array([(1 * r_ab * r_ac) ** (1 / 3), (1 / r_ab * 1 * r_bc) ** (1 / 3), (1 / r_ac / r_bc) ** (1 / 3)])
    np.testing.assert_allclose(r.relative, theta / theta[1], rtol=1e-12)
    np.testing.assert_allclose(r.ratio, [[1, r_ab, r_ac], [1 / r_ab, 1, r_bc], [1 / r_ac, 1 / r_bc, 1]], rtol=1e-12)


def test_relative_scores_invariances():
    rng = np.random.default_rng(5)
    s = rng.gamma(2.0, 1.0, (200, 4)) * np.array([1.0, 0.8, 1.3, 1.0])
    s[rng.random(s.shape) < 0.1] = np.nan
    codes = np.repeat(np.arange(20), 10)
    w = block_bootstrap_weights(20, 300, np.random.default_rng(0))
    base = relative_scores(cluster_pair_sums(s, codes, 20), 2, w)
    scaled = relative_scores(cluster_pair_sums(1000.0 * s, codes, 20), 2, w)
    np.testing.assert_allclose(scaled.relative, base.relative, rtol=1e-12)
    np.testing.assert_allclose(scaled.low, base.low, rtol=1e-12)
    assert base.relative[2] == 1.0 and base.low[2] == 1.0 and base.high[2] == 1.0
    # every model on every unit: the relative score is the plain ratio of mean scores
    full = rng.gamma(2.0, 1.0, (100, 3))
    r = relative_scores(cluster_pair_sums(full, np.arange(100), 100), 0)
    np.testing.assert_allclose(r.relative, full.mean(axis=0) / full[:, 0].mean(), rtol=1e-12)
    # the interval holds the estimate
    assert ((base.low <= base.relative) & (base.relative <= base.high)).all()


def test_relative_interval_coverage():
    """Percentile cluster-bootstrap interval of mean S_1 / mean S_0 covers the true ratio ≈ 95% of the time."""
    rng = np.random.default_rng(6)
    n_sims, g, per, hits = 300, 40, 5, 0
    w = block_bootstrap_weights(g, 400, np.random.default_rng(1))
    codes = np.repeat(np.arange(g), per)
    for _ in range(n_sims):
        date = rng.gamma(4.0, 0.25, (g, 1))   # a date effect shared by both models, mean 1
        s = np.column_stack([np.repeat(date, per) * rng.gamma(4.0, 0.25, g * per),
                             np.repeat(date, per) * rng.gamma(4.0, 0.25 * 1.2, g * per)])
        r = relative_scores(cluster_pair_sums(s, codes, g), 0, w)
        hits += r.low[1] <= 1.2 <= r.high[1]
    lo, _ = binomial_band(0.95, n_sims)
    assert hits / n_sims >= lo - 0.02, hits / n_sims   # percentile intervals with 40 clusters: slightly short


# ------------------------------------------------------------------------------------------------------------------
# Model confidence set
# ------------------------------------------------------------------------------------------------------------------


def clustered_losses(rng, means, g, per, tau=0.5):
    """Losses of M models on g clusters × per units: a date effect shared by all models, a date × model effect and
    unit noise; model i's expected loss is means[i]."""
    m = len(means)
    shared = rng.normal(0.0, tau, (g, 1, 1))
    own = rng.normal(0.0, tau, (g, 1, m))
    return np.asarray(means) + shared + own + rng.normal(0.0, 1.0, (g, per, m))


def test_mcs_holds_the_best_models_with_probability_at_least_one_minus_alpha():
    rng = np.random.default_rng(7)
    n_sims, g, per = 300, 30, 10
    means = [1.0, 1.0, 1.3, 1.6]   # two best models
    w = block_bootstrap_weights(g, 300, np.random.default_rng(2))
    held, dropped_worst = 0, 0
    for _ in range(n_sims):
        losses = clustered_losses(rng, means, g, per)
        cs = model_confidence_set(losses.sum(axis=1), np.full(g, per, dtype=float), w, alpha=0.05)
        held += bool(cs.included[0] and cs.included[1])
        dropped_worst += not cs.included[3]
    lo, _ = binomial_band(0.95, n_sims)
    assert held / n_sims >= lo, held / n_sims
    assert dropped_worst / n_sims >= 0.9, dropped_worst / n_sims


def test_mcs_p_values_are_monotone_in_the_elimination_order():
    rng = np.random.default_rng(8)
    losses = clustered_losses(rng, [1.0, 1.1, 1.4, 2.0, 1.05], 40, 5)
    w = block_bootstrap_weights(40, 300, np.random.default_rng(3))
    cs = model_confidence_set(losses.sum(axis=1), np.full(40, 5.0), w)
    assert np.all(np.diff(cs.p_value[cs.order]) >= 0)
    assert cs.p_value[cs.order[-1]] == 1.0
    assert (cs.included == (cs.p_value > 0.05)).all()


def test_mcs_agrees_with_arch_on_clear_cases():
    """``arch.bootstrap.MCS(method="max")`` (the T_max statistic) on independent rows: the same set."""
    arch_bootstrap = require_peer("arch.bootstrap")
    rng = np.random.default_rng(9)
    for means in ([1.0, 1.02, 2.0, 3.0], [1.0, 1.5, 1.5, 1.0, 2.5], [2.0, 1.0, 1.01]):
        losses = rng.normal(means, 1.0, (400, len(means)))
        w = block_bootstrap_weights(400, 1000, np.random.default_rng(4))
        ours = model_confidence_set(losses, np.ones(400), w, alpha=0.05)
        peer = arch_bootstrap.MCS(losses, size=0.05, reps=1000, block_size=1, method="max", bootstrap="mbb", seed=5)
        peer.compute()
        assert sorted(np.flatnonzero(ours.included).tolist()) == sorted(peer.included), means


def test_identical_models_tie_in_the_confidence_set():
    """Two models with the same scores on every unit are equivalent: both stay in the set with MCS p = 1 (a zero
    spread is a tie, not evidence), while a clearly worse third model leaves."""
    rng = np.random.default_rng(3)
    best = rng.normal(1.0, 0.1, 40)
    s = np.column_stack([best, best, best + 0.5 + rng.normal(0, 0.05, 40)])
    w = rng.multinomial(40, np.full(40, 1 / 40), size=300).astype(float)
    res = model_confidence_set(s, np.ones(40), w)
    assert res.included.tolist() == [True, True, False]
    assert res.p_value[0] == res.p_value[1] == 1.0
