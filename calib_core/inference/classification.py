"""Classification inference: a p-value for every calibration statistic, intervals that mean what
they say, one headline verdict — all from per-bin summaries, at a small multiple of the point estimates' cost.

Null hypothesis H0 ("perfect calibration"): given the predictions, the labels are independent draws
y_i ~ Categorical(p_i).  Everything below conditions on the predictions (they are fixed, only labels vary),
so the bins — which depend on the predictions alone — are fixed under H0 too.

Tests (``kind`` "calibration statistic"; one p-value each, Monte-Carlo with ``n_null`` ≥ 1,000 null draws, the
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

Proper scores (``kind`` "proper score"): NLL and Brier get their exact expectation under H0 as the reference
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
  interval of θ̃ (its upper end raised to the plug-in's percentile end when that is higher: an upper bound of
  E ECE ≥ the population ECE, so the interval holds the plug-in and stays valid), extended down to 0 when the
  statistic's test does not reject at 1 − ``level`` (a population
  value of 0 — perfect calibration — is then not excluded, so the coverage at 0 is that of the test, ≥ level;
  elsewhere the extension can only add coverage).  Measured (``bench/verdicts_classification.py``): the
  basic interval [2θ̃ − q_hi, 2θ̃ − q_lo] under-covers when miscalibrated (0.87–0.92 at N = 1,000) because
  θ̃'s bootstrap law is skewed, the plain percentile interval never covers 0 under H0.
  The debiased estimate can be negative (a cell with δ̂ = 0 subtracts E|σZ|): it is shown clipped at 0, and the
  table's note says so, with the null mean — the plug-in a perfectly calibrated model would get at this N.
* class-wise ECE and ECE of the positive class: most of their cells (K·M (class, bin) cells; M bins over [0, 1])
  hold a few rows, where the Gaussian correction leaves a large bias (the debiased percentile interval covered
  0.00–0.59 under temperature miscalibration at K = 10 and 100 below N = 10,000, ECE positive 0.54 at K = 2,
  N = 200).  Interval: plug-in ± Q, Q the ``level`` quantile of the summed absolute cell error
  Σ_c|μ̂_c − μ_c|/K (the larger of its bootstrap and its null law), valid by the triangle inequality whatever
  the cell sizes — conservative, and wide when the cells are small
  (:func:`~calib_core.inference.classification_cells.l1_band`).
* MCE (top-label, positive class): simultaneous Clopper–Pearson intervals of every non-empty bin's accuracy
  (Šidák), combined into an interval for the largest |acc − conf| over the bins the rows fill
  (:func:`~calib_core.inference.classification_cells.mce_interval`); exact and conservative, wide when a bin
  holds a few rows.
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
Secondary statistics (MCE, the overall gap, class-wise ECE, ECE/MCE positive; for binary files also the clinical
set's tests, :mod:`~calib_core.inference.classification_clinical`) get Benjamini–Hochberg flags at
false-discovery rate ``alpha``; the table says how many flags one would expect by chance
(``alpha`` × the number of secondary tests, if every one of them were calibrated and tested at ``alpha``).

Dependent rows (``clustering``, :mod:`calib_core.base.clustering`; e.g. a forecast hub's rows clustered by reference
date): the bootstrap weights re-draw whole clusters (or moving blocks of consecutive clusters) instead of random row
blocks, so every bootstrap interval above becomes a cluster interval, and every test is replaced by a cluster-aware
one (:mod:`~calib_core.inference.classification_cluster`: cluster-robust t tests of the means, centred cluster
bootstrap of the ECE-type distances and of the smooth ECE; TCE and MCE untested, p = NaN with the reason).  The null
draws stay those of independent labels and only give the values under perfect calibration.  The headline
sentence ends by naming it ("…; whole reference_date clusters resampled (40 clusters).").

Random numbers: each part draws from a stream of its own (:mod:`~calib_core.inference.classification_streams`), so
a new bins count redraws only the binned nulls; ``memo`` keeps the bin-free parts for the next bins count.

The result is the :class:`~calib_core.inference.result.InferenceResult` of both tasks.  The machinery lives beside
this module: per-cell statistics and intervals in :mod:`~calib_core.inference.classification_cells`, the null
draws in :mod:`~calib_core.inference.classification_nulls`, the smooth ECE's memoised inference in
:mod:`~calib_core.inference.classification_smooth`, families, table rows and words in
:mod:`~calib_core.inference.classification_verdict`; :func:`infer_classification` runs them as named steps.
"""

