"""Cross-checks of the regression core against other people's implementations.

Peers (pinned in requirements-dev.txt; netcal, optional, in requirements-netcal.txt): uncertainty-toolbox 0.1.1,
netcal 1.4.0, properscoring 0.1, scoringrules 0.10.
Agreement is to 1e-9 relative.  Where a peer uses another convention, the
difference is stated next to the test and our switchable option reproduces the peer:

* uncertainty-toolbox calibrates over ``np.linspace(0, 1, 100)`` (100 levels including 0 and 1) with
  centred intervals by default (``prop_type="interval"``): ours with ``levels=np.linspace(0, 1, 100),
  prop_type="interval"``.  Its ``prop_type="quantile"`` curve uses z = (pred − y)/σ, i.e. it is our PIT
  curve mirrored through (½, ½): p̂_UT(p) = 1 − p̂_ours(1 − p); the summaries (RMSCE, MACE, area) coincide.
* netcal's ENCE bins σ in 10 equal-width bins between min σ and max σ ([a, b), last bin closed):
  ours with ``n_bins=10, binning="width"``; our default (Levi's equal-count bins, B = 15) differs.
* netcal's UCE bins on the *variance* (equal width in σ²) and weights bins by their size:
  Σ_b n_b/N |MSE_b − MV_b|.  There is no ``rm.uce``; the test rebuilds it from our binning engine.
* scoringrules' ensemble CRPS ``estimator="nrg"`` is our ``SampleSet.crps`` and ``"fair"`` is
  ``crps(fair=True)``; properscoring's ``crps_ensemble`` is the non-fair (energy) form.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

import calib_core as cc
from calib_core.base.binning import bin_sums, equal_width_bins
from calib_core.metrics import regression as rm

ut = pytest.importorskip("uncertainty_toolbox")

from uncertainty_toolbox import metrics_calibration as utc  # noqa: E402
from uncertainty_toolbox import metrics_scoring_rule as uts  # noqa: E402

from tests.peers import LazyPeer, require_peer  # noqa: E402

ps = LazyPeer("properscoring")  # imported by the tests that use it, not at collection
sr = LazyPeer("scoringrules")

REL = 1e-9
UT_LEVELS = np.linspace(0.0, 1.0, 100)


def gaussian_data(n: int = 1500, seed: int = 0, noise: float = 1.3, bias: float = 0.0):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n) * 3
    sigma = rng.lognormal(0.0, 0.5, n)
    y = mu + bias * sigma + noise * sigma * rng.standard_normal(n)
    return y, mu, sigma


CASES = [
    pytest.param({"noise": 1.0}, id="calibrated"),
    pytest.param({"noise": 1.8}, id="overconfident"),
    pytest.param({"noise": 0.5}, id="underconfident"),
    pytest.param({"noise": 1.0, "bias": 0.7}, id="biased"),
]


# =============================================================================================
# uncertainty-toolbox 0.1.1
# =============================================================================================


@pytest.mark.parametrize("case", CASES)
def test_ut_calibration_errors_interval_default(case):
    y, mu, sigma = gaussian_data(seed=1, **case)
    dist = cc.Gaussian(mu, sigma)
    kw = {"levels": UT_LEVELS, "prop_type": "interval"}
    ours_curve = rm.calibration_curve(y, dist, **kw)[1]
    _, ut_curve = utc.get_proportion_lists_vectorized(mu, sigma, y)
    assert_allclose(ours_curve, ut_curve, rtol=0, atol=1e-15)
    assert rm.calibration_rmse(y, dist, **kw) == pytest.approx(
        utc.root_mean_squared_calibration_error(mu, sigma, y), rel=REL
    )
    assert rm.mean_absolute_calibration_error(y, dist, **kw) == pytest.approx(
        utc.mean_absolute_calibration_error(mu, sigma, y), rel=REL
    )
    assert rm.miscalibration_area(y, dist, **kw) == pytest.approx(utc.miscalibration_area(mu, sigma, y), rel=REL)
    assert rm.miscalibration_area(y, dist, **kw) == pytest.approx(
        utc.miscalibration_area(mu, sigma, y, vectorized=True), rel=REL
    )


@pytest.mark.parametrize("case", CASES)
def test_ut_quantile_curve_is_our_pit_curve_mirrored(case):
    """UT's prop_type="quantile" counts (pred − y)/σ ≤ Φ⁻¹(p): p̂_UT(p) = 1 − p̂_ours(1 − p)."""
    y, mu, sigma = gaussian_data(seed=2, **case)
    dist = cc.Gaussian(mu, sigma)
    _, ours = rm.calibration_curve(y, dist, levels=UT_LEVELS, prop_type="quantile")
    _, theirs = utc.get_proportion_lists_vectorized(mu, sigma, y, prop_type="quantile")
    assert_allclose(theirs, 1.0 - ours[::-1], rtol=0, atol=1e-12)
    if "bias" in case:  # an asymmetric miscalibration: the two curves themselves differ visibly
        assert np.max(np.abs(theirs - ours)) > 0.1
    # the summaries are symmetric under the mirror, so they agree
    kw = {"levels": UT_LEVELS, "prop_type": "quantile"}
    assert rm.calibration_rmse(y, dist, **kw) == pytest.approx(
        utc.root_mean_squared_calibration_error(mu, sigma, y, prop_type="quantile"), rel=REL
    )
    assert rm.mean_absolute_calibration_error(y, dist, **kw) == pytest.approx(
        utc.mean_absolute_calibration_error(mu, sigma, y, prop_type="quantile"), rel=REL
    )
    assert rm.miscalibration_area(y, dist, **kw) == pytest.approx(
        utc.miscalibration_area(mu, sigma, y, prop_type="quantile"), rel=REL
    )


