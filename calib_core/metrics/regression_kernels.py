"""Compiled kernels of the regression point diagnosis: every order-free mean of a Gaussian forecast set in two
passes over the rows, with NumPy's own pairwise summation.

``np.mean(x)`` sums x pairwise (blocks of at most 128 values summed with eight accumulators, then halves added
recursively; Higham 2002, §4.2) and divides by N.  :func:`fused_sums` evaluates up to 20 per-row expressions of
(ε, z, σ) at once, block by block, and sums each one over exactly the same tree: where a per-row value is the one
NumPy computes (the same IEEE operations in the same order; the transcendental parts — log σ, Φ(z), exp(−z²/2),
log|z| — are computed by NumPy and passed in), the mean is bit for bit NumPy's, without one temporary array per
operator.  The interval-score penalties, which NumPy took as ``einsum`` dot products, become pairwise sums of the
products: equal to rounding (≤ N·2⁻⁵³ relative, in practice ~1e-16).

Expressions of the first pass (``mode = 0``), column by column (``FIRST_PASS``):

* ``nll``: (log σ + ½log 2π) + (½z)·z (Gneiting & Raftery 2007);
* ``crps``: ((2Φ(z) − 1)·z + 2φ(z) − 1/√π)·σ, φ(z) = exp(−z²/2)/√(2π) (Gneiting & Raftery 2007, eq. 21);
* ``sq_err`` ε², ``abs_err`` |ε|, ``var`` σ², ``sigma`` σ, ``z``, ``z2`` z², ``log_z2`` 2·log|z|, ``phi`` φ(z);
* the weighted interval score at the 23 hub levels in closed form (Bracher et al. 2021; the formulas of
  :func:`calib_core.metrics.regression_wis._gaussian_wis`): ``wis_dispersion`` σ·c, ``wis_overprediction``
  (S_lo(p)·σ − C_lo(p)·ε − min(ε/2, 0))/(K + ½), ``wis_underprediction`` (C_hi(p)·ε − S_hi(p)·σ + max(ε/2, 0))/(K + ½)
  and their sum, p = #{z_τ ≤ z};
* per central interval k = Φ⁻¹((1 + c)/2): the interval-score penalty σ·max(|z| − k, 0).

Second pass (``mode = 1``, the means known): (σ − σ̄)², d², d²·d, d²·d² with d = z − z̄ (the central moments
NumPy's ``std`` and ``mean`` compute).

References
----------
Higham, N. J. (2002). *Accuracy and Stability of Numerical Algorithms* (2nd ed.). SIAM.

Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of the
American Statistical Association 102(477), 359–378.

Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval format.
PLOS Computational Biology 17(2), e1008618.
"""

from __future__ import annotations

import numpy as np

from ..base.compiled import compiled_kernel

__all__ = ["FIRST_PASS", "SECOND_PASS", "fused_sums", "pairwise_sum", "sigma_bin_sums", "rank_difference_squares",
           "warm_up"]

#: Columns of the first pass; then one interval-score penalty per central interval.
FIRST_PASS = ("nll", "crps", "sq_err", "abs_err", "var", "sigma", "z", "z2", "log_z2", "phi",
              "wis_dispersion", "wis_overprediction", "wis_underprediction", "wis")

#: Columns of the second pass.
SECOND_PASS = ("sigma_dev2", "d2", "d3", "d4")

_BLOCK = 128  # NumPy's PW_BLOCKSIZE