from __future__ import annotations

import time
from collections.abc import MutableMapping
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..base.clustering import MIN_RELIABLE_CLUSTERS, Clustering, cluster_design, clustered_sentence
from ..base.significance import (
    block_bootstrap_weights,
    block_ids,
    clopper_pearson,
    expected_chance_flags,
    monte_carlo_p,
)
from ..metrics.classification import ClassificationRows, Strategy, confidence_bins
from ..metrics.classification_ratio import ratio_interval, tce_null
from ..metrics.classification_smooth import SmoothECE, rows_target
from .classification_cells import ece_cells, l1_band, mce_cells, mce_interval, percentile_bounds
from .classification_clinical import CLINICAL_DESCRIPTIVE, clinical_inference
from .classification_cluster import cluster_intervals, cluster_tests
from .classification_nulls import (
    BinnedBernoulli,
    bernstein_tail,
    classwise_inference,
    mce_bound,
    score_references,
)
from .classification_smooth import smooth_inference_of
from .classification_streams import InferenceMemo, stream
from .classification_verdict import PRIMARY_FAMILY, SECONDARY, headline, result_records
from .result import InferenceResult, adjust_families

__all__ = [
    "PRIMARY_FAMILY",
    "InferenceResult",
    "infer_classification",
]


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
    clustering: Clustering | None = None,
    memo: MutableMapping | None = None,
) -> InferenceResult:
    """Tests, intervals and the headline verdict of one set of classification rows (see the module docstring).

    Under H0 the labels are draws y_i ~ Categorical(p_i) given the predictions; every calibration statistic gets a
    test of H0 with its Monte-Carlo standard error, an interval for its population value and its mean under H0
    (``perfect``), and Holm's procedure over the primary family (ECE, top-bin gap) gives the headline.

    Parameters
    ----------
    rows : ClassificationRows, optional
        Prepared rows (e.g. from ``classification_rows(pset, mask)``); their ``n_bins`` / ``strategy`` are used.
    labels : ndarray of shape (N,), optional
        Labels, with ``probs``, when ``rows`` is not given.
    probs : ndarray of shape (N, K), optional
        Probability vectors, with ``labels``.
    n_bins : int, default 15
        Confidence bins (with ``labels`` and ``probs``).
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width or equal-mass bins (with ``labels`` and ``probs``).
    n_null : int, default 2000
        Null draws per test (≥ 1,000: the Monte-Carlo standard error of p = 0.05 is then ≤ 0.007).
    n_boot : int, default 1000
        Bootstrap replicates.
    n_blocks : int, default 500
        Random row blocks of the bootstrap.
    n_sub : int, default 32
        Sub-bins per bin for the summary-level null draws.
    level : float, default 0.95
        Two-sided level of the intervals and of the perfect-calibration range.
    alpha : float, default 0.05
        Family-wise error of the headline and false-discovery rate of the secondary flags.
    classwise : bool, default True
        Also test class-wise ECE (full probability vectors only).
    exact_budget : int, default 2,000,000
        Null draws are exact row by row while N · ``n_null`` is at most this.
    seed : int or None, default 0
        Seeds the blocks, the bootstrap and the null draws.
    smooth : bool, default True
        Also test the smooth ECE (secondary; :func:`calib_core.metrics.classification_smooth.smooth_inference`, at
        most 1,000 null draws).
    smooth_estimates : dict of str to SmoothECE, optional
        The smooth ECE point estimates, reused when the caller has them.
    tce : bool, default True
        Also test TCE (:mod:`calib_core.metrics.classification_ratio`; secondary, no interval).  The calibration
        ratio Σf/Σy (top label, and positive class for binary files) is always tested (secondary; the overall
        gap's null draws) with a log-scale delta-method interval.
    clustering : Clustering, optional
        Dependent rows (:mod:`calib_core.base.clustering`, one code per row): every interval resamples whole
        clusters (or moving blocks of consecutive clusters) and every test is cluster-aware
        (:mod:`calib_core.inference.classification_cluster`); None: independent rows (unchanged results).
    memo : mutable mapping, optional
        Keeps the parts that do not depend on the confidence bins (blocks and weights, class-wise label draw,
        TCE, the clinical set, score references; :class:`~calib_core.inference.classification_streams.InferenceMemo`)
        for a later call on the same rows with other bins: the caller keeps one mapping per rows.  Each part draws
        from a random stream of its own (:func:`~calib_core.inference.classification_streams.stream`), so the
        results are equal with and without it.

    Returns
    -------
    InferenceResult
        The table (one row per statistic, the Report's columns), the verdict ("calibrated" or "miscalibrated"),
        its direction and sentence, the multiplicity bookkeeping, ``notes`` (how the nulls were drawn),
        ``timings`` (seconds per step) and ``top_bins`` (the top region's first and last bin).

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       *ICML*.
    .. [2] Kumar, A., Liang, P. & Ma, T. (2019). Verified uncertainty calibration. *NeurIPS*.
    .. [3] Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
       *arXiv:2309.12236*.
    .. [4] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    .. [5] Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and powerful
       approach to multiple testing. *Journal of the Royal Statistical Society B* 57(1), 289–300.
    """
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    if rows is None:
        if labels is None or probs is None:
            raise ValueError("give rows, or labels and probs")
        rows = ClassificationRows(labels, probs, n_bins=n_bins, strategy=strategy)
    if n_null < 1 or n_boot < 1:
        raise ValueError("n_null and n_boot must be at least 1")
    n = rows.n
    if n < 1:
        raise ValueError("no rows")
    notes: list[str] = []
    full = not rows.top_label_only
    binary = full and rows.k == 2

    bin_free = InferenceMemo(None if seed is None else memo, (
        n, rows.k, int(n_null), int(n_boot), int(n_blocks), float(level), float(alpha), int(exact_budget), seed,
        None if clustering is None else (clustering.describe(), clustering.n_clusters, clustering.block_length)))
    bins = _Bins.of(rows, n_sub, binary)
    timings["summaries"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    null, draws = _bin_nulls(bins, n_null, exact_budget, stream(seed, "binned"), notes)
    timings["null_top_label"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    if clustering is not None and clustering.codes.shape[0] != n:
        raise ValueError("the clustering must have one code per row")
    block, n_b, parts, w = _blocks(rows, bins, n_blocks, n_boot, bin_free, clustering, seed)
    timings["blocks"] = time.perf_counter() - t2
    cw = None
    if classwise and full:
        t3 = time.perf_counter()
        cw = classwise_inference(rows, block, n_b, w, n_null, exact_budget, stream(seed, "classwise labels"),
                                 clustering=clustering, seed=seed,
                                 weights_rng=lambda: stream(seed, "classwise weights"), memo=bin_free)
        notes.append(cw["note"])
        timings["classwise"] = time.perf_counter() - t3
    smoothed: dict[str, dict] = {}
    if smooth:
        t4 = time.perf_counter()
        est = tuple(sorted((k, float(e.value), float(e.sigma)) for k, e in (smooth_estimates or {}).items()))
        smoothed = {k: dict(r) for k, r in bin_free(("smooth", est), lambda: _smooth_results(
            rows, binary, smooth_estimates, n_blocks, n_boot, n_null, level, exact_budget, seed, clustering)).items()}
        timings["smooth"] = time.perf_counter() - t4
    t5 = time.perf_counter()
    boot = _bootstrap(w, parts, bins, cw, full)
    timings["bootstrap"] = time.perf_counter() - t5

    obs, deb = _observed(rows, bins, cw)
    if cw is not None:
        null["classwise_ece"] = cw["null"]
    pvals = _bin_p_values(bins, obs, null)
    ratio_ci = _add_ratio_tests(bins, draws, obs, null, pvals, level, bin_free)
    if tce:
        t6 = time.perf_counter()
        _add_tce_tests(rows, bins, obs, null, pvals, n_null, alpha, exact_budget, seed, bin_free)
        timings["tce"] = time.perf_counter() - t6
    for key, r in smoothed.items():  # smooth ECE: p-value from its fixed-bandwidth draws, null law of smECE* itself
        obs[key] = float(r["value"])
        pvals[key] = (float(r["p_value"]), float(r["p_mc_se"]), r["p_method"])
        null[key] = r["null"]
    if clustering is not None:  # every p-value cluster-aware (or NaN with a note), never an independent-rows one
        cluster_tests(rows, bins, boot, clustering, obs, pvals, cw)
        notes.append(_clustering_note(clustering))

    clinical = None
    if binary:  # the clinical set of the positive class (its own tests, intervals from the same bootstrap weights)
        t7 = time.perf_counter()
        clinical = bin_free("clinical", lambda: clinical_inference(
            bins.pos.v, bins.pos.h, block=block, n_blocks=n_b, weights=w, level=level, n_null=n_null,
            rng=stream(seed, "clinical"), clustering=clustering))
        for key in ("obs", "pvals", "null"):
            {"obs": obs, "pvals": pvals, "null": null}[key].update(clinical[key])
        notes.extend(clinical["notes"])
        timings["clinical"] = time.perf_counter() - t7

    primary = [m for m in PRIMARY_FAMILY if m in pvals]
    secondary = [m for m in SECONDARY if m in pvals]
    adjusted = adjust_families({m: pvals[m][0] for m in primary}, {m: pvals[m][0] for m in secondary}, alpha)
    ci = _intervals(bins, obs, pvals, boot, null, cw, smoothed, ratio_ci, level)
    if clustering is not None:
        ci.update(cluster_intervals(bins, obs, boot, cw, level))
    z = float(special.ndtri(0.5 + level / 2.0))
    ref = dict(bin_free("score references", lambda: score_references(rows, z))) if full else {}
    if clinical is not None:
        ci.update(clinical["ci"])
        ref.update(clinical["ref"])
    order = [*primary, *secondary, *(CLINICAL_DESCRIPTIVE if binary else ()), *(["nll", "brier"] if full else []),
             "accuracy", "mean_confidence"]
    records = result_records(order, primary=primary, secondary=secondary, obs=obs, deb=deb, null=null, ref=ref,
                             pvals=pvals, adjusted=adjusted, ci=ci, smoothed=smoothed, level=level, alpha=alpha)
    verdict, direction, sentence = headline(obs, pvals, primary, adjusted, alpha, bins.n_top, bins.top_confidence)
    options = dict(n_bins=rows.n_bins, strategy=rows.strategy, n_null=n_null, n_boot=n_boot, n_blocks=n_blocks,
                   n_sub=n_sub, level=level, alpha=alpha, classwise=classwise, exact_budget=exact_budget, seed=seed,
                   smooth=smooth, tce=tce)
    if clustering is not None:
        sentence = clustered_sentence(sentence, clustering)
        options.update(cluster=clustering.column, block_length=clustering.block_length,
                       n_clusters=clustering.n_clusters, clustering=clustering.describe())
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
        options=options,
        notes=notes,
        timings=timings,
        top_bins=(bins.first_top, rows.n_bins - 1),
    )


@dataclass(frozen=True)
class _Bins:
    """The per-bin summaries of one set of rows: the top-label bins, the top region (the highest bins, merged
    downwards until they hold at least N/M rows) and, for binary files, the positive-class bins."""

    n: int
    top: BinnedBernoulli
    top_sel: np.ndarray
    first_top: int
    n_top: float
    pos: BinnedBernoulli | None

    @classmethod
    def of(cls, rows: ClassificationRows, n_sub: int, binary: bool) -> _Bins:
        n, m_bins = rows.n, rows.n_bins
        top = BinnedBernoulli(rows.confidence, rows.correct, rows.bin_index, rows.edges, m_bins, n_sub)
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
            pos = BinnedBernoulli(v1, h1, idx1, edges1, m_bins, n_sub)
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
        "mce": mce_cells(top.count, d_null),
        "top_bin_gap": -d_null[:, bins.top_sel].sum(axis=1) / bins.n_top,
        "confidence_gap": -d_null.sum(axis=1) / n,
    }
    draws = {"top": d_null}
    if bins.pos is not None:
        dp, _ = bins.pos.null_dev(n_null, rng, exact_budget)
        null["ece_positive"] = np.abs(dp).sum(axis=1) / n
        null["mce_positive"] = mce_cells(bins.pos.count, dp)
        draws["positive"] = dp
    return null, draws


