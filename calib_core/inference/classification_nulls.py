"""Null draws of the binned classification statistics under perfect calibration, y_i ~ Categorical(p_i).

* :class:`BinnedBernoulli` — rows with probabilities v_i of an event h_i (top-label correctness with v = confidence;
  y = 1 with v = P(y = 1)), binned: per-bin sums and null draws of the per-bin event counts, exact row by row or
  Binomial(n_g, v̄_g) per sub-bin (Poisson-binomial variance matched within 0.2 %); :func:`bernstein_tail` and
  :func:`mce_bound` bound the tails where no null draw reaches the statistic.
* :func:`classwise_inference` — class-wise ECE over the K·M (class, bin) cells (:class:`ClasswiseLayout`): observed,
  null draws (exact label vectors, :func:`draw_labels`, or one draw bootstrapped over row blocks, :func:`draw_one`)
  and bootstrap replicates.
* :func:`score_references` — the exact expectation and spread of NLL and Brier under H0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
from scipy import sparse

from ..base.binning import uniform_edges
from ..base.clustering import Clustering, cluster_design
from ..base.compiled import compiled_kernel
from ..base.significance import block_bootstrap_weights
from ..metrics.classification import ClassificationRows, confidence_bins
from .classification_cells import ece_cells
from .classification_subbins import label_block_counts, split_subbin_sums, subbin_sums

__all__ = ["BinnedBernoulli", "bernstein_tail", "mce_bound", "ClasswiseLayout", "draw_one", "draw_labels",
           "classwise_inference", "merged_blocks", "score_references"]


def bernstein_tail(t: float, v: float, n_terms_log2: float = 0.0) -> float:
    """Bernstein tail bound of a sum of independent centred terms in [−1, 1]: P(S ≥ t) ≤ exp(−t² / (2(v + t/3))).

    Multiplied by 2^``n_terms_log2`` (a union bound over that many sign patterns, e.g. the bins of ECE) and
    capped at 1; 1 for t ≤ 0 or t not finite.

    Parameters
    ----------
    t : float
        The threshold.
    v : float
        The sum's variance Σ Var.
    n_terms_log2 : float, default 0
        log₂ of the number of events in the union bound.

    Returns
    -------
    float
        The bound on the tail probability.

    References
    ----------
    .. [1] Bernstein, S. N. (1924). On a modification of Chebyshev's inequality and of the error formula of Laplace.
       *Ann. Sci. Inst. Sav. Ukraine, Sect. Math.* 1, 38–49.
    .. [2] Boucheron, S., Lugosi, G. & Massart, P. (2013). *Concentration Inequalities*. Oxford University Press,
       §2.8.
    """
    if not np.isfinite(t) or t <= 0:
        return 1.0
    log_p = n_terms_log2 * math.log(2.0) - t * t / (2.0 * (v + t / 3.0))
    return float(min(1.0, math.exp(log_p)))


def mce_bound(t: float, count: np.ndarray, var: np.ndarray) -> float:
    """Tail bound of MCE under H0: a union bound over the bins of two-sided Bernstein tails, P(max_m |dev_m| / n_m ≥ t).

    Parameters
    ----------
    t : float
        The observed MCE.
    count : ndarray of shape (M,)
        Rows per bin.
    var : ndarray of shape (M,)
        Σ c(1 − c) per bin (the null variance of Σ hits).

    Returns
    -------
    float
        The bound (capped at 1).

    References
    ----------
    .. [1] Boucheron, S., Lugosi, G. & Massart, P. (2013). *Concentration Inequalities*. Oxford University Press,
       §2.8.
    .. [2] Naeini, M. P., Cooper, G. F. & Hauskrecht, M. (2015). Obtaining well calibrated probabilities using
       Bayesian binning. *AAAI*.
    """
    if not np.isfinite(t) or t <= 0:
        return 1.0
    total = 0.0
    for c, v in zip(count, var):
        if c > 0:
            total += 2.0 * bernstein_tail(t * c, v)
    return float(min(1.0, total))


class BinnedBernoulli:
    """Rows with probabilities v_i of an event h_i, binned: per-bin summaries and null draws of the per-bin event
    counts under h_i ~ Bernoulli(v_i) independent.

    The null count of a bin is Poisson-binomial with mean Σ v_i and variance Σ v_i(1 − v_i).  Draws are exact row
    by row while N · R ≤ ``exact_budget``; above, each bin is split into the fewest of 1, 2, 4, … ``n_sub``
    equal-width sub-bins g for which Binomial(n_g, v̄_g) has a variance at most ``var_tol`` above the exact one
    (the excess is Σ_g Σ_{i∈g} (v_i − v̄_g)², from Σ v²), and the bin's count is the sum of those binomials:
    exact mean, slightly conservative spread (``var_ratio``).

    Parameters
    ----------
    v : ndarray of shape (N,)
        Probabilities of the event (top-label confidence, or P(y = 1)).
    h : ndarray of shape (N,)
        Observed events (0/1).
    idx : ndarray of shape (N,)
        Bin of each row.
    edges : ndarray of shape (n_bins + 1,)
        Bin edges (for the sub-bins).
    n_bins : int
        Number of bins M.
    n_sub : int, default 32
        Finest split of a bin (a power of two).
    var_tol : float, default 2e-3
        Relative variance excess allowed for the binomial sub-bins.

    Attributes
    ----------
    count, s_v, s_h, var, dev : ndarray of shape (M,)
        Per bin: rows, Σ v, Σ h, Σ v(1 − v) and Σ(h − v).
    var_ratio : float
        Variance of the sub-bin binomials over the exact Poisson-binomial variance (≥ 1).

    References
    ----------
    .. [1] Hong, Y. (2013). On computing the distribution function for the Poisson binomial distribution.
       *Computational Statistics & Data Analysis* 59, 41–51.
    .. [2] Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       *ICML*.
    """

    def __init__(
        self,
        v: np.ndarray,
        h: np.ndarray,
        idx: np.ndarray,
        edges: np.ndarray,
        n_bins: int,
        n_sub: int = 32,
        var_tol: float = 2e-3,
    ):
        self.v, self.idx, self.h = v, idx, h
        self.n_bins = n_bins
        self.n = v.shape[0]
        if n_sub < 1 or n_sub & (n_sub - 1):
            raise ValueError("n_sub must be a power of two")
        # per bin (rows, Σv, Σh, Σv(1 − v)) and per equal-width sub-bin (rows, Σv, Σv²): np.bincount's sums, one pass
        (self.count, self.s_v, self.s_h, self.var), (n_f, s_f, q_f), sub = subbin_sums(v, h, idx, edges, n_bins, n_sub)
        self.dev = self.s_h - self.s_v  # observed Σ(h − v) per bin
        size = n_bins * n_sub
        # per bin the coarsest split (1, 2, 4, … n_sub equal-width sub-bins) whose binomial variance exceeds the
        # exact one by at most var_tol: Σ_g n_g v̄_g(1 − v̄_g) − Σ v(1 − v) = Σ_g Σ_{i∈g} (v_i − v̄_g)²
        fine = np.arange(size)
        step = np.ones(n_bins, dtype=np.int64)  # finest split unless a coarser one is close enough
        decided = np.zeros(n_bins, dtype=bool)
        width_ = 1
        while width_ <= n_sub:
            span = n_sub // width_  # fine sub-bins per group at this split
            key = fine // span
            n_k = np.bincount(key, weights=n_f, minlength=n_bins * width_)
            s_k = np.bincount(key, weights=s_f, minlength=n_bins * width_)
            q_k = np.bincount(key, weights=q_f, minlength=n_bins * width_)
            with np.errstate(divide="ignore", invalid="ignore"):
                spread = np.where(n_k > 0, q_k - s_k * s_k / np.where(n_k > 0, n_k, 1.0), 0.0)
            excess = spread.reshape(n_bins, width_).sum(axis=1)
            ok = ~decided & (excess <= var_tol * self.var + 1e-12)
            step[ok] = span
            decided |= ok
            width_ *= 2
        n_g, s_g = split_subbin_sums(v, idx, sub, step, n_sub)  # groups (sub // step) · step, step a power of two
        keep = n_g > 0
        self.g_bin = np.nonzero(keep)[0] // n_sub
        self.g_n = n_g[keep]
        self.g_p = np.clip(s_g[keep] / self.g_n, 0.0, 1.0)
        total_var = float(self.var.sum())
        self.var_ratio = float((self.g_n * self.g_p * (1 - self.g_p)).sum() / total_var) if total_var > 0 else 1.0

    def null_dev(self, n_draws: int, rng: np.random.Generator, exact_budget: int) -> tuple[np.ndarray, bool]:
        """((n_draws, n_bins) simulated Σ(h* − v) per bin under H0, exact?)."""
        out = np.empty((n_draws, self.n_bins))
        exact = self.n * n_draws <= exact_budget
        if exact:  # rows in bin order, per-bin sums by reduceat over the non-empty bins
            order = np.argsort(self.idx, kind="stable")
            v_sorted = self.v[order]
            nonempty = np.nonzero(self.count > 0)[0]
            starts = np.concatenate([[0], np.cumsum(self.count[nonempty])[:-1]]).astype(np.int64)
            out[:] = 0.0
            chunk = max(1, 1_000_000 // max(self.n, 1))
            for a in range(0, n_draws, chunk):
                b = min(n_draws, a + chunk)
                hits = (rng.random((b - a, self.n)) < v_sorted).astype(float)
                out[a:b, nonempty] = np.add.reduceat(hits, starts, axis=1)
        else:
            ind = sparse.csr_matrix(
                (np.ones(self.g_n.size), (np.arange(self.g_n.size), self.g_bin)), shape=(self.g_n.size, self.n_bins)
            )
            for a in range(0, n_draws, 500):
                b = min(n_draws, a + 500)
                draws = rng.binomial(self.g_n, self.g_p, size=(b - a, self.g_n.size)).astype(float)
                out[a:b] = np.asarray(ind.T.dot(draws.T).T)
        out -= self.s_v
        return out, exact

    def block_sums(self, block: np.ndarray, n_b: int) -> list[np.ndarray]:
        """Per-block per-bin (count, Σv, Σh, Σv(1 − v)) as four (B, M) arrays."""
        key = block * self.n_bins + self.idx
        size = n_b * self.n_bins
        return [
            np.bincount(key, minlength=size).reshape(n_b, self.n_bins).astype(float),
            np.bincount(key, weights=self.v, minlength=size).reshape(n_b, self.n_bins),
            np.bincount(key, weights=self.h, minlength=size).reshape(n_b, self.n_bins),
            np.bincount(key, weights=self.v * (1.0 - self.v), minlength=size).reshape(n_b, self.n_bins),
        ]


class ClasswiseLayout:
    """Where every p_ik falls among the K·M one-vs-rest (class, bin) cells, stored sparsely.

    The cells are the point estimates' (:attr:`ClassificationRows.classwise_cells`, cached on the rows, so a
    diagnosis bins the N·K probabilities once).  Equal-width bins: only the entries outside their class's first
    bin are listed (``ri`` row, ``cell``, ``val``; :attr:`ClassificationRows.classwise_outside_first`) — with K
    classes almost every p_ik ≤ 1/M — and the first bins follow from per-block totals (count, Σ p_ik, Σ p_ik²)
    by complement.  Equal-mass bins: every entry is listed.

    Parameters
    ----------
    rows : ClassificationRows
        Rows with full probability vectors.

    Attributes
    ----------
    n, k, nb, size : int
        Rows, classes, bins per class and cells K·M.
    sparse : bool
        Whether only the entries outside the first bins are listed (equal-width bins).
    ri, cell, val : ndarray
        The listed entries: row, cell and p_ik.

    References
    ----------
    .. [1] Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H. & Flach, P. (2019). Beyond
       temperature scaling: obtaining well-calibrated multiclass probabilities with Dirichlet calibration.
       *NeurIPS* (class-wise ECE).
    """

    def __init__(self, rows: ClassificationRows):
        self.n, self.k, self.nb = rows.n, rows.k, rows.n_bins
        self.size = self.k * self.nb
        self.p = rows.probs
        self.closed = rows.closed
        if rows.strategy == "uniform":  # no (N, K) cell array: the label cells are binned one entry per row
            self.sparse = True
            self.cells_full = None
            self._ri, self.cell, self.val = rows.classwise_outside_first
        else:
            self.sparse = False
            self.cells_full = rows.classwise_cells
            self._ri = None  # every entry listed in row order: row i's K entries at i·K … i·K + K − 1
            self.cell = self.cells_full.ravel()
            self.val = np.asarray(self.p, dtype=float).ravel()  # a view of float rows (p is read only)

    @property
    def ri(self) -> np.ndarray:
        """The row of every listed entry (every entry: ``np.repeat(np.arange(N), K)``, made on first use)."""
        if self._ri is None:
            self._ri = np.repeat(np.arange(self.n), self.k)
        return self._ri

    def label_cells(self, y: np.ndarray, p_y: np.ndarray | None = None) -> np.ndarray:
        """Cell of the label's own probability p_{i, y_i} (y of shape (N,) or (R, N)): y·M + bin(p_{i, y_i})
        (``p_y``: those probabilities when the caller has them)."""
        if self.cells_full is not None:
            return self.cells_full[np.arange(self.n), y]
        # equal-width bins are the same for every class: the entry's bin, as the (N, K) cell array would give it
        p_y = self.p[np.arange(self.n), y] if p_y is None else p_y
        return confidence_bins(p_y, self.nb, "uniform", self.closed)[0] + y * self.nb

    def block_sums(self, block: np.ndarray, n_b: int,
                   memo: Callable[[Hashable, Callable[[], Any]], Any] | None = None) -> list[np.ndarray]:
        """Per-block per-cell (count, Σp, Σp²) as three (B, K·M) arrays (``memo(name, build)`` keeps the bin-free
        per-block class totals of equal-width bins)."""
        size = self.size
        # one pass over the listed entries, in their order (every entry listed: row i's K entries in a row)
        ri = np.empty(0, dtype=np.int64) if self._ri is None and not self.sparse else self.ri
        sums = _block_cell_sums(np.asarray(block, dtype=np.int64), np.asarray(ri, dtype=np.int64), self.k,
                                np.asarray(self.cell, dtype=np.int64), np.asarray(self.val, dtype=float), n_b, size)
        out = [a.reshape(n_b, size) for a in sums]
        if self.sparse:  # first bins by complement of the per-block class totals Σ_{i∈b} p_ik, Σ_{i∈b} p_ik²
            # one pass over the rows in file order: the (B × N) block indicator, column-compressed, times p
            totals = (memo or (lambda name, build: build()))(("class totals per block", n_b),
                                                             lambda: self._class_totals(block, n_b))
            first = np.arange(self.k) * self.nb
            for a, t in zip(out, totals):
                a[:, first] = t - a.reshape(n_b, self.k, self.nb)[:, :, 1:].sum(axis=2)
        return out

    def _class_totals(self, block: np.ndarray, n_b: int) -> list[np.ndarray]:
        """Per block and class: rows, Σ p_ik, Σ p_ik² (three (B, K) arrays; the same for every bins count)."""
        # one pass over the rows in file order: the (B × N) block indicator, column-compressed, times p
        ind = sparse.csc_matrix((np.ones(self.n), block, np.arange(self.n + 1)), shape=(n_b, self.n))
        p = np.asarray(self.p, dtype=float)
        sizes = np.bincount(block, minlength=n_b).astype(float)
        return [np.repeat(sizes[:, None], self.k, axis=1), ind @ p, ind @ (p * p)]


@compiled_kernel
def _block_cell_sums(block: np.ndarray, ri: np.ndarray, k: int, cell: np.ndarray, val: np.ndarray, n_b: int,
                     size: int) -> np.ndarray:
    """(3, B·size): per (block, cell) key b·size + cell the count, Σ val and Σ val² of the entries, each added in
    the entries' order — ``np.bincount(key, weights=…)``'s sequential sums, bit for bit, in one pass and without the
    key array.  The row of entry j is ``ri[j]`` (``ri`` empty: j // k, every row's k entries listed in a row)."""
    out = np.zeros((3, n_b * size))
    count, s_val, s_sq = out[0], out[1], out[2]
    if ri.size == 0:
        for j in range(cell.size):
            key = block[j // k] * size + cell[j]
            v = val[j]
            count[key] += 1.0
            s_val[key] += v
            s_sq[key] += v * v
    else:
        for j in range(cell.size):
            key = block[ri[j]] * size + cell[j]
            v = val[j]
            count[key] += 1.0
            s_val[key] += v
            s_sq[key] += v * v
    return out


def draw_one(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One label vector y* ~ Categorical(p_i): a running sum over the K columns (no (N, K) cumsum).

    Parameters
    ----------
    p : ndarray of shape (N, K)
        Probability vectors.
    rng : numpy.random.Generator
        Random stream (N uniforms).

    Returns
    -------
    ndarray of shape (N,)
        Labels in 0 … K − 1.

    References
    ----------
    .. [1] Devroye, L. (1986). *Non-Uniform Random Variate Generation*. Springer, §III.2 (inversion).
    """
    n, k = p.shape
    u = rng.random(n) * p.sum(axis=1, dtype=float)
    acc = np.zeros(n)
    y = np.zeros(n, dtype=np.int64)
    for c in range(k - 1):
        acc += p[:, c]
        y += acc < u
    return y


def draw_labels(cum: np.ndarray, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """Label vectors y* ~ Categorical(p_i) by inversion of the rows' cumulative sums.

    Parameters
    ----------
    cum : ndarray of shape (N, K)
        Row-wise cumulative sums of the probability vectors.
    n_draws : int
        Number of label vectors R.
    rng : numpy.random.Generator
        Random stream (R × N uniforms).

    Returns
    -------
    ndarray of shape (n_draws, N)
        Labels in 0 … K − 1.

    References
    ----------
    .. [1] Devroye, L. (1986). *Non-Uniform Random Variate Generation*. Springer, §III.2 (inversion).
    """
    n, k = cum.shape
    u = rng.random((n_draws, n)) * cum[:, -1]
    if k <= 16:
        y = (cum[None, :, :-1] < u[:, :, None]).sum(axis=2)
    else:
        offset = 4.0 * np.arange(n, dtype=float)
        flat = (cum + offset[:, None]).ravel()
        y = np.searchsorted(flat, (u + offset).ravel(), side="right").reshape(n_draws, n) - np.arange(n) * k
    return np.clip(y, 0, k - 1)


def classwise_inference(rows, block, n_b, w, n_null, exact_budget, rng, flop_budget: float = 5e7,
                        max_boot: int = 500, *, clustering: Clustering | None = None, seed: int | None = 0,
                        weights_rng: Callable[[], np.random.Generator] | None = None,
                        memo: Callable[[Hashable, Callable[[], Any]], Any] | None = None) -> dict:
    """Class-wise ECE: observed (plug-in, debiased), null draws, bootstrap (plug-in, debiased) replicates.

    The replicates are (R × B) @ (B × cells) products; with many live (class, bin) cells (K = 100: up to
    1,500) the blocks are merged (block mod B') so that R · B' · cells ≈ ``flop_budget`` (B' ≥ 50, rounded up to a
    coarse grid, :func:`merged_blocks`, so that nearby bins counts share their blocks and weights), and at most
    ``max_boot`` bootstrap replicates are used (its interval is the secondary statistic's).

    The null: while N · ``n_null`` ≤ ``exact_budget``, label vectors y* ~ Categorical(p_i) are drawn row by row
    and only the hit cells re-counted; above, one exact label draw per row, its null deviations
    (1[y* = k] − p_ik per cell) summed over the row blocks, centred, and re-weighted by multinomial block weights
    (variance right in expectation, skewness kept).

    Under a ``clustering`` (``block`` = its codes, ``w`` its design) blocks are merged only into runs of consecutive
    clusters (code · B' // G), re-drawn by :func:`~calib_core.base.clustering.cluster_design` on the merged
    clustering (moving blocks shortened in proportion): whole clusters always stay together.

    Parameters
    ----------
    rows : ClassificationRows
        Rows with full probability vectors.
    block : ndarray of shape (N,)
        Random block of each row.
    n_b : int
        Number of blocks B.
    w : ndarray of shape (R, B)
        Bootstrap weights of the blocks.
    n_null : int
        Null draws.
    exact_budget : int
        Largest N · ``n_null`` drawn row by row.
    rng : numpy.random.Generator
        Random stream.
    flop_budget : float, default 5e7
        Largest R · B' · cells of a replicate product.
    max_boot : int, default 500
        Most bootstrap replicates used.
    clustering : Clustering, optional
        The clusters the blocks are (merged consecutively when too many).
    seed : int or None, default 0
        Seeds the merged clustering's design.
    weights_rng : callable, optional
        A fresh generator of the block weights (the merged blocks' bootstrap weights, then the null's): the label
        draw y* (from ``rng``) and the weights are then each a function of the seed and the number of blocks, not
        of the bins (None: both from ``rng``, weights after the labels).
    memo : callable, optional
        ``memo(name, build)`` keeps the bin-free parts (the label draw, the per-block class totals, the weights of
        a number of blocks; :class:`~calib_core.inference.classification_streams.InferenceMemo`), with
        ``weights_rng``.

    Returns
    -------
    dict
        ``observed`` (plug-in, debiased), ``null`` (draws of the plug-in), ``boot`` (replicates of plug-in and
        debiased), ``boot_l1`` (the bootstrap's summed absolute cell error) and ``note`` (how the null was drawn).

    References
    ----------
    .. [1] Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H. & Flach, P. (2019). Beyond
       temperature scaling: obtaining well-calibrated multiclass probabilities with Dirichlet calibration.
       *NeurIPS*.
    .. [2] Kumar, A., Liang, P. & Ma, T. (2019). Verified uncertainty calibration. *NeurIPS*.
    .. [3] Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall.
    """
    n, k = rows.n, rows.k
    lay = ClasswiseLayout(rows)
    size = lay.size
    # only non-empty cells enter any sum: the rows' own (K, M) cell counts (the point estimate's, cached on them;
    # the counts of lay.cell, first bins by complement)
    live = np.nonzero(rows._classwise_unweighted[0].ravel() > 0.5)[0]  # noqa: SLF001
    memo = memo if memo is not None and weights_rng is not None else (lambda name, build: build())
    exact = n * n_null <= exact_budget
    # the label draw comes first on its stream, so it is the same whatever the bins
    y_star = None if exact else memo("classwise label draw", lambda: draw_one(rows.probs, rng))
    n_b_cw = min(n_b, merged_blocks(flop_budget / (n_null * live.size)))
    n_b0 = n_b  # the blocks given (the class totals' key: merged blocks are the given ones mod n_b_cw)
    merge = n_b_cw < n_b and clustering is None

    def weights() -> tuple[np.ndarray | None, np.ndarray | None]:
        """(bootstrap weights of the merged blocks, the null's block weights): one stream, in this order."""
        wr = rng if weights_rng is None else weights_rng()
        boot_w = block_bootstrap_weights(n_b_cw, min(max_boot, w.shape[0]), wr) if merge else None
        null_w = None if exact else block_bootstrap_weights(min(n_b, n_b_cw) if merge else n_b, n_null, wr)
        return boot_w, null_w

    if n_b_cw < n_b and clustering is not None:  # runs of consecutive clusters, never a cluster split
        merged = _merged_clustering(clustering, n_b_cw)
        design = memo(("classwise design", n_b_cw), lambda: cluster_design(
            merged, min(max_boot, w.shape[0]), (0 if seed is None else int(seed), 0xC1A6)))
        block, n_b, w = design.ids, design.n_blocks, design.weights
    boot_w, null_w = memo(("classwise weights", n_b_cw, n_b), weights)
    if merge:
        block, n_b, w = memo(("classwise blocks", n_b_cw), lambda: block % n_b_cw), n_b_cw, boot_w
    elif w.shape[0] > max_boot:
        w = w[:max_boot]
    b_count, b_conf, b_sq = lay.block_sums(block, n_b, lambda name, build: memo((name, n_b0, n_b_cw), build))
    col = np.full(size, -1, dtype=np.int64)
    col[live] = np.arange(live.size)
    n_live = live.size
    b_count, b_conf, b_sq = b_count[:, live], b_conf[:, live], b_sq[:, live]
    b_var = b_conf - b_sq  # Σ p(1 − p)
    bs = n_b * n_live
    # the labels' cells: equal-width bins, those the rows' class-wise ECE read (``y·M + bin(p_iy)``, computed once)
    hit_col = col[rows._classwise_hits if lay.sparse else lay.label_cells(rows.labels)]  # noqa: SLF001
    b_hit = np.bincount(block * n_live + hit_col, minlength=bs).reshape(n_b, n_live).astype(float)
    c_count, c_conf, c_var, c_hit = (a.sum(axis=0) for a in (b_count, b_conf, b_var, b_hit))
    plug, deb = ece_cells(c_count, c_conf, c_hit, c_var, float(n * k))
    # null
    if exact:
        cum = np.cumsum(np.asarray(rows.probs, dtype=float), axis=1)
        d = np.empty((n_null, n_live))
        chunk = max(1, 500_000 // max(n, 1))
        for a in range(0, n_null, chunk):
            b = min(n_null, a + chunk)
            kk = col[lay.label_cells(draw_labels(cum, b - a, rng))] + (np.arange(b - a) * n_live)[:, None]
            d[a:b] = np.bincount(kk.ravel(), minlength=(b - a) * n_live).reshape(b - a, n_live)
        d -= c_conf
        note = f"class-wise ECE null: exact, {n_null} label vectors y* ~ Categorical(p_i) drawn row by row"
    else:
        p_star = memo("classwise label draw p", lambda: lay.p[np.arange(n), y_star]) if lay.sparse else None
        if lay.sparse:  # the label cells counted per block in one pass (np.bincount's counts)
            counts = label_block_counts(p_star, y_star, block, col, lay.nb, n_live, n_b, lay.closed,
                                        uniform_edges(0.0, 1.0, lay.nb))
        else:
            counts = np.bincount(block * n_live + col[lay.label_cells(y_star)], minlength=bs)
        b_dev = counts.reshape(n_b, n_live) - b_conf
        b_dev -= b_dev.mean(axis=0, keepdims=True)
        d = null_w @ b_dev
        note = (
            f"class-wise ECE null: one label draw y* ~ Categorical(p_i) per row, its null deviations bootstrapped "
            f"over {n_b} random row blocks ({n_null} draws; row-by-row simulation above N · R = {exact_budget:,})"
        )
    if n_b < n:
        note += f"; class-wise bootstrap over {n_b} random row blocks"
    null = np.abs(d).sum(axis=1) / (n * k)
    bc, bcf, bh, bv = np.split(w @ np.hstack([b_count, b_conf, b_hit, b_var]), 4, axis=1)
    boot = ece_cells(bc, bcf, bh, bv, bc.sum(axis=1))  # Σ over cells of the counts = K × rows
    # the bootstrap's per-cell errors: Σ_c |μ̂*_c − μ̂_c| / K with μ̂_c = Σ_{i∈c}(1[y_i = k] − p_ik)/N (the L1 band)
    n_star = bc.sum(axis=1, keepdims=True) / k
    l1 = np.abs((bh - bcf) / n_star - (c_hit - c_conf) / n).sum(axis=1) / k
    return {"observed": (float(plug), float(deb)), "null": null, "boot": boot, "boot_l1": l1, "note": note}


def merged_blocks(most: float) -> int:
    """The number of merged blocks B' for about ``most`` blocks: the smallest ⌊50 · 2^(j/4)⌋ (j = 0, 1, …) at least
    ``most`` (and 50 when ``most`` ≤ 50).

    A coarse grid (steps of 2^(1/4), so at most 19 % above ``most``) rather than ⌊most⌋: the bound depends on the
    number of live (class, bin) cells, hence on the bins; on the grid, nearby bins counts get the same B', so the
    merged blocks, their weights and the per-block class totals are shared (kept) across them.

    Parameters
    ----------
    most : float
        The B' the flop budget allows.

    Returns
    -------
    int
        B' ≥ 50.

    References
    ----------
    .. [1] Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary observations. *Annals of
       Statistics* 17(3), 1217–1241.

    Examples
    --------
    >>> [merged_blocks(x) for x in (10, 50, 51, 59, 60, 156.25, 166.7)]
    [50, 50, 59, 59, 70, 168, 168]
    """
    if not most > 50:
        return 50
    j = max(0, int(math.ceil(4.0 * math.log2(most / 50.0) - 1e-9)))
    while j > 0 and int(50.0 * 2.0 ** ((j - 1) / 4.0)) >= most:
        j -= 1
    while int(50.0 * 2.0 ** (j / 4.0)) < most:
        j += 1
    return int(50.0 * 2.0 ** (j / 4.0))


def _merged_clustering(clustering: Clustering, n_merged: int) -> Clustering:
    """Clusters merged into ``n_merged`` runs of consecutive clusters (moving blocks shortened in proportion)."""
    g = clustering.n_clusters
    codes = clustering.codes * n_merged // g
    k = clustering.block_length
    k = None if k is None else max(1, int(round(k * n_merged / g)))
    return Clustering(clustering.column, codes, np.arange(n_merged), k)


def score_references(rows: ClassificationRows, z: float) -> dict[str, tuple[float, float, float]]:
    """Exact expectation (and ± z·sd range) of mean NLL and mean Brier under y ~ Categorical(p_i).

    E[−log p_Y] = −Σ_k p_k log p_k and E[Σ_k (p_k − 1[Y = k])²] = 1 − Σ_k p_k², averaged over rows; the ranges use
    the exact variances of the row means (rows independent).

    Parameters
    ----------
    rows : ClassificationRows
        Rows with full probability vectors (logits, when given, for the log-probabilities).
    z : float
        Half-width of the range in standard deviations.

    Returns
    -------
    dict of str to (float, float, float)
        ``nll`` and ``brier``: (expectation, low, high).

    References
    ----------
    .. [1] Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       *Journal of the American Statistical Association* 102(477), 359–378.
    .. [2] Brier, G. W. (1950). Verification of forecasts expressed in terms of probability. *Monthly Weather
       Review* 78(1), 1–3.
    """
    p = rows.probs.astype(float, copy=False)
    n = rows.n
    if rows.logits is not None:
        z_ = rows.logits
        logp = z_ - z_.max(axis=1, keepdims=True)
        logp -= np.log(np.exp(logp).sum(axis=1, keepdims=True))
    else:
        eps = np.finfo(float).eps if rows.eps is None else rows.eps
        logp = np.maximum(p, eps)  # log clip(p, ε, 1 − ε), in one (N, K) buffer reused below
        np.minimum(logp, 1.0 - eps, out=logp)
        np.log(logp, out=logp)
    e1 = -np.einsum("ij,ij->i", p, logp)
    logp *= logp  # the buffer is ours in both branches
    e2 = np.einsum("ij,ij->i", p, logp)
    var_nll = np.clip(e2 - e1 * e1, 0.0, None).sum() / n**2
    sq = np.einsum("ij,ij->i", p, p)
    cube = np.einsum("ij,ij->i", np.multiply(p, p, out=logp), p)
    e_brier = 1.0 - sq  # Σp² − 2E[p_Y] + 1 with E[p_Y] = Σp²
    var_brier = (4.0 * np.clip(cube - sq * sq, 0.0, None)).sum() / n**2
    m1, m2 = float(e1.mean()), float(e_brier.mean())
    s1, s2 = math.sqrt(var_nll), math.sqrt(var_brier)
    return {"nll": (m1, m1 - z * s1, m1 + z * s1), "brier": (m2, m2 - z * s2, m2 + z * s2)}
