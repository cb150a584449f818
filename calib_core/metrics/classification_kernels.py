"""Compiled kernels of the classification point diagnosis: one pass over the (N, K) probability matrix for the top
label, the confidence bins and the class-wise bin sums, one pass for TCE's per-bin events and one for the smooth
ECE's node masses.

:func:`row_pass` reads every p_ik once, row by row, and gives what :class:`ClassificationRows` used to build from a
dozen NumPy passes (an ``argmax``, fancy-index gathers, five ``uniform_bin_index`` calls and as many ``bincount``):

* per row: prediction ŷ_i = argmax_k p_ik (the first maximum; a NaN is the maximum, as ``np.argmax``), confidence
  c_i = p_iŷ, correctness 1[ŷ_i = y_i], p_iy and the confidence's bin;
* top-label bin sums: count, Σ c and Σ 1[ŷ = y] per bin (Guo et al. 2017, eq. 3);
* one-vs-rest sums per class k and bin b (Kull et al. 2019): the count and Σ p_ik of the entries outside their
  class's first bin (the first bin follows from the column totals, as before), the column totals Σ_i p_ik, and the
  count of the labels' own entries per (y_i, bin(p_iy)).

Every bin is ``uniform_bin_index``'s on [0, 1]: the guess b = ⌊p·M⌋ clipped to 0 … M − 1 (NaN: the last bin),
moved down when p ≤ e_b (p < e_b for ``closed="left"``) and up when p > e_{b+1} (p ≥ e_{b+1}), with the edges
e_b = b/M of ``uniform_edges``.  Counts are exact.  The sums add the same values in the same order as ``np.bincount``
(row order) and NumPy's column sum (row order), so they are bit for bit the NumPy results; the tests check equality.

References
----------
Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML, PMLR 70,
1321–1330.

Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H. & Flach, P. (2019). Beyond temperature
scaling: obtaining well-calibrated multiclass probabilities with Dirichlet calibration. NeurIPS 32.

Matsubara, T., Tax, N., Mudd, R. & Guy, I. (2023). TCE: a test-based approach to measuring calibration error. UAI,
PMLR 216, 1390–1400.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..base.binning import uniform_edges
from ..base.compiled import compiled_kernel

__all__ = ["RowPass", "row_pass", "sorted_quantile_edges", "bin_event_sums", "smooth_node_sums", "warm_up"]


@compiled_kernel
def _rows(p, labels, lower, scale, binned, pred, conf, correct, p_label, top_bin, top, cls_count, cls_sum, hits,
          totals):  # pragma: no cover - compiled
    """Top label, bins and bin sums of every row (module docstring); arrays are written in place.

    ``lower[b]``: the largest value that belongs below edge b — the edge itself for (a, b] bins, the double just
    below it for [a, b) bins — so both conventions are one comparison ``v <= lower[b]``."""
    n, k = p.shape
    nb = lower.shape[0] - 1
    first_top = lower[1]
    last = nb - 1
    outside = np.empty(k, dtype=np.int64)
    for i in range(n):
        y = labels[i]
        best = p[i, 0]
        arg = 0
        nan = best != best
        m = 0
        if binned:  # the column totals, and the entries outside the first bin (usually few), in the same loop
            totals[0] += best
            outside[0] = 0
            m += 0 if best <= first_top else 1
        for j in range(1, k):  # branch-free argmax (the first maximum) …
            v = p[i, j]
            nan |= v != v
            gt = v > best
            best = v if gt else best
            arg = j if gt else arg
            if binned:
                totals[j] += v
                outside[m] = j
                m += 0 if v <= first_top else 1
        if nan:  # … and np.argmax's rule for NaN (the first NaN is the maximum)
            best = p[i, 0]
            arg = 0
            for j in range(1, k):
                v = p[i, j]
                if v > best or (v != v and best == best):
                    best = v
                    arg = j
        pred[i] = arg
        conf[i] = best
        hit = 1.0 if arg == y else 0.0
        correct[i] = hit
        p_label[i] = p[i, y]
        if not binned:
            continue
        b_label = 0
        b_top = 0
        for t in range(m):  # uniform_bin_index: the guess ⌊v·M⌋, clipped (NaN → last), then one edge each side
            j = outside[t]
            v = p[i, j]
            g = v * scale
            if not g < nb:  # also NaN
                b = last
            elif g < 0.0:
                b = 0
            else:
                b = int(g)  # ⌊g⌋ for 0 ≤ g < M
            if b > 0 and v <= lower[b]:
                b -= 1
            if b < last and v > lower[b + 1]:
                b += 1
            if b > 0:
                cls_count[j, b] += 1.0
                cls_sum[j, b] += v
            b_label = b if j == y else b_label
            b_top = b if j == arg else b_top
        hits[y, b_label] += 1.0
        top_bin[i] = b_top
        top[0, b_top] += 1.0
        top[1, b_top] += best
        top[2, b_top] += hit


class RowPass(NamedTuple):
    """What :func:`row_pass` computes (the bin sums are None without ``binned``).

    Attributes
    ----------
    pred : ndarray of int, shape (n,)
        ŷ = argmax_k p_k.
    confidence, correct, p_label : ndarray of shape (n,)
        c = p_ŷ, 1[ŷ = y] and p_y (float64).
    bin_index : ndarray of int, shape (n,) or None
        The confidence's bin.
    top_sums : ndarray of shape (3, M) or None
        Per confidence bin: count, Σ c, Σ 1[ŷ = y].
    classwise_count, classwise_sum : ndarray of shape (K, M) or None
        Per class and bin, of the entries outside the class's first bin (column 0 is zero): count and Σ p_k.
    classwise_hits : ndarray of shape (K, M) or None
        Per class k and bin b: the rows with y = k and p_y in bin b.
    column_totals : ndarray of shape (K,) or None
        Σ_i p_ik (summed in row order, as ``probs.sum(axis=0)``).

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.
    """

    pred: np.ndarray
    confidence: np.ndarray
    correct: np.ndarray
    p_label: np.ndarray
    bin_index: np.ndarray | None
    top_sums: np.ndarray | None
    classwise_count: np.ndarray | None
    classwise_sum: np.ndarray | None
    classwise_hits: np.ndarray | None
    column_totals: np.ndarray | None


def row_pass(probs: np.ndarray, labels: np.ndarray, n_bins: int, closed: str = "right", *,
             binned: bool = True) -> RowPass:
    """The top label, the equal-width confidence bins and every bin sum of a probability matrix in one pass.

    ŷ_i = argmax_k p_ik, c_i = p_iŷ, b(p) = the bin of p among M equal-width bins of [0, 1] (``uniform_bin_index``);
    top-label sums Σ_{b(c_i) = b} (1, c_i, 1[ŷ_i = y_i]); one-vs-rest sums Σ_{b(p_ik) = b > 0} (1, p_ik), Σ_i p_ik and
    #{i: y_i = k, b(p_ik) = b} (module docstring).

    Parameters
    ----------
    probs : ndarray of shape (n, k)
        Probabilities, K ≥ 2 (any float dtype: read as float64).
    labels : ndarray of int, shape (n,)
        Labels 0..K−1.
    n_bins : int
        M.
    closed : {"right", "left"}, default "right"
        (a, b] bins with the first closed, or [a, b) with the last closed.
    binned : bool, default True
        Compute the bins and their sums (False: the per-row top label only, e.g. for equal-mass bins).

    Returns
    -------
    RowPass
        The per-row arrays and the sums.

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.

    Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H. & Flach, P. (2019). Beyond temperature
    scaling: obtaining well-calibrated multiclass probabilities with Dirichlet calibration. NeurIPS 32.

    Examples
    --------
    >>> r = row_pass(np.array([[0.2, 0.8], [0.7, 0.3]]), np.array([1, 1]), 2)
    >>> r.pred.tolist(), r.correct.tolist(), r.bin_index.tolist()
    ([1, 0], [1.0, 0.0], [1, 1])
    """
    p = np.ascontiguousarray(probs, dtype=np.float64)
    y = np.ascontiguousarray(labels, dtype=np.int64)
    n, k = p.shape
    nb = int(n_bins)
    if nb < 1:
        raise ValueError("n_bins must be at least 1")
    if k < 1 or y.shape != (n,):
        raise ValueError(f"row_pass needs an (n, k) matrix and n labels; got {p.shape} and {y.shape}")
    edges = uniform_edges(0.0, 1.0, nb)
    lower = edges if closed == "right" else np.nextafter(edges, -np.inf)  # v < e ⟺ v ≤ the double below e
    pred = np.empty(n, dtype=np.int64)
    conf, correct, p_label = np.empty(n), np.empty(n), np.empty(n)
    mb, kb = (nb, k) if binned else (1, 1)
    top_bin = np.zeros(n if binned else 1, dtype=np.int64)
    top = np.zeros((3, mb))
    cls_count, cls_sum, hits = np.zeros((kb, mb)), np.zeros((kb, mb)), np.zeros((kb, mb))
    totals = np.zeros(kb)
    _rows(p, y, lower, nb / (1.0 - 0.0), bool(binned), pred, conf, correct, p_label, top_bin, top, cls_count, cls_sum,
          hits, totals)
    if not binned:
        return RowPass(pred, conf, correct, p_label, None, None, None, None, None, None)
    return RowPass(pred, conf, correct, p_label, top_bin, top, cls_count, cls_sum, hits, totals)


@compiled_kernel
def _events(f, y, inner, count, events):  # pragma: no cover - compiled
    """Per bin of ``searchsorted(inner, f, "left")`` (no NaN): count and Σ y, in row order."""
    m = inner.shape[0]
    for i in range(f.shape[0]):
        v = f[i]
        b = 0
        for t in range(m):  # #{inner edges < v}, branch-free (the edges are few)
            b += 1 if inner[t] < v else 0
        count[b] += 1
        events[b] += y[i]


def bin_event_sums(f: np.ndarray, y: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per bin of ``bins_from_edges(f, edges, "right")`` (bins (e_b, e_{b+1}], the first closed): the count and Σ y.

    count_b = #{i: b(f_i) = b}, events_b = Σ_{b(f_i) = b} y_i summed in row order (``np.bincount``'s order, so the
    same float64 result); f must be free of NaN.

    Parameters
    ----------
    f : ndarray of shape (n,)
        Values (float64, no NaN).
    y : ndarray of shape (n,)
        Summed per bin.
    edges : ndarray of shape (M + 1,)
        Non-decreasing edges.

    Returns
    -------
    count : ndarray of int, shape (M,)
        Rows per bin.
    events : ndarray of shape (M,)
        Σ y per bin.

    References
    ----------
    Matsubara, T., Tax, N., Mudd, R. & Guy, I. (2023). TCE: a test-based approach to measuring calibration
    error. UAI, PMLR 216, 1390–1400.

    Examples
    --------
    >>> c, e = bin_event_sums(np.array([0.1, 0.5, 0.9]), np.array([1.0, 0.0, 1.0]), np.array([0.0, 0.5, 1.0]))
    >>> c.tolist(), e.tolist()
    ([2, 1], [1.0, 1.0])
    """
    edges = np.asarray(edges, dtype=np.float64)
    m = edges.shape[0] - 1
    count = np.zeros(m, dtype=np.int64)
    events = np.zeros(m)
    _events(np.ascontiguousarray(f, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64),
            np.ascontiguousarray(edges[1:-1]), count, events)
    return count, events