@compiled_kernel
def _row_sums(mode, eps, z, sigma, log_sigma, u, e, log_abs_z, ks, cut, tables, par, out_counts):  # pragma: no cover
    """Pairwise sums of the per-row expressions of ``mode`` (module docstring) over NumPy's summation tree."""
    n = z.shape[0]
    nk = ks.shape[0]
    q = (14 + nk) if mode == 0 else 4
    buf = np.empty((q, 136))  # a row stride off 1 KiB: no 4K aliasing between the columns
    pos = np.empty(128, np.int64)
    sums = np.zeros((64, q))
    lo_stack = np.empty(64, np.int64)
    n_stack = np.empty(64, np.int64)
    phase = np.zeros(64, np.int64)
    c_nll, c_crps, sqrt_2pi, c_disp, denom, median, z_max, m_sigma, m_z = (
        par[0], par[1], par[2], par[3], par[4], par[5], par[6], par[7], par[8])
    n_cut = cut.shape[0]
    n_zero = 0
    n_big = 0
    n_bad_wis = 0
    n_neg = 0
    n_nonpos = 0
    depth = 0
    lo_stack[0] = 0
    n_stack[0] = n
    phase[0] = 0
    finished = False
    while not finished:
        lo = lo_stack[depth]
        m = n_stack[depth]
        if m > 128:
            # an inner node: descend into the left half, then the right one (NumPy: n2 = n/2 rounded down to a
            # multiple of 8)
            half_n = m // 2
            half_n -= half_n % 8
            if phase[depth] == 0:
                phase[depth] = 1
                lo_stack[depth + 1] = lo
                n_stack[depth + 1] = half_n
            else:
                phase[depth] = 2
                lo_stack[depth + 1] = lo + half_n
                n_stack[depth + 1] = m - half_n
            depth += 1
            phase[depth] = 0
            continue
        # a leaf: the rows' values into the buffer, column by column (simple loops the compiler vectorises), then
        # NumPy's leaf sum of each column
        if mode == 0:
            for j in range(m):
                zi = z[lo + j]
                buf[0, j] = (log_sigma[lo + j] + c_nll) + (0.5 * zi) * zi
                buf[6, j] = zi
                buf[7, j] = zi * zi
                buf[8, j] = log_abs_z[lo + j] * 2.0
            for j in range(m):
                phi = e[lo + j] / sqrt_2pi
                zi = z[lo + j]
                buf[9, j] = phi
                buf[1, j] = ((((2.0 * u[lo + j]) - 1.0) * zi + 2.0 * phi) - c_crps) * sigma[lo + j]
            for j in range(m):
                ei = eps[lo + j]
                s = sigma[lo + j]
                buf[2, j] = ei * ei
                buf[3, j] = abs(ei)
                buf[4, j] = s * s
                buf[5, j] = s
            for j in range(m):
                zi = z[lo + j]
                ei = eps[lo + j]
                n_zero += zi == 0.0  # counts without branches (the sign of ε is a coin toss)
                n_big += abs(zi) > z_max
                n_neg += ei < 0.0
                n_nonpos += ei <= 0.0
            # position of z among the levels: #{cut ≤ z} (searchsorted, side="right"; NaN above all)
            for j in range(m):
                pos[j] = 0
            for h in range(n_cut):
                ch = cut[h]
                for j in range(m):
                    pos[j] += ch <= z[lo + j]
            for j in range(m):
                zi = z[lo + j]
                if zi != zi:
                    pos[j] = n_cut
            for j in range(m):
                a = pos[j]
                ei = eps[lo + j]
                s = sigma[lo + j]
                disp = s * c_disp
                over = tables[0, a] * s - tables[1, a] * ei
                under = tables[2, a] * ei - tables[3, a] * s
                if median != 0.0:
                    half = ei * 0.5
                    over -= min(half, 0.0)
                    under += max(half, 0.0)
                over /= denom
                under /= denom
                buf[10, j] = disp
                buf[11, j] = over
                buf[12, j] = under
                buf[13, j] = (disp + over) + under
            for j in range(m):
                n_bad_wis += not abs(buf[13, j]) < np.inf
            for c in range(nk):
                kc = ks[c]
                for j in range(m):
                    buf[14 + c, j] = sigma[lo + j] * max(abs(z[lo + j]) - kc, 0.0)
        else:
            for j in range(m):
                dv = sigma[lo + j] - m_sigma
                buf[0, j] = dv * dv
                d = z[lo + j] - m_z
                d2 = d * d
                buf[1, j] = d2
                buf[2, j] = d2 * d
                buf[3, j] = d2 * d2
        for c in range(q):
            if m < 8:
                res = 0.0
                for j in range(m):
                    res += buf[c, j]
            else:
                r0 = buf[c, 0]
                r1 = buf[c, 1]
                r2 = buf[c, 2]
                r3 = buf[c, 3]
                r4 = buf[c, 4]
                r5 = buf[c, 5]
                r6 = buf[c, 6]
                r7 = buf[c, 7]
                full = m - m % 8
                for j in range(8, full, 8):
                    r0 += buf[c, j]
                    r1 += buf[c, j + 1]
                    r2 += buf[c, j + 2]
                    r3 += buf[c, j + 3]
                    r4 += buf[c, j + 4]
                    r5 += buf[c, j + 5]
                    r6 += buf[c, j + 6]
                    r7 += buf[c, j + 7]
                res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
                for j in range(full, m):
                    res += buf[c, j]
            sums[depth, c] = res
        # the node is complete: a left half is kept by its parent, a right half added (and the parent completes)
        complete = True
        while complete:
            if depth == 0:
                finished = True
                break
            parent = depth - 1
            if phase[parent] == 1:
                for c in range(q):
                    sums[parent, c] = sums[depth, c]
                complete = False
            else:
                for c in range(q):
                    sums[parent, c] = sums[parent, c] + sums[depth, c]
            depth = parent
    out_counts[0] = n_zero
    out_counts[1] = n_big
    out_counts[2] = n_bad_wis
    out_counts[3] = n_neg
    out_counts[4] = n_nonpos
    res_out = np.empty(q)
    for c in range(q):
        res_out[c] = 0.0 + sums[0, c]
    return res_out


