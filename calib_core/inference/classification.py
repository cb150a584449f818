"""Classification inference: a p-value for every calibration statistic, intervals that mean what
they say, one headline verdict — all from per-bin summaries, at a small multiple of the point estimates' cost.

Null hypothesis H0 ("perfect calibration"): given the predictions, the labels are independent draws
y_i ~ Categorical(p_i).  Everything below conditions on the predictions (they are fixed, only labels vary),
so the bins — which depend on the predictions alone — are fixed under H0 too.

Tests (``kind="calibration"``; one p-value each, Monte-Carlo with ``n_null`` ≥ 1,000 null draws, the
Monte-Carlo standard error sqrt(p(1 − p)/R) reported, and a Bernstein tail bound where it is smaller):

* **Top-label statistics** (ECE, MCE, the gap of the top confidence bin, the overall gap mean confidence −
  accuracy).  Under H0 the top-label correctness of row i is Bernoulli(c_i) with c_i = max_k p_ik (the label
  equals the arg-max with probability p_i,argmax), independently over rows.  So the number correct in bin m is
  Poisson-binomial with mean Σ c_i and variance Σ c_i(1 − c_i), and bins are independent.  While
  N · R ≤ ``exact_budget`` the draws are exact (R × N uniforms).  Above, each bin is split into the fewest of
  1, 2, 4, … ``n_sub`` equal-width sub-bins for which Binomial(n_g, mean c over g) per sub-bin g has a variance
  at most 0.2 % above the exact Σ c(1 − c) (the excess is Σ_g Σ_{i∈g} (c_i − c̄_g)², computed from Σ c²), and
  the null count of the bin is the sum of those binomials: exact mean, slightly conservative spread (the ratio
  is in the notes).  Cost: R × (a few dozen) binomial draws, independent of N.
* **Positive-class statistics** (binary files): same construction with 1[y = 1] ~ Bernoulli(p_i1).
* **Class-wise ECE**: the K one-vs-rest indicators of a row are dependent (exactly one is 1), so classes cannot
  be drawn independently.  Small N (N · R ≤ ``exact_budget``): exact — R label vectors y* ~ Categorical(p_i)
  are drawn row by row and only the hit cells are re-counted.  Larger N: one exact label draw y* per row, the
  rows' null deviations (1[y* = k] − p_ik per (class, bin) cell) summed over ``n_blocks`` random row blocks,
  centred, and the null replicates are multinomial re-weightings of those blocks (a bootstrap of the null
  deviation; variance right in expectation, skewness kept), one matrix product.

Proper scores (``kind="proper_score"``): NLL and Brier get their exact expectation under H0 as the reference
(E[−log p_Y] = −Σ_k p_k log p_k, E[Σ_k (p_k − 1[Y = k])²] = 1 − Σ_k p_k², averaged over rows) and a ± z·sd
reference range from the exact variance — no p-value, no verdict.  Accuracy and mean confidence are
descriptive.

Intervals (two-sided ``level``), for the population value of each statistic with the same bins:

* bootstrap on summaries: rows are assigned to ``n_blocks`` random blocks, per block and bin the sums
  (n, Σ conf, Σ correct) are kept, and a bootstrap replicate is a multinomial re-weighting of the blocks
  (``n_boot`` replicates = one (R × B) @ (B × cells) matrix product).  Bins are held fixed (exact for
  equal-width bins; for equal-mass bins the edges are conditioned on).
* ECE: the plug-in is biased upward (|noise| adds to every bin), so the
  interval is built around the **debiased** estimate θ̃, which subtracts each bin's estimated bias
  E|δ̂ + σZ| − |δ̂| with δ̂ = acc − conf (the Gaussian bias correction of Kumar, Liang & Ma 2019, "Verified
  Uncertainty Calibration", §5; see also Roelofs et al. 2022, "Mitigating bias in calibration error
  estimation"); σ² = Σ c_i(1 − c_i)/n² is the bin accuracy's variance under the forecast (exact under H0,
  where the bias matters; when |δ| ≫ σ the correction vanishes anyway).  Interval: the percentile bootstrap
  interval of θ̃, extended down to 0 when the statistic's test does not reject at 1 − ``level`` (a population
  value of 0 — perfect calibration — is then not excluded, so the coverage at 0 is that of the test, ≥ level;
  elsewhere the extension can only add coverage).  Measured (``bench/verdicts_classification.py``): the
  basic interval [2θ̃ − q_hi, 2θ̃ − q_lo] under-covers when miscalibrated (0.87–0.92 at N = 1,000) because
  θ̃'s bootstrap law is skewed, the plain percentile interval never covers 0 under H0.
  The plug-in can lie above the interval: that means much of it is noise (the table's note says so,
  with the null mean — the plug-in a perfectly calibrated model would get at this N).
* class-wise ECE and ECE of the positive class: most of their cells (K·M (class, bin) cells; M bins over [0, 1])
  hold a few rows, where the Gaussian correction leaves a large bias (the debiased percentile interval covered
  0.00–0.59 under temperature miscalibration at K = 10 and 100 below N = 10,000, ECE positive 0.54 at K = 2,
  N = 200).  Interval: plug-in ± Q, Q the ``level`` quantile of the summed absolute cell error
  Σ_c|μ̂_c − μ_c|/K (the larger of its bootstrap and its null law), valid by the triangle inequality whatever
  the cell sizes — conservative, and wide when the cells are small (:func:`_l1_band`).
* MCE (top-label, positive class): simultaneous Clopper–Pearson intervals of every non-empty bin's accuracy
  (Šidák), combined into an interval for the largest |acc − conf| over the bins the rows fill
  (:func:`_mce_interval`); exact and conservative, wide when a bin holds a few rows.
* accuracy: exact binomial (Clopper–Pearson); top-bin gap: top-bin confidence minus the Clopper–Pearson
  interval of its accuracy; means (mean confidence, gap, NLL, Brier): percentile bootstrap.

Multiplicity: the **primary family** is {ECE, top-bin gap}.  ECE is the omnibus statistic everyone reports;
the top confidence bin is where a classifier's confident decisions live and where over-confidence of modern
networks concentrates (Guo et al. 2017, Fig. 1): its signed gap is an exact Poisson-binomial test with
power that ECE's sum of absolute values dilutes.  The top bin is the highest-confidence bin of the reliability
diagram, merged with the bins below it until it holds at least N/M rows (so it is never a handful of rows).
Holm's procedure at family-wise ``alpha`` gives ONE headline verdict; its direction is the sign of
accuracy − mean confidence (over-confident when accuracy is lower) when that overall gap is itself
significant, else the sign of the rejecting top-bin gap, else "miscalibrated" without a direction.
Secondary statistics (MCE, the overall gap, class-wise ECE, ECE/MCE positive) get Benjamini–Hochberg flags at
false-discovery rate ``alpha``; the table says how many flags one would expect by chance
(``alpha`` × the number of secondary tests, if every one of them were calibrated and tested at ``alpha``).
"""

from __future__ import annotations

import copy
import hashlib
import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from scipy import sparse, special

