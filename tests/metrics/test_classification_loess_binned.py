"""The large-N loess on fine bins of the prediction: its kernels against their NumPy formulas, its quantiles bit for
bit against NumPy's, and its error against the exact loess on data drawn from a known law."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from calib_core.metrics import classification_loess_binned as lb
from calib_core.metrics.classification_clinical import calibration_errors_of
from calib_core.metrics.classification_loess import loess_smooth


def _law(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """f ~ Beta(0.7, 4) (mass near 0, as a one-vs-rest class); P(y = 1 | f) = expit(0.8 logit f + 0.3)."""
    rng = np.random.default_rng(seed)
    f = rng.beta(0.7, 4.0, n)
    truth = special.expit(0.8 * special.logit(f) + 0.3)
    y = (rng.random(n) < truth).astype(float)
    return f, y, truth


def _exact(f, y):
    curve = loess_smooth(f, y)
    d = np.abs(curve - f)
    return curve, {"ici": float(d.mean()), "e50": float(np.quantile(d, 0.5)), "e90": float(np.quantile(d, 0.9))}


def test_bin_sums_kernel_equals_numpy_formula():
    rng = np.random.default_rng(3)
    f, y, w = rng.random(5000), (rng.random(5000) < 0.3).astype(float), rng.integers(0, 3, 5000).astype(float)
    nb, lo = 64, float(f.min())
    width = (float(f.max()) - lo) / nb
    got = lb._bin_sums(f, y, w, lo, 1.0 / width, nb, False)
    b = np.clip(((f - lo) * (1.0 / width)).astype(np.int64), 0, nb - 1)
    d = f - (lo + (b + 0.5) * width)
    want = np.stack([np.bincount(b, weights=v, minlength=nb) for v in (w, w * d, w * d * d, w * y, w * y * d)], 1)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_vertex_fit_on_singleton_bins_is_the_exact_local_line():
    # every bin holds at most one row: the centroid is the row, so the binned fit is the exact local line
    rng = np.random.default_rng(4)
    f = np.sort(rng.choice(4096, 300, replace=False) + 0.5) / 4096.0
    y = (rng.random(f.size) < f).astype(float)
    t = np.linspace(0.1, 0.9, 9)
    exact = loess_smooth(f, y, at=t)
    _, got = lb.binned_loess_vertices(f, y, n_bins=4096, at=t) or (None, None)
    assert got is None or np.max(np.abs(got - exact)) < 2e-3  # radius from the binned CDF: within a bin or two
    sums = lb._bin_sums(f, y, np.empty(0), 0.0, 4096.0, 4096, True)
    smoother_h = np.array([np.sort(np.abs(f - ti))[int(0.75 * f.size) - 1] for ti in t])
    full = np.flatnonzero(sums[:, 0] > 0)
    centres = (full + 0.5) / 4096.0
    fit = lb._vertex_fits(centres + sums[full, 1] / sums[full, 0], *np.ascontiguousarray(sums[full].T), centres, t,
                          smoother_h)
    np.testing.assert_allclose(fit, exact, rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1e3, allow_nan=False), min_size=1, max_size=300),
       st.lists(st.floats(0.0, 1.0), min_size=1, max_size=4))
def test_quantiles_linear_bit_for_bit(values, q):
    v = np.asarray(values)
    np.testing.assert_array_equal(lb.quantiles_linear(v, q), np.quantile(v, q))


def test_quantiles_linear_bit_for_bit_large_with_ties():
    rng = np.random.default_rng(5)
    for v in (rng.random(200_001), np.round(rng.exponential(size=100_000), 3), np.zeros(70_000)):
        np.testing.assert_array_equal(lb.quantiles_linear(v, [0.5, 0.9]), np.quantile(v, [0.5, 0.9]))


@pytest.mark.parametrize("seed", [0, 1])
def test_binned_errors_within_bound_of_exact_fit(seed):
    """At 10⁵ rows drawn from a known law: |ΔICI|, |ΔE50|, |ΔE90| ≤ 1e-5 and the curve within 5e-5 of the exact
    loess; both estimate the law's own ICI within sampling error."""
    f, y, truth = _law(100_000, seed)
    curve, exact = _exact(f, y)
    binned = lb.binned_calibration_errors(f, y)
    for key in ("ici", "e50", "e90"):
        assert abs(binned[key] - exact[key]) <= 1e-5, (key, binned[key], exact[key])
    t, values = lb.binned_loess_vertices(f, y)
    order = np.argsort(f)
    assert np.max(np.abs(np.interp(f, t, values) - curve)) <= 5e-5
    true_ici = float(np.mean(np.abs(truth - f)))
    assert abs(binned["ici"] - true_ici) < 0.01  # the smoother's bias and noise at this N, not the bins'
    assert order.size == f.size