def sorted_quantile_edges(sorted_values: np.ndarray, n_bins: int) -> np.ndarray:
    """``np.quantile(values, np.linspace(0, 1, M + 1))`` (linear interpolation) from the sorted values, in O(M).

    NumPy's own steps: virtual index h = (N − 1)·q, neighbours ⌊h⌋ and ⌊h⌋ + 1 (both the last value when h ≥ N − 1),
    γ = h − (the lower neighbour's index as used), and its two-sided lerp a + (b − a)·γ for γ < ½, b − (b − a)(1 − γ)
    otherwise — the same values in the same operations, so the same edges bit for bit (tested).  No NaN allowed.

    Parameters
    ----------
    sorted_values : ndarray of shape (n,)
        Sorted values, n ≥ 1, no NaN.
    n_bins : int
        M.

    Returns
    -------
    ndarray of shape (M + 1,)
        The edges.

    References
    ----------
    Hyndman, R. J. & Fan, Y. (1996). Sample quantiles in statistical packages. The American Statistician 50(4),
    361–365.

    Examples
    --------
    >>> sorted_quantile_edges(np.array([0.0, 1.0, 2.0, 3.0]), 2).tolist()
    [0.0, 1.5, 3.0]
    """
    s = np.asarray(sorted_values, dtype=np.float64)
    n = s.shape[0]
    h = (n - 1) * np.linspace(0.0, 1.0, int(n_bins) + 1)
    lo = np.floor(h)
    hi = lo + 1
    top = h >= n - 1
    lo[top] = -1
    hi[top] = -1
    gamma = h - lo
    a = s[lo.astype(np.intp)]
    b = s[hi.astype(np.intp)]
    diff = b - a
    out = a + diff * gamma
    np.subtract(b, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return out


@compiled_kernel
def _nodes(f, y, r, size, left, right):  # pragma: no cover - compiled
    """Left/right node sums of r (row 0), 1 (row 1) and y (row 2), in row order."""
    for i in range(f.shape[0]):
        x = f[i] * size
        j = min(int(x), size - 1)
        lam = x - j
        rr = lam * r[i]
        left[0, j] += r[i] - rr
        right[0, j] += rr
        left[1, j] += 1.0 - lam
        right[1, j] += lam
        ry = lam * y[i]
        left[2, j] += y[i] - ry
        right[2, j] += ry


def smooth_node_sums(f: np.ndarray, y: np.ndarray, r: np.ndarray, size: int) -> np.ndarray:
    """The residual, mass and hit masses on the nodes j/E of the smooth ECE's grid, in one pass.

    A row at f = (j + λ)/E (j = min(⌊f·E⌋, E − 1)) puts v − λv on node j and λv on node j + 1, for v = r, 1 and y:
    ``classification_smooth_grid.node_sums`` (two ``np.bincount`` per quantity, summed in row order) for the three
    at once, bit for bit (tested).  f must lie in [0, 1] (no NaN).

    Parameters
    ----------
    f : ndarray of shape (n,)
        Probabilities in [0, 1].
    y : ndarray of shape (n,)
        Outcomes.
    r : ndarray of shape (n,)
        Residuals y − f.
    size : int
        E.

    Returns
    -------
    ndarray of shape (3, E + 1)
        Node masses of r, 1 and y.

    References
    ----------
    Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
    arXiv:2309.12236 (ICLR 2024).

    Examples
    --------
    >>> smooth_node_sums(np.array([0.25]), np.array([1.0]), np.array([0.75]), 2).tolist()
    [[0.375, 0.375, 0.0], [0.5, 0.5, 0.0], [0.5, 0.5, 0.0]]
    """
    size = int(size)
    left = np.zeros((3, size + 1))
    right = np.zeros((3, size + 1))
    as64 = lambda a: np.ascontiguousarray(a, dtype=np.float64)  # noqa: E731
    _nodes(as64(f), as64(y), as64(r), size, left, right)
    left[:, 1:] += right[:, :-1]
    return left


def warm_up() -> None:
    """Compile (or load from the on-disk cache) this module's kernels on a few rows, for a warm-up thread.

    Returns
    -------
    None

    References
    ----------
    Lam, S. K., Pitrou, A. & Seibert, S. (2015). Numba: a LLVM-based Python JIT compiler. *LLVM-HPC '15*, 1–6.
    """
    row_pass(np.array([[0.25, 0.75]]), np.array([1]), 2)
    bin_event_sums(np.array([0.5]), np.array([1.0]), np.array([0.0, 0.5, 1.0]))
    smooth_node_sums(np.array([0.5]), np.array([1.0]), np.array([0.5]), 2)