from ..base.report import CALIBRATION_STATISTIC, DESCRIPTIVE, PROPER_SCORE
from ..base.significance import (
    block_bootstrap_weights,
    block_ids,
    clopper_pearson,
    expected_chance_flags,
    format_p,
    monte_carlo_p,
    percentile_interval,
)
from ..metrics.classification import ClassificationRows, Strategy, confidence_bins
from ..metrics.classification_ratio import ratio_interval, tce_null
from ..metrics.classification_smooth import SmoothECE, rows_target, smooth_inference
from .result import CALIBRATED, MISCALIBRATED, InferenceResult, adjust_families

__all__ = [
    "PRIMARY_FAMILY",
    "InferenceResult",
    "infer_classification",
]

#: The pre-declared primary family (Holm at family-wise alpha → the headline verdict).
PRIMARY_FAMILY = ("ece", "top_bin_gap")

_KIND = {
    "ece": CALIBRATION_STATISTIC,
    "top_bin_gap": CALIBRATION_STATISTIC,
    "mce": CALIBRATION_STATISTIC,
    "confidence_gap": CALIBRATION_STATISTIC,
    "classwise_ece": CALIBRATION_STATISTIC,
    "ece_positive": CALIBRATION_STATISTIC,
    "mce_positive": CALIBRATION_STATISTIC,
    "smooth_ece": CALIBRATION_STATISTIC,
    "smooth_ece_positive": CALIBRATION_STATISTIC,
    "calibration_ratio": CALIBRATION_STATISTIC,
    "calibration_ratio_positive": CALIBRATION_STATISTIC,
    "tce": CALIBRATION_STATISTIC,
    "tce_positive": CALIBRATION_STATISTIC,
    "nll": PROPER_SCORE,
    "brier": PROPER_SCORE,
    "accuracy": DESCRIPTIVE,
    "mean_confidence": DESCRIPTIVE,
}


# --------------------------------------------------------------------------------------------------
# small numerics
# --------------------------------------------------------------------------------------------------
def _expected_abs(d: np.ndarray, s: np.ndarray) -> np.ndarray:
    """E|d + sZ| for Z ~ N(0, 1) (folded normal mean); |d| where s = 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = d / s
        out = s * math.sqrt(2.0 / math.pi) * np.exp(-0.5 * r * r) + d * (1.0 - 2.0 * special.ndtr(-r))
    return np.where(s > 0, out, np.abs(d))


def _ece_cells(count, s_conf, s_hit, s_var, total):
    """Plug-in and debiased ECE over the last axis (cells) of per-cell sums (any leading shape).

    Plug-in Σ|Σhit − Σconf| / total.  Debiased: each cell's bias E|δ̂| − |δ| is estimated as
    E|δ̂ + σZ| − |δ̂| (Kumar et al. 2019, §5) with δ̂ = acc − conf and σ² = Σ c(1 − c) / n², the variance of
    the cell's accuracy under the forecast — exact under H0 (where the bias matters), and immaterial when
    |δ| ≫ σ; unlike acc(1 − acc)/n it is not 0 in small cells that happen to be all right or all wrong.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(count > 0, count, 1.0)
        d = np.where(count > 0, (s_hit - s_conf) / safe, 0.0)
        sd = np.sqrt(np.clip(s_var, 0.0, None)) / safe
    plug = np.abs(s_hit - s_conf).sum(axis=-1) / total
    bias = (count * (_expected_abs(d, sd) - np.abs(d))).sum(axis=-1) / total
    return plug, plug - bias


def _mce_cells(count: np.ndarray, dev: np.ndarray) -> np.ndarray:
    """max over non-empty bins of |dev| / count (last axis)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(count > 0, np.abs(dev) / np.where(count > 0, count, 1.0), -np.inf)
    out = r.max(axis=-1)
    return np.where(np.isfinite(out), out, np.nan)


def _bernstein_sum(t: float, v: float, n_terms_log2: float = 0.0) -> float:
    """2^n_terms_log2 · exp(−t² / (2(v + t/3))): Bernstein tail bound of a sum of centred terms in [−1, 1]."""
    if not np.isfinite(t) or t <= 0:
        return 1.0
    log_p = n_terms_log2 * math.log(2.0) - t * t / (2.0 * (v + t / 3.0))
    return float(min(1.0, math.exp(log_p)))


def _quantiles(x: np.ndarray, level: float) -> tuple[float, float]:
    lo, hi = percentile_interval(np.asarray(x, dtype=float), level)
    return float(lo[0]), float(hi[0])


# --------------------------------------------------------------------------------------------------
# top-label / positive-class null on sub-bin summaries
# --------------------------------------------------------------------------------------------------
class _BinnedBernoulli:
    """Rows with probabilities v_i of an event h_i, binned (idx, edges): per-bin summaries and null draws of
    the per-bin event counts under h_i ~ Bernoulli(v_i) independent (exact row by row when N · R is small,
    else Binomial(n_g, v̄_g) per sub-bin g — see the module docstring)."""

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
        self.count = np.bincount(idx, minlength=n_bins).astype(float)
        self.s_v = np.bincount(idx, weights=v, minlength=n_bins)
        self.s_h = np.bincount(idx, weights=h, minlength=n_bins)
        self.var = np.bincount(idx, weights=v * (1.0 - v), minlength=n_bins)
        self.dev = self.s_h - self.s_v  # observed Σ(h − v) per bin
        lo = edges[idx]
        width = edges[idx + 1] - lo
        with np.errstate(divide="ignore", invalid="ignore"):
            pos = np.where(width > 0, (v - lo) / width, 0.0)
        sub = np.clip((pos * n_sub).astype(np.int64), 0, n_sub - 1)
        g = idx * n_sub + sub
        size = n_bins * n_sub
        n_f = np.bincount(g, minlength=size).astype(float)
        s_f = np.bincount(g, weights=v, minlength=size)
        q_f = np.bincount(g, weights=v * v, minlength=size)
        # per bin the coarsest split (1, 2, 4, … n_sub equal-width sub-bins) whose binomial variance exceeds the
        # exact one by at most var_tol: Σ_g n_g v̄_g(1 − v̄_g) − Σ v(1 − v) = Σ_g Σ_{i∈g} (v_i − v̄_g)²
        fine = np.arange(size)
        if n_sub < 1 or n_sub & (n_sub - 1):
            raise ValueError("n_sub must be a power of two")
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
        g = idx * n_sub + (sub // step[idx]) * step[idx]
        n_g = np.bincount(g, minlength=size)
        s_g = np.bincount(g, weights=v, minlength=size)
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


# --------------------------------------------------------------------------------------------------
# smooth ECE inference: its own random stream, memoised on the rows
# --------------------------------------------------------------------------------------------------
#: How many smooth-ECE inference results :func:`smooth_inference_of` keeps (each a few kB: 200 null draws).
SMOOTH_MEMO_ENTRIES = 32
_SMOOTH_MEMO: OrderedDict = OrderedDict()
_SMOOTH_LOCK = threading.Lock()


def _digest(*arrays: np.ndarray) -> str:
    """BLAKE2b (128 bits) of the arrays' dtypes, shapes and bytes."""
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(memoryview(a).cast("B"))
    return h.hexdigest()


