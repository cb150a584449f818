"""Regression verdicts as statistics: a test, an interval and a reference for every metric, cheaply.

:func:`infer_regression` takes (y, dist) and returns an :class:`InferenceResult`: the metric values
of :func:`calib_core.metrics.regression.summary_statistics` (the same numbers as the metric table),
and for each of them what it is and what can be said about it.

Null hypothesis H0 ("perfect calibration"): every target is an independent draw from its predicted
distribution (for ensembles: the target and the M members are exchangeable).  Under H0

* the PIT u = F(y) is exactly U(0, 1) (randomised rank PIT for ensembles, Czado et al. 2009);
* z = (y − μ)/σ has mean 0 and variance 1 per row for Gaussian and quantile-set predictions, exactly
  N(0, 1) for Gaussians; for ensembles its law per row is the uniform law over the M + 1 ways to
  pick the target out of the pooled values (the exchangeability null, enumerated exactly);
* the central c-interval covers the target with probability c (ensembles: the finite-M probability
  of the order-statistic interval, e.g. (M − 1)/(M + 1) for [x_(1), x_(M)], enumerated per row).

Metric kinds and what each gets
-------------------------------
* **calibration statistics** get a test with a p-value, a reference (their mean under H0) and an
  interval for the population value:

  ================================  ===========================================  ============================
  statistic                         null law / test                              interval
  ================================  ===========================================  ============================
  max_calibration_deviation (KS)    Kolmogorov exact (``scipy.stats.kstwo``;     KS band D ± d_α (exact law)
                                    Stephens-corrected limit above N = 20,000)
  coverage_c                        exact binomial (ensembles with unequal       Clopper–Pearson
                                    per-row p: Poisson-binomial, simulated)
  z_mean                            Gaussian: exact t-test; else CLT with the    t interval
                                    exact per-row null moments
  z_std                             Gaussian: exact χ²_{N−1}; else gamma with    bootstrap-t on log std z
                                    the exact per-row moments                    (delta-method s.e.)
  ence                              simulated: per σ-bin Σσ²z² ~ gamma with      hull of basic and percentile
                                    the bin's exact mean and variance            bootstrap (blocks), clipped at
                                    (Satterthwaite; exact for equal σ in a bin)  0; debiased value = ENCE −
                                                                                 null mean ≥ 0 (Pernot)
                                    ensembles: per-bin (Σε², Σσ²) of the
                                    exchangeability null, each candidate target
                                    binned by its own σ (normal / gamma)
  calibration_rmse,                 exact: multinomial counts of uniform PITs    KS band; debiased value from
  quantile_calibration_error        on the level grid, simulated                 p̂(1 − p̂)/(N − 1) per level
  miscalibration_area               uniform PITs, simulated once per N           KS band
  pit_entropy                       uniform PITs, simulated once per N           none (spacing estimator)
  reliability_score                 Gaussian: N(0,1) z, simulated once per N     none
  z_skewness, z_excess_kurtosis     Gaussian: skewness the larger p of           bootstrap-t (delta-method
                                    D'Agostino and of the bootstrap-t test its   s.e. from moments up to 8)
                                    interval inverts; kurtosis Anscombe–Glynn
  zms (mean z², Pernot)             Gaussian: N·ZMS ~ χ²_N exact; else gamma     bootstrap-t on log ZMS
                                    with the exact per-row moments of z², z⁴     (delta-method s.e.)
  mean_log_z2 (robust ZMS)          Gaussian: normal, exact moments of log χ²₁;  bootstrap-t (s.e. from the
                                    else normal around a simulated reference     block sums of log z², log² z²)
  ================================  ===========================================  ============================

  For N above 2,000 the "once per N" nulls are extrapolated from tables at N = 1,000 and 2,000
  (mean and spread follow power laws in N).  Tests whose null depends on a shape this module does
  not model (reliability score, skewness, kurtosis for quantile sets and ensembles) get no p-value
  and say so in ``note``.
* **proper scores** (nll, crps, interval_score_c) get their expectation under H0 as the reference
  (``perfect``; exact for Gaussians, simulated on a subsample otherwise) and a BCa interval —
  no verdict: a forecaster can be calibrated and still score badly.
* **descriptive** metrics (rmse, mae, sharpness, cv, width_c, Spearman) get an interval only.

Multiplicity
------------
The *primary* family — PIT uniformity (KS), mean z, std z, coverage of the 90% interval, ENCE — is
tested with Holm at family-wise 5% (quantile sets and ensembles have their own families, of what they state:
:func:`primary_family`); any rejection makes
the headline "miscalibrated", and its
direction comes from the signs of the statistics that pass their own Bonferroni bound α/max(m, 5) (std z > 1 or
coverage below nominal: over-confident; the reverse: under-confident; mean z > 0 or fewer than half of the
targets below the median: biased low, the reverse: biased high; :func:`decide`).  The other
calibration statistics are *secondary*: p-values with a Benjamini–Hochberg flag at FDR 5%, and
``expected_chance_flags`` = 5% × their number (unadjusted flags a calibrated forecaster shows on
average).

Cost
----
Intervals come from per-block sums: rows are assigned to G random blocks once, the sufficient
statistics are summed per block (``np.bincount``), and all bootstrap replicates are one matrix
product (see :mod:`calib_core.base.significance`).  Nulls are analytic, or simulated on per-bin / per-grid
summaries (never by re-sorting rows), so the whole inference costs a few passes over the rows on
top of the point estimates.

Where the parts live
--------------------
The result is the :class:`~calib_core.inference.result.InferenceResult` of both tasks.  Beside this module (the
entry point, its bins-free :func:`inference_stage` and :func:`finish_inference`): the null laws in
:mod:`~calib_core.inference.regression_nulls`, ENCE's test in :mod:`~calib_core.inference.regression_ence`, the
block-sum bootstrap in :mod:`~calib_core.inference.regression_bootstrap`, the tests of each family of statistics in
:mod:`~calib_core.inference.regression_tests`, and kinds, families and words in
:mod:`~calib_core.inference.regression_verdict`.

Dependent rows: with a ``clustering`` (:mod:`calib_core.base.clustering`; forecasts made on one date share its
surprise) the blocks of the bootstrap are the clusters (or moving blocks of them), so every interval built on block
sums resamples clusters, and :mod:`~calib_core.inference.regression_cluster` replaces every p-value and every
interval not built on block sums by a cluster-aware one (bootstrap-t of means, centred cluster bootstrap of
distances); the nulls above assume independent rows and are then used for the reference values only.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special
from threadpoolctl import ThreadpoolController

from ..base import significance as sig
from ..base.clustering import Clustering, cluster_design
from ..base.regression import Gaussian, PredictiveDistribution, QuantileSet, SampleSet
from ..base.report import CALIBRATION_STATISTIC, DESCRIPTIVE, PROPER_SCORE
from ..metrics.regression import DEFAULT_COVERAGES, DEFAULT_LEVELS, Binning, RegressionRows, summary_statistics
from .regression_bootstrap import bootstrap_intervals
from .regression_cluster import cluster_ence_test, cluster_tests
from .regression_ence import ence_test
from .regression_ensemble import ensemble_tests, withhold_degenerate
from .regression_location import location_tests
from .regression_nulls import EnsembleNull, null_model, warm_up
from .regression_stated import descriptive_for_quantile_sets, stated_tests
from .regression_tests import coverage_tests, pit_tests, score_references, z_tests, zms_tests
from .regression_verdict import (
    PRIMARY,
    decide,
    empty_record,
    metric_kind,
    primary_family,
    primary_family_of_levels,
)
from .result import InferenceResult, interval_test_note

__all__ = [
    "InferenceResult",
    "InferenceStage",
    "infer_regression",
    "inference_stage",
    "finish_inference",
    "metric_kind",
    "warm_up",
    "PRIMARY",
    "primary_family",
    "primary_family_of_levels",
    "CALIBRATION_STATISTIC",
    "PROPER_SCORE",
    "DESCRIPTIVE",
    "ENCE_ROW_CACHES",
]


def infer_regression(
    y,
    dist: PredictiveDistribution | None = None,
    *,
    n_bins: int = 15,
    binning: Binning = "count",
    levels: np.ndarray = DEFAULT_LEVELS,
    coverages=DEFAULT_COVERAGES,
    n_null: int = 2_000,
    n_boot: int = 1_000,
    n_blocks: int = 1_000,
    level: float = 0.95,
    alpha: float = 0.05,
    seed: int | None = 0,
    rows: RegressionRows | None = None,
    values: dict[str, float] | None = None,
    clustering: Clustering | None = None,
) -> InferenceResult:
    """Tests, intervals, references and the headline verdict for one regression (y, dist).

    Parameters
    ----------
    y : ndarray of shape (N,)
        Targets (ignored when ``rows`` is given).
    dist : PredictiveDistribution, optional
        Predictive distributions (or pass ``rows``, a :class:`RegressionRows`, whose cached per-row quantities and
        sorts are then reused).
    n_bins : int, default 15
        σ-bins of ENCE.
    binning : {"count", "width"}, default "count"
        Equal-count or equal-width σ-bins.
    levels : ndarray, default DEFAULT_LEVELS
        The level grid of the calibration curve.
    coverages : sequence of float, default DEFAULT_COVERAGES
        Central-interval levels.  ``n_bins``, ``binning``, ``levels``, ``coverages`` are as in
        :func:`summary_statistics` (the point values are its output, or ``values`` if given — they must come from
        the same ``rows`` and options).
    n_null : int, default 2000
        Draws of the simulated nulls (ENCE, calibration-curve statistics, unequal-probability coverage counts);
        each simulated p-value reports its Monte-Carlo standard error.
    n_boot : int, default 1000
        Bootstrap replicates.
    n_blocks : int, default 1000
        Random row blocks of the bootstrap (exact row bootstrap when N ≤ n_blocks).
    level : float, default 0.95
        Two-sided level of the intervals.
    alpha : float, default 0.05
        Family-wise level of the headline (Holm) and FDR level of the secondary flags (BH).
    seed : int or None, default 0
        Seeds the randomised PIT (when ``rows`` is not given), blocks, bootstrap and nulls.
    rows : RegressionRows, optional
        Prepared rows.
    values : dict of str to float, optional
        The point values of these rows and options.
    clustering : Clustering, optional
        Which of these rows are resampled together (:func:`~calib_core.base.clustering.resolve_clustering` of the
        set, ``.take`` of these rows): every interval then resamples whole clusters or moving blocks
        (:func:`~calib_core.base.clustering.cluster_design`) and every test is cluster-aware
        (:mod:`~calib_core.inference.regression_cluster`); None: independent rows.

    Returns
    -------
    InferenceResult
        The table (one row per metric, the Report's columns), the verdict ("calibrated" or "miscalibrated"), its
        direction and sentence, the multiplicity bookkeeping, ``layout`` and ``options``.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*.
    .. [2] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    .. [3] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.
    .. [4] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    .. [5] Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and powerful
       approach to multiple testing. *Journal of the Royal Statistical Society B* 57(1), 289–300.
    """
    stage = inference_stage(y, dist, n_bins=n_bins, binning=binning, levels=levels, coverages=coverages,
                            n_null=n_null, n_boot=n_boot, n_blocks=n_blocks, level=level, seed=seed, rows=rows,
                            values=values, clustering=clustering)
    return finish_inference(stage, n_bins=n_bins, binning=binning, alpha=alpha, rows=stage.rows)


_CONTROLLER: list = []  # the process's ThreadpoolController, found once (inspecting the loaded libraries: ~4 ms)


def _one_blas_thread():
    """``threadpool_limits(1)`` through one ThreadpoolController made once per process (making one per call read
    the loaded libraries from /proc every time: about 4 ms of each diagnosis)."""
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1)


@dataclass(frozen=True)
class InferenceStage:
    """Everything :func:`infer_regression` computes before the σ-bins enter: the point values (ENCE's among them
    is replaced by :func:`finish_inference`), every other metric's test, interval and reference, and the random
    stream's state where ENCE's null draws begin.  ``finish_inference(stage, n_bins=…, binning=…)`` gives what
    ``infer_regression`` gives with those bins, to the last bit; a change of the σ-bins alone then costs ENCE, its
    test and interval and the decision (Holm's family holds ENCE, so the verdict is redone), not the bootstrap,
    the sorts and the other tests.  ``bins_free`` is False for ensembles, whose exchangeability null is binned:
    their stage serves only the bins it was made with (``n_bins``, ``binning``).  ``rows`` may be a
    :meth:`RegressionRows.detached` copy that keeps only what ENCE needs (the rest is recomputed on use).

    Attributes
    ----------
    rows : RegressionRows
        The rows (possibly detached).
    values : dict of str to float
        The point values.
    rec : dict of str to dict
        Every statistic's record so far (all but ENCE's test, the score references and the decisions).
    rng_state : dict
        State of the random stream where ENCE's null draws begin.
    z_moments : tuple
        Per-row null moments (E z, E z², E z³, E z⁴).
    ensemble_bin_moments : ndarray or None
        The exchangeability null's per-σ-bin moments (ensembles), else None.
    layout : str
        "gaussian", "quantile", "sample" (or the distribution's class name).
    n_bins : int
        σ-bins the stage was made with.
    binning : str
        Their binning.
    design : tuple
        (N, n_blocks, n_boot, seed, clustering) of the bootstrap (clustering None: random row blocks).
    options : dict
        ``levels``, ``coverages``, ``n_null``, ``n_boot``, ``level``, ``seed``.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*.
    .. [2] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    .. [3] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.
    .. [4] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    .. [5] Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and powerful
       approach to multiple testing. *Journal of the Royal Statistical Society B* 57(1), 289–300.
    """

    rows: RegressionRows
    values: dict[str, float]
    rec: dict[str, dict[str, Any]]
    rng_state: dict[str, Any]
    z_moments: tuple
    ensemble_bin_moments: np.ndarray | None
    layout: str
    n_bins: int
    binning: str
    design: tuple  # (N, n_blocks, n_boot, seed, clustering) of the bootstrap (:func:`_design`)
    options: dict[str, Any]

    @property
    def bins_free(self) -> bool:
        return self.ensemble_bin_moments is None

    def slimmed(self, keep: tuple[str, ...]) -> InferenceStage:
        """This stage with ``rows`` detached to the cached quantities ``keep`` (what a stored stage needs)."""
        return dataclasses.replace(self, rows=self.rows.detached(keep))


#: Calibration statistics that are distances (0 under perfect calibration in the population, a plug-in biased
#: upward): their interval is checked against 0, not against the plug-in's null mean ``perfect``
DISTANCES = ("ence", "max_calibration_deviation", "calibration_rmse", "quantile_calibration_error",
             "miscalibration_area", "max_level_deviation")

#: Cached per-row quantities :func:`finish_inference` and the Levi table read (kept by a stored stage's rows)
ENCE_ROW_CACHES = ("var", "sq_err", "sigma_order")


def _design(n: int, n_blocks: int, n_boot: int, seed: int | None,
            clustering: Clustering | None = None) -> sig.BlockDesign:
    """The bootstrap's random blocks and weights: :func:`calib_core.base.significance.block_design` on the stream
    ``(seed, 12)`` (seed None: 0, as always here), or with a clustering its clusters
    (:func:`~calib_core.base.clustering.cluster_design`, same stream)."""
    stream = (0 if seed is None else int(seed), 12)
    if clustering is not None:
        return cluster_design(clustering, n_boot, stream)
    return sig.block_design(n, n_blocks, n_boot, stream)


def inference_stage(
    y,
    dist: PredictiveDistribution | None = None,
    *,
    n_bins: int = 15,
    binning: Binning = "count",
    levels: np.ndarray = DEFAULT_LEVELS,
    coverages=DEFAULT_COVERAGES,
    n_null: int = 2_000,
    n_boot: int = 1_000,
    n_blocks: int = 1_000,
    level: float = 0.95,
    seed: int | None = 0,
    rows: RegressionRows | None = None,
    values: dict[str, float] | None = None,
    clustering: Clustering | None = None,
) -> InferenceStage:
    """The part of :func:`infer_regression` (same arguments, no ``alpha``) that does not depend on the σ-bins
    (for ensembles: on other bins than ``n_bins``, ``binning``); see :class:`InferenceStage`.

    Parameters
    ----------
    y, dist, n_bins, binning, levels, coverages, n_null, n_boot, n_blocks, level, seed, rows, values, clustering
        As in :func:`infer_regression`.

    Returns
    -------
    InferenceStage
        The bins-free part, for :func:`finish_inference`.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*.
    .. [2] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    .. [3] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.
    .. [4] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    .. [5] Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and powerful
       approach to multiple testing. *Journal of the Royal Statistical Society B* 57(1), 289–300.
    """
    with _one_blas_thread():  # small matrix products: BLAS threads only oversubscribe the cores
        return _inference_stage(y, dist, n_bins, binning, levels, coverages, n_null, n_boot, n_blocks, level, seed,
                                rows, values, clustering)


def _inference_stage(y, dist, n_bins, binning, levels, coverages, n_null, n_boot, n_blocks, level, seed, rows,
                     values, clustering=None) -> InferenceStage:
    if rows is None:
        if dist is None:
            raise ValueError("infer_regression needs (y, dist) or rows=")
        rows = RegressionRows(np.asarray(y, dtype=float), dist, pit_seed=seed)
    r = rows
    n = r.n
    if n < 2:
        raise ValueError(f"infer_regression needs at least 2 rows, got {n}")
    if values is None:
        values = summary_statistics(r, None, n_bins=n_bins, binning=binning, levels=levels, coverages=coverages)
    null = null_model(r, coverages, n_bins, binning)
    layouts = {Gaussian: "gaussian", QuantileSet: "quantile", SampleSet: "sample"}
    layout = layouts.get(type(r.dist), type(r.dist).__name__)
    rec: dict[str, dict[str, Any]] = {name: empty_record(name, float(v)) for name, v in values.items()}
    if clustering is not None and clustering.codes.shape[0] != n:
        raise ValueError(f"the clustering has {clustering.codes.shape[0]} rows, the data {n}")
    ids, g, weights, rng = _design(n, n_blocks, n_boot, seed, clustering)
    with np.errstate(**({"invalid": "ignore", "divide": "ignore"} if g < 2 else {})):  # one cluster: no resampling
        sums, names, boot = bootstrap_intervals(rec, values, r, ids, g, weights, coverages, level)
    pit_tests(rec, values, r, levels, n_null, level)
    z_tests(rec, values, r, null, level)
    zms_tests(rec, values, r, null, sums, names, boot, g, level, rng)
    coverage_tests(rec, values, r, null, coverages, n_null, level, rng)
    location_tests(rec, values, r, level)  # below_median: exact binomial against ½ (ties bracketed)
    stated_tests(rec, values, r, coverages, n_null, level, seed)  # quantile sets: tests of the stated levels only
    ensemble_tests(rec, values, r, null.z_moments(), n_null, level, seed)  # ensembles: ranks, member range, z
    if clustering is not None:  # every p-value and every interval not made of block sums: cluster-aware
        cluster_tests(rec, values, r, null, ids, weights, boot, coverages, level, seed, clustering.block_length)
    return InferenceStage(
        rows=r, values=dict(values), rec=rec, rng_state=rng.bit_generator.state, z_moments=null.z_moments(),
        ensemble_bin_moments=null.bin_moments if isinstance(null, EnsembleNull) else None, layout=layout,
        n_bins=int(n_bins), binning=str(binning), design=(n, n_blocks, n_boot, seed, clustering),
        options=dict(levels=tuple(np.asarray(levels, dtype=float).tolist()), coverages=tuple(coverages),
                     n_null=n_null, n_boot=n_boot, level=level, seed=seed),
    )


def finish_inference(stage: InferenceStage, *, n_bins: int = 15, binning: Binning = "count",
                     alpha: float = 0.05, ence: float | None = None,
                     rows: RegressionRows | None = None) -> InferenceResult:
    """:func:`infer_regression`'s result from its bins-free ``stage`` (:func:`inference_stage`) with the σ-bins
    ``n_bins``, ``binning``: ENCE (its point value ``ence`` if known, else computed), its Monte Carlo test against
    the gamma null and its basic-bootstrap interval, the proper-score references, Spearman's interval, the
    families and Holm / Benjamini–Hochberg decisions.  ``rows``: the stage's rows or a
    :meth:`~RegressionRows.detached` copy of them, whose caches this fills (default: a new copy); the stage itself
    is not changed, so it can serve other bins, in several threads at once.

    Parameters
    ----------
    stage : InferenceStage
        From :func:`inference_stage`.
    n_bins : int, default 15
        σ-bins of ENCE (an ensemble's stage serves only the bins it was made with).
    binning : {"count", "width"}, default "count"
        Equal-count or equal-width σ-bins.
    alpha : float, default 0.05
        Family-wise level of the headline and FDR level of the secondary flags.
    ence : float, optional
        ENCE at these bins, if known.
    rows : RegressionRows, optional
        The stage's rows or a detached copy.

    Returns
    -------
    InferenceResult
        What :func:`infer_regression` gives with these bins, to the last bit.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*.
    .. [2] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    .. [3] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.
    .. [4] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    .. [5] Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and powerful
       approach to multiple testing. *Journal of the Royal Statistical Society B* 57(1), 289–300.
    """
    if not stage.bins_free and (int(n_bins), str(binning)) != (stage.n_bins, stage.binning):
        raise ValueError("an ensemble's inference stage serves only the σ-bins it was made with")
    with _one_blas_thread():
        return _finish_inference(stage, n_bins, binning, alpha, ence, stage.rows.detached() if rows is None else rows)


def _finish_inference(stage: InferenceStage, n_bins, binning, alpha, ence, r: RegressionRows) -> InferenceResult:
    n = r.n
    o = stage.options
    level, n_null, coverages = o["level"], o["n_null"], o["coverages"]
    rec = {k: dict(v) for k, v in stage.rec.items()}
    values = dict(stage.values)
    rng = np.random.Generator(np.random.PCG64())
    rng.bit_generator.state = stage.rng_state
    ids, g, weights, _ = _design(*stage.design)

    # ---- ENCE ---------------------------------------------------------------------------------
    if "ence" in values:
        if ence is None:
            same = (int(n_bins), str(binning)) == (stage.n_bins, stage.binning)
            ence = values["ence"] if same else r.ence(n_bins=n_bins, binning=binning)
        values["ence"] = ence
        rec["ence"]["value"] = float(ence)
        ence_test(rec["ence"], values["ence"], r, stage.z_moments, stage.ensemble_bin_moments, ids, g, weights,
                  n_bins, binning, n_null, rng, level)
        if stage.design[4] is not None:
            cluster_ence_test(rec["ence"], values["ence"], r, ids, weights, n_bins, binning, level, stage.z_moments,
                              stage.ensemble_bin_moments)
        withhold_degenerate(rec, stage.z_moments, stage.layout, ("ence",))  # ensembles of degenerate spread

    # ---- proper-score references, Spearman interval ------------------------------------------
    score_references(rec, values, r, coverages, rng)
    descriptive_for_quantile_sets(rec, r)  # ENCE's test needs the interpolated law too
    if "spearman_sigma_abs_error" in values:
        rho = values["spearman_sigma_abs_error"]
        if np.isfinite(rho) and n > 3:
            se = np.sqrt((1 + rho * rho / 2) / (n - 3))
            zq = float(special.ndtri(0.5 + level / 2))
            rec["spearman_sigma_abs_error"].update(
                ci_low=float(np.tanh(np.arctanh(rho) - zq * se)), ci_high=float(np.tanh(np.arctanh(rho) + zq * se)),
                interval="Fisher z (Bonett–Wright s.e.)")

    primary = primary_family(r.dist, coverages)
    for k, row in rec.items():
        if row["kind"] == CALIBRATION_STATISTIC:
            row["family"] = "primary" if k in primary else "secondary"
            # interval and test of the same statistic: agree, or the note says why not (reference 0 for distances)
            extra = interval_test_note(row, level, 0.0 if k in DISTANCES else row["perfect"])
        else:
            lo_, hi_, v = row["ci_low"], row["ci_high"], row["value"]
            extra = ("value outside its interval: skewed bootstrap distribution (BCa ends)"
                     if np.isfinite(lo_) and np.isfinite(hi_) and not (lo_ <= v <= hi_) else "")
        if extra:
            row["note"] = f"{row['note']}; {extra}" if row["note"] else extra
    return decide(rec, n, stage.layout, alpha, dict(
        n_bins=n_bins, binning=binning, n_null=n_null, n_boot=o["n_boot"], n_blocks=g, level=level, alpha=alpha,
        seed=o["seed"]))
