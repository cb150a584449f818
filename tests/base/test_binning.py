"""The binning engine (``calib_core.base.binning``) and the bootstrap / reference machinery
(``calib_core.base.resampling``, ``report.metric_rows``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from calib_core.base import binning
from calib_core.base.binning import (
    argsort_details,
    bin_sums,
    bins_from_edges,
    counts_from_sorted,
    equal_count_bins,
    equal_mass_edges,
    equal_width_bins,
    stable_argsort,
    stable_argsorts,
)
from calib_core.base.report import METRIC_COLUMNS, metric_rows
from calib_core.base.resampling import bootstrap_intervals, bootstrap_weights, simulate_reference

HYP = settings(max_examples=60, deadline=None, derandomize=True)


# =============================================================================================
# Binning
# =============================================================================================


# -- stable_argsort: packed-key sort must equal NumPy's stable argsort bit for bit ------------------
FLOATS = st.floats(allow_nan=False, width=64)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(FLOATS, min_size=0, max_size=300))
def test_stable_argsort_equals_numpy_stable_argsort(values):
    x = np.array(values, dtype=float)
    order, xs = stable_argsort(x, return_sorted=True)
    assert_array_equal(order, np.argsort(x, kind="stable"))
    assert_array_equal(xs, x[np.argsort(x, kind="stable")])
    found = argsort_details(x)
    assert_array_equal(found.order, order) and found.sorted_values is None
    assert found.distinct == (np.unique(x).size == x.size)  # −0.0 == +0.0 counts as a tie


@pytest.mark.parametrize(
    "make",
    [
        lambda rng: rng.standard_normal(200_000),  # no ties
        lambda rng: np.round(rng.standard_normal(200_000), 2),  # many ties
        lambda rng: 1.0 + rng.integers(0, 50, 200_000) * 2e-16,  # neighbours closer than the packed key resolves
        lambda rng: np.concatenate([[-0.0, 0.0, np.inf, -np.inf, 5e-324, -5e-324], rng.standard_normal(1000)]),
        lambda rng: rng.standard_normal(1000).astype(np.float32),
        lambda rng: np.where(rng.random(1000) < 0.1, np.nan, rng.standard_normal(1000)),  # NaN: NumPy's path
        lambda rng: rng.integers(-5, 5, 1000),  # integers: NumPy's path
    ],
)
def test_stable_argsort_special_inputs(make):
    x = make(np.random.default_rng(7))
    assert_array_equal(stable_argsort(x), np.argsort(x, kind="stable"))
    if not np.isnan(x).any():
        assert argsort_details(x).distinct == (np.unique(x).size == x.size)


def test_stable_argsorts_concurrent_equals_sequential(monkeypatch):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(binning.PARALLEL_SORT_MIN + 10) for _ in range(3)]
    parallel = stable_argsorts(*arrays, threads=3, return_sorted=True)
    for a, (order, xs) in zip(arrays, parallel):
        assert_array_equal(order, np.argsort(a, kind="stable"))
        assert_array_equal(xs, np.sort(a))
    monkeypatch.setattr(binning, "SORT_THREADS", 1)
    for a, order in zip(arrays, stable_argsorts(*arrays)):
        assert_array_equal(order, np.argsort(a, kind="stable"))


@HYP
@given(
    st.integers(0, 500),
    st.integers(1, 30),
    st.integers(0, 2**31 - 1),
    st.booleans(),
    st.sampled_from(["left", "right"]),
)
def test_counts_from_sorted_equal_bincount_of_bins_from_edges(n, n_bins, seed, on_edges, closed):
    rng = np.random.default_rng(seed)
    edges = np.linspace(-1.0, 1.0, n_bins + 1)
    v = rng.choice(edges, n) if on_edges else rng.uniform(-1.5, 1.5, n)
    if n and seed % 3 == 0:
        v[: n // 10] = np.nan  # NaN sorts last and lands in the last bin, as bins_from_edges puts it
    expected = np.bincount(bins_from_edges(v, edges, closed), minlength=n_bins)
    assert_array_equal(counts_from_sorted(np.sort(v), edges, closed), expected)


@HYP
@given(st.integers(1, 400), st.integers(1, 50), st.integers(0, 2**31 - 1), st.booleans())
def test_equal_count_bins_sizes_and_order(n, n_bins, seed, ties):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=n)
    if ties:
        v = np.round(v, 1)
    b = equal_count_bins(v, n_bins)
    assert b.dtype == np.int64 and b.shape == (n,)
    assert b.min() >= 0 and b.max() < n_bins
    counts = np.bincount(b, minlength=n_bins)
    nonempty = counts[counts > 0]
    assert nonempty.max() - nonempty.min() <= 1
    assert nonempty.size == min(n, n_bins)
    # documented assignment: sorted position i goes to ⌊i·B/N⌋, ties broken by row order (stable sort)
    order = np.argsort(v, kind="stable")
    assert_array_equal(b[order], (np.arange(n) * n_bins) // n)
    # a given sort order is reused as is
    assert_array_equal(equal_count_bins(v, n_bins, order=order), b)


@HYP
@given(st.integers(2, 200), st.integers(1, 20), st.integers(0, 2**31 - 1))
def test_equal_count_bins_weights(n, n_bins, seed):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=n)
    assert_array_equal(equal_count_bins(v, n_bins, np.ones(n)), equal_count_bins(v, n_bins))
    assert_array_equal(equal_count_bins(v, n_bins, np.full(n, 3.0)), equal_count_bins(v, n_bins))
    w = rng.integers(0, 4, n).astype(float)
    if w.sum() == 0:
        w[0] = 1
    b = equal_count_bins(v, n_bins, w)
    order = np.argsort(v, kind="stable")
    start = np.cumsum(w[order]) - w[order]
    assert_array_equal(b[order], np.minimum((start * n_bins // w.sum()).astype(int), n_bins - 1))
    # rows start inside [bW/B, (b+1)W/B): a bin holds at most W/B plus one row's weight
    tot = np.bincount(b, weights=w, minlength=n_bins)
    assert tot.max() <= w.sum() / n_bins + w.max() + 1e-9


def test_equal_count_bins_rejects_zero_bins():
    with pytest.raises(ValueError):
        equal_count_bins(np.arange(5.0), 0)


@HYP
@given(st.integers(1, 300), st.integers(1, 30), st.integers(0, 2**31 - 1), st.booleans())
def test_equal_width_closed_left_matches_numpy_histogram(n, n_bins, seed, on_edges):
    rng = np.random.default_rng(seed)
    v = rng.uniform(-3, 5, n)
    if on_edges:  # values exactly on interior edges
        edges0 = np.linspace(v.min(), v.max(), n_bins + 1)
        v = np.concatenate([v, edges0])
    b, edges = equal_width_bins(v, n_bins, closed="left")
    assert_allclose(edges, np.linspace(v.min(), v.max(), n_bins + 1))
    if v.max() > v.min():
        # numpy's histogram: [a, b) bins with the last one closed — netcal's convention
        assert_array_equal(np.bincount(b, minlength=n_bins), np.histogram(v, bins=edges)[0])


def test_bins_from_edges_closed_sides_and_outside_values():
    edges = np.array([0.0, 1.0, 2.0, 3.0])
    v = np.array([-5.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 9.0])
    # closed="right": (a, b] with the first bin closed [0, 1] — Guo's ((m−1)/M, m/M]
    assert_array_equal(bins_from_edges(v, edges, "right"), [0, 0, 0, 0, 1, 1, 2, 2])
    # closed="left": [a, b) with the last bin closed [2, 3]
    assert_array_equal(bins_from_edges(v, edges, "left"), [0, 0, 0, 1, 1, 2, 2, 2])


def test_equal_width_degenerate_and_explicit_range():
    b, edges = equal_width_bins(np.full(7, 2.5), 4)
    assert np.all(b == b[0]) and edges[0] == 2.5 and edges[-1] > 2.5
    b0, _ = equal_width_bins(np.zeros(3), 4)
    assert np.all(b0 == 0)
    b, edges = equal_width_bins(np.array([0.05, 0.5, 0.95]), 10, lo=0.0, hi=1.0)
    assert_allclose(edges, np.linspace(0, 1, 11))
    assert_array_equal(b, [0, 4, 9])  # closed="right": 0.5 is in (0.4, 0.5]


def test_equal_mass_edges_are_quantiles():
    v = np.random.default_rng(1).exponential(size=1000)
    e = equal_mass_edges(v, 8)
    assert_allclose(e, np.quantile(v, np.linspace(0, 1, 9)))
    counts = np.bincount(bins_from_edges(v, e, "right"), minlength=8)
    assert counts.max() - counts.min() <= 2


@HYP
@given(st.integers(1, 200), st.integers(1, 12), st.integers(0, 2**31 - 1), st.booleans())
def test_bin_sums_against_pandas_groupby(n, n_bins, seed, weighted):
    rng = np.random.default_rng(seed)
    b = rng.integers(0, n_bins, n)
    x, y = rng.normal(size=n), rng.normal(size=n)
    w = rng.integers(0, 5, n).astype(float) if weighted else None
    cnt, sx, sy = bin_sums(b, n_bins, x, y, weights=w)
    ww = np.ones(n) if w is None else w
    df = pd.DataFrame({"b": b, "w": ww, "wx": ww * x, "wy": ww * y}).groupby("b").sum().reindex(range(n_bins))
    df = df.fillna(0.0)
    assert_allclose(cnt, df["w"], atol=1e-12)
    assert_allclose(sx, df["wx"], atol=1e-12)
    assert_allclose(sy, df["wy"], atol=1e-12)
    assert cnt.shape == (n_bins,) and cnt.dtype == float


# =============================================================================================
# Bootstrap and perfect-calibration reference
# =============================================================================================


def test_bootstrap_weights_are_multinomial_counts():
    rng = np.random.default_rng(2)
    ws = list(bootstrap_weights(50, 400, rng))
    assert len(ws) == 400
    W = np.array(ws)
    assert W.shape == (400, 50) and W.dtype == float
    assert np.all(W.sum(axis=1) == 50) and np.all(W == np.round(W)) and np.all(W >= 0)
    # Multinomial(n, 1/n): mean 1, variance 1 − 1/n per row; about 1/e of rows absent
    assert abs(W.mean() - 1) < 1e-12
    assert W.var() == pytest.approx(1 - 1 / 50, rel=0.05)
    assert np.mean(W == 0) == pytest.approx((1 - 1 / 50) ** 50, abs=0.02)
    # seeded
    again = np.array(list(bootstrap_weights(50, 400, np.random.default_rng(2))))
    assert_array_equal(W, again)


def test_bootstrap_intervals_mean_matches_normal_theory():
    x = np.random.default_rng(3).normal(5.0, 2.0, 400)

    def stat(w):
        w = np.ones_like(x) if w is None else w
        return {"mean": float(np.dot(w, x) / w.sum()), "max": float(x[w > 0].max())}

    ci = bootstrap_intervals(stat, x.size, n_resamples=1000, level=0.95, seed=0)
    lo, hi = ci["mean"]
    se = x.std(ddof=1) / np.sqrt(x.size)
    assert lo < x.mean() < hi
    assert hi - lo == pytest.approx(2 * 1.96 * se, rel=0.1)
    assert ci == bootstrap_intervals(stat, x.size, n_resamples=1000, level=0.95, seed=0)
    assert ci != bootstrap_intervals(stat, x.size, n_resamples=1000, level=0.95, seed=1)
    narrower = bootstrap_intervals(stat, x.size, n_resamples=1000, level=0.5, seed=0)["mean"]
    assert lo < narrower[0] < narrower[1] < hi
    assert bootstrap_intervals(stat, x.size, n_resamples=0) == {}


def test_bootstrap_intervals_ignore_non_finite_draws():
    calls = iter(range(10_000))

    def stat(w):
        k = next(calls)
        return {"a": float("nan") if k % 2 else 1.0, "b": float("nan")}

    ci = bootstrap_intervals(stat, 10, n_resamples=20, seed=0)
    assert ci["a"] == (1.0, 1.0)
    assert np.isnan(ci["b"][0]) and np.isnan(ci["b"][1])


def test_simulate_reference_mean_and_range():
    def sim(rng):
        return {"u": float(rng.uniform()), "c": 3.0}

    ref = simulate_reference(sim, n_simulations=2000, level=0.9, seed=0)
    mean, lo, hi = ref["u"]
    assert mean == pytest.approx(0.5, abs=0.02)
    assert lo == pytest.approx(0.05, abs=0.02) and hi == pytest.approx(0.95, abs=0.02)
    assert ref["c"] == (3.0, 3.0, 3.0)
    assert simulate_reference(sim, n_simulations=2000, level=0.9, seed=0) == ref
    assert simulate_reference(sim, n_simulations=0) == {}


def test_metric_rows_schema_and_switches():
    x = np.random.default_rng(4).normal(size=100)

    def stat(w):
        w = np.ones_like(x) if w is None else w
        return {"mean": float(np.dot(w, x) / w.sum()), "two": 2.0}

    def sim(rng):
        return {"mean": float(rng.normal(size=100).mean()), "two": 2.0}

    df = metric_rows(stat, 100, sim, model="m", group="g", n_resamples=50, n_simulations=30)
    assert list(df.columns) == METRIC_COLUMNS
    assert list(df["metric"]) == ["mean", "two"]
    assert set(df["model"]) == {"m"} and set(df["group"]) == {"g"}
    row = df.set_index("metric").loc["mean"]
    assert row["value"] == pytest.approx(x.mean())
    assert row["ci_low"] < row["value"] < row["ci_high"]
    assert row["perfect_low"] < row["perfect"] < row["perfect_high"]
    off = metric_rows(stat, 100, sim, n_resamples=0, n_simulations=0)
    assert off[["ci_low", "ci_high", "perfect", "perfect_low", "perfect_high"]].isna().all().all()
    assert_allclose(off["value"], df["value"])
    no_sim = metric_rows(stat, 100, None, n_resamples=10)
    assert no_sim["perfect"].isna().all() and no_sim["ci_low"].notna().all()