def _block_design(n: int, n_blocks: int, n_boot: int, clustering: Clustering | None,
                  seed: int | None) -> tuple[np.ndarray, int, np.ndarray]:
    """(block of each row, number of blocks, (R × B) bootstrap weights): random row blocks and multinomial weights
    on the ``"blocks"`` stream, or the cluster (moving-block) design on a stream of its own."""
    if clustering is not None:
        design = cluster_design(clustering, n_boot, (0 if seed is None else int(seed), 0xC1A5))
        return design.ids, design.n_blocks, design.weights
    rng = stream(seed, "blocks")
    block, n_b = block_ids(n, n_blocks, rng)
    return block, n_b, block_bootstrap_weights(n_b, n_boot, rng)


def _blocks(rows: ClassificationRows, bins: _Bins, n_blocks: int, n_boot: int, bin_free: InferenceMemo,
            clustering: Clustering | None = None,
            seed: int | None = 0) -> tuple[np.ndarray, int, list[np.ndarray], np.ndarray]:
    """Random row blocks (the clusters under a clustering), the per-block summaries of the bins (and of NLL and
    Brier) and the bootstrap weights: (block of each row, number of blocks, the summaries' (B × ·) arrays, (R × B)
    weights).  The blocks, weights and score sums are bin-free (kept in ``bin_free``)."""
    block, n_b, w = bin_free("blocks", lambda: _block_design(bins.n, n_blocks, n_boot, clustering, seed))
    parts = bins.top.block_sums(block, n_b)
    if not rows.top_label_only:
        parts.append(bin_free("score block sums", lambda: np.stack(
            [np.bincount(block, weights=x, minlength=n_b) for x in (rows.nll_rows, rows.brier_rows)], axis=1)))
    if bins.pos is not None:
        parts.extend(bins.pos.block_sums(block, n_b))
    return block, n_b, parts, w


