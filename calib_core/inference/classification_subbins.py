"""Per-bin and per-sub-bin sums of binned event rows, and the one-vs-rest cells of equal-width bins, in one pass.

:class:`~calib_core.inference.classification_nulls.BinnedBernoulli` summarises rows with probabilities v_i of an
event h_i in confidence bins: per bin the rows, Σ v, Σ h and Σ v(1 − v), and per equal-width sub-bin of each bin the
rows, Σ v and Σ v², from which it picks the coarsest split whose binomial variance matches the exact Poisson-binomial
one.  Written as ``np.bincount`` those are seven passes over the rows (and as many temporaries); here they are one
compiled pass adding each row in row order, as ``np.bincount`` adds it: the same sums, bit for bit (tested).
"""

from __future__ import annotations

import numpy as np

from ..base.compiled import compiled_kernel

__all__ = ["subbin_sums", "split_subbin_sums", "outside_first_cells", "label_block_counts", "top_label_bins",
           "warm_up"]


def subbin_sums(v: np.ndarray, h: np.ndarray, idx: np.ndarray, edges: np.ndarray, n_bins: int,
                n_sub: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-bin sums and equal-width sub-bin sums of binned rows.

    Row i of bin b = idx_i, with lower edge e_b and width w_b = e_{b+1} − e_b, lies in the sub-bin
    s_i = clip(⌊(v_i − e_b)/w_b · S⌋, 0, S − 1) of its bin (0 when w_b = 0; S = ``n_sub``), as NumPy's
    ``astype(int64)`` truncates (a NaN or a value beyond ±2⁶³ gives −2⁶³, hence 0).  The sums are
    ``np.bincount``'s: each row added in row order (Guo et al. 2017's bins; the sub-bins of the binomial null).

    Parameters
    ----------
    v : ndarray of shape (N,)
        Probabilities of the event.
    h : ndarray of shape (N,)
        The events (0 / 1).
    idx : ndarray of int, shape (N,)
        The bin of every row (0 … M − 1).
    edges : ndarray of shape (M + 1,)
        The bin edges.
    n_bins : int
        M.
    n_sub : int
        Sub-bins per bin S.

    Returns
    -------
    per_bin : ndarray of shape (4, M)
        Rows, Σ v, Σ h and Σ v(1 − v) per bin.
    per_sub : ndarray of shape (3, M·S)
        Rows, Σ v and Σ v² per sub-bin b·S + s.
    sub : ndarray of int64, shape (N,)
        The sub-bin s_i of every row within its bin.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       *ICML*.
    .. [2] Hong, Y. (2013). On computing the distribution function for the Poisson binomial distribution.
       *Computational Statistics & Data Analysis* 59, 41–51.

    Examples
    --------
    >>> import numpy as np
    >>> per_bin, per_sub, sub = subbin_sums(np.array([0.1, 0.3, 0.8]), np.array([0.0, 1.0, 1.0]),
    ...                                     np.array([0, 0, 1]), np.array([0.0, 0.5, 1.0]), 2, 2)
    >>> per_bin[0].tolist(), per_bin[2].tolist(), sub.tolist(), per_sub[0].tolist()
    ([2.0, 1.0], [1.0, 1.0], [0, 1, 1], [1.0, 1.0, 0.0, 1.0])
    """
    return _subbin_kernel(np.ascontiguousarray(v, dtype=np.float64), np.ascontiguousarray(h, dtype=np.float64),
                          np.ascontiguousarray(idx, dtype=np.int64), np.ascontiguousarray(edges, dtype=np.float64),
                          int(n_bins), int(n_sub))


def split_subbin_sums(v: np.ndarray, idx: np.ndarray, sub: np.ndarray, step: np.ndarray,
                      n_sub: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows and Σ v per group of a coarser split of the sub-bins: bin b's sub-bins merged ``step[b]`` at a time.

    Row i falls in group g_i = b·S + (s_i − s_i mod step_b) with b = idx_i, s_i its sub-bin (:func:`subbin_sums`) and
    step_b a power of two: ``np.bincount(g)`` and ``np.bincount(g, weights=v)``, each row added in row order
    (Hong 2013: Binomial(n_g, v̄_g) per group approximates the Poisson-binomial count).

    Parameters
    ----------
    v : ndarray of shape (N,)
        Probabilities of the event.
    idx : ndarray of int, shape (N,)
        The bin of every row.
    sub : ndarray of int, shape (N,)
        The sub-bin of every row within its bin.
    step : ndarray of int, shape (M,)
        Sub-bins merged per group in each bin (a power of two ≤ S).
    n_sub : int
        Sub-bins per bin S.

    Returns
    -------
    count : ndarray of int64, shape (M·S,)
        Rows per group (at its first sub-bin).
    total : ndarray of shape (M·S,)
        Σ v per group.

    References
    ----------
    .. [1] Hong, Y. (2013). On computing the distribution function for the Poisson binomial distribution.
       *Computational Statistics & Data Analysis* 59, 41–51.

    Examples
    --------
    >>> import numpy as np
    >>> count, total = split_subbin_sums(np.array([0.1, 0.3, 0.8]), np.array([0, 0, 1]), np.array([0, 1, 1]),
    ...                                  np.array([2, 1]), 2)
    >>> count.tolist(), total.tolist()
    ([2, 0, 0, 1], [0.4, 0.0, 0.0, 0.8])
    """
    return _split_kernel(np.ascontiguousarray(v, dtype=np.float64), np.ascontiguousarray(idx, dtype=np.int64),
                         np.ascontiguousarray(sub, dtype=np.int64), np.ascontiguousarray(step, dtype=np.int64),
                         int(n_sub), int(step.shape[0]) * int(n_sub))


