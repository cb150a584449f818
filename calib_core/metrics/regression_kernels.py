"""Compiled kernels of the regression point diagnosis: every order-free mean of a Gaussian forecast set in two
passes over the rows, with NumPy's own pairwise summation.

``np.mean(x)`` sums x pairwise (blocks of at most 128 values summed with eight accumulators, then halves added
recursively; Higham 2002, §4.2) and divides by N.  :func:`fused_sums` evaluates up to 20 per-row expressions of
(ε, z, σ) at once, block by block, and sums each one over exactly the same tree: where a per-row value is the one
NumPy computes (the same IEEE operations in the same order; the transcendental parts — log σ, exp(−z²/2), log|z|
— are computed by NumPy and passed in, Φ(z) by :func:`norm_cdf_rows` with SciPy's bits), the mean is bit for bit
NumPy's, without one temporary array per operator.  The interval-score penalties, which NumPy took as ``einsum`` dot
products, become pairwise sums of the products: equal to rounding (≤ N·2⁻⁵³ relative, in practice ~1e-16).

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
from .regression_sorts import equal_count_bins_from_ranks, packed_argsort_ranks, rank_d2

__all__ = ["FIRST_PASS", "SECOND_PASS", "fused_sums", "pairwise_sum", "sigma_bin_sums", "rank_difference_squares",
           "norm_cdf_rows", "warm_up"]

#: Columns of the first pass; then one interval-score penalty per central interval.
FIRST_PASS = ("nll", "crps", "sq_err", "abs_err", "var", "sigma", "z", "z2", "log_z2", "phi",
              "wis_dispersion", "wis_overprediction", "wis_underprediction", "wis")

#: Columns of the second pass.
SECOND_PASS = ("sigma_dev2", "d2", "d3", "d4")

_BLOCK = 128  # NumPy's PW_BLOCKSIZE


@compiled_kernel
def _row_sums(mode, eps, z, sigma, log_sigma, u, e, log_abs_z, ks, cut, tables, par, out_counts):  # pragma: no cover
    """Pairwise sums of the per-row expressions of ``mode`` (module docstring) over NumPy's summation tree.

    Every input is checked to have the rows of z, and every leaf works on slices of exactly its rows: the compiler
    then proves the indices in bounds and drops the per-index checks from the vectorised loops."""
    n = z.shape[0]
    nk = ks.shape[0]
    n_cut = cut.shape[0]
    if (eps.shape[0] != n or sigma.shape[0] != n or log_sigma.shape[0] != n or u.shape[0] != n or e.shape[0] != n
            or log_abs_z.shape[0] != n or tables.shape[1] != n_cut + 1):
        raise IndexError("fused_sums: arrays of different lengths")
    q = (14 + nk) if mode == 0 else 4
    lanes = np.empty((q, 16, 8))  # a leaf's row values, column by column (16 blocks of NumPy's 8 accumulators)
    buf = lanes.reshape((q, 128))
    pos = np.empty(128, np.int64)
    sums = np.zeros((64, q))
    lo_stack = np.zeros(64, np.int64)
    n_stack = np.zeros(64, np.int64)
    phase = np.zeros(64, np.int64)
    t_slo, t_clo, t_chi, t_shi = tables[0], tables[1], tables[2], tables[3]
    c_nll, c_crps, sqrt_2pi, c_disp, denom, median, z_max, m_sigma, m_z = (
        par[0], par[1], par[2], par[3], par[4], par[5], par[6], par[7], par[8])
    n_zero = 0
    n_big = 0
    n_bad_wis = 0
    n_neg = 0
    n_nonpos = 0
    depth = 0
    n_stack[0] = n
    finished = n == 0
    while not finished:
        lo = lo_stack[depth]
        m = n_stack[depth]
        if m > 128:
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
        hi = lo + m
        zb = z[lo:hi]
        eb = eps[lo:hi]
        sb = sigma[lo:hi]
        m = zb.shape[0]
        if eb.shape[0] != m or sb.shape[0] != m or m > 128:
            raise IndexError("fused_sums: a leaf outside the rows")
        if mode == 0:
            lsb = log_sigma[lo:hi]
            ub = u[lo:hi]
            exb = e[lo:hi]
            lab = log_abs_z[lo:hi]
            pb = pos[:m]
            if lsb.shape[0] != m or ub.shape[0] != m or exb.shape[0] != m or lab.shape[0] != m:
                raise IndexError("fused_sums: a leaf outside the rows")
            b_nll, b_crps, b_sq, b_abs, b_var, b_sig, b_z, b_z2, b_lz, b_phi = (
                buf[0, :m], buf[1, :m], buf[2, :m], buf[3, :m], buf[4, :m], buf[5, :m], buf[6, :m], buf[7, :m],
                buf[8, :m], buf[9, :m])
            b_disp, b_over, b_under, b_wis = buf[10, :m], buf[11, :m], buf[12, :m], buf[13, :m]
            for j in range(m):
                zi = zb[j]
                b_nll[j] = (lsb[j] + c_nll) + (0.5 * zi) * zi
                b_z[j] = zi
                b_z2[j] = zi * zi
                b_lz[j] = lab[j] * 2.0
                phi = exb[j] / sqrt_2pi
                b_phi[j] = phi
                b_crps[j] = ((((2.0 * ub[j]) - 1.0) * zi + 2.0 * phi) - c_crps) * sb[j]
                ei = eb[j]
                s = sb[j]
                b_sq[j] = ei * ei
                b_abs[j] = abs(ei)
                b_var[j] = s * s
                b_sig[j] = s
            for j in range(m):
                zi = zb[j]
                ei = eb[j]
                n_zero += zi == 0.0
                n_big += abs(zi) > z_max
                n_neg += ei < 0.0
                n_nonpos += ei <= 0.0
            for j in range(m):
                pb[j] = 0
            for h in range(n_cut):
                ch = cut[h]
                for j in range(m):
                    pb[j] += ch <= zb[j]
            for j in range(m):
                zi = zb[j]
                if zi != zi:
                    pb[j] = n_cut
            for j in range(m):
                a = min(max(pb[j], 0), n_cut)
                ei = eb[j]
                s = sb[j]
                disp = s * c_disp
                over = t_slo[a] * s - t_clo[a] * ei
                under = t_chi[a] * ei - t_shi[a] * s
                if median != 0.0:
                    half = ei * 0.5
                    over -= min(half, 0.0)
                    under += max(half, 0.0)
                over /= denom
                under /= denom
                b_disp[j] = disp
                b_over[j] = over
                b_under[j] = under
                w = (disp + over) + under
                b_wis[j] = w
                n_bad_wis += not abs(w) < np.inf
            for c in range(nk):
                kc = ks[c]
                b_pen = buf[14 + c, :m]
                for j in range(m):
                    b_pen[j] = sb[j] * max(abs(zb[j]) - kc, 0.0)
        else:
            b0, b1, b2, b3 = buf[0, :m], buf[1, :m], buf[2, :m], buf[3, :m]
            for j in range(m):
                dv = sb[j] - m_sigma
                b0[j] = dv * dv
                d = zb[j] - m_z
                d2 = d * d
                b1[j] = d2
                b2[j] = d2 * d
                b3[j] = d2 * d2
        # NumPy's leaf sum of every column: m < 8 in sequence; else eight accumulators over blocks of 8, combined
        # ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the remaining m mod 8 values in sequence
        nb = m // 8
        full = nb * 8
        for c in range(q):
            col = buf[c, :m]
            if m < 8:
                res = 0.0
                for j in range(m):
                    res += col[j]
            else:
                blk = lanes[c, :nb]
                a0, a1, a2, a3, a4, a5, a6, a7 = blk[0, 0], blk[0, 1], blk[0, 2], blk[0, 3], blk[0, 4], blk[0, 5], \
                    blk[0, 6], blk[0, 7]
                for b in range(1, blk.shape[0]):
                    a0 += blk[b, 0]
                    a1 += blk[b, 1]
                    a2 += blk[b, 2]
                    a3 += blk[b, 3]
                    a4 += blk[b, 4]
                    a5 += blk[b, 5]
                    a6 += blk[b, 6]
                    a7 += blk[b, 7]
                res = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
                for j in range(full, m):
                    res += col[j]
            sums[depth, c] = res
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
    res_out = np.zeros(q)
    if n > 0:
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


#: Cody's rational approximations of erf and erfc as Cephes has them (Moshier 1989, ``ndtr.c``), which SciPy's
#: ``special.erfc`` evaluates: numerators and denominators, highest power first (the denominators' leading 1 implied).
_ERFC_P = (2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0, 4.86371970985681366614E1,
           1.96520832956077098242E2, 5.26445194995477358631E2, 9.34528527171957607540E2, 1.02755188689515710272E3,
           5.57535335369399327526E2)
_ERFC_Q = (1.32281951154744992508E1, 8.67072140885989742329E1, 3.54937778887819891062E2, 9.75708501743205489753E2,
           1.82390916687909736289E3, 2.24633760818710981792E3, 1.65666309194161350182E3, 5.57535340817727675546E2)
_ERFC_R = (5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0, 6.16021097993053585195E0,
           7.40974269950448939160E0, 2.97886665372100240670E0)
_ERFC_S = (2.26052863220117276590E0, 9.39603524938001434673E0, 1.20489539808096656605E1, 1.70814450747565897222E1,
           9.60896809063285878198E0, 3.36907645100081516050E0)
_ERF_T = (9.60497373987051638749E0, 9.00260197203842689217E1, 2.23200534594684319226E3, 7.00332514112805075473E3,
          5.55923013010394962768E4)
_ERF_U = (3.35617141647503099647E1, 5.21357949780152679795E2, 4.59432382970980127987E3, 2.26290000613890934246E4,
          4.92673942608635921086E4)
_MAXLOG = 7.09782712893383996732E2


@compiled_kernel
def _ndtr_rows(z, coef, out):  # pragma: no cover
    """out = ½·erfc(−z/√2) row by row, erfc evaluated as Cephes/SciPy do (same operations in the same order).

    Blocks of 1,024 rows: the central branch (|z|/√2 < 1, a rational function of z²) is computed for every row of the
    block in one branch-free loop that also notes the rows outside it; those (about one in six for Gaussian z) are
    then overwritten by the tail branch (exp and a second rational function).  Each row's value is that of its own
    branch, so the bits do not change; only the unpredictable branch is gone from the main loop."""
    n = z.shape[0]
    if out.shape[0] != n or coef.shape[0] != 46:
        raise IndexError("norm_cdf_rows: arrays of different lengths")
    cp, cq, cr, cs, ct, cu = coef[0:9], coef[9:17], coef[17:23], coef[23:29], coef[29:34], coef[34:39]
    maxlog, sqrt2 = coef[39], coef[40]
    t0, t1, t2, t3, t4 = ct[0], ct[1], ct[2], ct[3], ct[4]
    u0, u1, u2, u3, u4 = cu[0], cu[1], cu[2], cu[3], cu[4]
    tail = np.empty(1024, np.int64)
    for lo in range(0, n, 1024):
        zb = z[lo:lo + 1024]
        ob = out[lo:lo + 1024]
        m = zb.shape[0]
        if ob.shape[0] != m:
            raise IndexError("norm_cdf_rows: a block outside the rows")
        k = 0
        for i in range(m):  # 1 − erf(a), erf(a) = a·T(a²)/U(a²) (odd: erf(a) = −erf(−a) gives the same bits)
            a = (-zb[i]) / sqrt2
            zz = a * a
            p = (((t0 * zz + t1) * zz + t2) * zz + t3) * zz + t4
            qq = ((((zz + u0) * zz + u1) * zz + u2) * zz + u3) * zz + u4
            ob[i] = (1.0 - a * p / qq) * 0.5
            tail[k] = i
            k += not (abs(a) < 1.0)  # |a| ≥ 1 or NaN: the tail branch below
        for j in range(k):
            i = tail[j]
            a = (-zb[i]) / sqrt2
            if a != a:
                y = np.nan  # SciPy's quiet NaN
            else:
                x = -a if a < 0.0 else a
                t = -a * a
                if t < -maxlog:
                    y = 2.0 if a < 0.0 else 0.0
                else:
                    t = np.exp(t)
                    if x < 8.0:
                        p = cp[0]
                        for c in range(1, 9):
                            p = p * x + cp[c]
                        qq = x + cq[0]
                        for c in range(1, 8):
                            qq = qq * x + cq[c]
                    else:
                        p = cr[0]
                        for c in range(1, 6):
                            p = p * x + cr[c]
                        qq = x + cs[0]
                        for c in range(1, 6):
                            qq = qq * x + cs[c]
                    y = (t * p) / qq
                    if a < 0.0:
                        y = 2.0 - y
                    if y == 0.0:
                        y = 2.0 if a < 0.0 else 0.0
            ob[i] = y * 0.5


_NDTR_COEF = np.array(_ERFC_P + _ERFC_Q + _ERFC_R + _ERFC_S + _ERF_T + _ERF_U
                      + (_MAXLOG, float(np.sqrt(2.0)), 0.0, 0.0, 0.0, 0.0, 0.0))


def norm_cdf_rows(z: np.ndarray) -> np.ndarray:
    """Φ(z) = ½·erfc(−z/√2) of every row in one compiled loop: the same bits as
    :func:`calib_core.base.regression.norm_cdf` (SciPy's ``special.erfc``, Cephes's rational approximations, whose
    steps and constants it repeats; ``exp`` is the C library's in both), without the ufunc's temporaries.

    Parameters
    ----------
    z : ndarray of shape (n,)
        Points.

    Returns
    -------
    ndarray of shape (n,)
        Φ(z).

    References
    ----------
    Cody, W. J. (1969). Rational Chebyshev approximations for the error function. Mathematics of Computation
    23(107), 631–637.

    Moshier, S. L. (1989). Methods and Programs for Mathematical Functions. Ellis Horwood.

    Examples
    --------
    >>> norm_cdf_rows(np.array([0.0, 1.0, -40.0])).tolist()
    [0.5, 0.8413447460685429, 0.0]
    """
    z = _contiguous(z)
    out = np.empty_like(z)
    _ndtr_rows(z, _NDTR_COEF, out)
    return out


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
    norm_cdf_rows(np.zeros(2))
    _, rank = packed_argsort_ranks(np.array([2.0, 1.0]), absolute=True)
    packed_argsort_ranks(np.array([2.0, 1.0]))
    rank_d2(rank, rank)
    equal_count_bins_from_ranks(rank, 1)
