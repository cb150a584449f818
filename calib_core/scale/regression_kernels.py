"""The compiled per-partition summariser of Gaussian predictions: every per-row sum of a summary part in one loop.

:func:`calib_core.scale.regression.summarize_regression_rows` builds a part from some thirty NumPy passes over the
rows (one temporary array per quantity, two ``np.bincount`` per exact sum).  For Gaussian predictions whose σ and z
are finite (the usual case) :func:`gaussian_part` computes the same part with NumPy for the transcendental
functions only — Φ(z) (``scipy.special.erfc``), φ(z) (``np.exp``) and log σ (``np.log``), so their bits are those
of the NumPy path — and one compiled loop (:func:`calib_core.base.compiled.compiled_kernel`, GIL released) for the
rest, each row read once:

* the σ-bin of the row (lexicographic (σ, row id) against the inner edges, as ``mergeable.bin_by_edges``) and its
  bootstrap block (SplitMix64 of the row id, as ``mergeable.hash_block``);
* the per-row quantities as the NumPy path computes them — σ², Dekker's rounding error of σ², σ⁴, ε², |ε|, the
  NLL ½log 2π + log σ + ½z·z, the CRPS σ[z(2Φ − 1) + 2φ − 1/√π], z…z⁴, zΦ, φ, the interval penalties σ(|z| − k)₊
  and the WIS parts of the 23 hub levels (``metrics.regression_wis._gaussian_wis``) — the same IEEE operations in
  the same order, so the same doubles;
* their exact sums: each value split into hi (lowest 27 significand bits cleared) and lo = x − hi and added to
  the float sums of its group (cell, sign, biased exponent) — the groups of ``mergeable.exact_bin_sums_columns``'
  fast path, whose sums are exact in any order, turned into the same integers by
  ``mergeable_exact.fast_group_totals``;
* the float sums (bootstrap blocks, Σu per PIT bin, Σz per z bin) added row by row in row order, as
  ``np.bincount`` adds them, so the same doubles; and every count.

A value that the fast path of the exact sums does not take (|x| ≥ 2⁵¹³, non-finite), a row without a finite z or
WIS, or σ outside [2⁻⁸⁹, 2⁶²) stops the loop: the NumPy path then computes the part.  The part equals the NumPy
path's bit for bit (``tests/scale/test_regression_kernels.py`` compares every array).
"""

from __future__ import annotations

import threading

import numpy as np

from ..base.compiled import compiled_kernel
from ..base.mergeable import SummarySpec
from ..base.mergeable_exact import EXACT_UNIT_BITS
from ..base.regression import LOG_2PI, Gaussian, norm_cdf, norm_pdf, norm_ppf
from ..metrics.regression_wis import gaussian_wis_tables, hub_wis_setup
from .regression_sharpness import scaled_sums_vanish
from .regression_values import coverage_tag

__all__ = ["gaussian_part"]

_SPAN = 4099  # groups per cell of the exact sums' fast path (mergeable_exact._SIGNED_SPAN)
_HI_MASK = np.uint64(~((1 << 27) - 1) & 0xFFFFFFFFFFFFFFFF)
_GOLDEN = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_BLOCK_ROWS = 1 << 25
_UNIT_CELLS = 1 << 14

# exact-sum columns, in the order of the part's keys
_BASE = ("sigma", "var", "var_err", "var2", "sq_err", "abs_err", "nll", "crps")
_ZCOLS = ("z", "z2", "z3", "z4", "zu", "phi")
_WIS = ("wis", "wis_dispersion", "wis_overprediction", "wis_underprediction")


