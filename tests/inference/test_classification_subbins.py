"""The one-pass per-bin and sub-bin sums of the binned null equal the NumPy passes they replace, bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from calib_core.base.binning import bin_sums
from calib_core.inference.classification_nulls import BinnedBernoulli
from calib_core.inference.classification_subbins import (
    label_block_counts,
    outside_first_cells,
    split_subbin_sums,
    subbin_sums,
    top_label_bins,
)
from calib_core.metrics.classification import confidence_bins


def _numpy_sums(v, h, idx, edges, n_bins, n_sub):
    """The NumPy passes (``np.bincount`` per sum) of ``BinnedBernoulli`` before the compiled pass."""
    per_bin = np.stack([np.bincount(idx, minlength=n_bins).astype(float),
                        np.bincount(idx, weights=v, minlength=n_bins),
                        np.bincount(idx, weights=h, minlength=n_bins),
                        np.bincount(idx, weights=v * (1.0 - v), minlength=n_bins)])
    lo = np.take(edges, idx)
    width = np.asarray(edges)[1:].take(idx) - lo
    with np.errstate(divide="ignore", invalid="ignore"):
        pos = np.where(width > 0, (v - lo) / width, 0.0)
    with np.errstate(invalid="ignore"):
        sub = np.clip((pos * n_sub).astype(np.int64), 0, n_sub - 1)
    g = idx * n_sub + sub
    size = n_bins * n_sub
    per_sub = np.stack([np.bincount(g, minlength=size).astype(float), np.bincount(g, weights=v, minlength=size),
                        np.bincount(g, weights=v * v, minlength=size)])
    return per_bin, per_sub, sub


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a.view(np.uint8), b.view(np.uint8))  # bit for bit (-0.0, NaN payloads included)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 40), st.sampled_from([1, 2, 8, 32]), st.integers(0, 2**32 - 1),
       st.sampled_from(["uniform", "quantile"]), st.booleans())
def test_subbin_sums_are_the_bincount_sums(n, n_bins, n_sub, seed, strategy, ties):
    rng = np.random.default_rng(seed)
    v = rng.random(n) ** rng.uniform(0.2, 5.0)
    if ties:  # values on the edges, repeated values, 0 and 1
        v = np.round(v * n_bins) / n_bins if seed % 2 else np.round(v, 2)
    h = (rng.random(n) < v).astype(float)
    idx, edges = confidence_bins(v, n_bins, strategy)
    got = subbin_sums(v, h, idx, edges, n_bins, n_sub)
    for a, b in zip(got, _numpy_sums(v, h, idx, edges, n_bins, n_sub)):
        _same(a, b)
    step = 2 ** rng.integers(0, int(np.log2(n_sub)) + 1, size=n_bins)
    g = idx * n_sub + (got[2] & (~(step - 1)).take(idx))
    count, total = split_subbin_sums(v, idx, got[2], step, n_sub)
    _same(count, np.bincount(g, minlength=n_bins * n_sub))
    _same(total, np.bincount(g, weights=v, minlength=n_bins * n_sub))


def test_degenerate_bins_and_values_take_numpy_sub_bins():
    """Zero-width bins (equal-mass edges on repeated values), NaN and values outside their bin get NumPy's sub-bin
    (its truncation, and −2⁶³ clipped to 0 for NaN and huge ratios)."""
    v = np.array([0.5, 0.5, 0.5, np.nan, 0.2, 1e-300, 0.9999999999999999, 0.75])
    h = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0])
    edges = np.array([0.0, 0.5, 0.5, 1e-320 + 0.5, 1.0])
    idx = np.array([0, 1, 2, 3, 0, 3, 3, 2])  # some rows outside their bin: positions < 0 or huge
    for n_sub in (1, 4, 32):
        for a, b in zip(subbin_sums(v, h, idx, edges, 4, n_sub), _numpy_sums(v, h, idx, edges, 4, n_sub)):
            _same(a, b)


def test_the_binned_null_reads_the_same_summaries():
    rng = np.random.default_rng(7)
    v = rng.random(5000) ** 0.3
    h = (rng.random(5000) < v).astype(float)
    idx, edges = confidence_bins(v, 15, "uniform")
    top = BinnedBernoulli(v, h, idx, edges, 15, 16)
    per_bin, per_sub, sub = _numpy_sums(v, h, idx, edges, 15, 16)
    for got, want in zip((top.count, top.s_v, top.s_h, top.var), per_bin):
        _same(got, want)
    assert top.g_n.sum() == 5000 and top.var_ratio >= 1.0 - 1e-12


def _numpy_bins(values, n_bins, closed):
    return confidence_bins(values, n_bins, "uniform", closed)[0]


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 400), st.integers(2, 12), st.integers(1, 31), st.integers(0, 2**32 - 1),
       st.sampled_from(["right", "left"]), st.booleans())
def test_outside_first_cells_are_the_numpy_picks(n, k, n_bins, seed, closed, edgy):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(k, 0.3), size=n)
    if edgy:  # entries on the edges m/M, NaN, 0 and 1
        p = np.where(rng.random(p.shape) < 0.3, np.round(p * n_bins) / n_bins, p)
        p.ravel()[rng.integers(0, p.size, 3)] = [np.nan, 0.0, 1.0]
    flat_p = p.reshape(-1)
    edges = confidence_bins(np.zeros(0), n_bins, "uniform", closed)[1]
    upper = edges[1]
    kept = np.flatnonzero(~(flat_p <= upper) if closed == "right" else ~(flat_p < upper))
    # the NumPy passes of the re-binning (the kept entries of the finest bins, here every entry)
    j = np.arange(flat_p.size)
    picked = np.flatnonzero(~(flat_p <= upper) if closed == "right" else ~(flat_p < upper))
    want_rows = j[picked] // k
    want_p = flat_p.take(picked)
    want_cells = _numpy_bins(want_p, n_bins, closed) + (j[picked] - want_rows * k) * n_bins
    want_count, want_total = bin_sums(want_cells, k * n_bins, want_p)  # as the re-binning summed them
    got = outside_first_cells(flat_p, j, k, n_bins, closed, upper, edges)
    for a, b in zip(got, (want_rows, want_cells, want_p, want_count, want_total)):
        _same(a, b)
    assert kept.size == got[0].size


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 31), st.integers(1, 50), st.integers(0, 2**32 - 1),
       st.sampled_from(["right", "left"]), st.booleans())
def test_label_block_counts_are_the_bincount(n, n_bins, n_blocks, seed, closed, edgy):
    rng = np.random.default_rng(seed)
    k = 5
    p_y = rng.random(n) ** 2
    if edgy:
        p_y = np.where(rng.random(n) < 0.3, np.round(p_y * n_bins) / n_bins, p_y)
        p_y[rng.integers(0, n, 2)] = [np.nan, 1.0]
    y = rng.integers(0, k, n)
    block = rng.integers(0, n_blocks, n)
    live = np.unique(_numpy_bins(p_y, n_bins, closed) + y * n_bins)
    col = np.full(k * n_bins, -1, dtype=np.int64)
    col[live] = np.arange(live.size)
    edges = confidence_bins(np.zeros(0), n_bins, "uniform", closed)[1]
    want = np.bincount(block * live.size + col[_numpy_bins(p_y, n_bins, closed) + y * n_bins],
                       minlength=n_blocks * live.size)
    _same(label_block_counts(p_y, y, block, col, n_bins, live.size, n_blocks, closed, edges), want)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 3000), st.integers(1, 31), st.integers(0, 2**32 - 1), st.sampled_from(["right", "left"]),
       st.booleans())
def test_top_label_bins_are_the_index_and_bin_sums(n, n_bins, seed, closed, edgy):
    rng = np.random.default_rng(seed)
    conf = rng.random(n) ** 0.3
    if edgy and n:
        conf = np.where(rng.random(n) < 0.3, np.round(conf * n_bins) / n_bins, conf)
        conf[rng.integers(0, n, 2)] = [np.nan, 1.0]
    correct = (rng.random(n) < 0.7).astype(float)
    idx, edges = confidence_bins(conf, n_bins, "uniform", closed)
    got_idx, got_sums = top_label_bins(conf, correct, n_bins, closed, edges)
    _same(got_idx, idx)
    for a, b in zip(got_sums, bin_sums(idx, n_bins, conf, correct)):
        _same(a, b)