def test_calibration_errors_switch_at_threshold():
    f, y, _ = _law(lb.BINNED_FROM, 7)
    got = calibration_errors_of(f, y)
    assert got == lb.binned_calibration_errors(f, y)
    below = calibration_errors_of(f[:-1], y[:-1])  # one row fewer: the exact loess
    _, exact = _exact(f[:-1], y[:-1])
    assert below["ici"] == pytest.approx(exact["ici"], rel=1e-12)


def test_degenerate_data_fall_back_to_exact():
    f = np.repeat([0.2, 0.6], 60_000)
    y = (np.arange(f.size) % 3 == 0).astype(float)
    assert lb.binned_calibration_errors(f, y) is None
    got = calibration_errors_of(f, y)
    _, exact = _exact(f, y)
    assert got["ici"] == pytest.approx(exact["ici"], rel=1e-12)


def test_smoothed_curve_without_band_at_large_n():
    """Large N, no band: grid, span weights and shares equal the exact path's; the curve within 1e-5 of it."""
    import calib_core.diagrams.classification_clinical as dc

    f, y, _ = _law(lb.BINNED_FROM, 2)
    fast = dc.smoothed_calibration_of(f, y, n_resamples=0)
    assert fast.attrs["band"] == "none" and fast["n_rows"].iloc[0] > 0
    old, dc.BINNED_FROM = dc.BINNED_FROM, 10 ** 12
    try:
        ref = dc.smoothed_calibration_of(f, y, n_resamples=0)
    finally:
        dc.BINNED_FROM = old
    for col in ("predicted", "lower", "upper", "n_rows", "share"):
        np.testing.assert_array_equal(fast[col].to_numpy(), ref[col].to_numpy())
    assert np.max(np.abs(fast["observed"] - ref["observed"])) < 1e-5
    assert fast.attrs == ref.attrs


def _vertex_fits_skip_loop(xc, wb, d1b, d2b, yb, eb, delta0, t, h):
    """The vertex fits as first written: one loop over the window that skips the bins outside the radius."""
    out = np.empty(t.size)
    for j in range(t.size):
        s = np.zeros(5)
        used = 0
        for b in range(np.searchsorted(xc, t[j] - h[j]), np.searchsorted(xc, t[j] + h[j], side="right")):
            u = abs(xc[b] - t[j]) / h[j]
            if u >= 1.0:
                continue
            k = (1.0 - u ** 3) ** 3
            d = delta0[b] - t[j]
            used += 1
            s += k * np.array([wb[b], wb[b] * d + d1b[b], wb[b] * d * d + 2.0 * d * d1b[b] + d2b[b], yb[b],
                               yb[b] * d + eb[b]])
        if used < 2 or s[0] <= 0.0:
            out[j] = np.nan
            continue
        m, mean_y = s[1] / s[0], s[3] / s[0]
        out[j] = mean_y - m * (s[4] / s[0] - m * mean_y) / max(s[2] / s[0] - m * m, 1e-12)
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_vertex_fits_kernel_equals_skip_loop(seed):
    """The kernel's weights-then-sums form (0 outside the radius) against the loop that skips those bins: ≤ 1e-12."""
    rng = np.random.default_rng(seed)
    f = special.expit(rng.normal(-1.0, 1.5, 4000))
    y = (rng.random(f.size) < f ** 1.3).astype(float)
    lo, hi, n_bins = float(f.min()), float(f.max()), 512
    width = (hi - lo) / n_bins
    sums = lb._bin_sums(f, y, np.empty(0), lo, 1.0 / width, n_bins, True)
    full = np.flatnonzero(sums[:, 0] > 0)
    centres = lo + (full + 0.5) * width
    ne = np.ascontiguousarray(sums[full].T)
    t = np.linspace(lo, hi, 41)
    h = np.full(t.size, 0.3 * (hi - lo)) * rng.uniform(0.5, 1.5, t.size)
    args = (centres + ne[1] / ne[0], *ne, centres, t, h)
    np.testing.assert_allclose(lb._vertex_fits(*args), _vertex_fits_skip_loop(*args), rtol=1e-12, atol=0)


