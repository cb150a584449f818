"""``diagnose_classification``: every classification diagnostic of a PredictionSet, by model and group.

Metric table (``Report.metrics``; one row per model × group × metric, with an interval, the value under perfect
calibration — labels drawn from the predicted probabilities, y* ~ Categorical(p_i); for top-label-only files
correct* ~ Bernoulli(confidence) — and for calibration statistics a p-value, from
:func:`~calib_core.inference.classification.infer_classification`; ``Report.verdicts`` holds the headline of each
model and group):

* ``ece``, ``mce`` — top-label confidence ECE / MCE (Guo et al. 2017 eq. 3, 5) with ``n_bins`` bins of the chosen
  ``strategy`` (equal-width ((m−1)/M, m/M] by default, or equal-mass);
* ``accuracy``, ``mean_confidence``;
* ``nll`` (from logits via log-sum-exp when the file has logits), ``brier`` (Σ_k, in [0, 2]) and ``classwise_ece``
  (one-vs-rest, averaged over classes) — full probability vectors only;
* binary files (K = 2) also get ``ece_positive`` / ``mce_positive``: the same bins on P(y = 1) against the frequency
  of y = 1 (netcal's / scikit-learn's binary convention).
* the clinical set of binary risk models (:mod:`calib_core.diagnosis.classification_clinical`):
  ``calibration_in_the_large``, ``calibration_slope``, ``cox_intercept``, ``spiegelhalter_z``, ``hosmer_lemeshow``,
  ``ici``, ``e50``, ``e90`` of the positive class, tested in the secondary family
  (:mod:`calib_core.inference.classification_clinical`); K > 2: their means over the one-vs-rest classes
  (descriptive) and the per-class table ``"clinical_per_class"``; ``prevalence=P`` re-expresses every probability
  by Bayes' rule on the odds first;
* ``rps`` — ordinal sets (``pset.ordinal``, ordered categories such as a forecast hub's pmf forecasts): the ranked
  probability score (Epstein 1969), with its bootstrap interval and its expectation under perfect calibration
  (:mod:`calib_core.inference.classification_ordinal`).

Diagrams (``Report.diagrams[(model, group)]``), all from ``calib_core.base.binning`` through
:class:`~calib_core.metrics.classification.ClassificationRows` and
:mod:`calib_core.diagrams.classification` (so bars and numbers agree):

* ``"reliability"`` — per bin: ``bin, lower, upper, count, fraction, confidence, accuracy, gap`` (top-label; Guo
  Fig. 1/4: accuracy bars with the gap to the diagonal, and the confidence histogram from ``fraction``);
* ``"per_class"`` — the same columns plus ``class`` (one-vs-rest reliability of every class; K·M rows);
* ``"reliability_positive"`` (binary only) — positive-class reliability: x = predicted P(y = 1), y = observed
  frequency of y = 1.  Every table's ``attrs["semantics"]`` says what it shows.

Dependent rows: ``cluster=`` / ``block_length=`` (:func:`calib_core.base.clustering.resolve_clustering`; default
``"auto"``: a forecast hub's reference date, else independent rows) make every interval resample whole clusters and
every test cluster-aware; ``Report.options`` records ``cluster``, ``block_length``, ``n_clusters`` and
``clustering`` (its description, or "independent rows").

Row selection: all rows of the file (the ``split`` column matters for calibrators, not for diagnostics).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..base.clustering import (
    MIN_RELIABLE_CLUSTERS,
    MIN_TESTABLE_CLUSTERS,
    Clustering,
    resolve_clustering,
    too_few_clusters_sentence,
)
from ..base.predictions import PredictionSet, iter_subsets
from ..base.report import (
    NOT_TESTED,
    Report,
    diagnosis_report,
    inference_metric_rows,
    subset_name,
    verdict_row,
)
from ..diagrams.classification import classification_diagrams
from ..diagrams.classification_clinical import smoothed_calibration_diagrams
from ..inference.classification import PRIMARY_FAMILY, infer_classification
from ..inference.classification_ordinal import ordinal_metric_rows
from ..metrics.classification import ClassificationRows, Strategy
from ..metrics.classification_ratio import ratio_values
from ..metrics.classification_smooth import smooth_summaries
from .classification_clinical import PER_CLASS_TABLE, apply_prevalence, clinical_table_values

__all__ = ["diagnose_classification", "classification_rows", "classification_inference"]

def classification_inference(
    rows: ClassificationRows,
    *,
    model: str,
    group: str,
    n_resamples: int,
    n_simulations: int,
    level: float,
    alpha: float,
    classwise: bool,
    seed: int | None,
    smooth_estimates: dict | None = None,
    tce: bool = True,
    clustering: Clustering | None = None,
) -> tuple[pd.DataFrame | None, dict]:
    """Tests, intervals and the headline of one (model, group) through
    :func:`~calib_core.inference.classification.infer_classification`: the inference table (indexed by metric, the
    Report's columns) and a verdict row.

    Parameters
    ----------
    rows : ClassificationRows
        The subset's rows.
    model, group : str
        The (model, group).
    n_resamples : int
        Bootstrap replicates (0: no intervals).
    n_simulations : int
        Null draws (0: no tests, no verdict).
    level : float
        Two-sided level of the intervals.
    alpha : float
        Family-wise level of the headline and FDR of the secondary flags.
    classwise : bool
        Test class-wise ECE.
    seed : int or None
        Seeds the bootstrap and the nulls.
    smooth_estimates : dict, optional
        The smooth ECE point estimates (None: no smooth ECE test).
    tce : bool, default True
        Test TCE.
    clustering : Clustering, optional
        The rows' clusters (one code per row): cluster intervals and cluster-aware tests.

    Returns
    -------
    table : DataFrame or None
        The inference table (None when both intervals and tests are off).
    verdict : dict
        The row of ``Report.verdicts``.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       *ICML*.
    .. [2] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    """
    n = rows.n
    if n_resamples <= 0 and n_simulations <= 0:
        return None, verdict_row(model, group, n, verdict=NOT_TESTED,
                                 sentence="Not tested (bootstrap and null draws switched off).")
    res = infer_classification(rows, n_null=max(int(n_simulations), 1), n_boot=max(int(n_resamples), 1),
                               level=level, alpha=alpha, classwise=classwise, seed=seed,
                               smooth=smooth_estimates is not None, smooth_estimates=smooth_estimates, tce=tce,
                               clustering=clustering)
    return res.report_rows(model, group, intervals=n_resamples > 0, tests=n_simulations > 0)


def classification_rows(
    pset: PredictionSet, mask: Any = None, n_bins: int = 15, strategy: Strategy = "uniform"
) -> ClassificationRows:
    """The prepared :class:`ClassificationRows` of a classification PredictionSet (optionally some rows).

    Parameters
    ----------
    pset : PredictionSet
        A classification prediction set (full probability vectors or top-label confidences).
    mask : ndarray of bool, optional
        The rows to keep (default: all).
    n_bins : int, default 15
        Confidence bins.
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width or equal-mass bins.

    Returns
    -------
    ClassificationRows
        The rows, binned.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       *ICML*.
    """
    if pset.task != "classification":
        raise ValueError("classification_rows needs a classification PredictionSet")
    if mask is not None and np.asarray(mask).dtype == bool and np.shape(mask) == (pset.n_rows,) and mask.all():
        mask = None  # every row: the arrays themselves, no copy
    sel = (lambda a: a) if mask is None else (lambda a: None if a is None else a[mask])
    if pset.top_label_only:
        correct = sel(pset.labels) == sel(pset.point)
        return ClassificationRows.from_top_label(sel(pset.confidence), correct, n_bins=n_bins, strategy=strategy)
    return ClassificationRows(sel(pset.labels), sel(pset.probs), sel(pset.logits), n_bins=n_bins, strategy=strategy)


def diagnose_classification(
    pset: PredictionSet,
    n_bins: int = 15,
    strategy: Strategy = "uniform",
    n_resamples: int = 1000,
    n_simulations: int = 2000,
    level: float = 0.95,
    seed: int | None = 0,
    *,
    alpha: float = 0.05,
    by_group: bool = True,
    diagrams: bool = True,
    classwise: bool = True,
    smooth: bool = True,
    tce: bool = True,
    cluster: str | None = "auto",
    block_length: int | str | None = None,
    prevalence: float | None = None,
    **ignored: Any,
) -> Report:
    """Classification diagnostics of every (model, group): metric table with intervals, perfect-calibration values
    and p-values, the headline verdicts (:mod:`calib_core.inference.classification`) and the reliability tables
    (see the module docstring).

    Parameters
    ----------
    pset : PredictionSet
        A classification prediction set.
    n_bins : int, default 15
        Confidence bins for ECE/MCE and the reliability tables.
    strategy : {"uniform", "quantile"}, default "uniform"
        ``"uniform"`` = Guo's 15 equal-width bins, ``"quantile"`` = equal-mass.
    n_resamples : int, default 1000
        Bootstrap replicates for the intervals (multinomial re-weighting of random row blocks, on per-block
        summaries); 0 switches intervals off.
    n_simulations : int, default 2000
        Null draws (labels drawn from the predicted probabilities, on per-bin summaries) for the p-values and the
        perfect-calibration values; 0 switches tests, perfect-calibration values and verdicts off.
    level : float, default 0.95
        Two-sided level of the intervals and of the perfect-calibration range.
    seed : int or None, default 0
        Seeds the bootstrap and the null draws.
    alpha : float, default 0.05
        Family-wise level of the headline verdict (Holm over ECE and the top-bin gap) and false-discovery rate of
        the secondary flags (Benjamini–Hochberg).
    by_group : bool, default True
        Also diagnose each value of the ``group`` column.
    diagrams : bool, default True
        Compute the diagram tables.
    classwise : bool, default True
        Compute class-wise ECE (and its test) and the per-class tables.
    smooth : bool, default True
        Compute the smooth ECE (Błasiok & Nakkiran 2023; top-label, and positive class for binary files), its test
        and interval, and the kernel-smoothed reliability tables ``"smooth_reliability"`` (and
        ``"smooth_reliability_positive"``).  The calibration ratio Σf/Σy is always reported (top label, positive
        class).
    tce : bool, default True
        Report TCE (Matsubara et al. 2023; 10 equal-mass bins, exact binomial tests at ``alpha``) and its test.
    cluster : str or None, default "auto"
        Which rows are resampled together (:func:`calib_core.base.clustering.resolve_clustering`): ``"auto"`` (a
        forecast hub's reference date, else independent rows), None / ``"none"`` (independent rows) or a column.
        With a clustering every interval resamples whole clusters and every test is cluster-aware
        (:mod:`calib_core.inference.classification_cluster`; TCE untested), and each verdict sentence ends with
        "…; whole reference_date clusters resampled (40 clusters).".
    block_length : int, "auto" or None, default None
        Moving blocks of that many consecutive clusters instead of whole clusters (clusters dependent in time).
    prevalence : float, optional
        Binary files: the prevalence the probabilities are to be read at (where the model is used); every
        probability is re-expressed at the file's prevalence by Bayes' rule on the odds before any metric, so the
        metrics measure the calibration at that prevalence (:mod:`calib_core.diagnosis.classification_clinical`).
        The clinical set (calibration-in-the-large, slope, Cox intercept, Spiegelhalter's Z, Hosmer–Lemeshow,
        ICI / E50 / E90) is always reported for full-probability files (binary: positive class; K > 2: per class
        in ``"clinical_per_class"``, means in the table).
    **ignored
        Regression-only options passed through ``cc.diagnose`` (e.g. ``binning``, ``pit_bins``) are accepted and
        listed in ``Report.options["ignored_options"]``.

    Returns
    -------
    Report
        ``metrics`` (one row per model, group and metric), ``verdicts`` (one per model and group), ``diagrams``
        (see the module docstring) and ``options`` (the settings and the notes).

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       *ICML*.
    .. [2] Naeini, M. P., Cooper, G. F. & Hauskrecht, M. (2015). Obtaining well calibrated probabilities using
       Bayesian binning. *AAAI*.
    .. [3] Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
       *arXiv:2309.12236*.
    .. [4] Matsubara, T., Tax, N., Mudd, R. & Guy, I. (2023). TCE: a test-based approach to measuring calibration
       error. *UAI*.
    .. [5] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    .. [6] Cameron, A. C., Gelbach, J. B. & Miller, D. L. (2008). Bootstrap-based improvements for inference with
       clustered errors. *The Review of Economics and Statistics* 90(3), 414–427.
    """
    if pset.task != "classification":
        raise ValueError("diagnose_classification needs a classification PredictionSet")
    clustering = resolve_clustering(pset, cluster, block_length)
    tables: list[pd.DataFrame] = []
    verdicts: list[dict] = []
    figs: dict[tuple[str, str], dict[str, pd.DataFrame]] = {}
    notes: list[str] = []
    pset, prevalence_note = apply_prevalence(pset, prevalence)
    if prevalence_note:
        notes.append(prevalence_note)
    if pset.top_label_only:
        notes.append(
            "top-label-only file: accuracy, ECE, MCE and the top-label reliability diagram only (no NLL, Brier, "
            "class-wise ECE or per-class reliability without the full probability vectors)."
        )
    binary = not pset.top_label_only and pset.probs is not None and pset.probs.shape[1] == 2
    if binary:
        notes.append(
            "binary file: 'ece'/'mce' and the 'reliability' table are top-label (confidence = max(p, 1 − p), Guo et "
            "al.); 'ece_positive'/'mce_positive' and 'reliability_positive' use P(y = 1) against the frequency of "
            "y = 1 (netcal / scikit-learn's binary convention)."
        )
    for model, group, mask in iter_subsets(pset, by_group):
        n = int(mask.sum())
        if n < 2:
            notes.append(f"{subset_name(model, group, pset, mask)}: {n} row(s), too few to diagnose")
            continue
        if n < n_bins:
            notes.append(f"{subset_name(model, group, pset, mask)}: {n} rows for {n_bins} bins — most bins are empty")
        rows = classification_rows(pset, mask, n_bins, strategy)
        sub = None if clustering is None else clustering.take(mask)
        if sub is not None and sub.n_clusters < MIN_TESTABLE_CLUSTERS:
            notes.append(f"{subset_name(model, group, pset, mask)}: {sub.n_clusters} {sub.column} clusters only — "
                         f"no intervals and no tests with fewer than {MIN_TESTABLE_CLUSTERS} clusters")
        elif sub is not None and sub.n_clusters < MIN_RELIABLE_CLUSTERS:
            notes.append(f"{subset_name(model, group, pset, mask)}: {sub.n_clusters} {sub.column} clusters only — "
                         f"intervals and tests are unreliable with fewer than {MIN_RELIABLE_CLUSTERS} clusters")
        too_few = sub is not None and sub.n_clusters < MIN_TESTABLE_CLUSTERS
        n_res, n_sim = (0, 0) if too_few else (n_resamples, n_simulations)  # no intervals, no tests
        use_cw = classwise and not rows.top_label_only

        values = rows.statistics(None, classwise=use_cw)
        smooth_est, smooth_curves = smooth_summaries(rows) if smooth else (None, {})
        values.update({k: e.value for k, e in (smooth_est or {}).items()})
        values.update(ratio_values(rows, tce=tce, alpha=alpha))
        clin, clin_notes, per_class, clin_kinds = clinical_table_values(rows, level=level)
        values.update(clin)
        notes.extend(f"{subset_name(model, group, pset, mask)}: {text}" for text in clin_notes)
        inf, head = classification_inference(rows, model=model, group=group, n_resamples=n_res,
                                             n_simulations=n_sim, level=level, alpha=alpha,
                                             classwise=use_cw, seed=seed, smooth_estimates=smooth_est, tce=tce,
                                             clustering=sub)
        tables.append(inference_metric_rows(model, group, values, inf, extra=PRIMARY_FAMILY + ("confidence_gap",),
                                            kinds=clin_kinds))
        if pset.ordinal and not rows.top_label_only:  # ordered categories: the ranked probability score
            tables.append(ordinal_metric_rows(rows.probs, rows.labels, model=model, group=group,
                                              n_resamples=n_res, level=level, seed=seed, clustering=sub))
        if too_few:
            head = dict(head, verdict=NOT_TESTED, sentence=too_few_clusters_sentence(sub))
        verdicts.append(head)
        if diagrams:
            figs[(model, group)] = classification_diagrams(rows, per_class=use_cw, classes=pset.classes)
            figs[(model, group)].update(smooth_curves)
            if per_class is not None:
                figs[(model, group)][PER_CLASS_TABLE] = per_class
            figs[(model, group)].update(smoothed_calibration_diagrams(rows, n_resamples=n_res, level=level,
                                                                      seed=seed, clustering=sub))
    return diagnosis_report(
        "classification",
        pset,
        tables=tables,
        verdicts=verdicts,
        diagrams=figs,
        options={
            "n_bins": n_bins,
            "strategy": strategy,
            "n_resamples": n_resamples,
            "n_simulations": n_simulations,
            "level": level,
            "alpha": alpha,
            "seed": seed,
            "smooth": smooth,
            "tce": tce,
            "layout": pset.layout,
            "top_label_only": pset.top_label_only,
            "classes": pset.classes,
            "notes": notes,
            "ignored_options": sorted(ignored),
            "cluster": cluster,
            "block_length": block_length,
            "prevalence": prevalence,
            "prevalence_adjustment": prevalence_note or "none",
            "n_clusters": None if clustering is None else clustering.n_clusters,
            "clustering": "independent rows" if clustering is None else clustering.describe(),
        },
    )
