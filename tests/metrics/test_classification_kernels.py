"""The compiled row pass of classification equals the NumPy passes it replaces, bit for bit.

Reference: ``np.argmax``, fancy-index gathers, ``uniform_bin_index`` and ``np.bincount`` (the code the row pass
replaced in :class:`ClassificationRows`); values on and next to the bin edges, 0, 1, −0, subnormals, NaN and ±∞.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calib_core.base.binning import bin_sums, bins_from_edges, equal_mass_edges, uniform_bin_index
from calib_core.metrics.classification_kernels import bin_event_sums, row_pass, smooth_node_sums, sorted_quantile_edges
from calib_core.metrics.classification_ratio import TCEBins
from calib_core.metrics.classification_rows import ClassificationRows
from calib_core.metrics.classification_smooth_grid import node_sums, split_nodes


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtype, shape and bits (so −0 ≠ +0), NaN equal to NaN (whatever its payload)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        return bool(np.array_equal(nan, np.isnan(b)) and np.array_equal(a[~nan].view(np.uint64),
                                                                          b[~nan].view(np.uint64)))
    return bool(np.array_equal(a, b))


def _reference(p: np.ndarray, y: np.ndarray, nb: int, closed: str) -> dict[str, np.ndarray]:
    """The NumPy passes: argmax, gathers, uniform_bin_index and bincount."""
    n, k = p.shape
    rows = np.arange(n)
    pred = p.argmax(axis=1)
    conf = p[rows, pred].astype(float)
    correct = (pred == y).astype(float)
    b_top = uniform_bin_index(conf, nb, 0.0, 1.0, closed)
    top = np.stack(bin_sums(b_top, nb, conf, correct))
    cells = uniform_bin_index(p.reshape(-1).astype(float), nb, 0.0, 1.0, closed).reshape(n, k)
    flat = (cells + np.arange(k) * nb).reshape(-1)
    j = np.flatnonzero(cells.reshape(-1) > 0)  # row-major, as np.flatnonzero in the sparse path
    count, s = bin_sums(flat[j], k * nb, p.reshape(-1)[j].astype(float))
    hits = bin_sums(cells[rows, y] + y * nb, k * nb)[0].reshape(k, nb)
    return {"pred": pred, "conf": conf, "correct": correct, "p_label": p[rows, y].astype(float), "bin": b_top,
            "top": top, "count": count.reshape(k, nb), "sum": s.reshape(k, nb), "hits": hits,
            "totals": p.sum(axis=0, dtype=float)}


def _edge_values(nb: int) -> np.ndarray:
    e = np.arange(nb + 1) / nb
    return np.concatenate([e, np.nextafter(e, 2.0), np.nextafter(e, -1.0), [0.0, -0.0, 1.0, 5e-324, 2.2e-308]])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 12), nb=st.integers(1, 40),
       closed=st.sampled_from(["right", "left"]), kind=st.sampled_from(["dirichlet", "edges", "wild", "float32"]))
def test_row_pass_equals_the_numpy_passes(seed, k, nb, closed, kind):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    if kind == "dirichlet":
        p = rng.dirichlet(np.full(k, 0.4), n)
    elif kind == "edges":  # on and one ulp either side of every edge, 0, −0, 1 and subnormals
        p = rng.choice(_edge_values(nb), size=(n, k))
    elif kind == "wild":  # NaN, ±∞ and values outside [0, 1] end up where the binary search puts them
        p = rng.choice(np.concatenate([_edge_values(nb), [np.nan, np.inf, -np.inf, 1.5, -0.25]]), size=(n, k))
    else:
        p = rng.random((n, k)).astype(np.float32)
    y = rng.integers(0, k, n)
    ref = _reference(p, y, nb, closed)
    r = row_pass(p, y, nb, closed)
    assert _same(r.pred, ref["pred"])
    assert _same(r.confidence, ref["conf"])
    assert _same(r.correct, ref["correct"])
    assert _same(r.p_label, ref["p_label"])
    assert _same(r.bin_index, ref["bin"])
    assert _same(r.top_sums, ref["top"])
    count, s = r.classwise_count.copy(), r.classwise_sum.copy()
    count[:, 0] = ref["count"][:, 0]  # the first bin comes from the totals (not summed by the pass)
    s[:, 0] = ref["sum"][:, 0]
    assert _same(count, ref["count"])
    assert _same(s, ref["sum"])
    assert _same(r.classwise_hits, ref["hits"])
    assert _same(r.column_totals, ref["totals"])
    plain = row_pass(p, y, nb, closed, binned=False)
    assert _same(plain.pred, ref["pred"]) and _same(plain.confidence, ref["conf"]) and plain.top_sums is None


def test_row_pass_argmax_rules():
    p = np.array([[0.3, 0.3, 0.2], [0.1, np.nan, np.nan], [np.nan, 0.9, 0.1], [-0.0, 0.0, -1.0], [0.2, 0.2, 0.6]])
    r = row_pass(p, np.array([1, 1, 0, 1, 2]), 5)
    assert r.pred.tolist() == np.argmax(p, axis=1).tolist() == [0, 1, 0, 0, 2]
    assert r.correct.tolist() == [0.0, 1.0, 1.0, 0.0, 1.0]


@pytest.mark.parametrize("closed", ["right", "left"])
@pytest.mark.parametrize("k", [2, 3, 10])
def test_rows_sums_equal_the_numpy_passes(closed, k):
    rng = np.random.default_rng(k)
    n, nb = 5000, 15
    p = rng.dirichlet(np.full(k, 0.3), n)
    p[:50] = rng.choice(_edge_values(nb), size=(50, k))  # rows on the edges too
    y = rng.integers(0, k, n)
    rows = ClassificationRows(y, p, n_bins=nb, closed=closed)
    ref = _reference(p, y, nb, closed)
    count, s_conf, s_hit, edges = rows.sums()
    assert _same(np.stack([count, s_conf, s_hit]), ref["top"])
    assert _same(rows.bin_index, ref["bin"]) and _same(rows.correct, ref["correct"])
    cw_count, cw_conf, cw_hit = rows.classwise_sums()
    first_count = float(n) - ref["count"][:, 1:].sum(axis=1)  # the first bin by complement (unchanged rule)
    first_sum = ref["totals"] - ref["sum"][:, 1:].sum(axis=1)
    assert _same(cw_count[:, 1:], ref["count"][:, 1:]) and _same(cw_count[:, 0], first_count)
    assert _same(cw_conf[:, 1:], ref["sum"][:, 1:]) and _same(cw_conf[:, 0], first_sum)
    assert _same(cw_hit, ref["hits"])
    # the weighted path (bootstrap) with unit weights gives the same bins and counts
    w_count, _, w_hit = rows.classwise_sums(np.ones(n))
    assert _same(w_count, cw_count) and _same(w_hit, cw_hit)
    # other labels (simulated): sums of the new labels, not the cached ones
    y2 = rng.integers(0, k, n)
    other = rows.with_labels(y2)
    assert _same(np.stack(other.sums()[:3]), _reference(p, y2, nb, closed)["top"])
    assert _same(other.classwise_sums()[2], _reference(p, y2, nb, closed)["hits"])
    assert _same(other.nll_rows, ClassificationRows(y2, p, n_bins=nb, closed=closed).nll_rows)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), nb=st.integers(1, 30), n=st.integers(1, 400),
       kind=st.sampled_from(["uniform", "ties", "wild"]))
def test_sorted_quantile_edges_equal_np_quantile(seed, nb, n, kind):
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        v = rng.random(n)
    elif kind == "ties":
        v = rng.choice([0.0, 0.25, 0.5, 1.0, 5e-324], n)
    else:
        v = rng.choice([0.0, 1.0, 1e300, -1e300, np.inf, -np.inf, 0.1], n)
    s = np.sort(v)
    with np.errstate(invalid="ignore"):
        assert _same(sorted_quantile_edges(s, nb), equal_mass_edges(v, nb))
        edges = equal_mass_edges(v, nb)
    if np.isnan(edges).any():
        return
    y = rng.random(n)
    idx = bins_from_edges(v, edges, "right")
    count, events = bin_event_sums(v, y, edges)
    assert _same(count, np.bincount(idx, minlength=nb).astype(np.int64))
    assert _same(events, np.bincount(idx, weights=y, minlength=nb))


@pytest.mark.parametrize("strategy", ["quantile", "uniform"])
def test_tce_bins_equal_the_numpy_passes(strategy):
    rng = np.random.default_rng(2)
    f = np.concatenate([rng.beta(2, 1, 3000), [0.0, 1.0, 0.5, 0.5]])
    y = (rng.random(f.size) < f).astype(float)
    bins = TCEBins(f, y, n_bins=10, strategy=strategy)
    edges = equal_mass_edges(f, 10) if strategy == "quantile" else np.arange(11) / 10
    idx = bins_from_edges(f, edges, "right") if strategy == "quantile" else uniform_bin_index(f, 10)
    assert _same(bins.edges, edges)
    assert _same(bins.idx, idx)
    assert _same(bins.count, np.bincount(idx, minlength=10).astype(np.int64))
    assert _same(bins.events, np.bincount(idx, weights=y, minlength=10))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), log2=st.integers(1, 12), n=st.integers(1, 500),
       kind=st.sampled_from(["uniform", "nodes", "ends"]))
def test_smooth_node_sums_equal_node_sums(seed, log2, n, kind):
    size = 2 ** log2
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        f = rng.random(n)
    elif kind == "nodes":  # on the nodes and one ulp either side
        t = rng.integers(0, size + 1, n) / size
        f = np.clip(np.nextafter(t, rng.choice([-1.0, 2.0], n)) if seed % 2 else t, 0.0, 1.0)
    else:
        f = rng.choice([0.0, 1.0, 5e-324, np.nextafter(1.0, 0.0)], n)
    y = (rng.random(n) < f).astype(float)
    r = y - f
    j, lam = split_nodes(f, size)
    got = smooth_node_sums(f, y, r, size)
    for row, values in enumerate((r, None, y)):
        assert _same(got[row], node_sums(j, lam, values, size))