@compiled_kernel
def _gaussian_kernel(sigma, eps, z, u, phi, lg, ids, edges, edge_ids, params, ks, cut, wis_tab, pe, starts,
                     to_curve, ze, acc, used, n_b, smin, smax, n_out, blk, blk_pen, blk_out, bins3, pit_le,
                     pit_eq, pit_sum, curve, z_hist, z_sum, zmm):
    """One pass over the rows (module docstring); returns 0, or the 1-based row that needs the NumPy path."""
    n = sigma.shape[0]
    n_edges = edges.shape[0]
    half_log_2pi = params[0]
    inv_sqrt_pi = params[1]
    seed_stream = np.uint64(int(params[2]))
    g = int(params[3])
    nb = int(params[4])
    disp_c = params[5]
    denom = params[6]
    has_med = params[7] != 0.0
    n_cov = ks.shape[0]
    n_cut = cut.shape[0]
    n_pe = pe.shape[0]
    n_ze = ze.shape[0]
    depth = int(params[8])
    ucells = float(starts.shape[0] - 1)
    mask = np.uint64(18446744073575333888)  # 2⁶⁴ − 2²⁷: clears the lowest 27 significand bits
    gold = np.uint64(_GOLDEN)
    m1 = np.uint64(_M1)
    m2 = np.uint64(_M2)
    s30 = np.uint64(30)
    s27 = np.uint64(27)
    s31 = np.uint64(31)
    s52 = np.uint64(52)
    s11 = np.uint64(11)
    stream1 = np.uint64(2) * gold
    stream_seed = (seed_stream + np.uint64(1)) * gold
    n_cols = acc.shape[0] // (2 * 4096 * nb)
    vals = np.empty(n_cols)
    ze0 = ze[0]
    zscale = (n_ze - 1) / (ze[n_ze - 1] - ze[0]) if n_ze > 1 else 0.0
    vbits = vals.view(np.uint64)
    hbits = np.empty(1, dtype=np.uint64)
    hval = hbits.view(np.float64)
    zmin = np.inf
    zmax = -np.inf
    for i in range(n):
        s = sigma[i]
        e = eps[i]
        zi = z[i]
        ui = u[i]
        ph = phi[i]
        rid = ids[i]
        # σ-bin: the number of inner edges (e_k, id_k) ≤ (σ, id)
        b = 0
        for k in range(n_edges):  # branch-free: the comparisons are unpredictable near the edges
            ek = edges[k]
            b += (ek < s) | ((ek == s) & (edge_ids[k] <= rid))
        # bootstrap block: splitmix64(splitmix64(id, 1), seed) → U → ⌊U·G⌋
        h = np.uint64(rid) + stream1
        h ^= h >> s30
        h *= m1
        h ^= h >> s27
        h *= m2
        h ^= h >> s31
        h += stream_seed
        h ^= h >> s30
        h *= m1
        h ^= h >> s27
        h *= m2
        h ^= h >> s31
        uu = float(h >> s11) * (1.0 / 9007199254740992.0)
        blkno = int(uu * g)
        if blkno > g - 1:
            blkno = g - 1
        # per-row quantities, the NumPy path's operations in its order
        var = s * s
        c = 134217729.0 * s
        ah = c - (c - s)
        al = s - ah
        var_err = ((ah * ah - var) + ah * al + al * ah) + al * al
        var2 = var * var
        sq = e * e
        ae = abs(e)
        nll = (lg[i] + half_log_2pi) + (0.5 * zi) * zi
        crps = ((((2.0 * ui) - 1.0) * zi + 2.0 * ph) - inv_sqrt_pi) * s
        z2 = zi * zi
        z3 = z2 * zi
        z4 = z2 * z2
        zu = zi * ui
        # WIS parts (metrics.regression_wis._gaussian_wis): p = #{cut ≤ z}
        p = 0
        for k in range(n_cut):  # #{cut ≤ z}, branch-free (23 comparisons)
            p += cut[k] <= zi
        disp = s * disp_c
        over = wis_tab[0, p] * s - wis_tab[1, p] * e
        under = wis_tab[3, p] * e - wis_tab[2, p] * s
        if has_med:
            t = e * 0.5
            over -= min(t, 0.0)
            under += max(t, 0.0)
        over /= denom
        under /= denom
        total = (disp + over) + under
        if not (np.isfinite(total) and np.isfinite(zi)):
            return i + 1
        vals[0] = s
        vals[1] = var
        vals[2] = var_err
        vals[3] = var2
        vals[4] = sq
        vals[5] = ae
        vals[6] = nll
        vals[7] = crps
        vals[8] = zi
        vals[9] = z2
        vals[10] = z3
        vals[11] = z4
        vals[12] = zu
        vals[13] = ph
        vals[14] = total
        vals[15] = disp
        vals[16] = over
        vals[17] = under
        n_exact = 18
        az = abs(zi)
        for j in range(n_cov):  # branch-free: a row inside the interval adds +0.0 (nothing) to the sums
            out = az > ks[j]
            pen = s * (az - ks[j]) if out else 0.0
            vals[n_exact + j] = pen
            n_out[j, b] += out
            blk_out[j, blkno] += 1.0 if out else 0.0
            blk_pen[j, blkno] += pen
        for j in range(n_exact + n_cov):  # ±0 lands in group 0 or 2048 and adds +0.0 / −0.0 to 0.0: nothing
            x = vals[j]
            bits = vbits[j]
            grp = int(bits >> s52)
            if (grp & 2047) >= 1536:
                return i + 1
            hbits[0] = bits & mask
            hi = hval[0]
            at = 2 * ((grp * n_cols + j) * nb + b)  # group-major: the rows' hot groups share a few pages
            acc[at] += hi
            acc[at + 1] += x - hi
            used[grp] = 1
        # counts, extremes and float sums in row order (np.bincount's order)
        n_b[b] += 1
        if s < smin[b]:
            smin[b] = s
        if s > smax[b]:
            smax[b] = s
        blk[blkno, 0] += 1.0
        blk[blkno, 1] += s
        blk[blkno, 2] += var
        blk[blkno, 3] += sq
        blk[blkno, 4] += ae
        blk[blkno, 5] += nll
        blk[blkno, 6] += crps
        blk[blkno, 8] += zi
        blk[blkno, 9] += z2
        kb = blkno * nb + b
        bins3[kb, 0] += 1.0
        bins3[kb, 1] += var
        bins3[kb, 2] += sq
        # fine PIT bin: #{e < u} (the lookup table of regression._unit_hist, else a binary search)
        if ui >= 1.0 / ucells and ui < 1.0 - 1.0 / ucells:
            kk = starts[int(ui * ucells)]
            for _ in range(depth):
                kk += (kk <= n_pe - 1) & (pe[min(kk, n_pe - 1)] < ui)
        else:
            lo_ = 0
            hi_ = n_pe
            while lo_ < hi_:
                mid = (lo_ + hi_) >> 1
                if pe[mid] < ui:
                    lo_ = mid + 1
                else:
                    hi_ = mid
            kk = lo_
        pit_le[kk] += 1
        pit_eq[kk] += pe[min(kk, n_pe - 1)] == ui
        pit_sum[kk] += ui
        curve[b, to_curve[kk]] += 1
        # z bin: #{e < z}, from the equal-width guess corrected against the edges themselves
        gz = (zi - ze0) * zscale
        lo_ = 0 if not gz > 0.0 else (n_ze if gz >= n_ze else int(gz))
        lo_ += (lo_ < n_ze) & (ze[min(lo_, n_ze - 1)] < zi)  # one step each way, branch-free; more: rare
        lo_ -= (lo_ > 0) & (ze[max(lo_ - 1, 0)] >= zi)
        while lo_ < n_ze and ze[lo_] < zi:
            lo_ += 1
        while lo_ > 0 and not ze[lo_ - 1] < zi:
            lo_ -= 1
        z_hist[lo_] += 1
        z_sum[lo_] += zi
        if zi < zmin:
            zmin = zi
        if zi > zmax:
            zmax = zi
    zmm[0] = zmin
    zmm[1] = zmax
    return 0