def test_ut_exact_area_is_the_limit_of_its_grid_area():
    """Our default area is grid-free; UT's polygon area converges to it as num_bins grows."""
    y, mu, sigma = gaussian_data(n=800, seed=3, noise=1.5)
    dist = cc.Gaussian(mu, sigma)
    exact = rm.miscalibration_area(y, dist)
    coarse = utc.miscalibration_area(mu, sigma, y, num_bins=100, prop_type="quantile", vectorized=True)
    fine = utc.miscalibration_area(mu, sigma, y, num_bins=20001, prop_type="quantile", vectorized=True)
    assert abs(fine - exact) < abs(coarse - exact) + 1e-12
    assert fine == pytest.approx(exact, abs=2e-4)


@pytest.mark.parametrize("case", CASES)
def test_ut_scores(case):
    y, mu, sigma = gaussian_data(seed=4, **case)
    dist = cc.Gaussian(mu, sigma)
    assert rm.sharpness(y, dist) == pytest.approx(utc.sharpness(sigma), rel=REL)
    assert rm.nll(y, dist) == pytest.approx(uts.nll_gaussian(mu, sigma, y), rel=REL)
    assert rm.crps(y, dist) == pytest.approx(uts.crps_gaussian(mu, sigma, y), rel=REL)
    s = rm.summary_statistics(rm.RegressionRows(y, dist))
    assert s["nll"] == pytest.approx(uts.nll_gaussian(mu, sigma, y), rel=REL)
    assert s["crps"] == pytest.approx(uts.crps_gaussian(mu, sigma, y), rel=REL)
    assert s["sharpness"] == pytest.approx(utc.sharpness(sigma), rel=REL)


# =============================================================================================
# netcal 1.4.0
# =============================================================================================


@pytest.fixture(scope="module")
def netcal_metrics():
    return require_peer("netcal.metrics")


@pytest.fixture(scope="module")
def netcal_regression():
    return require_peer("netcal.regression")


def _netcal(metric, *args, **kwargs) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(np.squeeze(metric.measure(*args, **kwargs)))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("bins", [10, 4, 15])
def test_netcal_ence_equal_width_convention(case, bins, netcal_metrics):
    y, mu, sigma = gaussian_data(seed=5, **case)
    dist = cc.Gaussian(mu, sigma)
    theirs = _netcal(netcal_metrics.ENCE(bins=bins), (mu, sigma), y, kind="meanstd")
    assert rm.ence(y, dist, n_bins=bins, binning="width") == pytest.approx(theirs, rel=REL)
    if bins == 10:
        assert _netcal(netcal_metrics.ENCE(), (mu, sigma), y, kind="meanstd") == pytest.approx(theirs, rel=1e-15)
        # documented difference: our default is Levi's equal-count binning with 15 bins
        assert abs(rm.ence(y, dist) - theirs) > 1e-6


def test_netcal_ence_with_empty_bins_averages_non_empty_ones(netcal_metrics):
    """A heavy right tail of σ leaves equal-width bins empty: both average over the non-empty bins."""
    y, mu, sigma = gaussian_data(n=600, seed=6)
    sigma = sigma.copy()
    sigma[:3] = [30.0, 45.0, 60.0]
    dist = cc.Gaussian(mu, sigma)
    counts = np.bincount(equal_width_bins(sigma, 10, closed="left")[0], minlength=10)
    assert np.any(counts == 0)
    theirs = _netcal(netcal_metrics.ENCE(bins=10), (mu, sigma), y, kind="meanstd")
    assert rm.ence(y, dist, n_bins=10, binning="width") == pytest.approx(theirs, rel=REL)


