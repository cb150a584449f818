"""The fused large-N passes of the clinical set equal the passes they replace bit for bit: the column-by-column
moments pass against the row-chunk pass, and Hosmer–Lemeshow with the binned-loess ICI / E50 / E90 of one column
(five passes, selections by bin counts and by bounded intervals) against the separate functions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import special

from calib_core.inference import classification_clinical as ic
from calib_core.metrics import classification_clinical_column as col
from calib_core.metrics import classification_clinical_moments as cm
from calib_core.metrics.classification_clinical import calibration_errors_of, hosmer_lemeshow_of
from calib_core.metrics.classification_loess_binned import BINNED_FROM

_SLOW = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _probs(n: int, k: int, seed: int, kind: str, dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
    """Softmax rows of several shapes: smooth, ties (few distinct values), exact 0 / 1 and subnormals."""
    rng = np.random.default_rng(seed)
    p = special.softmax(rng.normal(size=(n, k)) * (4.0 if kind == "sharp" else 2.0), axis=1)
    if kind == "ties":
        p = np.round(p, 2)
    if kind == "edges":
        rows = rng.integers(0, n, n // 50)
        p[rows] = 0.0
        p[rows, rng.integers(0, k, rows.size)] = 1.0
        p[rng.integers(0, n, 20), 0] = 5e-324
        p[rng.integers(0, n, 20), 0] = -0.0
        p[rng.integers(0, n, 20), 0] = 1.0 - 1e-17
    p = p.astype(dtype).astype(np.float64)
    labels = (np.cumsum(p, axis=1) < rng.random(n)[:, None]).sum(1).clip(0, k - 1)
    return p, labels


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


@_SLOW
@given(seed=st.integers(0, 2 ** 16), k=st.sampled_from([1, 2, 10]), n=st.sampled_from([1, 511, 513, 40_000]),
       kind=st.sampled_from(["smooth", "sharp", "ties", "edges"]), f32=st.booleans())
def test_columnwise_moments_pass_equals_row_chunk_pass(seed, k, n, kind, f32):
    p, labels = _probs(n, k, seed, kind, np.float32 if f32 else np.float64)
    eps = 1e-7
    half = float(np.log((1.0 - eps) / eps))
    inv_w = cm.MOMENT_BINS / (2.0 * half)
    lab = labels.astype(np.int64)
    t_old, t_new = np.empty((k, n)), np.empty((k, n))
    old = cm._chunked_pass(p, np.zeros((0, 0)), lab, True, eps, half, inv_w, t_old)
    new = cm._columnwise_pass(p, lab, True, None, eps, half, inv_w, t_new)
    for a, b in zip(old, new, strict=True):
        np.testing.assert_array_equal(_bits(a), _bits(b))
    np.testing.assert_array_equal(_bits(t_old), _bits(t_new))
    if k == 1:  # one column with outcomes: the same as the row-chunk pass
        y = (labels[:, None] == 0).astype(float)
        old = cm._chunked_pass(p, y, np.zeros(0, dtype=np.int64), False, eps, half, inv_w)
        new = cm._columnwise_pass(p, np.zeros(0, dtype=np.int64), False, y, eps, half, inv_w, None)
        for a, b in zip(old, new, strict=True):
            np.testing.assert_array_equal(_bits(a), _bits(b))


def _separate(f: np.ndarray, labels: np.ndarray, k: int):
    y = (labels == k).astype(float)
    return hosmer_lemeshow_of(f, y), calibration_errors_of(f, y)


@_SLOW
@given(seed=st.integers(0, 2 ** 16), kind=st.sampled_from(["smooth", "sharp", "ties", "edges"]),
       k=st.sampled_from([2, 10]), f32=st.booleans(), extra=st.sampled_from([0, 1, 777]))
def test_column_hl_and_errors_equal_the_separate_functions(seed, kind, k, f32, extra):
    p, labels = _probs(BINNED_FROM + extra, k, seed, kind, np.float32 if f32 else np.float64)
    for c in (0, k - 1):
        f = np.ascontiguousarray(p[:, c])
        got = col.column_hl_and_errors(f, labels, c, eps=1e-7, n_groups=10, span=0.75)
        hl, errors = _separate(f, labels, c)
        if got is None:  # degenerate for bins: the caller runs the separate functions
            continue
        assert got[0] == hl
        assert got[1] is None or got[1] == errors
        assert np.isnan(got[0][0]) == np.isnan(hl[0])


def test_column_hl_and_errors_declines_what_it_does_not_cover():
    p, labels = _probs(BINNED_FROM, 3, 0, "smooth")
    f = np.ascontiguousarray(p[:, 0])
    assert col.column_hl_and_errors(f[:-1], labels[:-1], 0, eps=1e-7, n_groups=10, span=0.75) is None  # small N
    g = f.copy()
    g[7] = np.nan
    assert col.column_hl_and_errors(g, labels, 0, eps=1e-7, n_groups=10, span=0.75) is None
    g[7] = np.inf
    assert col.column_hl_and_errors(g, labels, 0, eps=1e-7, n_groups=10, span=0.75) is None
    assert col.column_hl_and_errors(np.full(f.size, 0.3), labels, 0, eps=1e-7, n_groups=10, span=0.75) is None


def test_interval_counts_and_gathers_are_exact_whatever_the_interval():
    rng = np.random.default_rng(3)
    d = np.round(rng.random(5000), 3)  # ties
    for (a0, c0, s0), (a1, c1, s1) in (((0.2, 0.21, 100), (0.0, 1.0, 5000)), ((0.2, 0.21, 5), (0.5, 0.4, 10))):
        out = col._intervals_of(d, a0, c0, s0, a1, c1, s1)
        for (a, c, size), below, pool, m in (((a0, c0, s0), out[0], out[2], out[4]),
                                             ((a1, c1, s1), out[1], out[3], out[5])):
            inside = np.sort(d[(d >= a) & (d <= c)])
            assert below == np.count_nonzero(d < a)
            assert m == inside.size  # more than size: the caller sees it and falls back (the pool is then partial)
            if m <= size:
                np.testing.assert_array_equal(pool, inside)


def test_deviation_pass_gathers_the_wanted_bins():
    rng = np.random.default_rng(4)
    for f in (rng.random(3000), np.round(rng.random(3000), 2), np.repeat([0.1, 0.5], 1500)):
        lo, hi = float(f.min()), float(f.max())
        inv = 64 / (hi - lo)
        b = np.minimum(((f - lo) * inv).astype(np.int64), 63)
        want = np.zeros(64, dtype=np.bool_)
        want[[0, 7, 63]] = True
        size = int(np.count_nonzero(want[b]))
        values = np.linspace(0.1, 0.2, 11)
        d = np.empty(f.size)
        sd, sw, pool, m = col._deviations(f, lo, (hi - lo) / 10, values, lo, inv, want, size, d)
        np.testing.assert_array_equal(pool, np.sort(f[want[b]]))
        assert m == size and sw == f.size


@pytest.mark.parametrize("kind", ["smooth", "edges"])
def test_clinical_columns_labels_path_equals_outcomes_path(kind):
    p, labels = _probs(BINNED_FROM + 5, 4, 11, kind)
    fast = ic.clinical_values_columns(p, None, labels=labels)
    slow = ic.clinical_values_columns(p, (labels[:, None] == np.arange(4)).astype(float))
    for a, b in zip(fast, slow, strict=True):
        assert a.values.keys() == b.values.keys()
        for key in a.values:
            assert _bits(np.array([a.values[key]]))[0] == _bits(np.array([b.values[key]]))[0] or (
                np.isnan(a.values[key]) and np.isnan(b.values[key])), key
        assert (a.notes, a.hl_groups) == (b.notes, b.hl_groups)


_AB = st.one_of(st.floats(-30.0, 30.0), st.sampled_from([0.0, -0.0, 1e29, -1e29, 1e30, 2e30, -1e31, np.nan]))


@settings(max_examples=60, deadline=None)
@given(a=st.lists(_AB, min_size=3, max_size=3), b=st.lists(_AB, min_size=3, max_size=3),
       n=st.sampled_from([1, 50, 3000]), seed=st.integers(0, 100))
def test_moment_kernel_with_empty_bins_equals_numpy_formula(a, b, n, seed):
    """Empty bins are skipped (their terms are +0.0 exactly while |a|, |b| ≤ 1e30): the same bits as the formula."""
    p, labels = _probs(n, 3, seed, "edges" if n > 1000 else "smooth")
    with np.errstate(all="ignore"):
        s = cm.column_sums(p, None, labels=labels)
    cols = np.arange(3)
    with np.errstate(all="ignore"):
        want = cm._moment_sums_numpy(s, cols, np.array(a), np.array(b))
    got = cm.moment_sums(s, cols, np.array(a), np.array(b))
    for g, w in zip(got, want, strict=True):
        assert np.array_equal(g, w, equal_nan=True)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 16), n_bins=st.sampled_from([4, 64, 16384]), lo=st.sampled_from([0.0, 1e-9, 0.3, -2.0]),
       span_width=st.sampled_from([1e-6, 0.01, 1.0, 1e3]), empty=st.floats(0.0, 0.9), span=st.floats(0.05, 1.0))
def test_compiled_radius_bisection_equals_numpy(seed, n_bins, lo, span_width, empty, span):
    """The loess radii by the compiled bisection equal the NumPy bisection (np.interp) bit for bit."""
    from calib_core.metrics import classification_loess_binned as lb

    rng = np.random.default_rng(seed)
    w = np.where(rng.random(n_bins) < empty, 0.0, rng.integers(1, 50, n_bins).astype(float))
    w[0] = max(w[0], 1.0)
    hi = lo + span_width
    width = (hi - lo) / n_bins
    edges = lo + width * np.arange(n_bins + 1)
    cum = np.concatenate([[0.0], np.cumsum(w)])
    t = np.concatenate([np.linspace(lo, hi, 101), [lo - width, hi + 3 * width]])
    target = min(max(float(int(span * w.sum() + 1e-10)), 2.0), w.sum()) - 1e-9 * max(w.sum(), 1.0)
    want = lb._bisect_radii(t, edges, cum, target, hi - lo)
    got = lb._radii(t, edges, cum, float(target), float(hi - lo))
    np.testing.assert_array_equal(_bits(got), _bits(want))


def _group_of_bin_broadcast(lo, hi, width, n_bins, cuts, eps, top_q):
    """The per-bin Hosmer–Lemeshow group counted cut by cut against every bin (the first form; the reference)."""
    edges = lo + width * np.arange(n_bins + 1)
    slack = 1e-6 * width + 1e-15 * (abs(lo) + abs(hi))
    low = np.clip(edges[:-1] - slack, eps, top_q)
    high = np.clip(edges[1:] + slack, eps, top_q)
    g_low = (cuts[None, :] < low[:, None]).sum(axis=1)
    g_high = (cuts[None, :] < high[:, None]).sum(axis=1)
    return np.where(g_low == g_high, g_low, -1).astype(np.int64)


def _deviation_bounds_loop(lo, width, n_bins, t, values):
    """The per-bin bounds of d with the vertices taken one by one (the first form; the reference)."""
    edges = lo + width * np.arange(n_bins + 1)
    g = np.interp(edges, t, values) - edges
    a, b = g[:-1], g[1:]
    dlo = np.where(a * b <= 0.0, 0.0, np.minimum(np.abs(a), np.abs(b)))
    dhi = np.maximum(np.abs(a), np.abs(b))
    gv = values - t
    vb = np.clip(np.floor((t - lo) / width).astype(np.int64), 0, n_bins - 1)
    for j, bj in enumerate(vb):
        sign_change = gv[j] * a[bj] <= 0.0 or gv[j] * b[bj] <= 0.0
        dlo[bj] = 0.0 if sign_change else min(dlo[bj], abs(gv[j]))
        dhi[bj] = max(dhi[bj], abs(gv[j]))
    margin = 1e-9 * np.maximum(dhi, 1e-3)
    return np.maximum(dlo - margin, 0.0), dhi + margin


_CUT = st.one_of(st.floats(0.0, 1.0), st.sampled_from([1e-7, 1.0 - 1e-7, 0.5, 0.25]))


@settings(max_examples=80, deadline=None)
@given(lo=st.floats(0.0, 0.5), span=st.floats(1e-6, 0.5), n_bins=st.sampled_from([1, 7, 64, 1024]),
       cuts=st.lists(_CUT, min_size=1, max_size=12), shuffle=st.booleans())
def test_group_of_bin_equals_cut_by_cut_count(lo, span, n_bins, cuts, shuffle):
    """The per-bin groups by insertion points (sorted cuts) or by the broadcast count (unsorted): the same table."""
    c = np.sort(np.array(cuts)) if not shuffle else np.array(cuts)
    hi = lo + span
    width = (hi - lo) / n_bins
    got = col._group_of_bin(lo, hi, width, n_bins, c, 1e-7, 1.0 - 1e-7)
    np.testing.assert_array_equal(got, _group_of_bin_broadcast(lo, hi, width, n_bins, c, 1e-7, 1.0 - 1e-7))


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_bins=st.sampled_from([1, 3, 50, 16384]),
       n_vertices=st.sampled_from([2, 5, 101]), flat=st.booleans())
def test_deviation_bounds_equal_vertex_by_vertex_loop(seed, n_bins, n_vertices, flat):
    """The vertices' updates of the per-bin bounds by unbuffered minimum / maximum: the loop's bounds, bit for bit
    (several vertices in one bin included)."""
    rng = np.random.default_rng(seed)
    lo, hi = sorted(rng.uniform(0.0, 1.0, 2))
    hi = hi if hi > lo else lo + 0.1
    t = np.linspace(lo, hi, n_vertices)
    values = t + (np.zeros(n_vertices) if flat else rng.normal(0.0, 0.05, n_vertices))
    width = (hi - lo) / n_bins
    got = col._deviation_bounds(lo, width, n_bins, t, values)
    ref = _deviation_bounds_loop(lo, width, n_bins, t, values)
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_array_equal(_bits(g), _bits(r))
