"""Simultaneous PIT-ECDF bands (Säilynoja, Bürkner & Vehtari 2022): by seeded simulation the whole
Kuleshov curve of a calibrated forecaster stays inside the simultaneous 95% band in ≈ 95% of data sets (binomial
tolerance), while the old pointwise band is left by far more; the cache, the ECDF-difference view and the page
option."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

import calib_core as cc
from calib_core import plots
from calib_core.base import ecdf_bands as eb
from calib_core.base.regression import Gaussian
from calib_core.diagrams.regression import calibration_curve_table
from calib_core.metrics.regression import DEFAULT_LEVELS, RegressionRows
from tests.app.test_pages import LEVI, load_example, new_app, specs


def tolerance(rate, n_sets, sigmas=2.0):
    return sigmas * math.sqrt(rate * (1 - rate) / n_sets)


@pytest.mark.parametrize("n, n_sets", [(40, 600), (500, 600), (5000, 400)])
def test_whole_curve_inside_the_simultaneous_band_95_percent_of_the_time(n, n_sets):
    rng = np.random.default_rng(1000 + n)  # not the seed the band's own simulation uses
    sim_lo, sim_hi, gamma = eb.ecdf_band(n, DEFAULT_LEVELS, 0.95)
    pw_lo, pw_hi, _ = eb.ecdf_band(n, DEFAULT_LEVELS, 0.95, simultaneous=False)
    inside_sim, inside_pw = [], []
    for _ in range(n_sets):
        u = np.sort(rng.random(n))  # the PIT of a calibrated continuous forecaster
        ecdf = np.searchsorted(u, DEFAULT_LEVELS, side="right") / n
        inside_sim.append(eb.inside_band(ecdf, sim_lo, sim_hi))
        inside_pw.append(eb.inside_band(ecdf, pw_lo, pw_hi))
    rate, rate_pw = float(np.mean(inside_sim)), float(np.mean(inside_pw))
    print(f"N = {n}: γ = {gamma:.5f}; whole curve inside: simultaneous {rate:.3f}, pointwise {rate_pw:.3f}")
    # the simulation's own Monte-Carlo error (M = 4,000) adds to the data sets' binomial error
    slack = tolerance(0.95, n_sets) + tolerance(0.95, 4000)
    assert abs(rate - 0.95) <= slack + 0.01  # + discreteness of the binomial band at small N
    assert rate_pw < 0.8  # the pointwise band does not hold for the whole curve
    assert gamma < 0.05 / 5


def test_through_the_kuleshov_table_with_gaussian_forecasts():
    rng = np.random.default_rng(7)
    inside = []
    for _ in range(300):
        mu, sigma = rng.normal(size=300), rng.uniform(0.5, 2.0, 300)
        y = rng.normal(mu, sigma)
        t = calibration_curve_table(RegressionRows(y, Gaussian(mu, sigma)))
        assert t.attrs["band"] == "simultaneous"
        inside.append(eb.inside_band(t["observed"], t["band_low"], t["band_high"]))
    rate = float(np.mean(inside))
    assert abs(rate - 0.95) <= tolerance(0.95, 300) + tolerance(0.95, 4000) + 0.01
    # an over-confident forecaster (σ halved) leaves it
    mu, sigma = rng.normal(size=300), np.ones(300)
    y = rng.normal(mu, sigma)
    t = calibration_curve_table(RegressionRows(y, Gaussian(mu, sigma / 2)))
    assert not eb.inside_band(t["observed"], t["band_low"], t["band_high"])


def test_band_is_cached_nested_and_shrinks_with_n():
    lev = DEFAULT_LEVELS
    eb.ecdf_band(777, lev)
    t0 = time.perf_counter()
    lo, hi, g = eb.ecdf_band(777, lev)
    assert time.perf_counter() - t0 < 0.05  # cached per (N, levels, level)
    plo, phi, pg = eb.ecdf_band(777, lev, simultaneous=False)
    assert pg == pytest.approx(0.05) and g < pg
    assert np.all(lo <= plo) and np.all(hi >= phi)  # the simultaneous band contains the pointwise one
    lo2, hi2, _ = eb.ecdf_band(7770, lev)
    assert np.mean(hi2 - lo2) < np.mean(hi - lo)
    assert lo[0] == hi[0] == 0.0 and lo[-1] == hi[-1] == 1.0  # F̂(0) = 0 and F̂(1) = 1 always


def test_diagnosis_and_the_ecdf_difference_figure():
    rng = np.random.default_rng(3)
    mu, sigma = rng.normal(size=400), np.full(400, 1.0)
    pset = cc.PredictionSet(task="regression", y=rng.normal(mu, sigma), dist=Gaussian(mu, sigma))
    rep = cc.diagnose(pset, n_resamples=0, n_simulations=0)
    t = rep.diagrams[(rep.models[0], cc.ALL)]["calibration_curve"]
    assert t.attrs["band"] == "simultaneous"
    fig = plots.pit_ecdf_difference_figure({"m": t})
    roles = [d.meta.get("role") for d in fig.data]
    assert roles == ["reference", "band_low", "band_high", "curve"]
    curve = fig.data[-1]
    np.testing.assert_allclose(curve.y, t["observed"] - t["level"])
    np.testing.assert_allclose(fig.data[1].y, t["band_low"] - t["level"])
    assert "simultaneous" in fig.data[2].name


def test_regression_page_curve_view_option():
    at = load_example(new_app(), LEVI)
    at.switch_page("pages/regression.py").run()
    assert not at.exception, [e.value for e in at.exception]
    y_title = specs(at)["reg_kuleshov"]["layout"]["yaxis"]["title"]["text"]
    assert "observed proportion" in y_title
    at.segmented_control(key="reg_curve_view").set_value("ECDF difference").run()
    assert not at.exception
    spec = specs(at)["reg_kuleshov"]
    assert "F̂(p) − p" in spec["layout"]["yaxis"]["title"]["text"]
    assert [d.get("meta", {}).get("role") for d in spec["data"]][:1] == ["reference"]
    assert any("simultaneous 95% band" in c.value for c in at.caption)


# --- tabulated γ (a summary-backed selection must not re-simulate the band for its new N) ---
@pytest.mark.parametrize("n", [1_000, 2_371, 42_170, 6_693_781, 100_000_000, 333_000_000, 5 * 10**12])
def test_tabulated_band_holds_simultaneously_at_interpolated_n(n):
    """At table points (10³, 10⁸), between them (log-interpolated γ) and beyond the table (5·10¹²): the share of
    calibrated data sets whose whole ECDF at the 99 levels stays in the band is 95% within binomial tolerance
    (3 s.e. of the 4,000 data sets plus 3 s.e. of the table's own simulation, M = 100,000)."""
    z = np.linspace(0.0, 1.0, 101)
    lo, hi, gamma = eb.ecdf_band(n, z, 0.95)
    assert gamma == pytest.approx(eb.adjusted_gamma(n, z, 0.05))
    n_sets = 4_000
    rng = np.random.default_rng(2024 + n % 1000)  # not the table's seed (0)
    inner = z[1:-1]
    counts = np.cumsum(rng.multinomial(n, np.diff(np.concatenate([[0.0], inner, [1.0]])), size=n_sets)[:, :-1],
                       axis=1)
    inside = np.all((counts >= lo[1:-1] * n - 1e-6) & (counts <= hi[1:-1] * n + 1e-6), axis=1)
    rate = float(inside.mean())
    slack = 3 * math.sqrt(tolerance(0.95, n_sets, 1) ** 2 + tolerance(0.95, eb.TABLE_SIMS, 1) ** 2)
    print(f"N = {n:.3g}: γ = {gamma:.6f}, inside {rate:.4f} (± {slack:.4f})")
    assert abs(rate - 0.95) <= slack


def test_tabulated_band_end_to_end_with_uniform_pit_values():
    n, n_sets = 20_000, 600  # between table points 17,783 and 31,623
    rng = np.random.default_rng(99)
    lo, hi, _ = eb.ecdf_band(n, DEFAULT_LEVELS, 0.95)
    inside = []
    for _ in range(n_sets):
        u = np.sort(rng.random(n))
        inside.append(eb.inside_band(np.searchsorted(u, DEFAULT_LEVELS, side="right") / n, lo, hi))
    assert abs(float(np.mean(inside)) - 0.95) <= 3 * tolerance(0.95, n_sets, 1)


@pytest.mark.slow  # re-runs the band's simulation for two table entries
def test_table_is_what_the_simulation_gives_and_is_cheap():
    """The shipped γ at N = 10³ and 10⁶ are recomputed by :func:`gamma_table` (same method, M, seed), to the 7
    digits stored; a band for a new large N costs no simulation (< 20 ms, against ~65 ms for one)."""
    table = eb._GAMMA_TABLES[(eb._DEFAULT_GRID, 0.05)]
    pick = [0, 12]
    again = eb.gamma_table(DEFAULT_LEVELS, 0.05, n_grid=eb.TABLE_N[pick])
    np.testing.assert_allclose(again, table[pick], rtol=1e-6)
    assert np.all(np.diff(np.log(table)) < 0.05) and np.all(np.diff(np.log(table)) > -0.06)  # slowly varying
    before = eb._gamma_cached.cache_info().misses
    t = time.thread_time()
    for n in (6_693_781, 6_659_156, 13_364_963, 33_327_605):
        eb.ecdf_band(n, DEFAULT_LEVELS)
    assert eb._gamma_cached.cache_info().misses == before  # no simulation ran
    assert (time.thread_time() - t) / 4 < 0.02
    # other levels and small N still simulate, and agree with the table where both exist within Monte-Carlo error
    g_sim = eb.adjusted_gamma(5_000, DEFAULT_LEVELS, 0.05, tabulated=False)
    g_tab = eb.adjusted_gamma(5_000, DEFAULT_LEVELS, 0.05)
    assert abs(np.log(g_sim / g_tab)) < 0.25


def test_a_band_is_computed_once_per_n_and_levels_and_handed_out_as_copies():
    """Several forecasters of one N share their band (a lab's six): the memoised band equals the
    computation, and what a caller gets is its own copy."""
    levels = np.linspace(0.01, 0.99, 99)
    for n, level, simultaneous in ((50, 0.95, True), (3_000, 0.9, True), (3_000, 0.95, False), (10**6, 0.95, True)):
        lo, hi, gamma = eb.ecdf_band(n, levels, level, simultaneous=simultaneous)
        want = eb._band_cached.__wrapped__(n, levels.shape, tuple(levels.tolist()), level, simultaneous, 4_000)
        np.testing.assert_array_equal(lo, want[0])
        np.testing.assert_array_equal(hi, want[1])
        assert gamma == want[2]
        lo[:] = -1.0  # a caller changing its arrays does not change the next caller's
        assert (eb.ecdf_band(n, levels, level, simultaneous=simultaneous)[0] >= 0).all()
