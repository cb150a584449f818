"""The fast paths of the classification point diagnostics equal the one-pass paths they replace.

Row-blocked sums (loess kernel sums, the batched logistic fits' Newton sums) add up in another order: equal to the
one-pass sums to 1e-12 relative; the sort, the class-wise bins and the quantiles are exact (bit for bit).
"""

from __future__ import annotations

import numpy as np
import pytest

from calib_core.metrics import classification_clinical_batch as batch
from calib_core.metrics import classification_loess as lo
from calib_core.metrics.classification_clinical import calibration_errors_of
from calib_core.metrics.classification_rows import ClassificationRows


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("degree", [0, 1])
def test_loess_row_blocks_equal_one_block(monkeypatch, weighted, degree):
    rng = np.random.default_rng(7)
    n = 2500
    f = rng.beta(0.6, 2.5, n)
    y = (rng.random(n) < f).astype(float)
    w = rng.integers(0, 3, n).astype(float) if weighted else None
    one = lo.loess_smooth(f, y, w, degree=degree)
    grid_one = lo.loess_smooth(f, y, w, degree=degree, at=np.linspace(0, 1, 41))
    monkeypatch.setattr(lo, "_BLOCK_FROM", 64)
    monkeypatch.setattr(lo, "_BLOCK_ROWS", 701)  # many blocks, a ragged last one
    blocked = lo.loess_smooth(f, y, w, degree=degree)
    grid_blocked = lo.loess_smooth(f, y, w, degree=degree, at=np.linspace(0, 1, 41))
    # the curve to 1e-12 of its scale (where ŷ is near 0 the local line's cancellation makes any order of the
    # sums differ by ~1e-15 absolute, the one-pass value's own rounding); the clinical values to 1e-12 relative
    assert np.max(np.abs(blocked - one)) <= 1e-12 * np.max(np.abs(one))
    assert np.max(np.abs(grid_blocked - grid_one)) <= 1e-12 * np.max(np.abs(grid_one))
    if degree == 1:
        monkeypatch.setattr(lo, "_BLOCK_FROM", 1 << 16)
        ref = calibration_errors_of(f, y, w)
        monkeypatch.setattr(lo, "_BLOCK_FROM", 64)
        fast = calibration_errors_of(f, y, w)
        for key in ("ici", "e50", "e90"):
            assert abs(fast[key] - ref[key]) <= 1e-12 * abs(ref[key]), key


def test_stable_order_is_the_stable_argsort():
    rng = np.random.default_rng(1)
    for v in (rng.random(1000), np.round(rng.random(1000), 2), np.array([0.5, np.nan, 0.1, np.nan, 0.1]),
              np.zeros(0), np.array([3.0]), np.array([2.0, 2.0, 1.0])):
        assert np.array_equal(lo.stable_order(v), np.argsort(v, kind="stable"))


def test_batched_fits_row_blocks_equal_one_pass(monkeypatch):
    rng = np.random.default_rng(3)
    n, k = 4000, 5
    p = rng.dirichlet(np.ones(k), n)
    labels = np.array([(rng.random() < np.cumsum(row)).argmax() for row in p[:50]])  # a few exact draws
    labels = np.concatenate([labels, (rng.random((n - 50, 1)) < np.cumsum(p[50:], 1)).argmax(1)])
    y = (labels[:, None] == np.arange(k)).astype(float)
    y[:, 4] = 0.0  # one column with one class only: the scalar fit's reason, in both paths
    one = batch.recalibration_columns(p, y)
    monkeypatch.setattr(batch, "BLOCK_FROM", 16)
    monkeypatch.setattr(batch, "_BLOCK_CELLS", 1500)  # ragged row blocks, fewer rows as columns settle
    blocked = batch.recalibration_columns(p, y)
    for fits_one, fits_blocked in zip(one, blocked):
        for a, b in zip(fits_one, fits_blocked):
            assert (a.converged, a.reason, a.n_clipped) == (b.converged, b.reason, b.n_clipped)
            for name in ("intercept", "slope", "intercept_se", "slope_se"):
                u, v = getattr(a, name), getattr(b, name)
                assert (np.isnan(u) and np.isnan(v)) or abs(u - v) <= 1e-12 * max(abs(u), 1e-300), name


@pytest.mark.parametrize("closed", ["right", "left"])
def test_classwise_cells_without_the_cell_array(closed):
    rng = np.random.default_rng(5)
    n, k, m = 3000, 4, 15
    p = rng.dirichlet(np.full(k, 0.4), n)
    p[:40] = np.array([2 / m, 1 / m, 0.5 - 3 / m, 0.5])  # values exactly on edges
    p[40:60] = np.array([1.0, 0.0, 0.0, 0.0])
    y = rng.integers(0, k, n)
    rows = ClassificationRows(y, p, n_bins=m, closed=closed)
    flat = rows.classwise_cells  # the (N, K) cell array, the reference
    outside = (flat % m) != 0
    ri, cell, val = rows.classwise_outside_first
    assert np.array_equal(ri, np.nonzero(outside)[0])
    assert np.array_equal(cell, flat[outside])
    assert np.array_equal(val, p[outside])
    assert np.array_equal(rows._classwise_hits, flat[np.arange(n), y])
    count, s_conf, s_hit = rows.classwise_sums()
    assert np.array_equal(s_hit.ravel(), np.bincount(flat[np.arange(n), y], minlength=k * m).astype(float))
    sim = rows.with_labels(rng.integers(0, k, n))  # new labels: new hit cells
    assert np.array_equal(sim._classwise_hits, flat[np.arange(n), sim.labels])


def test_e50_e90_from_one_partition():
    rng = np.random.default_rng(2)
    f = rng.random(501)
    y = (rng.random(501) < f).astype(float)
    out = calibration_errors_of(f, y)
    d = np.abs(lo.loess_smooth(f, y) - f)
    assert out["e50"] == float(np.quantile(d, 0.5)) and out["e90"] == float(np.quantile(d, 0.9))