@compiled_kernel
def _subbin_kernel(v, h, idx, edges, n_bins, n_sub):
    """:func:`subbin_sums`: one pass, each sum added in row order as ``np.bincount`` adds it."""
    per_bin = np.zeros((4, n_bins))
    per_sub = np.zeros((3, n_bins * n_sub))
    sub = np.empty(v.shape[0], dtype=np.int64)
    for i in range(v.shape[0]):
        b = idx[i]
        x = v[i]
        per_bin[0, b] += 1.0
        per_bin[1, b] += x
        per_bin[2, b] += h[i]
        per_bin[3, b] += x * (1.0 - x)
        lo = edges[b]
        width = edges[b + 1] - lo
        pos = (x - lo) / width if width > 0 else 0.0
        scaled = pos * n_sub
        # NumPy's astype(int64): truncation, and -2**63 for NaN or beyond the int64 range (then clipped to 0)
        s = int(scaled) if -9.223372036854775808e18 <= scaled < 9.223372036854775808e18 else 0
        s = min(max(s, 0), n_sub - 1)
        sub[i] = s
        g = b * n_sub + s
        per_sub[0, g] += 1.0
        per_sub[1, g] += x
        per_sub[2, g] += x * x
    return per_bin, per_sub, sub


@compiled_kernel
def _split_kernel(v, idx, sub, step, n_sub, size):
    """:func:`split_subbin_sums`: one pass, each sum added in row order as ``np.bincount`` adds it."""
    count = np.zeros(size, dtype=np.int64)
    total = np.zeros(size)
    for i in range(v.shape[0]):
        b = idx[i]
        g = b * n_sub + (sub[i] & ~(step[b] - 1))
        count[g] += 1
        total[g] += v[i]
    return count, total