@pytest.mark.parametrize("case", CASES)
def test_netcal_uce_rebuilt_from_our_binning_engine(case, netcal_metrics):
    """UCE = Σ_b n_b/N |MSE_b − MV_b| over 10 equal-width bins *of the variance* (netcal's convention)."""
    y, mu, sigma = gaussian_data(seed=7, **case)
    rows = rm.RegressionRows(y, cc.Gaussian(mu, sigma))
    b, _ = equal_width_bins(rows.var, 10, closed="left")
    cnt, s_var, s_err = bin_sums(b, 10, rows.var, rows.sq_err)
    ok = cnt > 0
    ours = float(np.sum(cnt[ok] / rows.n * np.abs(s_err[ok] / cnt[ok] - s_var[ok] / cnt[ok])))
    theirs = _netcal(netcal_metrics.UCE(bins=10), (mu, sigma), y, kind="meanstd")
    assert ours == pytest.approx(theirs, rel=REL)
    if case.get("noise") != 1.0:
        return  # all bins over- or all under-confident: |Σ| = Σ|·|, any binning gives the same UCE
    # binning on σ instead of σ² gives another number: the convention matters
    b_sigma, _ = equal_width_bins(rows.sigma, 10, closed="left")
    cnt2, s_var2, s_err2 = bin_sums(b_sigma, 10, rows.var, rows.sq_err)
    ok2 = cnt2 > 0
    other = float(np.sum(cnt2[ok2] / rows.n * np.abs(s_err2[ok2] / cnt2[ok2] - s_var2[ok2] / cnt2[ok2])))
    assert abs(other - theirs) > 1e-6 * theirs


@pytest.mark.parametrize("case", CASES)
def test_netcal_nll(case, netcal_metrics):
    y, mu, sigma = gaussian_data(seed=8, **case)
    theirs = _netcal(netcal_metrics.NLL(), (mu, sigma), y, kind="meanstd")
    assert rm.nll(y, cc.Gaussian(mu, sigma)) == pytest.approx(theirs, rel=REL)


@pytest.mark.parametrize("case", CASES)
def test_netcal_variance_scaling_factor_is_closed_form(case, netcal_regression):
    """Levi eq. 12: s² = mean(z²) is the exact NLL minimiser; netcal's VarianceScaling fits the same s."""
    y, mu, sigma = gaussian_data(seed=9, **case)
    rows = rm.RegressionRows(y, cc.Gaussian(mu, sigma))
    s = float(np.sqrt(np.mean(rows.z**2)))
    vs = netcal_regression.VarianceScaling()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vs.fit((mu, sigma), y)
        scaled_std = np.squeeze(vs.transform((mu, sigma)))
    assert_allclose(scaled_std / sigma, s, rtol=REL)
    # and it is the NLL minimiser
    nll = lambda k: rm.nll(y, cc.Gaussian(mu, k * sigma))
    assert nll(s) < nll(s * (1 + 1e-3)) and nll(s) < nll(s * (1 - 1e-3))
    try:  # the project's own STD scaling, when it exists, must agree too
        from calib_core.calibrators import regression as rcal
    except ImportError:
        return
    if hasattr(rcal, "StdScaling"):
        fitted = rcal.StdScaling().fit(cc.Gaussian(mu, sigma), y)
        assert float(fitted.scale_) == pytest.approx(s, rel=REL)


# =============================================================================================
# properscoring / scoringrules
# =============================================================================================


def test_gaussian_crps_against_properscoring_and_scoringrules():
    y, mu, sigma = gaussian_data(seed=10)
    ours = cc.Gaussian(mu, sigma).crps(y)
    assert_allclose(ours, ps.crps_gaussian(y, mu, sigma), rtol=REL)
    assert_allclose(ours, np.asarray(sr.crps_normal(y, mu, sigma, backend="numpy")), rtol=REL)


@pytest.mark.parametrize("m", [2, 3, 10, 51])
@pytest.mark.parametrize("ties", [False, True])
def test_ensemble_crps_against_properscoring_and_scoringrules(m, ties):
    rng = np.random.default_rng(11 + m)
    n = 500
    x = rng.normal(size=(n, 1)) + rng.uniform(0.2, 3, (n, 1)) * rng.standard_normal((n, m))
    y = rng.normal(size=n) * 2
    if ties:
        x = np.round(x)
        y = np.round(y)
    dist = cc.SampleSet(x)
    ours, ours_fair = dist.crps(y), dist.crps(y, fair=True)
    assert_allclose(ours, ps.crps_ensemble(y, x), rtol=REL, atol=1e-13)
    assert_allclose(ours, np.asarray(sr.crps_ensemble(y, x, estimator="nrg", backend="numpy")), rtol=REL, atol=1e-13)
    assert_allclose(
        ours_fair, np.asarray(sr.crps_ensemble(y, x, estimator="fair", backend="numpy")), rtol=REL, atol=1e-13
    )
    assert rm.crps(y, dist) == pytest.approx(float(np.mean(ps.crps_ensemble(y, x))), rel=REL)


def test_gaussian_crps_is_limit_of_large_ensemble():
    """Sanity link between the two forms: a large Gaussian ensemble's CRPS approaches the closed form."""
    rng = np.random.default_rng(12)
    n, m = 200, 4000
    mu, sigma = rng.normal(size=n), rng.uniform(0.5, 2, n)
    y = mu + sigma * rng.standard_normal(n)
    members = mu[:, None] + sigma[:, None] * stats.norm.ppf((np.arange(m) + 0.5) / m)[None, :]
    assert_allclose(cc.SampleSet(members).crps(y), cc.Gaussian(mu, sigma).crps(y), rtol=2e-3, atol=1e-4)