_LOCAL = threading.local()


def _scratch(size: int) -> np.ndarray:
    """This thread's accumulator of ``size`` doubles, all zeros (reused: the caller zeroes what it used)."""
    buf = getattr(_LOCAL, "acc", None)
    if buf is None or buf.size != size:
        buf = _LOCAL.acc = np.zeros(size)
    return buf


def _exact_totals(block: np.ndarray, n_cols: int, nb: int) -> list[np.ndarray]:
    """The exact sums (Python ints in units of 2⁻¹¹³⁸) of every column and σ-bin from the group sums of the halves
    (``block``: the accumulator's rows of the groups used).

    Each non-zero group sum v = m·2ᵉ (``np.frexp``; an integer m·2⁵³ times 2^(e − 53)) adds m·2⁵³ · 2^(e − 53 + 1138):
    the integers of ``mergeable_exact.fast_group_totals``, collected from the non-zero entries alone."""
    nz = np.flatnonzero(block)
    m, e = np.frexp(block.reshape(-1)[nz])
    mant = (m * 9007199254740992.0).astype(np.int64)
    rest = nz % (n_cols * nb * 2)
    cell = rest // 2  # column · nb + σ-bin
    out = [0] * (n_cols * nb)
    for c, a, sh in zip(cell.tolist(), mant.tolist(), (e + (EXACT_UNIT_BITS - 53)).tolist(), strict=True):
        out[c] += a << sh
    sums = []
    for j in range(n_cols):
        col = np.empty(nb, dtype=object)
        col[:] = out[j * nb:(j + 1) * nb]
        sums.append(col)
    return sums