def smooth_inference_of(
    values: np.ndarray,
    outcomes: np.ndarray,
    *,
    estimate: SmoothECE | None,
    n_blocks: int,
    n_boot: int,
    n_null: int,
    level: float,
    exact_budget: int,
    seed: int | None,
    stream: str,
) -> dict:
    """:func:`calib_core.metrics.classification_smooth.smooth_inference` of (``values``, ``outcomes``) on its own random
    stream (``SeedSequence`` of ``seed`` and ``stream``) with its own random row blocks
    (:func:`calib_core.base.significance.block_ids`, ``n_blocks``): its test, null and interval depend on the rows and
    these options only — not on the confidence bins or the other statistics' draws — so a change of the bins reuses
    them.  With a ``seed``, the last :data:`SMOOTH_MEMO_ENTRIES` results are kept, keyed on a digest of the rows
    and the options (every hit is a private copy); ``seed=None`` draws afresh every time."""
    f = np.asarray(values, dtype=float)
    y = np.asarray(outcomes)
    key = None
    if seed is not None:
        est = (float(estimate.value), float(estimate.sigma)) if estimate is not None else None
        key = (_digest(f, y), est, int(n_blocks), int(n_boot), int(n_null), float(level), int(exact_budget),
               int(seed), stream)
        with _SMOOTH_LOCK:
            if key in _SMOOTH_MEMO:
                _SMOOTH_MEMO.move_to_end(key)
                return copy.deepcopy(_SMOOTH_MEMO[key])
    entropy = [0 if seed is None else int(seed), 0x5E0, *stream.encode()]
    rng = np.random.default_rng(np.random.SeedSequence(entropy) if seed is not None else None)
    block, _ = block_ids(f.shape[0], n_blocks, rng)
    out = smooth_inference(f, y, estimate=estimate, block=block, n_boot=n_boot, n_null=n_null, level=level,
                           exact_budget=exact_budget, rng=rng)
    if key is not None:
        with _SMOOTH_LOCK:
            _SMOOTH_MEMO[key] = copy.deepcopy(out)
            while len(_SMOOTH_MEMO) > SMOOTH_MEMO_ENTRIES:
                _SMOOTH_MEMO.popitem(last=False)
    return out