@compiled_kernel
def _bin_rows(order, bounds, sigma, eps, bins, sums):  # pragma: no cover
    """Equal-count bins from a stable order (bin k = sorted positions bounds[k] … bounds[k+1] − 1; none when
    ``order`` is empty: ``bins`` is given), then per bin the row count, Σσ² and Σε² in row order (np.bincount's)."""
    n_bins = bounds.shape[0] - 1
    if order.shape[0] > 0:
        for k in range(n_bins):
            for p in range(bounds[k], bounds[k + 1]):
                bins[order[p]] = k
    for i in range(bins.shape[0]):
        b = bins[i]
        s = sigma[i]
        e = eps[i]
        sums[0, b] += 1.0
        sums[1, b] += s * s
        sums[2, b] += e * e


def sigma_bin_sums(sigma: np.ndarray, eps: np.ndarray, n_bins: int, *, order: np.ndarray | None = None,
                   bins: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Levi's σ-bins and their sums in one compiled pass each: the equal-count bins of a stable order of σ (bin of
    sorted position i = ⌊i·B/N⌋, as :func:`calib_core.base.binning.equal_count_bins`) or given bins, then per bin
    the count, Σσ² and Σε² summed in row order (bit for bit ``np.bincount``'s sums of σ·σ and ε·ε).

    Parameters
    ----------
    sigma, eps : ndarray of shape (n,)
        σ and ε = y − μ.
    n_bins : int
        B.
    order : ndarray of int, optional
        A stable argsort of σ (equal-count bins are made from it).
    bins : ndarray of int, optional
        The bin of every row (when ``order`` is not given).

    Returns
    -------
    bins : ndarray of int64, shape (n,)
        The bin of every row.
    count, sum_var, sum_sq_err : ndarray of shape (B,)
        Per-bin row count, Σσ² and Σε².

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).

    Examples
    --------
    >>> b, cnt, sv, se = sigma_bin_sums(np.array([3.0, 1.0, 2.0, 4.0]), np.ones(4), 2, order=np.array([1, 2, 0, 3]))
    >>> b.tolist(), cnt.tolist(), sv.tolist()
    ([1, 0, 0, 1], [2.0, 2.0], [5.0, 25.0])
    """
    sigma, eps = _contiguous(sigma), _contiguous(eps)
    n = sigma.shape[0]
    if order is not None:
        bounds = (np.arange(n_bins + 1, dtype=np.int64) * n + n_bins - 1) // n_bins
        out = np.empty(n, dtype=np.int64)
        order_arr = np.ascontiguousarray(order, dtype=np.int64)
    else:
        bounds = np.zeros(n_bins + 1, dtype=np.int64)
        out = np.ascontiguousarray(bins, dtype=np.int64)
        order_arr = np.empty(0, dtype=np.int64)
    sums = np.zeros((3, n_bins))
    _bin_rows(order_arr, bounds, sigma, eps, out, sums)
    return out, sums[0], sums[1], sums[2]


@compiled_kernel
def _rank_d2(order_a, order_b, rank):  # pragma: no cover
    """Σ_i (rank_a(i) − rank_b(i))² in integers, the ranks being the positions in the two orders."""
    n = order_a.shape[0]
    for k in range(n):
        rank[order_a[k]] = k
    total = 0
    for k in range(n):
        d = rank[order_b[k]] - k
        total += d * d
    return total


def rank_difference_squares(order_a: np.ndarray, order_b: np.ndarray) -> float:
    """Σ_i d_i² with d_i the difference of row i's positions in two orders (Spearman's Σd² without ties), summed
    exactly in 64-bit integers (Σd² ≤ N³/3 < 2⁶³ for N < 3·10⁶; beyond that NumPy's float sum).

    Parameters
    ----------
    order_a, order_b : ndarray of int, shape (n,)
        Two permutations of 0 … n − 1 (sort orders).

    Returns
    -------
    float
        Σd².

    References
    ----------
    Spearman, C. (1904). The proof and measurement of association between two things. American Journal of
    Psychology 15(1), 72–101.

    Examples
    --------
    >>> rank_difference_squares(np.array([0, 1, 2]), np.array([2, 1, 0]))
    8.0
    """
    n = np.shape(order_a)[0]
    if n >= 3_000_000:
        ra, rb = np.empty(n, np.int64), np.empty(n, np.int64)
        ra[order_a], rb[order_b] = np.arange(n), np.arange(n)
        d = (ra - rb).astype(float)
        return float(np.dot(d, d))
    rank = np.empty(n, dtype=np.int64)
    return float(_rank_d2(np.ascontiguousarray(order_a, dtype=np.int64), np.ascontiguousarray(order_b, dtype=np.int64),
                          rank))


def _contiguous(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float64)


def fused_sums(eps: np.ndarray, z: np.ndarray, sigma: np.ndarray, u: np.ndarray, ks, wis_tables: tuple | None,
                *, median: bool = True) -> tuple[dict[str, float], dict[str, int]]:
    """Sums of every first- and second-pass column (module docstring) of a Gaussian forecast set with finite z, over
    NumPy's pairwise summation tree (``np.sum`` of the column, bit for bit where the row values are NumPy's).

    Parameters
    ----------
    eps, z, sigma : ndarray of shape (n,)
        ε = y − μ, z = ε/σ (all finite) and σ.
    u : ndarray of shape (n,)
        Φ(z).
    ks : sequence of float
        Half-widths k = Φ⁻¹((1 + c)/2) of the central intervals (in z units).
    wis_tables : tuple or None
        :func:`calib_core.metrics.regression_wis.gaussian_wis_tables` of the hub levels (None: no WIS columns).
    median : bool, default True
        Whether the WIS has its median term.

    Returns
    -------
    sums : dict of str to float
        Column → Σ (``penalty_<i>`` for the interval-score penalties), then the second-pass sums (about the means
        Σσ/n and Σz/n).
    counts : dict of str to int
        ``zero_z`` (rows with z = 0), ``z_square_overflow`` (|z| > √max double), ``wis_nonfinite``, ``eps_negative``,
        ``eps_nonpositive``.

    References
    ----------
    Higham, N. J. (2002). *Accuracy and Stability of Numerical Algorithms* (2nd ed.). SIAM.

    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of the
    American Statistical Association 102(477), 359–378.

    Examples
    --------
    >>> from scipy import special
    >>> z = np.array([-1.0, 0.5, 2.0]); s = np.array([1.0, 2.0, 0.5])
    >>> sums, counts = fused_sums(z * s, z, s, special.ndtr(z), [1.0], None)
    >>> round(sums["z2"], 6), counts["eps_negative"]
    (5.25, 1)
    """
    eps, z, sigma, u = _contiguous(eps), _contiguous(z), _contiguous(sigma), _contiguous(u)
    n = z.shape[0]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_sigma = np.log(sigma)
        e = np.multiply(-0.5, z)  # exp(−z²/2), the steps of norm_pdf
        e *= z
        np.exp(e, out=e)
        log_abs_z = np.abs(z)
        np.log(log_abs_z, out=log_abs_z)
    ks_arr = np.ascontiguousarray(np.asarray(ks, dtype=np.float64).reshape(-1))
    if wis_tables is None:
        cut, tables, c_disp, denom = np.zeros(1), np.zeros((4, 2)), 0.0, 1.0
    else:
        cut, s_lo, c_lo, c_hi, s_hi, disp_factor, denom = wis_tables
        tables = np.ascontiguousarray(np.stack([s_lo, c_lo, c_hi, s_hi]), dtype=np.float64)
        cut, c_disp = _contiguous(cut), disp_factor / denom
    par = np.array([0.5 * np.log(2.0 * np.pi), 1.0 / np.sqrt(np.pi), np.sqrt(2.0 * np.pi), c_disp, denom,
                    1.0 if median else 0.0, float(np.sqrt(np.finfo(float).max)), 0.0, 0.0])
    counts = np.zeros(5, dtype=np.int64)
    first = _row_sums(0, eps, z, sigma, log_sigma, u, e, log_abs_z, ks_arr, cut, tables, par, counts)
    sums = {name: float(first[i]) for i, name in enumerate(FIRST_PASS)}
    for i in range(ks_arr.shape[0]):
        sums[f"penalty_{i}"] = float(first[len(FIRST_PASS) + i])
    par[7], par[8] = sums["sigma"] / n, sums["z"] / n  # np.mean: the pairwise sum divided by n
    second = _row_sums(1, eps, z, sigma, log_sigma, u, e, log_abs_z, ks_arr, cut, tables, par, np.zeros(5, np.int64))
    sums.update({name: float(second[i]) for i, name in enumerate(SECOND_PASS)})
    names = ("zero_z", "z_square_overflow", "wis_nonfinite", "eps_negative", "eps_nonpositive")
    return sums, {k: int(v) for k, v in zip(names, counts)}


def pairwise_sum(x: np.ndarray) -> float:
    """Σ x over NumPy's pairwise summation tree (the sum ``np.sum`` gives, bit for bit, for a contiguous float64
    array): the ``z`` column of :func:`fused_sums`.  For tests.

    Parameters
    ----------
    x : ndarray of shape (n,)
        The values.

    Returns
    -------
    float
        Σ x.

    References
    ----------
    Higham, N. J. (2002). *Accuracy and Stability of Numerical Algorithms* (2nd ed.). SIAM.
    """
    x = _contiguous(x)
    sums, _ = fused_sums(x, x, np.ones_like(x), np.zeros_like(x), [], None)
    return sums["z"]


def warm_up() -> None:
    """Compile (or load from the on-disk cache) every kernel of this module for the argument types the diagnosis
    uses, on a few rows: the dashboard's warm-up thread calls it so that a first Gaussian diagnosis does not wait
    for the compiler (about 4 s of CPU uncached, 0.4 s cached).

    Returns
    -------
    None

    References
    ----------
    Lam, S. K., Pitrou, A. & Seibert, S. (2015). Numba: a LLVM-based Python JIT compiler. *LLVM-HPC '15*, 1–6.
    """
    pairwise_sum(np.zeros(2))
    rank_difference_squares(np.arange(2), np.arange(2))
    sigma_bin_sums(np.ones(2), np.zeros(2), 1, order=np.arange(2))
