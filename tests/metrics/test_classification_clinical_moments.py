"""The clinical set's fused pass at large N: logistic fits from binned logit moments equal the row-by-row batched
Newton fits to 1e-12; Spiegelhalter's sums, the clipped counts and Hosmer–Lemeshow equal their NumPy formulas."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from calib_core.base.compiled import compiled_kernel
from calib_core.inference import classification_clinical as ic
from calib_core.metrics import classification_clinical as mc
from calib_core.metrics import classification_clinical_batch as cb
from calib_core.metrics import classification_clinical_moments as cm
from calib_core.metrics.classification_clinical_fit import clipped_logit

N = 6000  # the fused path is switched on from 2,000 rows here (FUSED_FROM patched): the same code as at 65,536


@compiled_kernel
def _row_loop_pass(p, y, labels, use_labels, eps, half, inv_w, n_bins, order):  # pragma: no cover - compiled
    """The first form of the pass (the C library's log per row, kept as the reference the chunked pass is tested
    against): moments (K, B, M + 1), sums (K, 6): Σy, Σy x, clipped, Z numerator, Z denominator, rows; ranges (K, 6).
    Row blocks of 512 rows (in cache), each column's block summed in registers."""
    n, k_cols = p.shape
    mom = np.zeros((k_cols, n_bins, order + 1))
    sums = np.zeros((k_cols, 6))
    ranges = np.empty((k_cols, 6))
    for k in range(k_cols):
        for j in range(0, 6, 2):
            ranges[k, j] = np.inf
            ranges[k, j + 1] = -np.inf
    width = 1.0 / inv_w
    for start in range(0, n, 512):
        stop = min(start + 512, n)
        for k in range(k_cols):
            s_y = s_yx = clipped = z_num = z_den = 0.0
            lo1, hi1, lo0, hi0, lo, hi = ranges[k, 0], ranges[k, 1], ranges[k, 2], ranges[k, 3], ranges[k, 4], \
                ranges[k, 5]
            for i in range(start, stop):
                pk = p[i, k]
                yk = (1.0 if labels[i] == k else 0.0) if use_labels else y[i, k]
                c = 1.0 - 2.0 * pk
                z_num += (yk - pk) * c
                z_den += c * c * pk * (1.0 - pk)
                q = pk
                if pk < eps:
                    q = eps
                    clipped += 1.0
                elif pk > 1.0 - eps:
                    q = 1.0 - eps
                    clipped += 1.0
                x = np.log(q / (1.0 - q))
                s_y += yk
                s_yx += yk * x
                if yk > 0.0:
                    lo1 = min(lo1, q)
                    hi1 = max(hi1, q)
                if yk < 1.0:
                    lo0 = min(lo0, q)
                    hi0 = max(hi0, q)
                lo = min(lo, q)
                hi = max(hi, q)
                z = (x + half) * inv_w
                b = n_bins - 1 if z >= n_bins - 1 else (int(z) if z > 0.0 else 0)
                d = x - (-half + (b + 0.5) * width)
                d2 = d * d
                mom[k, b, 0] += 1.0  # the moments d⁰ … d⁵ (MOMENT_ORDER = 5), unrolled
                mom[k, b, 1] += d
                mom[k, b, 2] += d2
                mom[k, b, 3] += d2 * d
                mom[k, b, 4] += d2 * d2
                mom[k, b, 5] += d2 * d2 * d
            sums[k, 0] += s_y
            sums[k, 1] += s_yx
            sums[k, 2] += clipped
            sums[k, 3] += z_num
            sums[k, 4] += z_den
            sums[k, 5] += stop - start
            ranges[k, 0], ranges[k, 1], ranges[k, 2], ranges[k, 3], ranges[k, 4], ranges[k, 5] = \
                lo1, hi1, lo0, hi0, lo, hi
    return mom, sums, ranges