def _deviations_by_division(f, w, lo, step, values, unit):
    """d_i = |ĉ(f_i) − f_i| with the position (f − lo)/step by division, Σ w d in row order, Σ w (the pass as first
    written; the reference of the kernel's multiplication by 1/step)."""
    g = values.size
    x = (f - lo) / step
    j = np.where(x >= g - 2, g - 2, np.where(x > 0.0, np.trunc(np.where(x > 0.0, x, 0.0)), 0.0)).astype(np.int64)
    lam = np.clip(x - j, 0.0, 1.0)
    d = np.abs(values[j] * (1.0 - lam) + values[j + 1] * lam - f)
    wi = np.ones(f.size) if unit else w
    return d, float(np.cumsum(wi * d)[-1]), float(np.cumsum(wi)[-1])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 3000), g=st.sampled_from([2, 3, 11, 101]),
       grid=st.booleans(), weighted=st.booleans())
def test_deviations_by_multiplication_within_rounding_of_division(seed, n, g, grid, weighted):
    """The deviations with (f − lo)·(1/step) against (f − lo)/step: every d, Σ w d and Σ w within 1e-12 relative
    (1e-14 absolute near 0), including predictions on the vertices themselves (where the segment may change)."""
    rng = np.random.default_rng(seed)
    lo, hi = sorted(rng.uniform(0.0, 1.0, 2))
    hi = hi if hi > lo else lo + 0.25
    t = np.linspace(lo, hi, g)
    step = float(t[1] - t[0])
    f = rng.choice(t, n) if grid else rng.uniform(lo, hi, n)
    values = np.clip(t + rng.normal(0.0, 0.05, g), 0.0, 1.0)
    w = rng.uniform(0.5, 2.0, n) if weighted else np.empty(0)
    d, sd, sw, top = lb._deviations(f, w, lo, step, values, not weighted)
    d_ref, sd_ref, sw_ref = _deviations_by_division(f, w, lo, step, values, not weighted)
    np.testing.assert_allclose(d, d_ref, rtol=1e-12, atol=1e-14)
    assert sd == pytest.approx(sd_ref, rel=1e-12, abs=1e-14) and sw == pytest.approx(sw_ref, rel=1e-12)
    assert top == d.max(initial=0.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binned_errors_within_rounding_of_division_pass(seed):
    """ICI, E50, E90 at large N against the same fit with the deviations by division: within 1e-12 relative."""
    f, y, _ = _law(lb.BINNED_FROM + 17 * seed, seed)
    t, values = lb.binned_loess_vertices(f, y)
    d_ref, sd_ref, sw_ref = _deviations_by_division(f, np.empty(0), float(t[0]), float(t[1] - t[0]), values, True)
    got = lb.binned_calibration_errors(f, y)
    assert got["ici"] == pytest.approx(sd_ref / sw_ref, rel=1e-12)
    for key, q in (("e50", 0.5), ("e90", 0.9)):
        assert got[key] == pytest.approx(float(np.quantile(d_ref, q)), rel=1e-12, abs=1e-14)