# --------------------------------------------------------------------------------------------------
# the entry point
# --------------------------------------------------------------------------------------------------
def infer_classification(
    rows: ClassificationRows | None = None,
    labels: np.ndarray | None = None,
    probs: np.ndarray | None = None,
    *,
    n_bins: int = 15,
    strategy: Strategy = "uniform",
    n_null: int = 2000,
    n_boot: int = 1000,
    n_blocks: int = 500,
    n_sub: int = 32,
    level: float = 0.95,
    alpha: float = 0.05,
    classwise: bool = True,
    exact_budget: int = 2_000_000,
    seed: int | None = 0,
    smooth: bool = True,
    smooth_estimates: dict[str, SmoothECE] | None = None,
    tce: bool = True,
) -> InferenceResult:
    """Tests, intervals and the headline verdict of one set of classification rows (see the module docstring).

    Give prepared ``rows`` (:class:`ClassificationRows`, e.g. from ``classification_rows(pset, mask)``; their
    ``n_bins`` / ``strategy`` are used) or ``labels`` and ``probs``.  ``n_null`` null draws per test (≥ 1,000:
    the Monte-Carlo standard error of p = 0.05 is then ≤ 0.007; row-by-row exact draws while N · n_null ≤
    ``exact_budget``), ``n_boot`` bootstrap replicates over ``n_blocks`` random row blocks, ``n_sub`` sub-bins
    per bin for the summary-level null draws, two-sided ``level`` for the intervals, ``alpha`` the family-wise
    error of the headline and the false-discovery rate of the secondary flags.  ``smooth``: also test the smooth
    ECE (secondary; :func:`calib_core.metrics.classification_smooth.smooth_inference`, at most 1,000 null draws),
    reusing ``smooth_estimates`` (key → :class:`SmoothECE`) when the caller has them.  The calibration ratio Σf/Σy (top
    label, and positive class for binary files) is always tested (secondary; the overall gap's null draws) with a
    log-scale delta-method interval; ``tce``: also TCE (:mod:`calib_core.metrics.classification_ratio`; secondary, no
    interval).
    """
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    if rows is None:
        if labels is None or probs is None:
            raise ValueError("give rows, or labels and probs")
        rows = ClassificationRows(labels, probs, n_bins=n_bins, strategy=strategy)
    if n_null < 1 or n_boot < 1:
        raise ValueError("n_null and n_boot must be at least 1")
    rng = np.random.default_rng(seed)
    n = rows.n
    if n < 1:
        raise ValueError("no rows")
    notes: list[str] = []
    full = not rows.top_label_only
    binary = full and rows.k == 2

    bins = _Bins.of(rows, n_sub, binary)
    timings["summaries"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    null, draws = _bin_nulls(bins, n_null, exact_budget, rng, notes)
    timings["null_top_label"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    block, n_b, parts, w = _blocks(rows, bins, n_blocks, n_boot, rng)
    timings["blocks"] = time.perf_counter() - t2
    cw = None
    if classwise and full:
        t3 = time.perf_counter()
        cw = _classwise(rows, block, n_b, w, n_null, exact_budget, rng)
        notes.append(cw["note"])
        timings["classwise"] = time.perf_counter() - t3
    smoothed: dict[str, dict] = {}
    if smooth:
        t5 = time.perf_counter()
        smoothed = _smooth_results(rows, binary, smooth_estimates, n_blocks, n_boot, n_null, level, exact_budget,
                                   seed)
        timings["smooth"] = time.perf_counter() - t5
    t4 = time.perf_counter()
    boot = _bootstrap(w, parts, bins, cw, full)
    timings["bootstrap"] = time.perf_counter() - t4

    obs, deb = _observed(rows, bins, cw)
    if cw is not None:
        null["classwise_ece"] = cw["null"]
    pvals = _bin_p_values(bins, obs, null)
    ratio_ci = _add_ratio_tests(bins, draws, obs, null, pvals, level)
    if tce:
        t6 = time.perf_counter()
        _add_tce_tests(rows, bins, obs, null, pvals, n_null, alpha, exact_budget, rng)
        timings["tce"] = time.perf_counter() - t6
    for key, r in smoothed.items():  # smooth ECE: p-value from its fixed-bandwidth draws, null law of smECE* itself
        obs[key] = float(r["value"])
        pvals[key] = (float(r["p_value"]), float(r["p_mc_se"]), r["p_method"])
        null[key] = r["null"]

    primary = [m for m in PRIMARY_FAMILY if m in pvals]
    secondary = [m for m in SECONDARY if m in pvals]
    adjusted = adjust_families({m: pvals[m][0] for m in primary}, {m: pvals[m][0] for m in secondary}, alpha)
    ci = _intervals(bins, obs, pvals, boot, null, cw, smoothed, ratio_ci, level)
    ref = _score_references(rows, float(special.ndtri(0.5 + level / 2.0))) if full else {}
    order = [*primary, *secondary, *(["nll", "brier"] if full else []), "accuracy", "mean_confidence"]
    records = _records(order, primary, secondary, obs, deb, null, ref, pvals, adjusted, ci, smoothed, level, alpha)
    verdict, direction, sentence = _headline(bins, obs, pvals, primary, adjusted, alpha)
    timings["total"] = time.perf_counter() - t0
    return InferenceResult(
        table=InferenceResult.table_from(records),
        verdict=verdict,
        direction=direction,
        sentence=sentence,
        n=n,
        alpha=alpha,
        n_primary=len(primary),
        n_secondary=len(secondary),
        n_flags=sum(1 for m in secondary if adjusted[m][1]),
        expected_chance_flags=expected_chance_flags(len(secondary), alpha),
        options=dict(n_bins=rows.n_bins, strategy=rows.strategy, n_null=n_null, n_boot=n_boot, n_blocks=n_blocks,
                     n_sub=n_sub, level=level, alpha=alpha, classwise=classwise, exact_budget=exact_budget, seed=seed,
                     smooth=smooth, tce=tce),
        notes=notes,
        timings=timings,
        top_bins=(bins.first_top, rows.n_bins - 1),
    )


#: The secondary statistics (Benjamini–Hochberg at false-discovery rate alpha), in table order.
SECONDARY = ("mce", "confidence_gap", "classwise_ece", "ece_positive", "mce_positive", "smooth_ece",
             "smooth_ece_positive", "calibration_ratio", "calibration_ratio_positive", "tce", "tce_positive")


@dataclass(frozen=True)
class _Bins:
    """The per-bin summaries of one set of rows: the top-label bins, the top region (the highest bins, merged
    downwards until they hold at least N/M rows) and, for binary files, the positive-class bins."""

    n: int
    top: _BinnedBernoulli
    top_sel: np.ndarray
    first_top: int
    n_top: float
    pos: _BinnedBernoulli | None

    @classmethod
    def of(cls, rows: ClassificationRows, n_sub: int, binary: bool) -> _Bins:
        n, m_bins = rows.n, rows.n_bins
        top = _BinnedBernoulli(rows.confidence, rows.correct, rows.bin_index, rows.edges, m_bins, n_sub)
        cum_from_top = np.cumsum(top.count[::-1])
        j = int(np.searchsorted(cum_from_top, n / m_bins - 1e-9))
        first_top = m_bins - 1 - min(j, m_bins - 1)
        top_sel = np.zeros(m_bins, dtype=bool)
        top_sel[first_top:] = True
        n_top = float(top.count[top_sel].sum())
        pos = None
        if binary:
            v1 = rows.probs[:, 1].astype(float)
            h1 = (rows.labels == 1).astype(float)
            idx1, edges1 = confidence_bins(v1, m_bins, rows.strategy, rows.closed)
            pos = _BinnedBernoulli(v1, h1, idx1, edges1, m_bins, n_sub)
        return cls(n, top, top_sel, first_top, n_top, pos)

    @property
    def top_confidence(self) -> float:
        """Mean confidence of the top region."""
        return float(self.top.s_v[self.top_sel].sum() / self.n_top)

    @property
    def top_hits(self) -> float:
        """Correct predictions in the top region."""
        return float(self.top.s_h[self.top_sel].sum())


def _bin_nulls(bins: _Bins, n_null: int, exact_budget: int, rng: np.random.Generator,
               notes: list[str]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Null draws of the binned top-label (and positive-class) statistics, and the per-bin null deviations they
    come from (``"top"``, ``"positive"``; the calibration ratios reuse them)."""
    n, top = bins.n, bins.top
    d_null, exact = top.null_dev(n_null, rng, exact_budget)
    notes.append(
        "top-label null: "
        + (
            f"exact, {n_null} draws of correct*_i ~ Bernoulli(c_i) row by row"
            if exact
            else f"{n_null} draws of Binomial(n_g, mean c over g) in {top.g_n.size} sub-bins (variance ratio to "
            f"the exact Poisson-binomial {top.var_ratio:.5f})"
        )
    )
    null = {
        "ece": np.abs(d_null).sum(axis=1) / n,
        "mce": _mce_cells(top.count, d_null),
        "top_bin_gap": -d_null[:, bins.top_sel].sum(axis=1) / bins.n_top,
        "confidence_gap": -d_null.sum(axis=1) / n,
    }
    draws = {"top": d_null}
    if bins.pos is not None:
        dp, _ = bins.pos.null_dev(n_null, rng, exact_budget)
        null["ece_positive"] = np.abs(dp).sum(axis=1) / n
        null["mce_positive"] = _mce_cells(bins.pos.count, dp)
        draws["positive"] = dp
    return null, draws


def _blocks(rows: ClassificationRows, bins: _Bins, n_blocks: int, n_boot: int,
            rng: np.random.Generator) -> tuple[np.ndarray, int, list[np.ndarray], np.ndarray]:
    """Random row blocks, the per-block summaries of the bins (and of NLL and Brier) and the bootstrap weights:
    (block of each row, number of blocks, the summaries' (B × ·) arrays, (R × B) weights)."""
    block, n_b = block_ids(bins.n, n_blocks, rng)
    parts = bins.top.block_sums(block, n_b)
    if not rows.top_label_only:
        parts.append(np.stack([np.bincount(block, weights=x, minlength=n_b)
                               for x in (rows.nll_rows, rows.brier_rows)], axis=1))
    if bins.pos is not None:
        parts.extend(bins.pos.block_sums(block, n_b))
    w = block_bootstrap_weights(n_b, n_boot, rng)
    return block, n_b, parts, w


def _smooth_results(rows, binary, estimates, n_blocks, n_boot, n_null, level, exact_budget, seed) -> dict[str, dict]:
    """Smooth ECE (Błasiok & Nakkiran 2023): its own grid, null and bootstrap, top label (and positive class)."""
    out = {}
    for tgt, key in (("top_label", "smooth_ece"), *((("positive", "smooth_ece_positive"),) if binary else ())):
        f_s, y_s = rows_target(rows, tgt)
        out[key] = smooth_inference_of(
            np.clip(f_s, 0.0, 1.0), y_s, estimate=(estimates or {}).get(key), n_blocks=n_blocks, n_boot=n_boot,
            n_null=min(n_null, 1000), level=level, exact_budget=exact_budget, seed=seed, stream=key)
    return out


def _bootstrap(w: np.ndarray, parts: list[np.ndarray], bins: _Bins, cw: dict | None, full: bool) -> dict:
    """Bootstrap replicates of every binned statistic: one matrix product of the weights with the block
    summaries (``<name>_db``: the debiased ECEs; ``ece_positive_l1``: the L1 band's summed cell error)."""
    widths = np.cumsum([a.shape[1] for a in parts])[:-1]
    reps = np.split(w @ np.hstack(parts), widths, axis=1)
    boot_top = reps[:4]  # count, Σconf, Σcorrect, Σc(1−c): (R, M)
    boot_n = boot_top[0].sum(axis=1)
    boot: dict[str, np.ndarray] = {}
    boot["ece"], boot["ece_db"] = _ece_cells(*boot_top, boot_n)
    boot["mce"] = _mce_cells(boot_top[0], boot_top[2] - boot_top[1])
    boot["accuracy"] = boot_top[2].sum(axis=1) / boot_n
    boot["mean_confidence"] = boot_top[1].sum(axis=1) / boot_n
    boot["confidence_gap"] = boot["mean_confidence"] - boot["accuracy"]
    if full:
        boot_scal = reps[4]
        boot["nll"] = boot_scal[:, 0] / boot_n
        boot["brier"] = boot_scal[:, 1] / boot_n
    if bins.pos is not None:
        bp = reps[-4:]
        boot["ece_positive"], boot["ece_positive_db"] = _ece_cells(*bp, boot_n)
        # Σ_m |μ̂*_m − μ̂_m| of the per-bin deviations μ̂_m = Σ_{i∈m}(1[y_i = 1] − p_i1)/N: the L1 band's error
        boot["ece_positive_l1"] = np.abs((bp[2] - bp[1]) / boot_n[:, None] - bins.pos.dev / bins.n).sum(axis=1)
        boot["mce_positive"] = _mce_cells(bp[0], bp[2] - bp[1])
    if cw is not None:
        boot["classwise_ece"], boot["classwise_ece_db"] = cw["boot"]
    return boot


def _observed(rows: ClassificationRows, bins: _Bins, cw: dict | None) -> tuple[dict[str, float], dict[str, float]]:
    """The binned statistics on the data: (plug-in values, debiased values of the ECEs)."""
    n, top, pos = bins.n, bins.top, bins.pos
    obs: dict[str, float] = {}
    deb: dict[str, float] = {}
    e_pl, e_db = _ece_cells(top.count, top.s_v, top.s_h, top.var, float(n))
    obs["ece"], deb["ece"] = float(e_pl), float(e_db)
    obs["mce"] = float(_mce_cells(top.count, top.dev))
    acc = float(top.s_h.sum() / n)
    mconf = float(top.s_v.sum() / n)
    obs["accuracy"], obs["mean_confidence"] = acc, mconf
    obs["confidence_gap"] = mconf - acc
    obs["top_bin_gap"] = float(-top.dev[bins.top_sel].sum() / bins.n_top)
    if not rows.top_label_only:
        obs["nll"] = float(np.mean(rows.nll_rows))
        obs["brier"] = float(np.mean(rows.brier_rows))
    if pos is not None:
        e_pl, e_db = _ece_cells(pos.count, pos.s_v, pos.s_h, pos.var, float(n))
        obs["ece_positive"], deb["ece_positive"] = float(e_pl), float(e_db)
        obs["mce_positive"] = float(_mce_cells(pos.count, pos.dev))
    if cw is not None:
        obs["classwise_ece"], deb["classwise_ece"] = cw["observed"]
    return obs, deb


#: Statistics whose test is two-sided (|statistic| against |null draws|).
_TWO_SIDED = frozenset({"top_bin_gap", "confidence_gap"})


def _bin_p_values(bins: _Bins, obs: dict[str, float],
                  null: dict[str, np.ndarray]) -> dict[str, tuple[float, float, str]]:
    """(p-value, its Monte-Carlo s.e., how) of every statistic with null draws: the Monte-Carlo p-value, or a
    Bernstein tail bound where that is smaller (no null draw reached the statistic)."""
    n, top, pos, sel = bins.n, bins.top, bins.pos, bins.top_sel
    n_nonempty = int((top.count > 0).sum())
    bounds = {
        "ece": _bernstein_sum(obs["ece"] * n, float(top.var.sum()), n_nonempty),
        "top_bin_gap": min(1.0, 2.0 * _bernstein_sum(abs(obs["top_bin_gap"]) * bins.n_top, float(top.var[sel].sum()))),
        "confidence_gap": min(1.0, 2.0 * _bernstein_sum(abs(obs["confidence_gap"]) * n, float(top.var.sum()))),
        "mce": _mce_bound(obs["mce"], top.count, top.var),
    }
    if pos is not None:
        bounds["ece_positive"] = _bernstein_sum(
            obs["ece_positive"] * n, float(pos.var.sum()), int((pos.count > 0).sum())
        )
        bounds["mce_positive"] = _mce_bound(obs["mce_positive"], pos.count, pos.var)
    pvals: dict[str, tuple[float, float, str]] = {}
    for name, draws in null.items():
        t_obs = abs(obs[name]) if name in _TWO_SIDED else obs[name]
        t_null = np.abs(draws) if name in _TWO_SIDED else draws
        r = int(np.isfinite(t_null).sum())
        p_mc, se, _ = monte_carlo_p(t_obs, t_null, "greater")
        method = f"Monte Carlo ({r} null draws)"
        b = bounds.get(name, 1.0)
        if b < p_mc:
            pvals[name] = (b, 0.0, f"Bernstein bound (no null draw reached it in {r})")
        else:
            pvals[name] = (p_mc, se, method)
    return pvals


def _add_ratio_tests(bins: _Bins, draws: dict[str, np.ndarray], obs: dict, null: dict, pvals: dict,
                     level: float) -> dict[str, tuple[float, float, str]]:
    """The calibration ratio Σf/Σy (top label, positive class): a monotone function of the overall gap Σ(f − y),
    tested with the same null draws; its value, null draws and p-value are added to ``obs``, ``null``, ``pvals``,
    its delta-method interval returned."""
    ratio_sets = [("calibration_ratio", bins.top, draws["top"])]
    if bins.pos is not None:
        ratio_sets.append(("calibration_ratio_positive", bins.pos, draws["positive"]))
    ratio_ci: dict[str, tuple[float, float, str]] = {}
    for key, summ, d in ratio_sets:
        s_f, s_y = float(summ.s_v.sum()), float(summ.s_h.sum())
        obs[key] = s_f / s_y if s_y > 0 else (float("inf") if s_f > 0 else float("nan"))
        gap = abs(s_f - s_y)
        tot = d.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            null[key] = np.where(s_f + tot > 0, s_f / (s_f + tot), np.nan)
        p_mc, se, _ = monte_carlo_p(gap, np.abs(tot), "greater")
        bound = min(1.0, 2.0 * _bernstein_sum(gap, float(summ.var.sum())))
        pvals[key] = ((bound, 0.0, f"Bernstein bound (no null draw reached it in {tot.size})") if bound < p_mc else
                      (p_mc, se, f"Monte Carlo ({tot.size} null draws of Σ(y* − f); R is monotone in it)"))
        lo_r, hi_r = ratio_interval(np.asarray(summ.v, dtype=float), np.asarray(summ.h, dtype=float), level)
        ratio_ci[key] = (lo_r, hi_r, "delta method on the log scale (ratio of two means of the same rows)")
    return ratio_ci


def _add_tce_tests(rows, bins: _Bins, obs: dict, null: dict, pvals: dict, n_null: int, alpha: float,
                   exact_budget: int, rng: np.random.Generator) -> None:
    """TCE (top label, positive class): value, null draws and Monte-Carlo p-value added to ``obs``, ``null``,
    ``pvals``."""
    for key, f_t, y_t in (("tce", rows.confidence, rows.correct),
                          *((("tce_positive", bins.pos.v, bins.pos.h),) if bins.pos is not None else ())):
        o_t, nd_t, how_t = tce_null(np.clip(f_t, 0.0, 1.0), y_t, n_draws=min(n_null, 1000), alpha=alpha,
                                    exact_budget=exact_budget, rng=rng)
        obs[key], null[key] = o_t, nd_t
        p_mc, se, _ = monte_carlo_p(o_t, nd_t, "greater")
        pvals[key] = (p_mc, se, f"Monte Carlo ({nd_t.size} null draws; {how_t})")


def _intervals(bins: _Bins, obs, pvals, boot, null, cw, smoothed, ratio_ci,
               level) -> dict[str, tuple[float, float, str]]:
    """(low, high, how) of every statistic with an interval (see the module docstring)."""
    n, top, pos = bins.n, bins.top, bins.pos
    ci: dict[str, tuple[float, float, str]] = {}
    lo, hi = _quantiles(boot["ece_db"], level)
    how = "percentile bootstrap of the debiased estimate"
    if pvals["ece"][0] > 1.0 - level:  # perfect calibration not rejected: 0 stays in the interval
        lo, how = 0.0, how + ", extended to 0 (test not significant)"
    ci["ece"] = (max(0.0, lo), max(0.0, hi), how)
    if pos is not None:  # 15 bins over [0, 1]: small bins, the debiased interval covered 0.54 at K = 2, N = 200
        ci["ece_positive"] = _l1_band(obs["ece_positive"], boot["ece_positive_l1"], null["ece_positive"], level)
    if cw is not None:
        ci["classwise_ece"] = _l1_band(obs["classwise_ece"], cw["boot_l1"], null["classwise_ece"], level)
    for key, r in smoothed.items():
        ci[key] = (float(r["ci_low"]), float(r["ci_high"]), r["interval"])
    ci.update(ratio_ci)
    ci["mce"] = _mce_interval(top.count, top.s_v, top.s_h, level)
    if pos is not None:
        ci["mce_positive"] = _mce_interval(pos.count, pos.s_v, pos.s_h, level)
    lo, hi = clopper_pearson(int(round(top.s_h.sum())), n, level)
    ci["accuracy"] = (lo, hi, "exact binomial (Clopper–Pearson)")
    lo, hi = clopper_pearson(int(round(bins.top_hits)), int(bins.n_top), level)
    top_conf = bins.top_confidence
    ci["top_bin_gap"] = (top_conf - hi, top_conf - lo, "top-bin confidence − Clopper–Pearson interval of its accuracy")
    for name in ("mean_confidence", "confidence_gap", "nll", "brier"):
        if name in boot:
            ci[name] = (*_quantiles(boot[name], level), "percentile bootstrap")
    return ci


def _records(order, primary, secondary, obs, deb, null, ref, pvals, adjusted, ci, smoothed, level,
             alpha) -> list[dict]:
    """One table record per statistic (:data:`~calib_core.inference.result.RESULT_COLUMNS`), in ``order``."""
    records = []
    for name in order:
        kind = _KIND[name]
        family = "primary" if name in primary else "secondary" if name in secondary else ""
        lo, hi, how = ci.get(name, (np.nan, np.nan, ""))
        if name in null:
            nd = null[name]
            nm = float(np.nanmean(nd))
            nlo, nhi = _quantiles(nd, level)
        elif name in ref:
            nm, nlo, nhi = ref[name]
        elif name == "accuracy":
            nm, nlo, nhi = obs["mean_confidence"], np.nan, np.nan
        else:
            nm = nlo = nhi = np.nan
        p, se, pm = pvals.get(name, (np.nan, np.nan, ""))
        adj, flag = adjusted.get(name, (np.nan, False))
        v = obs.get(name, np.nan)
        records.append({
            "metric": name, "value": v, "ci_low": lo, "ci_high": hi, "perfect": nm, "perfect_low": nlo,
            "perfect_high": nhi, "perfect_se": np.nan, "kind": kind, "family": family,
            "debiased": deb.get(name, np.nan), "interval": how, "p_value": p, "p_mc_se": se, "test": pm,
            "adjusted_p": adj, "flag": flag, "note": _note(name, kind, v, hi, nm, deb, smoothed, alpha),
        })
    return records


def _note(name: str, kind: str, value: float, ci_high: float, perfect: float, deb: dict, smoothed: dict,
          alpha: float) -> str:
    """What a reader should know about one row of the table."""
    if name in deb and np.isfinite(ci_high) and value > ci_high:
        return (
            f"plug-in above its interval: the plug-in is biased upward by noise (a perfectly calibrated model "
            f"scores {perfect:.3g} on average at this N); the interval is for the population value, around the "
            f"debiased estimate {deb[name]:.3g}"
        )
    if name in smoothed:
        return smoothed[name]["note"]
    if name in ("tce", "tce_positive"):
        return (
            "percent of rows whose bin's exact binomial test rejects their prediction (10 equal-mass bins, "
            f"level {alpha:g}); no interval: TCE has no N-free population value (it tends to 100 % as N grows "
            "for any spread of predictions), compare it with the perfectly calibrated value at this N"
        )
    if name.startswith("calibration_ratio"):
        return "Σ predicted / Σ observed events: > 1 over-predicts; its test is the overall gap's"
    if name in ("mce", "mce_positive"):
        return (
            "interval for the largest |accuracy − confidence| over the bins these rows fill (simultaneous exact "
            "intervals per bin): a bin of a few rows makes it wide, and bins no row falls in are not covered"
        )
    if name in ("classwise_ece", "ece_positive"):
        return (
            "interval: plug-in ± the summed per-cell error (triangle inequality; conservative): with a few rows "
            "per cell no debiased estimate is reliable, so the interval is wide rather than wrong"
        )
    if name == "accuracy":
        # the Report's wording (kept as it is): the column is ``perfect`` there
        return "descriptive (its value under perfect calibration is the mean confidence, shown as null_mean)"
    if kind == PROPER_SCORE:
        return "proper score: null_mean is its exact expectation under perfect calibration (a reference, not a test)"
    return ""


def _headline(bins: _Bins, obs, pvals, primary, adjusted, alpha) -> tuple[str, str, str]:
    """(verdict, direction, sentence): Holm's decision over the primary family; the direction is the sign of
    accuracy − mean confidence when the overall gap is significant, else the sign of a rejecting top-bin gap."""
    acc, mconf = obs["accuracy"], obs["mean_confidence"]
    rejected = [m for m in primary if adjusted[m][1]]
    verdict = MISCALIBRATED if rejected else CALIBRATED
    direction = ""
    if rejected:
        if pvals["confidence_gap"][0] < alpha:
            direction = "over-confident" if acc < mconf else "under-confident"
        elif "top_bin_gap" in rejected:
            direction = "over-confident" if obs["top_bin_gap"] > 0 else "under-confident"
    sentence = _sentence(verdict, direction, acc, mconf, obs, pvals, rejected, len(primary), alpha, bins.n_top,
                         bins.top_confidence)
    return verdict, direction, sentence


def _mce_interval(count: np.ndarray, s_conf: np.ndarray, s_hit: np.ndarray, level: float) -> tuple[float, float, str]:
    """Interval for max_m |acc_m − conf_m| over the non-empty bins, from simultaneous per-bin intervals.

    Given the bins' row counts n_m, the numbers correct are independent Binomial(n_m, acc_m), so Clopper–Pearson
    intervals at level ``level``^(1/M) (Šidák, M non-empty bins) hold for all bins at once with probability
    ≥ ``level``.  With each δ_m = acc_m − conf_m in I_m = CP_m − conf_m (conf_m the bin's mean confidence), the
    maximum of |δ_m| lies in [max_m min_{x∈I_m} |x|, max_m max_{x∈I_m} |x|] — the plug-in always inside.  Exact
    and conservative; wide when a bin holds a few rows (which is what MCE is then worth).  A bootstrap of a
    maximum is inconsistent (its basic interval covered 0.24–0.95 of the population MCE in the simulation study).
    """
    live = np.nonzero(count > 0)[0]
    if live.size == 0:
        return np.nan, np.nan, ""
    n = count[live]
    k = np.clip(np.round(s_hit[live]), 0, n)
    a = (1.0 - level ** (1.0 / live.size)) / 2.0
    with np.errstate(all="ignore"):
        lo = np.where(k > 0, special.betaincinv(np.maximum(k, 1e-300), n - k + 1, a), 0.0)
        hi = np.where(k < n, special.betaincinv(k + 1, np.maximum(n - k, 1e-300), 1.0 - a), 1.0)
    conf = s_conf[live] / n
    d_lo, d_hi = lo - conf, hi - conf
    near = np.where((d_lo <= 0) & (d_hi >= 0), 0.0, np.minimum(np.abs(d_lo), np.abs(d_hi)))
    far = np.maximum(np.abs(d_lo), np.abs(d_hi))
    how = f"max over bins of simultaneous Clopper–Pearson intervals (Šidák over {live.size} bins; conservative)"
    return float(near.max()), float(far.max()), how


def _l1_band(plug: float, boot_l1: np.ndarray, null_draws: np.ndarray, level: float) -> tuple[float, float, str]:
    """[plug − Q, plug + Q] (clipped at 0) for a sum of absolute cell deviations, Σ_c |μ_c| / K.

    By the triangle inequality |Σ|μ̂_c| − Σ|μ_c|| ≤ Σ|μ̂_c − μ_c|, so if Q bounds the summed absolute error of the
    cells with probability ``level`` the interval covers with at least that probability, whatever the cells'
    sizes.  Q is the larger of two ``level`` quantiles of that error: the block bootstrap's (Σ|μ̂* − μ̂|, right
    for cells of many rows, whatever the truth) and the null law's (the label noise under the forecast, exact
    for cells of a few rows where the bootstrap sees too little noise).  The debiased estimate was no base for an
    interval: in cells of a few rows its Gaussian correction leaves a large upward bias (coverage 0.00–0.59 under
    temperature miscalibration at K = 10, 100 below N = 10,000).
    """
    b = np.asarray(boot_l1, dtype=float)
    d = np.asarray(null_draws, dtype=float)
    q = max(float(np.quantile(b[np.isfinite(b)], level)) if np.isfinite(b).any() else 0.0,
            float(np.quantile(d[np.isfinite(d)], level)) if np.isfinite(d).any() else 0.0)
    how = "plug-in ± the level quantile of the summed cell errors (bootstrap or null law, the larger; conservative)"
    return max(0.0, plug - q), plug + q, how


def _mce_bound(t: float, count: np.ndarray, var: np.ndarray) -> float:
    """Union bound over bins of two-sided Bernstein tails for max_m |dev_m| / n_m ≥ t."""
    if not np.isfinite(t) or t <= 0:
        return 1.0
    total = 0.0
    for c, v in zip(count, var):
        if c > 0:
            total += 2.0 * _bernstein_sum(t * c, v)
    return float(min(1.0, total))


class _ClasswiseLayout:
    """Where every p_ik falls among the K·M one-vs-rest (class, bin) cells, stored sparsely.

    The cells are the point estimates' (:attr:`ClassificationRows.classwise_cells`, cached on the rows, so a
    diagnosis bins the N·K probabilities once).  Equal-width bins: only the entries outside their class's first
    bin are listed (``ri`` row, ``cell``, ``val``; :attr:`ClassificationRows.classwise_outside_first`) — with K
    classes almost every p_ik ≤ 1/M — and the first bins follow from per-block totals (count, Σ p_ik, Σ p_ik²)
    by complement.  Equal-mass bins: every entry is listed.
    """

    def __init__(self, rows: ClassificationRows):
        self.n, self.k, self.nb = rows.n, rows.k, rows.n_bins
        self.size = self.k * self.nb
        self.p = rows.probs
        self.cells_full = rows.classwise_cells
        if rows.strategy == "uniform":
            self.sparse = True
            self.ri, self.cell, self.val = rows.classwise_outside_first
        else:
            self.sparse = False
            self.ri = np.repeat(np.arange(self.n), self.k)
            self.cell = self.cells_full.ravel()
            self.val = self.p.astype(float).ravel()

    def label_cells(self, y: np.ndarray) -> np.ndarray:
        """Cell of the label's own probability p_{i, y_i} (y of shape (N,) or (R, N))."""
        return self.cells_full[np.arange(self.n), y]

    def block_sums(self, block: np.ndarray, n_b: int) -> list[np.ndarray]:
        """Per-block per-cell (count, Σp, Σp²) as three (B, K·M) arrays."""
        size = self.size
        key = block[self.ri] * size + self.cell
        out = [
            np.bincount(key, minlength=n_b * size).astype(float),
            np.bincount(key, weights=self.val, minlength=n_b * size),
            np.bincount(key, weights=self.val * self.val, minlength=n_b * size),
        ]
        out = [a.reshape(n_b, size) for a in out]
        if self.sparse:  # first bins by complement of the per-block class totals Σ_{i∈b} p_ik, Σ_{i∈b} p_ik²
            # one pass over the rows in file order: the (B × N) block indicator, column-compressed, times p
            ind = sparse.csc_matrix((np.ones(self.n), block, np.arange(self.n + 1)), shape=(n_b, self.n))
            p = np.asarray(self.p, dtype=float)
            sizes = np.bincount(block, minlength=n_b).astype(float)
            totals = [np.repeat(sizes[:, None], self.k, axis=1), ind @ p, ind @ (p * p)]
            first = np.arange(self.k) * self.nb
            for a, t in zip(out, totals):
                a[:, first] = t - a.reshape(n_b, self.k, self.nb)[:, :, 1:].sum(axis=2)
        return out


def _draw_one(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One label vector y* ~ Categorical(p_i): a running sum over the K columns (no (N, K) cumsum)."""
    n, k = p.shape
    u = rng.random(n) * p.sum(axis=1, dtype=float)
    acc = np.zeros(n)
    y = np.zeros(n, dtype=np.int64)
    for c in range(k - 1):
        acc += p[:, c]
        y += acc < u
    return y


def _draw_labels(cum: np.ndarray, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """(n_draws, N) labels y* ~ Categorical(p_i) by inverse CDF on the row cumsums ``cum`` (N, K)."""
    n, k = cum.shape
    u = rng.random((n_draws, n)) * cum[:, -1]
    if k <= 16:
        y = (cum[None, :, :-1] < u[:, :, None]).sum(axis=2)
    else:
        offset = 4.0 * np.arange(n, dtype=float)
        flat = (cum + offset[:, None]).ravel()
        y = np.searchsorted(flat, (u + offset).ravel(), side="right").reshape(n_draws, n) - np.arange(n) * k
    return np.clip(y, 0, k - 1)


def _classwise(rows, block, n_b, w, n_null, exact_budget, rng, flop_budget: float = 5e7, max_boot: int = 500) -> dict:
    """Class-wise ECE: observed (plug-in, debiased), null draws, bootstrap (plug-in, debiased) replicates.

    The replicates are (R × B) @ (B × cells) products; with many live (class, bin) cells (K = 100: up to
    1,500) the blocks are merged (block mod B') so that R · B' · cells ≤ ``flop_budget`` (B' ≥ 50), and at most
    ``max_boot`` bootstrap replicates are used (its interval is the secondary statistic's).
    """
    n, k = rows.n, rows.k
    lay = _ClasswiseLayout(rows)
    size = lay.size
    cnt = np.bincount(lay.cell, minlength=size).astype(float)
    if lay.sparse:
        first = np.arange(k) * lay.nb
        cnt[first] = n - cnt.reshape(k, lay.nb)[:, 1:].sum(axis=1)
    live = np.nonzero(cnt > 0.5)[0]  # only non-empty cells enter any sum
    n_b_cw = int(min(n_b, max(50, flop_budget // (n_null * live.size))))
    if n_b_cw < n_b:
        block, n_b = block % n_b_cw, n_b_cw
        w = block_bootstrap_weights(n_b, min(max_boot, w.shape[0]), rng)
    elif w.shape[0] > max_boot:
        w = w[:max_boot]
    b_count, b_conf, b_sq = lay.block_sums(block, n_b)
    col = np.full(size, -1, dtype=np.int64)
    col[live] = np.arange(live.size)
    n_live = live.size
    b_count, b_conf, b_sq = b_count[:, live], b_conf[:, live], b_sq[:, live]
    b_var = b_conf - b_sq  # Σ p(1 − p)
    bs = n_b * n_live
    hit_col = col[lay.label_cells(rows.labels)]
    b_hit = np.bincount(block * n_live + hit_col, minlength=bs).reshape(n_b, n_live).astype(float)
    c_count, c_conf, c_var, c_hit = (a.sum(axis=0) for a in (b_count, b_conf, b_var, b_hit))
    plug, deb = _ece_cells(c_count, c_conf, c_hit, c_var, float(n * k))
    # null
    if n * n_null <= exact_budget:
        cum = np.cumsum(np.asarray(rows.probs, dtype=float), axis=1)
        d = np.empty((n_null, n_live))
        chunk = max(1, 500_000 // max(n, 1))
        for a in range(0, n_null, chunk):
            b = min(n_null, a + chunk)
            kk = col[lay.label_cells(_draw_labels(cum, b - a, rng))] + (np.arange(b - a) * n_live)[:, None]
            d[a:b] = np.bincount(kk.ravel(), minlength=(b - a) * n_live).reshape(b - a, n_live)
        d -= c_conf
        note = f"class-wise ECE null: exact, {n_null} label vectors y* ~ Categorical(p_i) drawn row by row"
    else:
        y = _draw_one(rows.probs, rng)
        b_dev = np.bincount(block * n_live + col[lay.label_cells(y)], minlength=bs).reshape(n_b, n_live) - b_conf
        b_dev -= b_dev.mean(axis=0, keepdims=True)
        d = block_bootstrap_weights(n_b, n_null, rng) @ b_dev
        note = (
            f"class-wise ECE null: one label draw y* ~ Categorical(p_i) per row, its null deviations bootstrapped "
            f"over {n_b} random row blocks ({n_null} draws; row-by-row simulation above N · R = {exact_budget:,})"
        )
    if n_b < n:
        note += f"; class-wise bootstrap over {n_b} random row blocks"
    null = np.abs(d).sum(axis=1) / (n * k)
    bc, bcf, bh, bv = np.split(w @ np.hstack([b_count, b_conf, b_hit, b_var]), 4, axis=1)
    boot = _ece_cells(bc, bcf, bh, bv, bc.sum(axis=1))  # Σ over cells of the counts = K × rows
    # the bootstrap's per-cell errors: Σ_c |μ̂*_c − μ̂_c| / K with μ̂_c = Σ_{i∈c}(1[y_i = k] − p_ik)/N (the L1 band)
    n_star = bc.sum(axis=1, keepdims=True) / k
    l1 = np.abs((bh - bcf) / n_star - (c_hit - c_conf) / n).sum(axis=1) / k
    return {"observed": (float(plug), float(deb)), "null": null, "boot": boot, "boot_l1": l1, "note": note}


def _score_references(rows: ClassificationRows, z: float) -> dict[str, tuple[float, float, float]]:
    """Exact expectation (and ± z·sd range) of mean NLL and mean Brier under y ~ Categorical(p_i)."""
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


def _fmt_p(p: float, method: str) -> str:
    text = format_p(p)
    return text.replace("p =", "p ≤") if method.startswith("Bernstein") else text


def _sentence(verdict, direction, acc, mconf, obs, pvals, rejected, n_primary, alpha, n_top, top_conf) -> str:
    fam = f"{n_primary} test{'s' if n_primary != 1 else ''}, family-wise {alpha:.0%}"
    if verdict != MISCALIBRATED:
        return f"No evidence of miscalibration at this N ({fam})."
    lead = {"over-confident": "Over-confident", "under-confident": "Under-confident"}.get(direction, "Miscalibrated")
    main = "ece" if "ece" in rejected else rejected[0]
    p, se, how = pvals[main]
    if main == "ece":
        what = f"ECE {obs['ece']:.3g}, {_fmt_p(p, how)}"
    else:
        acc_top = top_conf - obs["top_bin_gap"]
        what = f"top-bin confidence {top_conf:.3g} vs accuracy {acc_top:.3g} over {int(n_top)} rows, {_fmt_p(p, how)}"
    tail = "" if direction else " (no single direction: over- and under-confident in different bins)"
    return f"{lead}: accuracy {acc:.3g} vs mean confidence {mconf:.3g} ({what}; {fam}){tail}."