def _data(n: int, k: int, slope: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Softmax probabilities of N(0, 2²) logits; labels drawn from softmax(logits · slope) (the true law)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 2.0
    p = special.softmax(z, axis=1)
    truth = special.softmax(z * slope, axis=1)
    labels = (truth.cumsum(1) < rng.random(n)[:, None]).sum(1).clip(0, k - 1)
    p[:5, 0] = 0.0  # probabilities clipped before the logit
    p[5:10, 1] = 1.0
    return p, labels, (labels[:, None] == np.arange(k)).astype(float)


def _rel(a: float, b: float) -> float:
    return 0.0 if a == b or (np.isnan(a) and np.isnan(b)) else abs(a - b) / max(abs(b), 1e-300)


@pytest.mark.parametrize("slope", [0.6, 2.5])
def test_fits_from_moments_equal_row_sums(slope, monkeypatch):
    p, labels, y = _data(N, 4, slope, 0)
    monkeypatch.setattr(cb, "FUSED_FROM", 2000)
    fast_citl, fast_cox = cb.recalibration_columns(p, None, labels=labels)
    monkeypatch.setattr(cb, "FUSED_FROM", 10 ** 12)
    old_citl, old_cox = cb.recalibration_columns(p, y)
    for new, old in zip(fast_citl + fast_cox, old_citl + old_cox):
        for field in ("intercept", "slope", "intercept_se", "slope_se"):
            assert _rel(getattr(new, field), getattr(old, field)) < 1e-12, (field, new, old)
        assert (new.n_clipped, new.separated, new.reason) == (old.n_clipped, old.separated, old.reason)


def test_pass_sums_equal_numpy_formulas():
    p, labels, y = _data(5000, 3, 1.0, 1)
    s = cm.column_sums(p, y)
    c = 1.0 - 2.0 * p
    np.testing.assert_allclose(s.z_num, ((y - p) * c).sum(0), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(s.z_den, (c * c * p * (1 - p)).sum(0), rtol=1e-12)
    x, _ = clipped_logit(p)
    np.testing.assert_allclose(s.events_x, (y * x).sum(0), rtol=1e-12)
    np.testing.assert_array_equal(s.events, y.sum(0))
    np.testing.assert_array_equal(s.n_clipped, ((p < 1e-7) | (p > 1 - 1e-7)).sum(0))
    np.testing.assert_allclose(s.moments[..., 0].sum(1), 5000)
    same = cm.column_sums(p, None, labels=labels)
    for a, b in zip((same.moments, same.z_num, same.events_x), (s.moments, s.z_num, s.events_x)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("use_labels", [True, False])
def test_chunked_pass_equals_row_loop_within_rounding(use_labels):
    """NumPy's vectorised log (chunks of rows) against the C library's log in the row loop: last-bit differences in
    x only — every sum the fits read equal to 1e-12 relative, the counts and ranges exactly."""
    p, labels, y = _data(9000, 4, 1.3, 3)  # two full chunks and a partial one (4,096 rows each)
    eps = 1e-7
    half = float(np.log((1.0 - eps) / eps))
    inv_w = cm.MOMENT_BINS / (2.0 * half)
    lab = labels.astype(np.int64) if use_labels else np.zeros(0, dtype=np.int64)
    yy = np.zeros((0, 0)) if use_labels else y
    new = cm._chunked_pass(p, yy, lab, use_labels, eps, half, inv_w)
    old = _row_loop_pass(p, yy, lab, use_labels, eps, half, inv_w, cm.MOMENT_BINS, cm.MOMENT_ORDER)
    np.testing.assert_array_equal(new[2], old[2])  # the ranges of p̃: no logit involved
    np.testing.assert_array_equal(new[1][:, [0, 2, 3, 4, 5]], old[1][:, [0, 2, 3, 4, 5]])
    np.testing.assert_allclose(new[1][:, 1], old[1][:, 1], rtol=1e-12)  # Σ y x
    np.testing.assert_array_equal(new[0][..., 0].sum(1), old[0][..., 0].sum(1))
    s_new = cm.column_sums(p, yy if not use_labels else None, labels=labels if use_labels else None)
    s_old = cm.ColumnSums(old[0], s_new.centres, *(s_new.events, s_new.events_x, s_new.n_clipped, s_new.z_num,
                                                   s_new.z_den, s_new.x_ranges))
    cols = np.arange(4)
    for a, b in ((np.zeros(4), np.ones(4)), (np.full(4, -0.3), np.full(4, 1.7))):
        for u, v in zip(cm.moment_sums(s_new, cols, a, b), cm.moment_sums(s_old, cols, a, b)):
            np.testing.assert_allclose(u, v, rtol=1e-12)


def test_hosmer_lemeshow_large_n_bit_for_bit(monkeypatch):
    rng = np.random.default_rng(2)
    f = rng.beta(0.5, 3.0, N + 7)
    f[:50] = 0.25  # ties across a cut
    y = (rng.random(f.size) < f).astype(float)
    monkeypatch.setattr(mc, "FUSED_FROM", 2000)
    fast = mc.hosmer_lemeshow_of(f, y)
    monkeypatch.setattr(mc, "FUSED_FROM", 10 ** 12)
    assert fast == mc.hosmer_lemeshow_of(f, y)


def test_clinical_columns_large_n_match_row_path(monkeypatch):
    """Every value of the per-class set (fits, Z, HL; ICI / E50 / E90 binned below: compared on their own test)."""
    p, labels, y = _data(N, 3, 0.7, 3)
    for module in (ic, cb, mc):
        monkeypatch.setattr(module, "FUSED_FROM", 2000)
    fast = ic.clinical_values_columns(p, None, labels=labels)
    monkeypatch.setattr(ic, "FUSED_FROM", 10 ** 12)
    monkeypatch.setattr(cb, "FUSED_FROM", 10 ** 12)
    monkeypatch.setattr(mc, "FUSED_FROM", 10 ** 12)
    old = ic.clinical_values_columns(p, y)
    for a, b in zip(fast, old):
        assert a.notes == b.notes and a.hl_groups == b.hl_groups
        for key in ("calibration_in_the_large", "calibration_slope", "cox_intercept", "spiegelhalter_z",
                    "hosmer_lemeshow"):
            assert _rel(a.values[key], b.values[key]) < 1e-12, key
