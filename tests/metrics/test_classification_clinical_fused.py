"""The fused passes of the clinical set equal the per-class path bit for bit (the same sums in the same order, the
order statistics by another exact selection), and the compiled moment sums equal their NumPy formula bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from calib_core.metrics.classification_clinical import (
    HL_GROUPS,
    calibration_errors_of,
    hl_from_sums,
    hosmer_lemeshow_of,
)
from calib_core.metrics.classification_clinical_fused import fused_columns
from calib_core.metrics.classification_clinical_moments import _moment_sums_numpy, column_sums, moment_sums


def _softmax_rows(n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Over-confident softmax probabilities and labels drawn from a tempered softmax (the true law)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 2.0
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    pt = np.exp(z / 1.5 - (z / 1.5).max(1, keepdims=True))
    pt /= pt.sum(1, keepdims=True)
    y = np.minimum((np.cumsum(pt, axis=1) < rng.random(n)[:, None]).sum(1), k - 1)
    return p, y


def _same(a: float, b: float) -> bool:
    return a == b or (np.isnan(a) and np.isnan(b))


@pytest.mark.parametrize("edge", [False, True])
def test_fused_equals_per_class_path(edge: bool) -> None:
    p, y = _softmax_rows(110_000, 4, seed=1)
    if edge:  # probabilities of exactly 0 and 1 (clipped), a column with ties, a class that never occurs
        p[:40, 0], p[40:45, 0] = 0.0, 1.0
        p[:, 1] = np.round(p[:, 1], 2)
        y[y == 3] = 2
    out = fused_columns(p, None, eps=1e-7, n_groups=HL_GROUPS, labels=y)
    ref = column_sums(p, None, eps=1e-7, labels=y)
    for name in ("moments", "events", "events_x", "n_clipped", "z_num", "z_den", "x_ranges"):
        assert np.array_equal(getattr(out.sums, name), getattr(ref, name), equal_nan=True), name
    for k in range(p.shape[1]):
        yk = (y == k).astype(float)
        if yk.min() == yk.max():
            continue
        hl, g = hl_from_sums(*out.hl_sums[k])
        assert (hl, g) == hosmer_lemeshow_of(p[:, k].copy(), yk)
        expected = calibration_errors_of(p[:, k].copy(), yk)
        got = out.errors[k] if out.errors[k] is not None else calibration_errors_of(p[:, k].copy(), yk)
        assert all(_same(got[key], expected[key]) for key in ("ici", "e50", "e90")), (k, got, expected)


def test_fused_with_outcome_matrix_and_without_bins() -> None:
    rng = np.random.default_rng(2)
    f = rng.beta(0.5, 3.0, 70_000)
    y = (rng.random(f.size) < f).astype(float)
    out = fused_columns(f[:, None], y[:, None], eps=1e-7, n_groups=HL_GROUPS, binned=False)
    assert out.errors == [None]
    assert hl_from_sums(*out.hl_sums[0]) == hosmer_lemeshow_of(f, y)
    ref = column_sums(f[:, None], y[:, None])
    assert np.array_equal(out.sums.moments, ref.moments) and np.array_equal(out.sums.z_num, ref.z_num)


def test_moment_kernel_equals_numpy_formula() -> None:
    p, y = _softmax_rows(5_000, 3, seed=3)
    s = column_sums(p, None, labels=y)
    rng = np.random.default_rng(4)
    for _ in range(5):
        cols = rng.permutation(3)[: rng.integers(1, 4)]
        a, b = rng.normal(size=cols.size), rng.uniform(-3.0, 3.0, cols.size)
        for got, want in zip(moment_sums(s, cols, a, b), _moment_sums_numpy(s, cols, a, b), strict=True):
            assert np.array_equal(got, want)
