"""The weighted interval score and the central coverages per row (calib_core.metrics.regression_wis): its identities
(the pinball form, parts that add up, equivariance), the variants (no median, unpaired levels, the hub levels of a
non-quantile forecast), its expectation under the true law, and cross-checks against nci ``scores`` and
``scoringrules`` on random data and on the real hubverse example hub."""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from calib_core.base.regression import Gaussian, QuantileSet, SampleSet
from calib_core.metrics.regression_wis import (
    HUB_LEVELS,
    WIS_PARTS,
    central_coverages,
    central_pairs,
    gaussian_expected_wis,
    wis_parts,
    wis_score,
)

LEVELS = np.array([0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95])


def pinball(y: np.ndarray, q: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """ρ_τ(y − q) per row and level: (y − q)(τ − 1[y < q])."""
    e = y[:, None] - q
    return e * (tau[None, :] - (e < 0))


def gaussian_set(n: int, rng: np.random.Generator, tau=LEVELS):
    mu, sd = rng.normal(size=n) * 3, rng.uniform(0.5, 2.0, n)
    q = mu[:, None] + sd[:, None] * special.ndtri(tau)[None, :]
    return mu + sd * rng.standard_normal(n), q, mu, sd  # y from the TRUE law


def bracher(y, lower, upper, alphas, median):
    """WIS written out as in Bracher et al. (2021), eq. (3), one interval at a time."""
    total = 0.5 * np.abs(y - median)
    for k, a in enumerate(alphas):
        l, u = lower[:, k], upper[:, k]
        total = total + (a / 2) * ((u - l) + (2 / a) * np.maximum(l - y, 0) + (2 / a) * np.maximum(y - u, 0))
    return total / (len(alphas) + 0.5)


# ---- identities -------------------------------------------------------------------------------------------------

def test_pinball_identity_parts_sum_and_bracher_form():
    """With the median stated, WIS = 1/(K + ½) Σ over the 2K + 1 quantiles of ρ_τ(y − q_τ) = (2/(2K + 1)) Σ ρ
    (twice the mean quantile score), the parts add up to it exactly and are non-negative."""
    rng = np.random.default_rng(0)
    y, q, _, _ = gaussian_set(3_000, rng)
    p = wis_parts(y, QuantileSet(LEVELS, q))
    k = 3
    assert p.alphas.tolist() == pytest.approx([0.1, 0.2, 0.5]) and p.median and p.stated
    np.testing.assert_allclose(p.wis, pinball(y, q, LEVELS).sum(axis=1) / (k + 0.5), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(p.wis, bracher(y, q[:, :3], q[:, ::-1][:, :3], [0.1, 0.2, 0.5], q[:, 3]),
                               rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(p.wis, p.dispersion + p.overprediction + p.underprediction)
    for a in (p.dispersion, p.overprediction, p.underprediction):
        assert np.all(a >= 0)
    # overprediction only where y is below the median, underprediction only above it
    assert np.all(p.overprediction[y > q[:, 3]] == 0) and np.all(p.underprediction[y < q[:, 3]] == 0)
    assert set(p.columns()) == set(WIS_PARTS)
    assert p.means()["wis"] == pytest.approx(float(p.wis.mean()), rel=1e-15)
    assert wis_score(y, QuantileSet(LEVELS, q), part="wis_overprediction") == pytest.approx(p.overprediction.mean())


def test_no_median_variant_and_unpaired_levels():
    rng = np.random.default_rng(1)
    tau = np.array([0.05, 0.1, 0.3, 0.9, 0.95])  # pairs (0.05, 0.95), (0.1, 0.9); 0.3 has no partner; no median
    y, q, _, _ = gaussian_set(500, rng, tau)
    p = wis_parts(y, QuantileSet(tau, q))
    assert not p.median and p.unpaired.tolist() == [0.3] and "no median" in p.note and "0.3" in p.note
    is_ = [(q[:, 4 - j] - q[:, j]) + (2 / a) * np.maximum(q[:, j] - y, 0) + (2 / a) * np.maximum(y - q[:, 4 - j], 0)
           for j, a in ((0, 0.1), (1, 0.2))]
    expected = (0.05 * is_[0] + 0.1 * is_[1]) / 2  # 1/K Σ (α/2) IS
    np.testing.assert_allclose(p.wis, expected, rtol=1e-12)
    # the unpaired level changes nothing
    q2 = np.delete(q, 2, axis=1)
    np.testing.assert_allclose(wis_parts(y, QuantileSet(np.delete(tau, 2), q2)).wis, p.wis, rtol=1e-14)
    # only a median: |y − m|
    pm = wis_parts(y, QuantileSet([0.3, 0.5], np.c_[q[:, 2] - 1, q[:, 2]]))
    np.testing.assert_allclose(pm.wis, np.abs(y - q[:, 2]), rtol=1e-15)
    with pytest.raises(ValueError, match="neither a median"):
        wis_parts(y, QuantileSet([0.2, 0.3], q[:, 1:3]))


def test_central_pairs_are_matched_to_tolerance():
    lo, hi, med, alone = central_pairs(HUB_LEVELS)
    assert len(lo) == 11 and med == 11 and alone.size == 0
    assert np.allclose(HUB_LEVELS[lo] + HUB_LEVELS[hi], 1.0)
    lo, hi, med, alone = central_pairs(np.array([0.1, 0.2, 0.8 + 1e-12, 0.95]))
    assert lo.tolist() == [1] and hi.tolist() == [2] and med is None and alone.tolist() == [0, 3]


def test_non_quantile_forecasts_use_the_23_hub_levels():
    rng = np.random.default_rng(2)
    y, _, mu, sd = gaussian_set(400, rng)
    g = Gaussian(mu, sd)
    p = wis_parts(y, g)
    q = np.asarray(g.ppf(HUB_LEVELS[None, :]))
    ref = wis_parts(y, QuantileSet(HUB_LEVELS, q))
    np.testing.assert_allclose(p.wis, ref.wis, rtol=1e-13)
    assert not p.stated and "23 forecast-hub levels" in p.note and p.levels.size == 23 and p.alphas.size == 11
    ens = SampleSet(mu[:, None] + sd[:, None] * rng.standard_normal((400, 40)))
    pe = wis_parts(y, ens)
    ref = wis_parts(y, QuantileSet(HUB_LEVELS, np.asarray(ens.ppf(HUB_LEVELS[None, :]))))
    np.testing.assert_array_equal(pe.wis, ref.wis)
    cov = central_coverages(y, g)
    assert list(cov) == [f"coverage_{c}" for c in (10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 98)]


def test_chunks_give_the_same_rows_as_one_block():
    """Large inputs run in blocks of rows: the rows are those of the row-by-row formula."""
    rng = np.random.default_rng(3)
    n = 20_000
    y, q, mu, sd = gaussian_set(n, rng, HUB_LEVELS)
    p = wis_parts(y, QuantileSet(HUB_LEVELS, q))
    np.testing.assert_allclose(p.wis, pinball(y, q, HUB_LEVELS).sum(axis=1) / 11.5, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(wis_parts(y, Gaussian(mu, sd)).wis, p.wis, rtol=1e-12, atol=1e-13)


finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(finite, st.lists(finite, min_size=7, max_size=7)), min_size=1, max_size=20),
       finite, st.floats(0.01, 100))
def test_properties_translation_scale_and_nonnegativity(rows, shift, scale):
    y = np.array([r[0] for r in rows])
    q = np.sort(np.array([r[1] for r in rows]), axis=1)
    d = QuantileSet(LEVELS, q)
    p = wis_parts(y, d)
    assert np.all(p.wis >= 0) and np.all(p.dispersion >= 0)
    assert np.all(p.overprediction >= 0) and np.all(p.underprediction >= 0)
    np.testing.assert_array_equal(p.wis, p.dispersion + p.overprediction + p.underprediction)
    np.testing.assert_allclose(p.wis, pinball(y, q, LEVELS).sum(axis=1) / 3.5, rtol=1e-9, atol=1e-9)
    moved = wis_parts(y + shift, QuantileSet(LEVELS, q + shift))
    np.testing.assert_allclose(moved.wis, p.wis, rtol=1e-9, atol=1e-9 * (1 + abs(shift)))
    scaled = wis_parts(y * scale, QuantileSet(LEVELS, q * scale))
    for a, b in ((scaled.wis, p.wis), (scaled.overprediction, p.overprediction), (scaled.dispersion, p.dispersion)):
        np.testing.assert_allclose(a, scale * b, rtol=1e-9, atol=1e-9)


# ---- statistics under the true law ------------------------------------------------------------------------------

def test_mean_wis_under_the_true_law_is_the_exact_expectation():
    """y drawn from the Gaussian whose quantiles are stated: E ρ_τ(y − q_τ) = σ φ(Φ⁻¹(τ)), so
    E WIS = σ Σ_τ φ(z_τ)/(K + ½); the mean of N rows lies within 4 standard errors of it (CLT)."""
    rng = np.random.default_rng(4)
    n = 40_000
    y, q, _, sd = gaussian_set(n, rng, HUB_LEVELS)
    p = wis_parts(y, QuantileSet(HUB_LEVELS, q))
    expected = sd * np.sum(np.exp(-0.5 * special.ndtri(HUB_LEVELS) ** 2) / np.sqrt(2 * np.pi)) / 11.5
    se = p.wis.std(ddof=1) / np.sqrt(n)
    assert abs(p.wis.mean() - expected.mean()) < 4 * se
    np.testing.assert_allclose(gaussian_expected_wis(sd), expected, rtol=1e-12)
    # dispersion is exact (no randomness); over and under have the same expectation by symmetry
    disp = sd * np.sum((HUB_LEVELS[:11]) * (special.ndtri(1 - HUB_LEVELS[:11]) - special.ndtri(HUB_LEVELS[:11]))) / 11.5
    np.testing.assert_allclose(p.dispersion, disp, rtol=1e-12)
    d = p.overprediction - p.underprediction
    assert abs(d.mean()) < 4 * d.std(ddof=1) / np.sqrt(n)


def test_central_coverages_under_the_true_law_are_binomial():
    """Each stated central interval covers Bin(N, c) targets: within 4 binomial standard errors, every c."""
    rng = np.random.default_rng(5)
    n = 20_000
    y, q, _, _ = gaussian_set(n, rng, HUB_LEVELS)
    cov = central_coverages(y, QuantileSet(HUB_LEVELS, q))
    assert list(cov) == [f"coverage_{c}" for c in (10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 98)]
    for key, inside in cov.items():
        c = float(key.split("_")[1]) / 100
        assert inside.dtype == bool and abs(inside.mean() - c) < 4 * np.sqrt(c * (1 - c) / n), key


def test_central_coverages_include_both_ends():
    d = QuantileSet([0.1, 0.25, 0.5, 0.75, 0.9], np.array([[0.0, 1.0, 2.0, 3.0, 4.0]] * 5))
    cov = central_coverages(np.array([0.0, 1.0, 3.0, 4.0, 4.5]), d)
    assert cov["coverage_50"].tolist() == [False, True, True, False, False]
    assert cov["coverage_80"].tolist() == [True, True, True, True, False]
    assert central_coverages(np.zeros(1), QuantileSet([0.2, 0.5], np.array([[0.0, 1.0]]))) == {}


@pytest.mark.slow
def test_a_million_rows_at_23_levels_take_well_under_half_a_second():
    rng = np.random.default_rng(6)
    n = 1_000_000
    y, q, _, _ = gaussian_set(n, rng, HUB_LEVELS)
    d = QuantileSet(HUB_LEVELS, q)
    wis_parts(y[:1000], d.take(np.arange(1000)))
    t = time.perf_counter()
    wis_parts(y, d)
    assert time.perf_counter() - t < 0.5


# ---- cross-checks: nci scores, scoringrules ---------------------------------------------------------------------

def _scores_wis(y, q, tau):
    """WIS from nci ``scores``: its interval scores (and their width / over / under penalties) of every central pair
    weighted by α/2, and its quantile score of the median (½|y − m| = ρ_½), divided by K + ½."""
    xr = pytest.importorskip("xarray")
    sc = pytest.importorskip("scores.continuous")
    lo_i, hi_i, med_i, _ = central_pairs(tau)
    obs = xr.DataArray(y, dims="row")
    parts = {"width": 0.0, "over": 0.0, "under": 0.0}
    for i, j in zip(lo_i, hi_i):
        a = 2 * tau[i]
        r = sc.quantile_interval_score(xr.DataArray(q[:, i], dims="row"), xr.DataArray(q[:, j], dims="row"), obs,
                                       float(tau[i]), float(tau[j]), preserve_dims="all")
        parts["width"] = parts["width"] + (a / 2) * r["interval_width_penalty"].values
        parts["over"] = parts["over"] + (a / 2) * r["overprediction_penalty"].values
        parts["under"] = parts["under"] + (a / 2) * r["underprediction_penalty"].values
        total = sc.interval_score(xr.DataArray(q[:, i], dims="row"), xr.DataArray(q[:, j], dims="row"), obs, 1 - a,
                                  preserve_dims="all")["total"].values
        np.testing.assert_allclose(r["total"].values, total, rtol=1e-12, atol=1e-12)
    med = sc.quantile_score(xr.DataArray(q[:, med_i], dims="row"), obs, 0.5, preserve_dims="all").values
    m = q[:, med_i]
    parts["over"] = parts["over"] + med * (m > y)
    parts["under"] = parts["under"] + med * (m < y)
    k = len(lo_i) + 0.5
    return {key: v / k for key, v in parts.items()}


def _compare(p, ref) -> float:
    """Largest absolute difference of WIS and its parts from the reference; asserts relative 1e-12."""
    worst = 0.0
    for ours, theirs in ((p.dispersion, ref["width"]), (p.overprediction, ref["over"]),
                         (p.underprediction, ref["under"]),
                         (p.wis, ref["width"] + ref["over"] + ref["under"])):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
        worst = max(worst, float(np.max(np.abs(ours - theirs))))
    return worst


def test_matches_nci_scores_on_random_data():
    rng = np.random.default_rng(7)
    y, q, _, _ = gaussian_set(5_000, rng, HUB_LEVELS)
    y[:50] = q[:50, 3]  # targets on an interval end and on the median
    y[50:60] = q[50:60, 11]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = _scores_wis(y, q, HUB_LEVELS)
    _compare(wis_parts(y, QuantileSet(HUB_LEVELS, q)), ref)


def test_scoringrules_interval_and_quantile_scores_agree():
    """scoringrules' interval score and quantile score give the same WIS (Bracher's weights); its
    ``weighted_interval_score`` (numpy backend, scoringrules 0.10) adds w₀·m instead of w₀·|y − m|: where it
    differs from ours it differs by exactly that."""
    sr = pytest.importorskip("scoringrules")
    rng = np.random.default_rng(8)
    y, q, _, _ = gaussian_set(2_000, rng, HUB_LEVELS)
    lo_i, hi_i, med_i, _ = central_pairs(HUB_LEVELS)
    alphas = 2 * HUB_LEVELS[lo_i]
    p = wis_parts(y, QuantileSet(HUB_LEVELS, q))
    is_ = np.stack([sr.interval_score(y, q[:, i], q[:, j], a, backend="numpy")
                    for i, j, a in zip(lo_i, hi_i, alphas)], axis=1)
    med = sr.quantile_score(y, q[:, med_i], 0.5, backend="numpy")
    np.testing.assert_allclose(p.wis, (is_ @ (alphas / 2) + med) / 11.5, rtol=1e-12, atol=1e-12)
    quant = np.stack([sr.quantile_score(y, q[:, j], t, backend="numpy") for j, t in enumerate(HUB_LEVELS)], axis=1)
    np.testing.assert_allclose(p.wis, quant.sum(axis=1) / 11.5, rtol=1e-12, atol=1e-12)
    theirs = np.asarray(sr.weighted_interval_score(y, q[:, med_i], q[:, lo_i], q[:, hi_i], alphas, backend="numpy"))
    if not np.allclose(theirs, p.wis, rtol=1e-12, atol=1e-12):
        np.testing.assert_allclose(theirs - p.wis, 0.5 * (q[:, med_i] - np.abs(y - q[:, med_i])) / 11.5,
                                   rtol=1e-9, atol=1e-9)


HUB = "hubverse_simple_forecast_hub"


def read_example_hub(root: Path) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """The example hub's quantile forecasts as one wide row per (model, origin_date, horizon, location, target),
    joined with the target data on target_end_date = origin_date + horizon days, location and target.
    Returns (units, levels, quantiles); ``units`` carries the truth in ``y``."""
    frames = []
    for path in sorted((root / "model-output").glob("*/*.csv")):
        f = pd.read_csv(path, dtype={"location": str, "output_type_id": str, "target": str},
                        keep_default_na=False)
        f["model"] = path.parent.name
        frames.append(f[f["output_type"] == "quantile"])
    long = pd.concat(frames, ignore_index=True)
    long["level"] = long["output_type_id"].astype(float)
    keys = ["model", "origin_date", "horizon", "location", "target"]
    wide = long.pivot_table(index=keys, columns="level", values="value", aggfunc="first").reset_index()
    levels = np.array(sorted(c for c in wide.columns if isinstance(c, float)))
    wide["target_end_date"] = pd.to_datetime(wide["origin_date"]) + pd.to_timedelta(wide["horizon"], unit="D")
    truth = pd.read_csv(root / "target-data" / "covid-hospitalizations.csv", dtype={"location": str, "target": str})
    truth["target_end_date"] = pd.to_datetime(truth["time_idx"])
    joined = wide.merge(truth.rename(columns={"value": "y"})[["target_end_date", "location", "target", "y"]],
                        on=["target_end_date", "location", "target"], how="inner", validate="many_to_one")
    return joined, levels, joined[list(levels)].to_numpy(dtype=float)


def test_real_hub_matches_nci_scores_and_its_sanity_numbers(real_data_dir):
    root = real_data_dir / HUB
    if not root.is_dir():
        pytest.skip(f"{root} is missing")
    units, levels, q = read_example_hub(root)
    assert len(units) == 567 and levels.size == 23  # PROVENANCE.md: 3 models × 189 units, 0 unmatched
    y = units["y"].to_numpy(dtype=float)
    d = QuantileSet(levels, q)
    p = wis_parts(y, d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        worst = _compare(p, _scores_wis(y, q, levels))
    assert worst < 1e-12  # measured 2.3e-13 on values up to 1,593 (relative 9e-16)
    np.testing.assert_allclose(p.wis, pinball(y, q, levels).sum(axis=1) / 11.5, rtol=1e-12, atol=1e-12)
    cov = central_coverages(y, d)
    by_model = pd.DataFrame({"model": units["model"], **cov}).groupby("model").mean()
    # PROVENANCE.md's sanity numbers (inclusive ends)
    assert by_model.loc["UMass-ar", ["coverage_50", "coverage_90", "coverage_98"]].round(3).tolist() == \
        [0.503, 0.942, 0.995]
    assert by_model.loc["UMass-gbq", ["coverage_50", "coverage_90", "coverage_98"]].round(3).tolist() == \
        [0.439, 0.852, 0.952]
    assert by_model.loc["simple_hub-baseline", ["coverage_50", "coverage_90"]].round(3).tolist() == [0.815, 1.0]
    wis_by_model = pd.DataFrame({"model": units["model"], **p.columns()}).groupby("model").mean()
    assert np.allclose(wis_by_model[list(WIS_PARTS[1:])].sum(axis=1), wis_by_model["wis"], rtol=1e-12)
