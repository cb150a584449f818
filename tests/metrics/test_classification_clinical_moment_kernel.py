"""The compiled moment sums of the batched logistic fits equal their NumPy formula bit for bit."""

from __future__ import annotations

import numpy as np

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


def test_moment_kernel_equals_numpy_formula() -> None:
    p, y = _softmax_rows(5_000, 3, seed=3)
    s = column_sums(p, None, labels=y)
    rng = np.random.default_rng(4)
    for _ in range(5):
        cols = rng.permutation(3)[: rng.integers(1, 4)]
        a, b = rng.normal(size=cols.size), rng.uniform(-3.0, 3.0, cols.size)
        for got, want in zip(moment_sums(s, cols, a, b), _moment_sums_numpy(s, cols, a, b), strict=True):
            assert np.array_equal(got, want)


def test_slope_fixed_sums_equal_the_full_kernel() -> None:
    p, y = _softmax_rows(5_000, 3, seed=5)
    s = column_sums(p, None, labels=y)
    rng = np.random.default_rng(6)
    for b in (np.ones(3), rng.uniform(-3.0, 3.0, 3)):
        cols = np.arange(3)
        a = rng.normal(size=3) * 3
        full = moment_sums(s, cols, a, b)
        part = moment_sums(s, cols, a, b, mu_and_v_only=True)
        assert np.array_equal(part[0], full[0]) and np.array_equal(part[2], full[2])
        assert all(np.isnan(part[i]).all() for i in (1, 3, 4))
