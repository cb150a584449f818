"""CORP reliability, the MCB − DSC + UNC decomposition and the Murphy diagram (
classification): properties, peers (scikit-learn's isotonic regression, model-diagnostics' decomposition) and
seeded simulations with binomial tolerances."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import stats
from scipy.optimize import isotonic_regression

from calib_core.diagrams import classification_corp as C
from tests.peers import require_peer


def _calibrated(n: int, rng: np.random.Generator, a: float = 2.0, b: float = 2.0):
    x = rng.beta(a, b, n)
    return x, (rng.random(n) < x).astype(float)


def _overconfident(n: int, rng: np.random.Generator, t: float = 2.0):
    """Forecasts sharper than the truth: logit(x) = t · logit(p), y ~ Bernoulli(p)."""
    p = rng.beta(2.0, 2.0, n)
    z = np.log(p / (1 - p)) * t
    return 1.0 / (1.0 + np.exp(-z)), (rng.random(n) < p).astype(float)


forecasts = st.integers(1, 60).flatmap(
    lambda n: st.tuples(
        st.lists(st.one_of(st.sampled_from([0.1, 0.25, 0.5, 0.7]), st.floats(0.001, 0.999)), min_size=n,
                 max_size=n),
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
    )
)


# ------------------------------------------------------------------------------------------------ PAV
def test_distinct_pools_equal_values_and_counts_events():
    x = np.array([0.3, 0.1, 0.3, -0.0, 0.0, 1.0, 0.3])
    y = np.array([1, 0, 0, 1, 0, 1, 1])
    d = C.distinct(x, y)
    assert_allclose(d.value, [0.0, 0.1, 0.3, 1.0])
    assert_allclose(d.count, [2, 1, 3, 1])
    assert_allclose(d.events, [1, 0, 2, 1])


def test_pav_equals_sklearn_isotonic_regression_with_ties():
    skl = require_peer("sklearn.isotonic")
    rng = np.random.default_rng(3)
    x = np.round(rng.beta(2, 5, 3000), 2)  # many ties
    y = (rng.random(3000) < np.sqrt(x)).astype(float)
    u, fit, count = C.pav(x, y)
    ref = skl.IsotonicRegression(y_min=0.0, y_max=1.0).fit(x, y)
    assert_allclose(fit, ref.predict(u), rtol=1e-12, atol=1e-15)
    assert_allclose(count, [np.sum(x == v) for v in u])


@settings(max_examples=60, deadline=None)
@given(forecasts)
def test_pav_is_monotone_and_in_the_unit_interval(data):
    x, y = (np.asarray(v, dtype=float) for v in data)
    u, fit, count = C.pav(x, y)
    assert np.all(np.diff(u) > 0)
    assert np.all(np.diff(fit) >= 0)
    assert np.all((fit >= 0) & (fit <= 1))
    assert count.sum() == x.size
    # the fit keeps the event total (PAV preserves weighted sums)
    assert abs((fit * count).sum() - y.sum()) <= 1e-9 * max(1.0, y.sum())


def test_pav_batch_equals_separate_fits_with_zero_weights():
    rng = np.random.default_rng(5)
    v = rng.random((40, 25))
    w = rng.integers(0, 4, (40, 25)).astype(float)
    got = C.pav_batch(v, w)
    for r in range(40):
        keep = w[r] > 0
        want = isotonic_regression(v[r, keep], weights=w[r, keep]).x
        assert_allclose(got[r, keep], want, atol=40 * 2.0**-51)
        assert np.all(np.isnan(got[r, ~keep]))


def test_fill_gaps_interpolates_linearly_and_holds_the_ends():
    x = np.array([0.0, 0.1, 0.2, 0.4, 0.5])
    fit = np.array([[np.nan, 0.2, np.nan, 0.6, np.nan], [0.1, 0.1, 0.3, 0.5, 0.9]])
    out = C.fill_gaps(fit, x)
    assert_allclose(out[0], [0.2, 0.2, 0.2 + 0.4 * (0.1 / 0.3), 0.6, 0.6])
    assert_allclose(out[1], fit[1])


# ------------------------------------------------------------------------------------------------ decomposition
@settings(max_examples=80, deadline=None)
@given(forecasts)
def test_decomposition_identity_and_signs(data):
    x, y = (np.asarray(v, dtype=float) for v in data)
    for score in C.SCORES:
        d = C.decompose(x, y, score=score)
        scale = max(1.0, abs(d["score"]))
        assert abs(d["score"] - (d["mcb"] - d["dsc"] + d["unc"])) <= 1e-12 * scale
        assert d["mcb"] >= -1e-12 * scale
        assert d["dsc"] >= -1e-12 * scale
        assert d["unc"] >= 0


@settings(max_examples=40, deadline=None)
@given(forecasts, st.randoms(use_true_random=False))
def test_decomposition_invariances(data, rnd):
    x, y = (np.asarray(v, dtype=float) for v in data)
    # 1 − x can round two distinct forecasts to one (0.001 and 0.0010000000000000002): the complement is then
    # another forecast, with a tie PAV must pool
    assume(np.unique(1 - x).size == np.unique(x).size)
    perm = np.array(rnd.sample(range(x.size), x.size))
    for score in C.SCORES:
        d = C.decompose(x, y, score=score)
        # order of the rows
        assert_allclose(list(C.decompose(x[perm], y[perm], score=score).values()), list(d.values()), rtol=1e-12,
                        atol=1e-14)
        # every row twice
        assert_allclose(list(C.decompose(np.r_[x, x], np.r_[y, y], score=score).values()), list(d.values()),
                        rtol=1e-12, atol=1e-14)
        # the complementary event: 1 − x forecasts 1 − y (both scores are symmetric)
        assert_allclose(list(C.decompose(1 - x, 1 - y, score=score).values()), list(d.values()), rtol=1e-9,
                        atol=1e-12)


def test_decomposition_of_known_cases():
    # a calibrated two-valued forecast: PAV returns it, MCB = 0, DSC = UNC − Brier
    x = np.r_[np.full(4, 0.25), np.full(4, 0.75)]
    y = np.array([1, 0, 0, 0, 1, 1, 1, 0], dtype=float)
    d = C.decompose(x, y)
    assert d["mcb"] == pytest.approx(0.0, abs=1e-15)
    assert d["unc"] == pytest.approx(0.25)
    assert d["score"] == pytest.approx(0.1875)
    assert d["dsc"] == pytest.approx(0.0625)
    # the climatology has no discrimination
    y2 = np.array([1, 0, 1, 0], dtype=float)
    d2 = C.decompose(np.full(4, 0.5), y2, score="log")
    assert d2["dsc"] == pytest.approx(0.0, abs=1e-15) and d2["mcb"] == pytest.approx(0.0, abs=1e-15)
    assert d2["unc"] == pytest.approx(np.log(2))
    # a sure forecast that misses: the log score is infinite, Brier is not
    d3 = C.decompose(np.array([0.0, 0.5]), np.array([1.0, 0.0]), score="log")
    assert np.isinf(d3["score"]) and np.isinf(d3["mcb"])


@pytest.mark.parametrize("score", ["brier", "log"])
def test_decomposition_equals_model_diagnostics(score):
    md = require_peer("model_diagnostics.scoring")
    rng = np.random.default_rng(11)
    for maker in (_calibrated, _overconfident):
        x, y = maker(4000, rng)
        x = np.round(x, 3).clip(0.001, 0.999)  # ties, and no forecast of exactly 0 or 1
        fn = md.SquaredError() if score == "brier" else md.LogLoss()
        peer = md.decompose(y_obs=y, y_pred=x, scoring_function=fn).row(0, named=True)
        ours = C.decompose(x, y, score=score)
        for a, b in (("miscalibration", "mcb"), ("discrimination", "dsc"), ("uncertainty", "unc"),
                     ("score", "score")):
            assert ours[b] == pytest.approx(peer[a], rel=1e-9, abs=1e-15), (a, ours[b], peer[a])


def test_corp_table_decomposition_is_the_exact_one_on_the_grid_too():
    rng = np.random.default_rng(2)
    x, y = _overconfident(30_000, rng)
    r = C.corp(x, y, n_resamples=50, n_boot=30, max_groups=500, grid=200, seed=1)
    assert r.info["grid"] and r.info["n_groups"] <= 2 * 200 + 1
    for row in r.decomposition.itertuples():
        d = C.decompose(x, y, score=row.score)
        assert row.value == pytest.approx(d["score"], rel=1e-12)
        assert row.mcb == pytest.approx(d["mcb"], rel=1e-9)
        assert row.dsc == pytest.approx(d["dsc"], rel=1e-9)
        assert row.value_low <= row.value <= row.value_high
        assert row.dsc_low <= row.dsc <= row.dsc_high


def test_grid_groups_respect_the_stated_bound():
    rng = np.random.default_rng(4)
    x = np.r_[rng.beta(20, 1, 50_000), rng.random(5_000)]
    y = (rng.random(x.size) < x).astype(float)
    d = C.distinct(x, y)
    grid = 300
    gid = C._groups(d, 1000, grid)  # noqa: SLF001
    assert np.all(np.diff(gid) >= 0) and gid[-1] + 1 <= 2 * grid + 1
    lo = np.minimum.reduceat(d.value, np.flatnonzero(np.r_[True, np.diff(gid) > 0]))
    hi = np.maximum.reduceat(d.value, np.flatnonzero(np.r_[True, np.diff(gid) > 0]))
    n_g = np.bincount(gid, weights=d.count)
    last = d.count[np.r_[np.flatnonzero(np.diff(gid) > 0), gid.size - 1]]  # the count of each group's last value
    assert np.all(hi - lo < 1.0 / grid)
    assert np.all(n_g - last <= x.size / grid)  # the rows before the last value fit in one N/grid cell
    # at most max_groups distinct values: no grid at all (exact resampling)
    assert np.array_equal(C._groups(C.distinct(np.round(x, 2), y), 1000, grid), np.arange(101))  # noqa: SLF001


def test_corp_rejects_bad_input_with_the_rows():
    with pytest.raises(ValueError, match=r"rows \[1\]"):
        C.corp(np.array([0.2, 1.2]), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="0 or 1"):
        C.corp(np.array([0.2, 0.3]), np.array([0.0, 2.0]))


# ------------------------------------------------------------------------------------------------ simulation
def test_consistency_band_holds_the_curve_of_calibrated_forecasts_at_its_level():
    """Under H0 (y ~ Bernoulli(x)) the CORP curve at a forecast value lies inside the 90% consistency band at rate
    ≥ 0.90 (the band's quantiles are inclusive and x̂ is discrete, so the rate can exceed 0.90), and the diagonal
    lies inside it too."""
    rng = np.random.default_rng(2024)
    m, n = 100, 400
    inside = np.zeros((m, 3), dtype=bool)
    diag = np.zeros((m, 3), dtype=bool)
    for i in range(m):
        x, y = _calibrated(n, rng)
        r = C.corp(x, y, n_resamples=200, n_boot=0, seed=i)
        b = r.bands
        u, fit, _ = C.pav(x, y)
        pos = np.searchsorted(b["forecast"].to_numpy(), np.quantile(x, [0.25, 0.5, 0.75]))
        inside[i] = (b["consistency_low"].to_numpy()[pos] <= fit[pos]) & (fit[pos] <= b["consistency_high"]
                                                                            .to_numpy()[pos])
        xs = b["forecast"].to_numpy()[pos]
        diag[i] = (b["consistency_low"].to_numpy()[pos] <= xs) & (xs <= b["consistency_high"].to_numpy()[pos])
    rate = inside.mean(axis=0)
    tol = 3 * np.sqrt(0.9 * 0.1 / m)  # 0.09 at m = 100
    assert np.all(rate >= 0.90 - tol), rate
    assert np.all(rate <= 0.99), rate
    assert diag.mean() >= 0.95


@pytest.mark.slow
def test_mcb_test_false_alarms_at_level_and_power():
    rng = np.random.default_rng(7)
    m = 200
    p_h0 = np.array([C.corp(*_calibrated(300, rng), n_resamples=199, n_boot=0, seed=i)
                     .decomposition.set_index("score").loc["brier", "mcb_p_value"] for i in range(m)])
    lo, hi = stats.binom.ppf([0.001, 0.999], m, 0.05)
    assert lo <= np.sum(p_h0 <= 0.05) <= hi
    p_h1 = np.array([C.corp(*_overconfident(1000, rng, 2.0), n_resamples=199, n_boot=0, seed=i)
                     .decomposition.set_index("score").loc["brier", "mcb_p_value"] for i in range(20)])
    assert np.mean(p_h1 <= 0.05) >= 0.9


@pytest.mark.slow
@pytest.mark.parametrize("t, n", [(1.5, 1000), (1.2, 2000), (0.7, 1000)])
def test_intervals_cover_the_population_decomposition(t, n):
    """Seeded: the intervals of MCB (debiased by its null mean), DSC and the score (Brier and log) cover the
    population values of a mis-scaled forecast (computed once on 4e6 rows) at about the stated 95%.  The basic
    bootstrap interval of MCB covered 0.53–0.77 in these cells, the percentile one 0.00."""
    rng = np.random.default_rng(int(t * 100) + n)
    big_x, big_y = _overconfident(4_000_000, rng, t)
    big = {s: C.decompose(big_x, big_y, score=s) for s in C.SCORES}
    m = 60
    cover = np.zeros((m, 6), dtype=bool)
    for i in range(m):
        dec = C.corp(*_overconfident(n, rng, t), n_resamples=200, n_boot=200, seed=i).decomposition
        dec = dec.set_index("score")
        cover[i] = [dec.loc[s, f"{a}_low"] <= big[s][b] <= dec.loc[s, f"{a}_high"]
                    for s in C.SCORES for a, b in (("mcb", "mcb"), ("dsc", "dsc"), ("value", "score"))]
    lo = stats.binom.ppf(0.001, m, 0.95) / m  # 0.85 at m = 60
    assert np.all(cover.mean(axis=0) >= lo), cover.mean(axis=0)


# ------------------------------------------------------------------------------------------------ Murphy
def test_murphy_integrates_to_half_the_brier_score():
    rng = np.random.default_rng(9)
    x, y = _overconfident(2000, rng)
    th = np.unique(np.r_[0.0, x, 1.0])  # S̄_θ is linear between the forecast values: the trapezoid rule is exact
    t = C.murphy_table(x, y, thetas=th)
    left = t["score"].to_numpy()
    # right-continuity: integrate with the value just above each kink (the jump is at θ = x, measure zero)
    integral = np.sum(np.diff(th) * (left[:-1] + _just_below(x, y, th[1:])) / 2)
    assert integral == pytest.approx(np.mean((x - y) ** 2) / 2, rel=1e-10)


def _just_below(x, y, th):
    """S̄ at θ ↑ each value (the left limit): #{x ≥ θ, y = 0} θ + #{x < θ, y = 1}(1 − θ)."""
    xs0, xs1 = np.sort(x[y == 0]), np.sort(x[y == 1])
    zeros_ge = xs0.size - np.searchsorted(xs0, th, side="left")
    ones_lt = np.searchsorted(xs1, th, side="left")
    return (th * zeros_ge + (1 - th) * ones_lt) / x.size


def test_murphy_matches_the_definition_and_model_diagnostics_elementary_score():
    rng = np.random.default_rng(10)
    x, y = _calibrated(500, rng)
    th = np.linspace(0.005, 0.995, 23)
    t = C.murphy_table(x, y, thetas=th)
    direct = [np.mean(v * ((x > v) & (y == 0)) + (1 - v) * ((x <= v) & (y == 1))) for v in th]
    assert_allclose(t["score"], direct, rtol=1e-12)
    md = require_peer("model_diagnostics.scoring")
    # model-diagnostics' ElementaryScore for the mean is 2 × ours... up to its own convention: compare the ratio
    peer = np.array([md.ElementaryScore(eta=v, functional="mean")(y, x) for v in th])
    ratio = peer / t["score"].to_numpy()
    assert_allclose(ratio, ratio[0], rtol=1e-9)


@pytest.mark.slow
def test_grid_bands_agree_with_exact_resampling_within_monte_carlo_error():
    """The grid (< 0.002-wide groups) against resampling every distinct value: at N = 20,000 continuous forecasts
    the band ends differ by at most 0.011 at the 10–90% forecast quantiles, the size of the seed-to-seed Monte-Carlo
    variation of the exact bands themselves (0.007 with 400 / 200 resamples), at 1/30 of the CPU time."""
    rng = np.random.default_rng(0)
    x, y = _calibrated(20_000, rng)
    exact = C.corp(x, y, n_resamples=400, n_boot=200, max_groups=10**9, seed=1)
    grid = C.corp(x, y, n_resamples=400, n_boot=200, seed=2)
    assert not exact.info["grid"] and grid.info["grid"] and grid.info["n_groups"] <= 1001
    q = np.quantile(x, [0.1, 0.25, 0.5, 0.75, 0.9])
    for col in ("consistency_low", "consistency_high", "confidence_low", "confidence_high"):
        a = np.interp(q, exact.bands["forecast"], exact.bands[col])
        b = np.interp(q, grid.bands["forecast"], grid.bands[col])
        assert np.max(np.abs(a - b)) <= 0.02, (col, a, b)
