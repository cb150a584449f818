"""The block-sum bootstrap's compiled passes against the NumPy formulas they replaced: the same bits."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

import calib_core as cc
from calib_core.base import significance as sig
from calib_core.inference.regression_bootstrap import block_table
from calib_core.metrics.regression import RegressionRows, summary_statistics
from calib_core.metrics.regression_rows import sigma_unit

COVERAGES = (0.5, 0.8, 0.9, 0.95, 0.99)


def numpy_block_table(r: RegressionRows, ids: np.ndarray, g: int, coverages, need_interval_scores: bool):
    """The per-block sums as NumPy computed them before the compiled passes (one bincount per column)."""
    cols: dict[str, np.ndarray] = {}

    def add(name, w=None, index=ids):
        cols[name] = np.bincount(index, weights=w, minlength=g).astype(float)

    add("n")
    add("s_sigma", r.sigma)
    unit = sigma_unit(r.sigma)
    if unit == 1.0:
        add("s_var", r.var)
    else:
        add("s_var", (r.sigma / unit) ** 2)
        add("s_sigma_c", r.sigma / unit)
        add("s_log2_unit", np.full(r.sigma.shape, np.log2(unit)))
    add("s_sq", r.sq_err)
    add("s_abs", np.abs(r.eps))
    add("s_nll", r.neg_logpdf)
    add("s_crps", r.crps)
    zid = ids if r.z_ok is None else ids[r.z_ok]
    z = r.z_finite
    z2 = z * z
    if r.z_ok is None:
        cols["nz"] = cols["n"]
    else:
        add("nz", None, zid)
    add("s_z", z, zid)
    add("s_z2", z2, zid)
    add("s_z3", z2 * z, zid)
    z4 = z2 * z2
    add("s_z4", z4, zid)
    add("s_z5", z4 * z, zid)
    add("s_z6", z4 * z2, zid)
    add("s_z7", z4 * z2 * z, zid)
    add("s_z8", z4 * z4, zid)
    lz, lz_ok = r.__dict__.get("_log_z2") or (None, None)
    if lz is not None:
        lid = zid if lz_ok is None else zid[lz_ok]
        add("n_lz", None, lid)
        add("s_lz", lz, lid)
        add("s_lz2", lz * lz, lid)
    if need_interval_scores:
        for c in coverages:
            tag = f"{100 * c:g}"
            alpha = 1.0 - c
            if r._gaussian:
                k = float(special.ndtri(0.5 + c / 2.0))
                tmp = r.abs_z - k
                np.maximum(tmp, 0.0, out=tmp)
                tmp *= r.sigma
                add(f"s_pen_{tag}", tmp)
            else:
                known = r.__dict__.get("_interval_cache", {}).get(c)
                if known is None:
                    lo, hi = r.dist.interval(c)
                    width = hi - lo
                    known = (None, width, width + (2.0 / alpha) * (np.maximum(lo - r.y, 0) + np.maximum(r.y - hi, 0)))
                add(f"s_width_{tag}", known[1])
                add(f"s_score_{tag}", known[2])
    names = list(cols)
    return np.stack([cols[k] for k in names], axis=1), names


def _rows(kind: str, n: int, seed: int, scale: float = 1.0, zero_sigma: int = 0) -> RegressionRows:
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n) * scale
    sigma = rng.uniform(0.2, 2.0, n) * scale
    sigma[:zero_sigma] = 0.0  # σ = 0: z undefined on these rows (z_ok), log z² too where y = μ
    y = mean + sigma * rng.standard_t(5, n) * 1.2
    y[: zero_sigma // 2] = mean[: zero_sigma // 2]
    if kind == "gaussian":
        dist = cc.Gaussian(mean, sigma)
    elif kind == "quantile":
        levels = np.linspace(0.05, 0.95, 19)
        dist = cc.QuantileSet(levels, mean[:, None] + np.maximum(sigma, 1e-3 * scale)[:, None]
                              * stats.norm.ppf(levels)[None, :])
    else:
        dist = cc.SampleSet(mean[:, None] + sigma[:, None] * rng.standard_normal((n, 12)))
    with np.errstate(all="ignore"):
        rows = RegressionRows(y, dist, pit_seed=0)
        summary_statistics(rows, None)  # fills the caches block_table reads (log z², interval scores)
    return rows


def _assert_same(rows: RegressionRows, n_blocks: int, seed: int, scores: bool = True) -> None:
    ids, g = sig.block_ids(rows.n, n_blocks, np.random.default_rng(seed))
    with np.errstate(all="ignore"):
        got, names = block_table(rows, ids, g, COVERAGES, scores)
        want, want_names = numpy_block_table(rows, ids, g, COVERAGES, scores)
    assert names == want_names
    assert got.flags.c_contiguous and got.dtype == np.float64
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))  # bit for bit, NaN included


@pytest.mark.parametrize("kind", ["gaussian", "quantile", "sample"])
@pytest.mark.parametrize("zero_sigma", [0, 6])
def test_block_table_is_the_numpy_formula_bit_for_bit(kind, zero_sigma):
    _assert_same(_rows(kind, 3_000, 1, zero_sigma=zero_sigma), 1000, 2)


def test_block_table_with_rescaled_sigma_and_row_blocks():
    _assert_same(_rows("gaussian", 800, 3, scale=1e-170), 1000, 4)  # σ² underflows: sums of σ/c; G = N
    _assert_same(_rows("gaussian", 500, 5), 64, 6, scores=False)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(n=st.integers(2, 400), g=st.integers(1, 50), seed=st.integers(0, 10_000), heavy=st.booleans())
def test_block_table_agrees_on_random_sets(n, g, seed, heavy):
    rows = _rows("gaussian", n, seed, scale=1e150 if heavy else 1.0, zero_sigma=seed % 3)
    _assert_same(rows, g, seed)