def _clustering_note(clustering: Clustering) -> str:
    """How the rows were resampled, and whether that many clusters are enough."""
    text = (f"clustered rows: {clustering.describe()}; every interval resamples them and every test is "
            f"cluster-aware (values under perfect calibration are still those of independent labels)")
    if clustering.n_clusters < MIN_RELIABLE_CLUSTERS:
        text += (f"; only {clustering.n_clusters} clusters: intervals and tests are unreliable with fewer than "
                 f"{MIN_RELIABLE_CLUSTERS}")
    return text


def _smooth_results(rows, binary, estimates, n_blocks, n_boot, n_null, level, exact_budget, seed,
                    clustering=None) -> dict[str, dict]:
    """Smooth ECE (Błasiok & Nakkiran 2023): its own grid, null and bootstrap, top label (and positive class)."""
    out = {}
    for tgt, key in (("top_label", "smooth_ece"), *((("positive", "smooth_ece_positive"),) if binary else ())):
        f_s, y_s = rows_target(rows, tgt)
        out[key] = smooth_inference_of(
            np.clip(f_s, 0.0, 1.0), y_s, estimate=(estimates or {}).get(key), n_blocks=n_blocks, n_boot=n_boot,
            n_null=min(n_null, 1000), level=level, exact_budget=exact_budget, seed=seed, stream=key,
            clustering=clustering)
    return out


