"""The summariser's fast paths give the numbers of the direct computations, to the bit.

* exact sums through the general path (``mergeable_exact._general_bin_sums``) and the fast one: the same summary;
* σ in [2⁻⁸⁹, 2⁶²): the scaled squares of the sharpness sums are all zeros (their sums are set, not computed);
* every z finite: the rows inside each central interval are counted by complement (n − outside), equal to the
  direct count of |z| ≤ k per σ-bin and per bootstrap block.
"""

from __future__ import annotations

import numpy as np
import pytest

import calib_core as cc
from calib_core.base import mergeable_exact
from calib_core.base.mergeable import bin_by_edges, hash_block
from calib_core.base.predictions import PredictionSet
from calib_core.base.regression import norm_ppf
from calib_core.scale import regression as reg_mod
from calib_core.scale.regression_sharpness import scaled_sums_vanish, scaled_variance_columns
from calib_core.scale.summary import spec_for, summarize


def _gaussian(n: int, seed: int, sigma: np.ndarray | None = None) -> PredictionSet:
    rng = np.random.default_rng(seed)
    mu = rng.standard_normal(n)
    sd = np.exp(0.5 * rng.standard_normal(n)) if sigma is None else sigma
    y = mu + 1.1 * sd * rng.standard_normal(n)
    return PredictionSet(task="regression", y=y, dist=cc.Gaussian(mu, sd), layout="gaussian",
                         group=np.where(rng.random(n) < 0.3, "a", "b"), row_number=np.arange(1, n + 1))


def _same(a, b) -> bool:
    if a.parts.keys() != b.parts.keys():
        return False
    for key, part in a.parts.items():
        if part.keys() != b.parts[key].keys():
            return False
        for name, x in part.items():
            y = b.parts[key][name]
            if x.dtype == object:
                if [int(v) for v in x.reshape(-1)] != [int(v) for v in y.reshape(-1)]:
                    return False
            elif not np.array_equal(x, y, equal_nan=True):
                return False
    return True


@pytest.mark.parametrize("special", [False, True])
def test_fast_summary_equals_the_general_exact_sums(monkeypatch: pytest.MonkeyPatch, special: bool) -> None:
    sigma = None
    if special:  # σ = 0 (no finite z), tiny and huge σ: the general paths inside the fast ones
        sigma = np.exp(0.5 * np.random.default_rng(1).standard_normal(20_000))
        sigma[:4] = [0.0, 1e-300, 1e300, 2.0 ** -600]
    data = _gaussian(20_000, 3, sigma)
    spec = spec_for(data)
    fast = summarize(data, spec=spec)
    monkeypatch.setattr(reg_mod, "exact_bin_sums_columns",
                        lambda i, n, cols: [mergeable_exact._general_bin_sums(i, n, c) for c in cols])
    monkeypatch.setattr(reg_mod, "scaled_sums_vanish", lambda lo, hi: False)
    assert _same(fast, summarize(data, spec=spec))


def test_scaled_squares_vanish_exactly_on_the_range_said() -> None:
    lo, hi = 2.0 ** -89, np.nextafter(2.0 ** 62, 0.0)
    inside = np.concatenate([[lo, hi, 1.0], np.exp(np.random.default_rng(2).uniform(np.log(lo), np.log(hi), 1000))])
    assert scaled_sums_vanish(float(inside.min()), float(inside.max()))
    assert all(not v.any() for _, v in scaled_variance_columns(inside))
    for edge in (np.nextafter(lo, 0.0), 2.0 ** 62.5):  # just below: (σ·2⁶⁰⁰)² is finite; above: (σ·2⁻⁶⁰⁰)² ≠ 0
        assert not scaled_sums_vanish(min(edge, 1.0), max(edge, 1.0))
        assert any(v.any() for _, v in scaled_variance_columns(np.array([edge])))
    assert not scaled_sums_vanish(1.0, 2.0 ** 62)  # the bound is strict (2⁶² itself still squares to 0)
    assert not scaled_sums_vanish(float("nan"), 1.0)


def test_inside_counts_by_complement_equal_the_direct_counts() -> None:
    data = _gaussian(30_000, 4)
    spec = spec_for(data, by_group=False)
    part = summarize(data, spec=spec, by_group=False).parts[next(iter(summarize(data, spec=spec,
                                                                                by_group=False).parts))]
    ids = np.asarray(data.row_number, dtype=np.int64)
    sigma = np.asarray(data.dist.std())
    edges = spec.sigma_edges_for(*next(iter((m, g) for m, g, _, _ in spec.sigma_edges)))
    b = bin_by_edges(sigma, ids, edges[0], edges[1])
    blk = hash_block(ids, spec.seed, spec.n_blocks)
    abs_z = np.abs((data.y - np.asarray(data.dist.mean())) / sigma)
    first = 10  # block columns: 10 base columns, then (inside, width, score) per level
    for i, c in enumerate(spec.coverages):
        inside = abs_z <= float(norm_ppf(0.5 + c / 2.0))
        tag = f"{100 * c:g}"
        assert np.array_equal(part[f"in:{tag}"], np.bincount(b[inside], minlength=spec.n_bins))
        assert np.array_equal(part["blk"][:, first + 3 * i], np.bincount(blk[inside], minlength=spec.n_blocks))
