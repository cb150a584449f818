"""The rows of a classification diagnosis: :class:`ClassificationRows` (Guo et al. 2017, "On Calibration of Modern
Neural Networks").

The per-row quantities of (labels, probs[, logits]) — prediction ŷ_i = argmax_k p_ik, confidence c_i = max_k p_ik,
correctness 1[ŷ_i = y_i], −log p_iy and the Brier terms — and the confidence bins, computed once and shared by
every metric.  ``statistics(weights)`` evaluates every scalar for multinomial bootstrap count weights in O(N)
(O(NK) for class-wise ECE) without re-sorting, and ``with_labels(y*)`` re-scores simulated labels
(perfect-calibration reference) reusing the bins.  :mod:`calib_core.metrics.classification` builds the public
metrics on it and re-exports it.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..base.binning import bin_sums, uniform_edges
from ..base.classification import softmax
from .classification_bins import (
    Closed,
    Strategy,
    Target,
    as_label_array,
    as_probabilities,
    bin_calibration_errors,
    confidence_bins,
)
from .classification_kernels import RowPass, row_pass

__all__ = ["ClassificationRows"]


class ClassificationRows:
    """Per-row quantities of (labels, probs[, logits]) computed once and shared by every metric.

    Top-label-only inputs (``ClassificationRows.from_top_label``) carry confidence and correctness only: NLL, Brier
    and class-wise ECE are then unavailable and omitted.  ``statistics(weights)`` returns every scalar for row weights
    (``None`` = the data; bootstrap count weights otherwise) in O(N) per call, class-wise ECE in O(NK).

    Parameters
    ----------
    labels : ndarray of shape (n,) or None
        Labels 0..K−1.
    probs : ndarray of shape (n,) or (n, k) or None
        Probabilities.
    logits : ndarray of shape (n, k) or None, default None
        Logits (the NLL is then computed with log-sum-exp).
    n_bins : int, default 15
        Confidence bins.
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width or equal-mass bins.
    closed : {"right", "left"}, default "right"
        Which end of a bin is closed.
    eps : float or None, default None
        Clipping of p_iy in the NLL (float64 machine epsilon when None).

    Attributes
    ----------
    labels, pred : ndarray of int, shape (n,)
        Labels y and predictions ŷ.
    confidence : ndarray of shape (n,)
        Confidences c.
    correct : ndarray of shape (n,)
        1[ŷ = y].
    nll_rows, brier_rows : ndarray of shape (n,)
        −log p_iy and Σ_k (p_ik − 1[y = k])².

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.

    Naeini, M. P., Cooper, G. F. & Hauskrecht, M. (2015). Obtaining well calibrated probabilities using
    Bayesian binning. AAAI, 2901–2907.
    """

    #: The row pass's sums of the data (None: computed by the NumPy path; also for rows made without ``__init__``,
    #: e.g. re-binned copies, and for ``with_labels``).
    _top_sums: np.ndarray | None = None
    _classwise_hit_counts: np.ndarray | None = None

    def __init__(
        self,
        labels: np.ndarray | None,
        probs: np.ndarray | None,
        logits: np.ndarray | None = None,
        *,
        n_bins: int = 15,
        strategy: Strategy = "uniform",
        closed: Closed = "right",
        eps: float | None = None,
        _top: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.n_bins = int(n_bins)
        self.strategy: Strategy = strategy
        self.closed: Closed = closed
        if strategy not in ("uniform", "quantile"):
            raise ValueError(f"strategy must be 'uniform' or 'quantile', not {strategy!r}")
        if closed not in ("right", "left"):
            raise ValueError(f"closed must be 'right' or 'left', not {closed!r}")
        self.logits = None if logits is None else np.asarray(logits, dtype=float)
        fast: RowPass | None = None
        if _top is not None:  # top-label only: (confidence, correct)
            conf, correct = _top
            self.probs = None
            self.k = None
            self.labels = None
            self.pred = None
            self.confidence = np.asarray(conf, dtype=float)
            self.correct = np.asarray(correct, dtype=float)
            self.n = self.confidence.shape[0]
            self._sq_sum = None
        else:
            if probs is None:
                if self.logits is None:
                    raise ValueError("give probs or logits")
                if self.logits.ndim == 1:
                    self.logits = np.column_stack([np.zeros_like(self.logits), self.logits])
                probs = softmax(self.logits)
            p = as_probabilities(probs)
            self.probs = p
            self.n, self.k = p.shape
            if self.logits is not None and self.logits.ndim == 1:
                self.logits = np.column_stack([np.zeros_like(self.logits), self.logits])
            if self.logits is not None and self.logits.shape != p.shape:
                raise ValueError(f"logits shape {self.logits.shape} does not match probs shape {p.shape}")
            self.labels = as_label_array(labels, self.n, self.k)
            # one compiled pass: top label, p_iy, the confidence bins and every unweighted bin sum (bit for bit the
            # NumPy passes it replaces: argmax, gathers, uniform_bin_index and bincount)
            fast = row_pass(p, self.labels, self.n_bins, closed, binned=strategy == "uniform")
            self.pred, self.confidence, self.correct = fast.pred, fast.confidence, fast.correct
            self.__dict__["_p_label"] = fast.p_label
            # Σ_k p_k², reused by Brier for any labels: Σ_k (p_k − 1[y=k])² = Σ p² − 2 p_y + 1
            self._sq_sum = np.einsum("ij,ij->i", p, p, dtype=float)
        self.eps = eps
        # top-label bins: fixed for "uniform"; for "quantile" recomputed per bootstrap replicate from the sort
        self._order = np.argsort(self.confidence, kind="stable") if strategy == "quantile" else None
        if fast is not None and fast.bin_index is not None:
            self.bin_index, self.edges = fast.bin_index, uniform_edges(0.0, 1.0, self.n_bins)
            self._top_sums = fast.top_sums  # (3, M): count, Σ c, Σ 1[ŷ = y] of the data
            self._classwise_hit_counts = fast.classwise_hits  # (K, M): rows with y = k and p_iy in bin b
            count, s_conf = fast.classwise_count, fast.classwise_sum
            count[:, 0] = float(self.n) - count[:, 1:].sum(axis=1)  # first bin by complement, as _count_conf
            s_conf[:, 0] = fast.column_totals - s_conf[:, 1:].sum(axis=1)
            self.__dict__["_classwise_unweighted"] = (count, s_conf)
        else:
            self.bin_index, self.edges = confidence_bins(self.confidence, self.n_bins, strategy, closed)

    # -- constructors -----------------------------------------------------------------------------
    @classmethod
    def from_top_label(
        cls,
        confidence: np.ndarray,
        correct: np.ndarray,
        *,
        n_bins: int = 15,
        strategy: Strategy = "uniform",
        closed: Closed = "right",
    ) -> ClassificationRows:
        """Rows of a top-label-only file (``label, pred, confidence``): top-label metrics only."""
        return cls(None, None, n_bins=n_bins, strategy=strategy, closed=closed, _top=(confidence, correct))

    def with_labels(self, labels: np.ndarray) -> ClassificationRows:
        """The same predictions scored against other labels (e.g. simulated y* ~ p), bins reused.

        For top-label-only rows ``labels`` is the new correctness indicator.
        """
        new = object.__new__(ClassificationRows)
        drop = ("nll_rows", "brier_rows", "_pos", "_p_label", "_classwise_hits")
        new.__dict__.update({k: v for k, v in self.__dict__.items() if k not in drop})
        new._top_sums = new._classwise_hit_counts = None  # sums of the data's labels
        if self.top_label_only:
            new.correct = np.asarray(labels, dtype=float)
            return new
        new.labels = as_label_array(labels, self.n, self.k)
        new.correct = (self.pred == new.labels).astype(float)
        return new

    # -- per-row quantities --------------------------------------------------------------------------
    @property
    def top_label_only(self) -> bool:
        """True for rows built from (confidence, correct) only."""
        return self.probs is None

    @property
    def is_binary(self) -> bool:
        """True for K = 2 (positive-class reliability is then available)."""
        return self.k == 2

    @cached_property
    def nll_rows(self) -> np.ndarray:
        """−log p_iy: log-sum-exp of the logits when given, else −log clip(p_iy, ε, 1 − ε) in float64
        (ε = float64 machine epsilon unless ``eps`` is given)."""
        rows = np.arange(self.n)
        if self.logits is not None:
            z = self.logits
            m = z.max(axis=1)
            lse = m + np.log(np.exp(z - m[:, None]).sum(axis=1))
            return lse - z[rows, self.labels]
        eps = np.finfo(float).eps if self.eps is None else self.eps
        return -np.log(np.clip(self._p_label, eps, 1.0 - eps))

    @cached_property
    def _p_label(self) -> np.ndarray:
        """p_iy (float64), shared by NLL and Brier."""
        return self.probs[np.arange(self.n), self.labels].astype(float)

    @cached_property
    def brier_rows(self) -> np.ndarray:
        return self._sq_sum - 2.0 * self._p_label + 1.0

    @cached_property
    def _pos(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
        """Positive-class view of a binary set: values p_i1, hits 1[y = 1], bins, sort order."""
        if not self.is_binary:
            raise ValueError("positive-class reliability needs binary predictions (K = 2)")
        v = self.probs[:, 1].astype(float)
        hit = (self.labels == 1).astype(float)
        order = np.argsort(v, kind="stable") if self.strategy == "quantile" else None
        idx, edges = confidence_bins(v, self.n_bins, self.strategy, self.closed)
        return v, hit, idx, order, edges

    # -- binned sums ---------------------------------------------------------------------------------
    def _bins(
        self, values: np.ndarray, idx: np.ndarray, edges: np.ndarray, order: np.ndarray | None, w: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        if w is None or self.strategy == "uniform":
            return idx, edges
        return confidence_bins(values, self.n_bins, self.strategy, self.closed, weights=w, order=order)

    def sums(
        self, weights: np.ndarray | None = None, target: Target = "top_label"
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per-bin (weighted) count, Σ confidence, Σ hits and the edges (``binning.bin_sums``)."""
        if target == "top_label":
            if weights is None and self._top_sums is not None:  # the row pass's sums of the data
                count, s_conf, s_hit = (a.copy() for a in self._top_sums)
                return count, s_conf, s_hit, self.edges
            v, hit = self.confidence, self.correct
            idx, edges = self._bins(v, self.bin_index, self.edges, self._order, weights)
        elif target == "positive":
            v, hit, idx0, order, edges0 = self._pos
            idx, edges = self._bins(v, idx0, edges0, order, weights)
        else:
            raise ValueError(f"target must be 'top_label' or 'positive', not {target!r}")
        count, s_conf, s_hit = bin_sums(idx, self.n_bins, v, hit, weights=weights)
        return count, s_conf, s_hit, edges

    def calibration_errors(
        self, weights: np.ndarray | None = None, target: Target = "top_label"
    ) -> tuple[float, float]:
        """(ECE, MCE) for the given row weights."""
        count, s_conf, s_hit, _ = self.sums(weights, target)
        return bin_calibration_errors(count, s_conf, s_hit)

    # -- class-wise -----------------------------------------------------------------------------------
    @cached_property
    def _classwise(self) -> tuple[np.ndarray, list[np.ndarray], np.ndarray | None]:
        """Flat (class, bin) index of every p_ik, per-class edges, per-class sort orders (quantile)."""
        if self.top_label_only:
            raise ValueError("class-wise metrics need the full probability vectors (this file is top-label only)")
        n, k, nb = self.n, self.k, self.n_bins
        p = self.probs
        if self.strategy == "uniform":
            idx, edges = confidence_bins(p.reshape(-1), nb, "uniform", self.closed)
            flat = idx.reshape(n, k) + np.arange(k) * nb
            return flat, [edges] * k, None
        orders = np.argsort(p, axis=0, kind="stable")
        flat = np.empty((n, k), dtype=np.int64)
        all_edges = []
        for c in range(k):  # loop over classes (not rows): one sort/quantile per class
            idx, edges = confidence_bins(p[:, c], nb, "quantile", self.closed)
            flat[:, c] = idx + c * nb
            all_edges.append(edges)
        return flat, all_edges, orders

    def _classwise_flat(self, w: np.ndarray | None) -> np.ndarray:
        flat, _, orders = self._classwise
        if w is None or self.strategy == "uniform":
            return flat
        out = np.empty_like(flat)
        for c in range(self.k):
            idx, _ = confidence_bins(
                self.probs[:, c], self.n_bins, "quantile", self.closed, weights=w, order=orders[:, c]
            )
            out[:, c] = idx + c * self.n_bins
        return out

    @cached_property
    def _classwise_sparse(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Uniform bins: the entries outside each class's first bin (row, flat index, p) — usually few."""
        if self.strategy == "uniform":  # without the (N, K) cell array: bin 0 is p ≤ 1/M ((a, b] bins) or p < 1/M
            nb, k, flat_p = self.n_bins, self.k, self.probs.reshape(-1)  # row-major: the order of np.nonzero
            first_upper = confidence_bins(np.zeros(0), nb, "uniform", self.closed)[1][1]
            outside = ~(flat_p <= first_upper) if self.closed == "right" else ~(flat_p < first_upper)  # NaN: last
            j = np.flatnonzero(outside)
            rows_nz = j // k
            p_nz = flat_p.take(j).astype(float, copy=False)
            return rows_nz, confidence_bins(p_nz, nb, "uniform", self.closed)[0] + (j - rows_nz * k) * nb, p_nz
        flat, _, _ = self._classwise
        outside = (flat % self.n_bins) != 0
        rows_nz = np.nonzero(outside)[0]
        return rows_nz, flat[outside], self.probs[outside].astype(float)

    @cached_property
    def _classwise_hits(self) -> np.ndarray:
        """Equal-width bins: the one-vs-rest cell of each row's own label, y_i·M + bin(p_iy)."""
        return confidence_bins(self._p_label, self.n_bins, "uniform", self.closed)[0] + self.labels * self.n_bins

    @property
    def classwise_cells(self) -> np.ndarray:
        """(N, K) flat one-vs-rest cell k·M + b of every p_ik (b its bin among class k's M bins; cached)."""
        return self._classwise[0]

    @property
    def classwise_outside_first(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Equal-width bins: (row, flat cell, p) of the entries outside their class's first bin, row-major
        (cached; with K classes almost every p_ik ≤ 1/M falls in the first bin)."""
        if self.strategy != "uniform":
            raise ValueError("classwise_outside_first is for equal-width bins")
        return self._classwise_sparse

    @cached_property
    def _classwise_unweighted(self) -> tuple[np.ndarray, np.ndarray]:
        return self._count_conf(None)

    def _count_conf(self, w: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        nb, k = self.n_bins, self.k
        size = k * nb
        if self.strategy == "uniform":
            # first bin by complement: count_k0 = Σw − Σ_{b>0} count_kb, Σ_{bin 0} p = Σ_i w_i p_ik − Σ_{b>0} …
            rows_nz, flat_nz, p_nz = self._classwise_sparse
            w_nz = None if w is None else w[rows_nz]
            count, s_conf = bin_sums(flat_nz, size, p_nz, weights=w_nz)
            total_w = float(self.n) if w is None else float(w.sum())
            total_p = self.probs.sum(axis=0, dtype=float) if w is None else np.einsum("i,ik->k", w, self.probs)
            count = count.reshape(k, nb)
            s_conf = s_conf.reshape(k, nb)
            count[:, 0] = total_w - count[:, 1:].sum(axis=1)
            s_conf[:, 0] = total_p - s_conf[:, 1:].sum(axis=1)
            return count, s_conf
        flat = self._classwise_flat(w)
        ww = None if w is None else np.repeat(w, k)
        count, s_conf = bin_sums(flat.reshape(-1), size, self.probs.reshape(-1).astype(float), weights=ww)
        return count.reshape(k, nb), s_conf.reshape(k, nb)

    def classwise_sums(self, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(K, M) arrays of per-class per-bin count, Σ p_k and Σ 1[y = k] (one-vs-rest, ``binning.bin_sums``).

        Equal-width bins: only the entries outside each class's first bin are binned per call (with K classes
        almost all p_ik ≤ 1/M); the first bin follows from the totals Σ_i w_i and Σ_i w_i p_ik.
        """
        if self.top_label_only:
            raise ValueError("class-wise metrics need the full probability vectors (this file is top-label only)")
        w = None if weights is None else np.asarray(weights, dtype=float)
        nb, k = self.n_bins, self.k
        if w is None:
            count, s_conf = (a.copy() for a in self._classwise_unweighted)
        else:
            count, s_conf = self._count_conf(w)
        # 1[y = k] is non-zero only at k = y_i: N entries instead of NK
        if w is None and self._classwise_hit_counts is not None:  # the row pass's counts of the data
            return count, s_conf, self._classwise_hit_counts.copy()
        if self.strategy == "uniform":  # the cells of the labels' entries only (N of the NK)
            hit_idx = self._classwise_hits
        else:
            hit_idx = self._classwise_flat(w)[np.arange(self.n), self.labels]
        s_hit = bin_sums(hit_idx, k * nb, weights=w)[0]  # weighted count of the hits
        return count, s_conf, s_hit.reshape(k, nb)

    @property
    def classwise_edges(self) -> list[np.ndarray]:
        """Bin edges of each class's one-vs-rest bins (the same array K times for equal-width bins)."""
        if self.strategy == "uniform" and "_classwise" not in self.__dict__:  # no (N, K) cell array for the edges
            return [confidence_bins(np.zeros(0), self.n_bins, "uniform", self.closed)[1]] * self.k
        return [np.asarray(e) for e in self._classwise[1]]

    def classwise_ece(self, weights: np.ndarray | None = None) -> float:
        """Mean over classes k of the one-vs-rest ECE of (p_ik, 1[y_i = k]) (Kull et al. 2019)."""
        count, s_conf, s_hit = self.classwise_sums(weights)
        total = count.sum(axis=1)
        return float(np.mean(np.abs(s_hit - s_conf).sum(axis=1) / total))

    # -- everything --------------------------------------------------------------------------------------
    def statistics(self, weights: np.ndarray | None = None, *, classwise: bool = True) -> dict[str, float]:
        """Every scalar metric for row ``weights`` (None = the data): ece, mce, accuracy, mean_confidence[, nll,
        brier, classwise_ece][, ece_positive, mce_positive for binary sets]."""
        w = None if weights is None else np.asarray(weights, dtype=float)
        e, m = self.calibration_errors(w)
        out = {"ece": e, "mce": m, "accuracy": wmean(self.correct, w), "mean_confidence": wmean(self.confidence, w)}
        if not self.top_label_only:
            out["nll"] = wmean(self.nll_rows, w)
            out["brier"] = wmean(self.brier_rows, w)
            if classwise:
                out["classwise_ece"] = self.classwise_ece(w)
            if self.is_binary:
                ep, mp = self.calibration_errors(w, "positive")
                out["ece_positive"] = ep
                out["mce_positive"] = mp
        return out

    @cached_property
    def _sampler(self) -> tuple[np.ndarray, np.ndarray]:
        """Row-offset cumulative probabilities, globally sorted, for O(log NK) categorical draws per row."""
        cum = np.cumsum(self.probs, axis=1, dtype=float)
        total = cum[:, -1].copy()
        offset = 4.0 * np.arange(self.n, dtype=float)  # rows' cumsums (≤ ~1) made disjoint and increasing
        return (cum + offset[:, None]).reshape(-1), total

    def sample_labels(self, rng: np.random.Generator) -> np.ndarray:
        """y*_i ~ Categorical(p_i) for every row: inverse CDF by one ``searchsorted`` on the offset cumsums."""
        flat, total = self._sampler
        u = rng.random(self.n) * total + 4.0 * np.arange(self.n, dtype=float)
        idx = np.searchsorted(flat, u, side="right") - np.arange(self.n) * self.k
        return np.clip(idx, 0, self.k - 1).astype(np.int64)

    def simulate(self, rng: np.random.Generator, *, classwise: bool = True) -> dict[str, float]:
        """``statistics`` on labels simulated from the predictions (y* ~ Categorical(p_i); top-label only:
        correct* ~ Bernoulli(c_i)): what a perfectly calibrated forecaster would score."""
        if self.top_label_only:
            sim = (rng.random(self.n) < self.confidence).astype(float)
        else:
            sim = self.sample_labels(rng)
        return self.with_labels(sim).statistics(classwise=classwise)


def wmean(x: np.ndarray, w: np.ndarray | None) -> float:
    if w is None:
        return float(np.mean(x)) if x.size else float("nan")
    tw = float(w.sum())
    return float(np.dot(w, x) / tw) if tw > 0 else float("nan")