def _bootstrap(w: np.ndarray, parts: list[np.ndarray], bins: _Bins, cw: dict | None, full: bool) -> dict:
    """Bootstrap replicates of every binned statistic: one matrix product of the weights with the block
    summaries (``<name>_db``: the debiased ECEs; ``ece_positive_l1``: the L1 band's summed cell error)."""
    widths = np.cumsum([a.shape[1] for a in parts])[:-1]
    reps = np.split(w @ np.hstack(parts), widths, axis=1)
    boot_top = reps[:4]  # count, Σconf, Σcorrect, Σc(1−c): (R, M)
    boot_n = boot_top[0].sum(axis=1)
    boot: dict[str, np.ndarray] = {"top_sums": boot_top}  # the replicates' per-bin sums (cluster tests)
    boot["ece"], boot["ece_db"] = ece_cells(*boot_top, boot_n)
    boot["mce"] = mce_cells(boot_top[0], boot_top[2] - boot_top[1])
    boot["accuracy"] = boot_top[2].sum(axis=1) / boot_n
    boot["mean_confidence"] = boot_top[1].sum(axis=1) / boot_n
    boot["confidence_gap"] = boot["mean_confidence"] - boot["accuracy"]
    if full:
        boot_scal = reps[4]
        boot["nll"] = boot_scal[:, 0] / boot_n
        boot["brier"] = boot_scal[:, 1] / boot_n
    if bins.pos is not None:
        bp = reps[-4:]
        boot["positive_sums"] = bp
        boot["ece_positive"], boot["ece_positive_db"] = ece_cells(*bp, boot_n)
        # Σ_m |μ̂*_m − μ̂_m| of the per-bin deviations μ̂_m = Σ_{i∈m}(1[y_i = 1] − p_i1)/N: the L1 band's error
        boot["ece_positive_l1"] = np.abs((bp[2] - bp[1]) / boot_n[:, None] - bins.pos.dev / bins.n).sum(axis=1)
        boot["mce_positive"] = mce_cells(bp[0], bp[2] - bp[1])
    if cw is not None:
        boot["classwise_ece"], boot["classwise_ece_db"] = cw["boot"]
    return boot