def outside_first_cells(p: np.ndarray, flat: np.ndarray, k: int, n_bins: int, closed: str, first_upper: float,
                        edges: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The entries p_ik outside their class's first of M equal-width bins, their one-vs-rest cells and cell sums.

    Of the entries ``p`` at flat row-major positions ``flat`` (i·K + k, increasing) those outside the first bin
    (not p ≤ 1/M for (a, b] bins, not p < 1/M for [a, b); NaN outside), in order: their row i, cell k·M + b with b
    the equal-width bin of p (``binning.uniform_bin_index`` on ``edges``), p, and per cell the count and Σ p added in
    that order (``np.bincount``'s sums) — the same arrays as the NumPy passes, bit for bit (Kull et al. 2019's
    class-wise cells; Guo et al. 2017's bins).

    Parameters
    ----------
    p : ndarray of shape (E,)
        Entries p_ik.
    flat : ndarray of int, shape (E,)
        Their flat positions i·K + k.
    k : int
        Classes K.
    n_bins : int
        M.
    closed : {"right", "left"}
        (a, b] or [a, b) bins.
    first_upper : float
        The first bin's upper edge (``edges[1]``).
    edges : ndarray of shape (M + 1,)
        ``binning.uniform_edges(0, 1, M)``.

    Returns
    -------
    rows, cells : ndarray of int64
        Row and cell of each entry outside the first bins.
    values : ndarray
        Their p_ik.
    count, total : ndarray of shape (K·M,)
        Entries and Σ p per cell (the first bins' hold nothing: the caller fills them by complement).

    References
    ----------
    .. [1] Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H. & Flach, P. (2019). Beyond
       temperature scaling: obtaining well-calibrated multiclass probabilities with Dirichlet calibration.
       *NeurIPS*.
    .. [2] Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       *ICML*.

    Examples
    --------
    >>> import numpy as np
    >>> rows, cells, values, count, total = outside_first_cells(
    ...     np.array([0.7, 0.2, 0.1, 0.9]), np.array([0, 1, 2, 3]), 2, 2, "right", 0.5, np.array([0.0, 0.5, 1.0]))
    >>> rows.tolist(), cells.tolist(), count.tolist()
    ([0, 1], [1, 3], [0.0, 1.0, 0.0, 1.0])
    """
    return _outside_kernel(np.ascontiguousarray(p, dtype=np.float64), np.ascontiguousarray(flat, dtype=np.int64),
                           int(k), int(n_bins), closed == "right", float(first_upper),
                           np.ascontiguousarray(edges, dtype=np.float64), float(n_bins / (1.0 - 0.0)))


def label_block_counts(p_y: np.ndarray, y: np.ndarray, block: np.ndarray, col: np.ndarray, n_bins: int,
                       n_cols: int, n_blocks: int, closed: str, edges: np.ndarray) -> np.ndarray:
    """Per (row block, column) the rows whose label cell y_i·M + b(p_{i,y_i}) maps to that column.

    ``np.bincount(block · C + col[y · M + uniform_bin_index(p_y, M)], minlength=B·C)`` in one pass: the equal-width
    bin of each label's probability (Guo et al. 2017), its one-vs-rest cell (Kull et al. 2019) and its column
    ``col`` (the live cells), counted per block (integers: the same counts).

    Parameters
    ----------
    p_y : ndarray of shape (N,)
        The probability of each row's label.
    y : ndarray of int, shape (N,)
        The labels.
    block : ndarray of int, shape (N,)
        The block of each row.
    col : ndarray of int, shape (K·M,)
        The column of each cell (every label cell must have one ≥ 0).
    n_bins : int
        M.
    n_cols : int
        Columns C.
    n_blocks : int
        Blocks B.
    closed : {"right", "left"}
        (a, b] or [a, b) bins.
    edges : ndarray of shape (M + 1,)
        ``binning.uniform_edges(0, 1, M)``.

    Returns
    -------
    ndarray of int64, shape (B·C,)
        The counts.

    References
    ----------
    .. [1] Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H. & Flach, P. (2019). Beyond
       temperature scaling: obtaining well-calibrated multiclass probabilities with Dirichlet calibration.
       *NeurIPS*.
    .. [2] Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       *ICML*.

    Examples
    --------
    >>> import numpy as np
    >>> label_block_counts(np.array([0.9, 0.2, 0.6]), np.array([1, 0, 1]), np.array([0, 0, 1]),
    ...                    np.array([0, 1, 2, 3]), 2, 4, 2, "right", np.array([0.0, 0.5, 1.0])).tolist()
    [1, 0, 0, 1, 0, 0, 0, 1]
    """
    return _label_kernel(np.ascontiguousarray(p_y, dtype=np.float64), np.ascontiguousarray(y, dtype=np.int64),
                         np.ascontiguousarray(block, dtype=np.int64), np.ascontiguousarray(col, dtype=np.int64),
                         int(n_bins), int(n_cols), int(n_blocks), closed == "right",
                         np.ascontiguousarray(edges, dtype=np.float64), float(n_bins / (1.0 - 0.0)))


def top_label_bins(confidence: np.ndarray, correct: np.ndarray, n_bins: int, closed: str,
                   edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The equal-width bin of every top-label confidence and per bin the rows, Σ confidence and Σ hits.

    ``binning.uniform_bin_index(confidence, M)`` (Guo et al. 2017's bins) and ``binning.bin_sums`` of the confidences
    and hits on it, in one pass: the same index and sums, each row added in row order as ``np.bincount`` adds it.

    Parameters
    ----------
    confidence : ndarray of shape (N,)
        Top-label confidences.
    correct : ndarray of shape (N,)
        Hits 1[ŷ = y] (0 / 1).
    n_bins : int
        M.
    closed : {"right", "left"}
        (a, b] or [a, b) bins.
    edges : ndarray of shape (M + 1,)
        ``binning.uniform_edges(0, 1, M)``.

    Returns
    -------
    index : ndarray of int64, shape (N,)
        The bin of every row.
    sums : ndarray of shape (3, M)
        Rows, Σ confidence and Σ hits per bin.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       *ICML*.

    Examples
    --------
    >>> import numpy as np
    >>> index, sums = top_label_bins(np.array([0.9, 0.4, 0.5]), np.array([1.0, 0.0, 1.0]), 2, "right",
    ...                              np.array([0.0, 0.5, 1.0]))
    >>> index.tolist(), sums.tolist()
    ([1, 0, 0], [[2.0, 1.0], [0.9, 0.9], [1.0, 1.0]])
    """
    return _top_kernel(np.ascontiguousarray(confidence, dtype=np.float64),
                       np.ascontiguousarray(correct, dtype=np.float64), int(n_bins), closed == "right",
                       np.ascontiguousarray(edges, dtype=np.float64), float(n_bins / (1.0 - 0.0)))


def warm_up() -> None:
    """Load (or compile) this module's kernels on a few rows, so that a server's first re-binning does not wait for
    them (Numba caches them on disk; Lam, Pitrou & Seibert 2015).

    Returns
    -------
    None

    References
    ----------
    .. [1] Lam, S. K., Pitrou, A. & Seibert, S. (2015). Numba: a LLVM-based Python JIT compiler. *LLVM-HPC '15*.

    Examples
    --------
    >>> warm_up()
    """
    v = np.linspace(0.05, 0.95, 8)
    h = (v > 0.5).astype(np.float64)
    edges = np.linspace(0.0, 1.0, 3)
    idx = (v > 0.5).astype(np.int64)
    _, _, sub = subbin_sums(v, h, idx, edges, 2, 2)
    split_subbin_sums(v, idx, sub, np.ones(2, dtype=np.int64), 2)
    top_label_bins(v, h, 2, "right", edges)
    outside_first_cells(v, np.arange(8), 2, 2, "right", 0.5, edges)
    label_block_counts(v, idx, idx, np.arange(4), 2, 4, 2, "right", edges)


@compiled_kernel
def _top_kernel(confidence, correct, n_bins, right, edges, scale):
    """:func:`top_label_bins`: each row's equal-width bin and the bins' sums, one pass."""
    index = np.empty(confidence.shape[0], dtype=np.int64)
    sums = np.zeros((3, n_bins))
    top = n_bins - 1.0
    for i in range(confidence.shape[0]):
        x = confidence[i]
        g = np.floor((x - 0.0) * scale)
        if not g <= top:  # NaN (np.fmin ignores it) or above: the last bin
            g = top
        if g < 0.0:
            g = 0.0
        b = int(g)
        if right:  # the corrections without branches (a mispredicted branch costs more than both comparisons)
            b -= (x <= edges[b]) & (b > 0)
            b += (x > edges[b + 1]) & (b < n_bins - 1)
        else:
            b -= (x < edges[b]) & (b > 0)
            b += (x >= edges[b + 1]) & (b < n_bins - 1)
        index[i] = b
        sums[0, b] += 1.0
        sums[1, b] += x
        sums[2, b] += correct[i]
    return index, sums


@compiled_kernel
def _outside_kernel(p, flat, k, n_bins, right, first_upper, edges, scale):
    """:func:`outside_first_cells`: the entries outside the first bins, their cells and the cells' sums in order."""
    n = p.shape[0]
    rows = np.empty(n, dtype=np.int64)
    cells = np.empty(n, dtype=np.int64)
    values = np.empty(n)
    count = np.zeros(k * n_bins)
    total = np.zeros(k * n_bins)
    top = n_bins - 1.0
    m = 0
    for t in range(n):
        x = p[t]
        if (x <= first_upper) if right else (x < first_upper):
            continue
        j = flat[t]
        r = j // k
        # binning.uniform_bin_index: ⌊(x − 0)·M⌋ clipped (NaN: the last bin), then one correction on each side
        g = np.floor((x - 0.0) * scale)
        if not g <= top:  # NaN (np.fmin ignores it) or above: the last bin
            g = top
        if g < 0.0:
            g = 0.0
        b = int(g)
        if right:  # the corrections without branches (a mispredicted branch costs more than both comparisons)
            b -= (x <= edges[b]) & (b > 0)
            b += (x > edges[b + 1]) & (b < n_bins - 1)
        else:
            b -= (x < edges[b]) & (b > 0)
            b += (x >= edges[b + 1]) & (b < n_bins - 1)
        cell = b + (j - r * k) * n_bins
        rows[m] = r
        cells[m] = cell
        values[m] = x
        m += 1
        count[cell] += 1.0
        total[cell] += x
    return rows[:m], cells[:m], values[:m], count, total


@compiled_kernel
def _label_kernel(p_y, y, block, col, n_bins, n_cols, n_blocks, right, edges, scale):
    """:func:`label_block_counts`: each row's label cell, its column and block, counted in one pass."""
    out = np.zeros(n_blocks * n_cols, dtype=np.int64)
    top = n_bins - 1.0
    for i in range(p_y.shape[0]):
        x = p_y[i]
        g = np.floor((x - 0.0) * scale)
        if not g <= top:  # NaN (np.fmin ignores it) or above: the last bin
            g = top
        if g < 0.0:
            g = 0.0
        b = int(g)
        if right:  # the corrections without branches (a mispredicted branch costs more than both comparisons)
            b -= (x <= edges[b]) & (b > 0)
            b += (x > edges[b + 1]) & (b < n_bins - 1)
        else:
            b -= (x < edges[b]) & (b > 0)
            b += (x >= edges[b + 1]) & (b < n_bins - 1)
        out[block[i] * n_cols + col[b + y[i] * n_bins]] += 1
    return out
