"""The compiled Gaussian summariser gives the NumPy path's part bit for bit (every array, every exact integer)."""

from __future__ import annotations

import numpy as np
import pytest

from calib_core.base.mergeable import equal_count_edges
from calib_core.base.regression import Gaussian
from calib_core.scale import regression as R
from calib_core.scale.regression_kernels import gaussian_part
from calib_core.scale.regression_spec import regression_spec


def _rows(n: int, kind: str, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sigma = rng.lognormal(0.0, 0.5, n)
    mean = rng.normal(0.0, 2.0, n)
    y = mean + 1.15 * sigma * rng.standard_normal(n)
    if kind == "ties":  # many rows share σ (ties broken by row id at the edges), y = μ exactly on some rows
        sigma = np.round(sigma, 1) + 0.1
        mean = np.round(mean, 1)
        y = np.where(rng.random(n) < 0.2, mean, np.round(y, 1))
    elif kind == "huge":
        sigma, mean, y = sigma * 1e15, mean * 1e15, y * 1e15
    elif kind == "tiny":
        sigma, mean, y = sigma * 1e-25, mean * 1e-25, y * 1e-25
    elif kind == "nonfinite":
        y[:: max(1, n // 7)] = np.inf
    elif kind == "wide":
        sigma = np.exp(rng.normal(0.0, 40.0, n))
    elif kind == "outliers":  # far tails: every interval penalty, the end PIT and z bins
        y = mean + sigma * rng.standard_t(1.5, n) * 5.0
    return y, mean, sigma


def _same(a: dict, b: dict) -> None:
    assert list(a) == list(b)
    for key in a:
        x, y = np.asarray(a[key]), np.asarray(b[key])
        assert x.dtype == y.dtype and x.shape == y.shape, key
        if x.dtype == object:
            assert [int(v) for v in x.ravel()] == [int(v) for v in y.ravel()], key
        else:
            assert x.tobytes() == y.tobytes(), key


@pytest.mark.parametrize("kind", ["plain", "ties", "huge", "tiny", "nonfinite", "wide", "outliers"])
@pytest.mark.parametrize("n", [1, 16, 3000])
def test_compiled_part_equals_the_numpy_part_bit_for_bit(kind, n, monkeypatch):
    y, mean, sigma = _rows(n, kind, seed=n)
    ids = np.arange(n, dtype=np.int64) * 3 + 7
    spec = regression_spec(layout="gaussian", sigma_edges={}, n_bins=15, seed=11)
    edges = equal_count_edges(sigma, ids, 15) if n > 15 else None
    dist = Gaussian(mean, sigma)
    monkeypatch.setattr(R, "COMPILED_SUMMARISER", False)
    ref = R.summarize_regression_rows(y, dist, ids, spec, edges)
    fast = gaussian_part(y, dist, ids, spec, edges)
    if fast is None:  # rows the compiled loop leaves to the NumPy path: non-finite, σ outside [2⁻⁸⁹, 2⁶²)
        assert kind in ("nonfinite", "wide")
    else:
        _same(ref, fast)
    monkeypatch.setattr(R, "COMPILED_SUMMARISER", True)
    _same(ref, R.summarize_regression_rows(y, dist, ids, spec, edges))