def _observed(rows: ClassificationRows, bins: _Bins, cw: dict | None) -> tuple[dict[str, float], dict[str, float]]:
    """The binned statistics on the data: (plug-in values, debiased values of the ECEs)."""
    n, top, pos = bins.n, bins.top, bins.pos
    obs: dict[str, float] = {}
    deb: dict[str, float] = {}
    e_pl, e_db = ece_cells(top.count, top.s_v, top.s_h, top.var, float(n))
    obs["ece"], deb["ece"] = float(e_pl), float(e_db)
    obs["mce"] = float(mce_cells(top.count, top.dev))
    acc = float(top.s_h.sum() / n)
    mconf = float(top.s_v.sum() / n)
    obs["accuracy"], obs["mean_confidence"] = acc, mconf
    obs["confidence_gap"] = mconf - acc
    obs["top_bin_gap"] = float(-top.dev[bins.top_sel].sum() / bins.n_top)
    if not rows.top_label_only:
        obs["nll"] = float(np.mean(rows.nll_rows))
        obs["brier"] = float(np.mean(rows.brier_rows))
    if pos is not None:
        e_pl, e_db = ece_cells(pos.count, pos.s_v, pos.s_h, pos.var, float(n))
        obs["ece_positive"], deb["ece_positive"] = float(e_pl), float(e_db)
        obs["mce_positive"] = float(mce_cells(pos.count, pos.dev))
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
        "ece": bernstein_tail(obs["ece"] * n, float(top.var.sum()), n_nonempty),
        "top_bin_gap": min(1.0, 2.0 * bernstein_tail(abs(obs["top_bin_gap"]) * bins.n_top, float(top.var[sel].sum()))),
        "confidence_gap": min(1.0, 2.0 * bernstein_tail(abs(obs["confidence_gap"]) * n, float(top.var.sum()))),
        "mce": mce_bound(obs["mce"], top.count, top.var),
    }
    if pos is not None:
        bounds["ece_positive"] = bernstein_tail(
            obs["ece_positive"] * n, float(pos.var.sum()), int((pos.count > 0).sum())
        )
        bounds["mce_positive"] = mce_bound(obs["mce_positive"], pos.count, pos.var)
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
                     level: float, bin_free: InferenceMemo) -> dict[str, tuple[float, float, str]]:
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
        bound = min(1.0, 2.0 * bernstein_tail(gap, float(summ.var.sum())))
        pvals[key] = ((bound, 0.0, f"Bernstein bound (no null draw reached it in {tot.size})") if bound < p_mc else
                      (p_mc, se, f"Monte Carlo ({tot.size} null draws of Σ(y* − f); R is monotone in it)"))
        lo_r, hi_r = bin_free(("ratio interval", key), lambda summ=summ: ratio_interval(
            np.asarray(summ.v, dtype=float), np.asarray(summ.h, dtype=float), level))
        ratio_ci[key] = (lo_r, hi_r, "delta method on the log scale (ratio of two means of the same rows)")
    return ratio_ci