def _wis_table() -> tuple[np.ndarray, np.ndarray, float, float, bool] | None:
    """The lookup tables of ``_gaussian_wis`` for the hub levels (:func:`~calib_core.metrics.regression_wis.
    gaussian_wis_tables`) in the kernel's layout: (cut, [s_lo, c_lo, s_hi, c_hi], dispersion factor / denominator,
    denominator, has median); None when that function would not take its Gaussian formula."""
    setup = hub_wis_setup()
    tables = gaussian_wis_tables(*setup)
    if tables is None:
        return None
    cut, s_lo, c_lo, c_hi, s_hi, disp_factor, denom = tables
    return cut, np.stack([s_lo, c_lo, s_hi, c_hi]), disp_factor / denom, denom, setup[3] is not None


def gaussian_part(y: np.ndarray, dist: Gaussian, row_ids: np.ndarray, spec: SummarySpec,
                  sigma_edges: tuple[np.ndarray, np.ndarray] | None) -> dict[str, np.ndarray] | None:
    """The summary part of Gaussian rows by the compiled summariser, or None when the NumPy path must compute it.

    The part of ``regression.summarize_regression_rows`` (same keys in the same order, same dtypes, same bits):
    counts and extremes per σ-bin b, exact Σ_{rows of b} x for x ∈ {σ, σ², err(σ²), σ⁴, ε², |ε|, NLL, CRPS, z, z², z³,
    z⁴, zΦ(z), φ(z), WIS and its parts, σ(|z| − k_c)₊}, the rows inside each central interval, the fine PIT and z
    histograms and the bootstrap-block sums (module docstring).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    dist : Gaussian
        The predictions N(μ, σ²).
    row_ids : ndarray of shape (n,) of int64
        Global row ids.
    spec : SummarySpec
        The grids every chunk shares.
    sigma_edges : (ndarray, ndarray) or None
        The inner equal-count σ edges (values, row ids); None: one σ-bin.

    Returns
    -------
    dict of str to ndarray or None
        The part, or None (a row the compiled loop does not take: non-finite z or WIS, |x| ≥ 2⁵¹³, σ outside
        [2⁻⁸⁹, 2⁶²), more than 2²⁵ rows or 255 σ-bins).

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Gneiting, T., & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       Journal of the American Statistical Association, 102(477), 359–378.
    .. [3] Bracher, J., Ray, E. L., Gneiting, T., & Reich, N. G. (2021). Evaluating epidemic forecasts in an
       interval format. PLOS Computational Biology, 17(2), e1008618.
    .. [4] Neal, R. M. (2015). Fast exact summation using small and large superaccumulators. arXiv:1505.05571.
    .. [5] Lam, S. K., Pitrou, A., & Seibert, S. (2015). Numba: a LLVM-based Python JIT compiler. LLVM-HPC '15, 1–6.
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    n = y.shape[0]
    nb = spec.n_bins
    if n == 0 or n > _BLOCK_ROWS or nb * _SPAN > 1 << 20:
        return None
    wis = _wis_table()
    if wis is None:
        return None
    cut, wis_tab, disp_c, denom, has_med = wis
    sigma = np.ascontiguousarray(dist.std(), dtype=np.float64)
    mean = np.asarray(dist.mean(), dtype=np.float64)
    with np.errstate(all="ignore"):
        smin_all, smax_all = float(sigma.min()), float(sigma.max())
        if not (smin_all > 0.0 and scaled_sums_vanish(smin_all, smax_all)):
            return None
        eps = y - mean
        z = eps / sigma
        u = norm_cdf(z)
        phi = norm_pdf(z)
        lg = np.log(sigma)
    ids = np.ascontiguousarray(row_ids, dtype=np.int64)
    if sigma_edges is None:
        edges, edge_ids = np.zeros(0), np.zeros(0, dtype=np.int64)
    else:
        edges = np.ascontiguousarray(sigma_edges[0], dtype=np.float64)
        edge_ids = np.ascontiguousarray(sigma_edges[1], dtype=np.int64)
    coverages = tuple(spec.coverages)
    ks = np.array([float(norm_ppf(0.5 + c / 2.0)) for c in coverages], dtype=np.float64)
    g = spec.n_blocks
    pe = np.asarray(spec.pit_edges, dtype=np.float64)
    starts = np.searchsorted(pe, np.arange(_UNIT_CELLS + 1) / _UNIT_CELLS, side="left").astype(np.int32)
    depth = int(np.max(np.diff(starts[1:-1]))) if starts.size > 3 else 0
    ce = np.asarray(spec.curve_edges, dtype=np.float64)
    to_curve = np.append(np.searchsorted(ce, pe, side="left"), ce.size + 1).astype(np.int64)
    ze = np.asarray(spec.z_edges, dtype=np.float64)
    params = np.array([0.5 * LOG_2PI, 1.0 / np.sqrt(np.pi), float(int(spec.seed) & 0xFFFFFFFF), float(g), float(nb),
                       disp_c, denom, 1.0 if has_med else 0.0, float(depth)])
    n_cols = len(_BASE) + len(_ZCOLS) + len(_WIS) + len(coverages)
    acc = _scratch(4096 * n_cols * nb * 2)  # (sign and exponent, column, σ-bin, hi | lo), all zeros
    used = np.zeros(4096, dtype=np.uint8)  # the groups (sign and exponent) the loop added to
    n_b = np.zeros(nb, dtype=np.int64)
    smin = np.full(nb, np.inf)
    smax = np.full(nb, -np.inf)
    n_out = np.zeros((len(coverages), nb), dtype=np.int64)
    blk = np.zeros((g, 10 + 3 * len(coverages)))
    blk_pen = np.zeros((len(coverages), g))
    blk_out = np.zeros((len(coverages), g))
    bins3 = np.zeros((g * nb, 3))
    pit_le = np.zeros(pe.size + 1, dtype=np.int64)
    pit_eq = np.zeros(pe.size + 1, dtype=np.int64)
    pit_sum = np.zeros(pe.size + 1)
    curve = np.zeros((nb, ce.size + 1), dtype=np.int64)
    z_hist = np.zeros(ze.size + 1, dtype=np.int64)
    z_sum = np.zeros(ze.size + 1)
    zmm = np.zeros(2)
    try:
        stop = _gaussian_kernel(sigma, np.ascontiguousarray(eps), np.ascontiguousarray(z), np.ascontiguousarray(u),
                                np.ascontiguousarray(phi), np.ascontiguousarray(lg), ids, edges, edge_ids, params, ks,
                                cut, wis_tab, pe, starts, to_curve, ze, acc, used, n_b, smin, smax, n_out, blk,
                                blk_pen, blk_out, bins3, pit_le, pit_eq, pit_sum, curve, z_hist, z_sum, zmm)
    finally:
        groups = np.flatnonzero(used)
        rows = acc.reshape(4096, -1)
        block = rows[groups]
        rows[groups] = 0.0  # the scratch is all zeros again for the next partition of this thread
    if stop:
        return None
    sums = _exact_totals(block, n_cols, nb)
    names = _BASE + _ZCOLS + _WIS
    x = dict(zip(names, sums[: len(names)], strict=True))
    part: dict[str, np.ndarray] = {"n": n_b}
    empty = n_b == 0
    smin[empty] = np.nan
    smax[empty] = np.nan
    part["sigma_min"], part["sigma_max"] = smin, smax
    part["nz"] = n_b.copy()
    for name in _BASE:
        part[f"x:{name}"] = x[name]
    part["x:var_hi"] = np.array([0] * nb, dtype=object)
    part["x:var_lo"] = np.array([0] * nb, dtype=object)
    for name in _ZCOLS:
        part[f"x:{name}"] = x[name]
    blk[:, 7] = blk[:, 0]
    for i, c in enumerate(coverages):
        tag = coverage_tag(c)
        alpha = 1.0 - c
        j = 10 + 3 * i
        part[f"x:pen_{tag}"] = sums[len(names) + i]
        blk[:, j + 1] = 2.0 * ks[i] * blk[:, 1]
        blk[:, j + 2] = blk[:, j + 1] + (2.0 / alpha) * blk_pen[i]
        part[f"in:{tag}"] = n_b - n_out[i]
        blk[:, j] = blk[:, 0] - blk_out[i]
    for name in _WIS:
        part[f"x:{name}"] = x[name]
    part["pit_le"] = pit_le
    part["pit_eq"] = pit_eq[: pe.size]
    part["pit_sum"] = pit_sum
    part["curve"] = curve
    part["z_hist"] = z_hist
    part["z_sum"] = z_sum
    part["z_min"] = zmm[:1].copy()
    part["z_max"] = zmm[1:].copy()
    part["blk"] = blk
    part["blk_bins"] = bins3.reshape(g, nb, 3)
    return part