def _add_tce_tests(rows, bins: _Bins, obs: dict, null: dict, pvals: dict, n_null: int, alpha: float,
                   exact_budget: int, seed: int | None, bin_free: InferenceMemo) -> None:
    """TCE (top label, positive class): value, null draws and Monte-Carlo p-value added to ``obs``, ``null``,
    ``pvals`` (bin-free, on the ``"tce"`` stream: kept in ``bin_free``)."""
    def build() -> dict[str, tuple]:
        rng = stream(seed, "tce")
        out = {}
        for key, f_t, y_t in (("tce", rows.confidence, rows.correct),
                              *((("tce_positive", bins.pos.v, bins.pos.h),) if bins.pos is not None else ())):
            o_t, nd_t, how_t = tce_null(np.clip(f_t, 0.0, 1.0), y_t, n_draws=min(n_null, 1000), alpha=alpha,
                                        exact_budget=exact_budget, rng=rng)
            p_mc, se, _ = monte_carlo_p(o_t, nd_t, "greater")
            out[key] = (o_t, nd_t, (p_mc, se, f"Monte Carlo ({nd_t.size} null draws; {how_t})"))
        return out

    for key, (o_t, nd_t, p_t) in bin_free("tce", build).items():
        obs[key], null[key], pvals[key] = o_t, nd_t, p_t


def _intervals(bins: _Bins, obs, pvals, boot, null, cw, smoothed, ratio_ci,
               level) -> dict[str, tuple[float, float, str]]:
    """(low, high, how) of every statistic with an interval (see the module docstring)."""
    n, top, pos = bins.n, bins.top, bins.pos
    ci: dict[str, tuple[float, float, str]] = {}
    lo, hi = percentile_bounds(boot["ece_db"], level)
    # the upper end also bounds E ECE (the plug-in's percentile end), itself at least the population ECE: so the
    # interval stays valid (conservative) and holds the plug-in, which noise biases upward
    hi = max(hi, percentile_bounds(boot["ece"], level)[1])
    how = "percentile bootstrap of the debiased estimate, its upper end at least the plug-in's"
    if pvals["ece"][0] > 1.0 - level:  # perfect calibration not rejected: 0 stays in the interval
        lo, how = 0.0, how + ", extended to 0 (test not significant)"
    ci["ece"] = (max(0.0, lo), max(0.0, hi), how)
    if pos is not None:  # 15 bins over [0, 1]: small bins, the debiased interval covered 0.54 at K = 2, N = 200
        ci["ece_positive"] = l1_band(obs["ece_positive"], boot["ece_positive_l1"], null["ece_positive"], level)
    if cw is not None:
        ci["classwise_ece"] = l1_band(obs["classwise_ece"], cw["boot_l1"], null["classwise_ece"], level)
    for key, r in smoothed.items():
        ci[key] = (float(r["ci_low"]), float(r["ci_high"]), r["interval"])
    ci.update(ratio_ci)
    ci["mce"] = mce_interval(top.count, top.s_v, top.s_h, level)
    if pos is not None:
        ci["mce_positive"] = mce_interval(pos.count, pos.s_v, pos.s_h, level)
    lo, hi = clopper_pearson(int(round(top.s_h.sum())), n, level)
    ci["accuracy"] = (lo, hi, "exact binomial (Clopper–Pearson)")
    lo, hi = clopper_pearson(int(round(bins.top_hits)), int(bins.n_top), level)
    top_conf = bins.top_confidence
    ci["top_bin_gap"] = (top_conf - hi, top_conf - lo, "top-bin confidence − Clopper–Pearson interval of its accuracy")
    for name in ("mean_confidence", "confidence_gap", "nll", "brier"):
        if name in boot:
            ci[name] = (*percentile_bounds(boot[name], level), "percentile bootstrap")
    return ci


