"""``diagnose_regression``: every regression diagnostic of a PredictionSet — intervals, perfect-calibration values,
p-values and one headline verdict per (model, group) from the inference layer
(:mod:`calib_core.inference.regression`), and the diagram tables.

``cc.diagnose`` (:mod:`calib_core.api`) hands regression sets here; the classification mirror is
``calib_core.diagnosis.classification.diagnose_classification``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..base import significance as sig
from ..base.clustering import (
    MIN_RELIABLE_CLUSTERS,
    MIN_TESTABLE_CLUSTERS,
    Clustering,
    cluster_design,
    clustered_sentence,
    resolve_clustering,
    too_few_clusters_sentence,
)
from ..base.predictions import PredictionSet, iter_subsets
from ..base.regression import Gaussian, PredictiveDistribution, QuantileSet, SampleSet
from ..base.report import (
    NOT_TESTED,
    Report,
    diagnosis_report,
    inference_metric_rows,
    subset_name,
    verdict_row,
)
from ..diagrams.regression import levi_bins_table, regression_diagrams
from ..diagrams.regression_sigma_stage import levi_design, levi_table_from_design, prime_sigma_bins
from ..inference.regression import ENCE_ROW_CACHES, InferenceStage, finish_inference, inference_stage, metric_kind
from ..metrics.regression import Binning, RegressionRows, summary_statistics, undefined_z_counts, undefined_z_note
from .nonfinite import nonfinite_metric_notes
from .nonfinite_units import hub_unit_label

__all__ = ["diagnose_regression", "regression_inference", "SubsetStage", "degenerate_note", "mark_undefined_metrics",
           "layout_name", "clustered_sentence", "clustering_key", "clustering_options"]


def regression_inference(
    rows: RegressionRows,
    values: dict[str, float],
    *,
    model: str,
    group: str,
    n_bins: int,
    binning: Binning,
    n_resamples: int,
    n_simulations: int,
    level: float,
    alpha: float,
    seed: int | None,
    stage: InferenceStage | None = None,
    clustering: Clustering | None = None,
) -> tuple[pd.DataFrame | None, dict]:
    """Tests, intervals and the headline of one (model, group) through
    :func:`~calib_core.inference.regression.infer_regression`: the inference table (indexed by metric, the Report's
    columns) and a verdict row.

    Parameters
    ----------
    rows : RegressionRows
        The subset's rows.
    values : dict of str to float
        Their point values (with ENCE at ``n_bins``, ``binning`` when ``stage`` is given).
    model, group : str
        The (model, group).
    n_bins : int
        σ-bins of ENCE.
    binning : {"count", "width"}
        Equal-count or equal-width σ-bins.
    n_resamples : int
        Bootstrap replicates (0: no intervals).
    n_simulations : int
        Null draws (0: no tests, no verdict).
    level : float
        Two-sided level of the intervals.
    alpha : float
        Family-wise level of the headline and FDR of the secondary flags.
    seed : int or None
        Seeds the bootstrap and the nulls.
    stage : InferenceStage, optional
        The bins-free part (:func:`~calib_core.inference.regression.inference_stage` of these rows and options) if
        already computed.
    clustering : Clustering, optional
        The clustering of these rows (None: independent rows); the verdict's sentence then names it.

    Returns
    -------
    table : DataFrame or None
        The inference table (None when both intervals and tests are off).
    verdict : dict
        The row of ``Report.verdicts``.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    .. [2] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    """
    n = rows.n
    if n_resamples <= 0 and n_simulations <= 0:
        return None, verdict_row(model, group, n, verdict=NOT_TESTED,
                                 sentence="Not tested (bootstrap and null draws switched off).")
    if stage is None:
        stage = inference_stage(None, rows=rows, values=values, n_bins=n_bins, binning=binning,
                                clustering=clustering, **_stage_options(n_resamples, n_simulations, level, seed))
    res = finish_inference(stage, n_bins=n_bins, binning=binning, alpha=alpha, ence=values.get("ence"), rows=rows)
    table, head = res.report_rows(model, group, intervals=n_resamples > 0, tests=n_simulations > 0)
    if clustering is not None:
        head = dict(head, sentence=clustered_sentence(head.get("sentence", ""), clustering))
    return table, head


def clustering_key(clustering: Clustering | None) -> tuple | None:
    """What a stored stage must have been made with to serve this clustering: column, block length and the
    clusters of every row (a stage made under another clustering is never reused).

    Parameters
    ----------
    clustering : Clustering or None
        The clustering.

    Returns
    -------
    tuple or None
        (column, block length, G, hash of the codes); None for independent rows.

    References
    ----------
    .. [1] Field, C. A. & Welsh, A. H. (2007). Bootstrapping clustered data. *Journal of the Royal Statistical
       Society B* 69(3), 369–390.
    """
    if clustering is None:
        return None
    codes = np.ascontiguousarray(clustering.codes, dtype=np.int64)
    return (clustering.column, clustering.block_length, clustering.n_clusters, hash(codes.tobytes()))


def _stage_options(n_resamples: int, n_simulations: int, level: float, seed: int | None) -> dict[str, Any]:
    """The options :func:`inference_stage` gets from the diagnosis options (as :func:`infer_regression` did)."""
    return dict(n_null=max(int(n_simulations), 1), n_boot=max(int(n_resamples), 1), level=level, seed=seed)


@dataclass(frozen=True)
class SubsetStage:
    """The part of one (model, group)'s diagnosis that does not depend on the σ-bins (``n_bins``, ``binning``):
    its rows (:meth:`RegressionRows.detached` to what ENCE and the Levi table read), the point values (with ENCE at
    the bins it was made with), the inference stage (:class:`~calib_core.inference.regression.InferenceStage`) and
    every diagram table but the Levi table.  Kept in the ``stages`` mapping of :func:`diagnose_regression`.

    Attributes
    ----------
    rows : RegressionRows
        The subset's rows, detached to what ENCE and the Levi table read.
    causes : dict of str to int
        Rows without a usable z, by cause (:func:`~calib_core.metrics.regression.undefined_z_counts`).
    values : dict of str to float
        The point values (ENCE at ``n_bins``, ``binning``).
    inference : InferenceStage or None
        The inference's bins-free part (None when tests and intervals are off).
    diagrams : dict of str to DataFrame or None
        Every diagram table but the Levi table.
    n_bins : int
        σ-bins the stage was made with.
    binning : str
        Their binning.
    options : tuple
        The bins-free options (``pit_bins``, ``n_resamples``, ``n_simulations``, ``level``, ``seed``, ``diagrams``,
        and the clustering's :func:`clustering_key`).

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    """

    rows: RegressionRows
    causes: dict[str, int]
    values: dict[str, float]
    inference: InferenceStage | None
    diagrams: dict[str, pd.DataFrame] | None
    n_bins: int
    binning: str
    options: tuple

    def serves(self, y: np.ndarray, dist: PredictiveDistribution, options: tuple) -> bool:
        """Whether this stage was made from these rows (y, μ and σ equal, same count) with these options."""
        r = self.rows
        return (options == self.options and r.n == y.shape[0]
                and np.array_equal(r.y, y, equal_nan=True)
                and np.array_equal(r.mean, np.asarray(dist.mean(), dtype=float), equal_nan=True)
                and np.array_equal(r.sigma, np.asarray(dist.std(), dtype=float), equal_nan=True))


#: Diagram tables in the order :func:`regression_diagrams` gives them (the Levi table is the only binned one)
_DIAGRAM_ORDER = ("calibration_curve", "levi_bins", "pit_histogram", "z_histogram", "qq", "intervals",
                  "stated_levels", "rank_histogram")  # the last two: quantile sets / ensembles only


def _point_rows(err: np.ndarray, model: str, group: str, n_resamples: int, level: float, seed: int | None,
                n_blocks: int = 256, clustering: Clustering | None = None) -> pd.DataFrame:
    """RMSE and MAE of point predictions with block-bootstrap percentile intervals (no test: nothing to judge);
    with a clustering the blocks are its clusters."""
    values = {"rmse": float(np.sqrt(np.mean(err * err))), "mae": float(np.mean(np.abs(err)))}
    inf = None
    if n_resamples > 0:
        if clustering is None:
            rng = np.random.default_rng(seed)
            ids, g = sig.block_ids(err.size, n_blocks, rng)
            weights = None
        else:
            ids, g, weights, _ = cluster_design(clustering, n_resamples, seed)
        sums = np.stack([np.bincount(ids, minlength=g).astype(float), np.bincount(ids, weights=err * err, minlength=g),
                         np.bincount(ids, weights=np.abs(err), minlength=g)], axis=1)
        if weights is None:
            weights = sig.block_bootstrap_weights(g, n_resamples, rng)
        reps = weights @ sums
        boot = np.stack([np.sqrt(reps[:, 1] / reps[:, 0]), reps[:, 2] / reps[:, 0]], axis=1)
        lo, hi = sig.percentile_interval(boot, level)
        how = "percentile bootstrap" + (" (random row blocks)" if g < err.size else "")
        if clustering is not None:
            how = f"percentile bootstrap ({clustering.describe()})"
        inf = pd.DataFrame({"ci_low": lo, "ci_high": hi, "interval": [how, how]}, index=["rmse", "mae"])
    return inference_metric_rows(model, group, values, inf, kinds={"rmse": "descriptive", "mae": "descriptive"})


def diagnose_regression(
    prediction_set: PredictionSet,
    *,
    n_bins: int = 15,
    binning: Binning = "count",
    pit_bins: int = 20,
    n_resamples: int = 1000,
    n_simulations: int = 2000,
    level: float = 0.95,
    alpha: float = 0.05,
    seed: int | None = 0,
    by_group: bool = True,
    diagrams: bool | Collection[str] = True,
    stages: MutableMapping[Any, Any] | None = None,
    cluster: str | None = "auto",
    block_length: int | str | None = None,
) -> Report:
    """Regression diagnostics of every (model, group): metric table with intervals, perfect-calibration values and
    p-values, the headline verdicts and the diagram tables.

    Parameters
    ----------
    prediction_set : PredictionSet
        A regression prediction set (Gaussian, quantile, ensemble or point predictions).
    n_bins : int, default 15
        Levi σ-bins for ENCE and the reliability diagram.
    binning : {"count", "width"}, default "count"
        Equal-count σ-bins, or ``"width"`` for netcal's equal-width convention.
    pit_bins : int, default 20
        Bins of the PIT histogram.
    n_resamples : int, default 1000
        Bootstrap replicates for the intervals (block bootstrap on per-block sums, see
        :mod:`calib_core.base.significance`; 0 switches intervals off).
    n_simulations : int, default 2000
        Null draws of the simulated tests (ENCE, calibration-curve statistics, ensemble coverage; exact tests need
        none) and of the simulated perfect-calibration values; 0 switches tests, perfect-calibration values and
        the verdicts off.
    level : float, default 0.95
        Two-sided level of the intervals.
    alpha : float, default 0.05
        Family-wise level of the headline verdict (Holm over the primary family) and false-discovery rate of the
        secondary flags (Benjamini–Hochberg).
    seed : int or None, default 0
        Seeds the bootstrap, the null draws and the randomised PIT of ensembles.
    by_group : bool, default True
        Also diagnose each value of the ``group`` column.
    diagrams : bool or collection of str, default True
        Compute the diagram tables (``Report.diagrams``); a collection of table names: only those tables (the
        same tables; e.g. the three a σ-bin selection's overlays draw).
    stages : mutable mapping, optional
        A mapping the caller keeps between diagnoses of the same rows whose options differ in the σ-bins
        (``n_bins``, ``binning``) at most: each (model, group)'s bins-free part (:class:`SubsetStage`: sorts, point
        values, bootstrap, every test but ENCE's, the other diagram tables, the random stream's state where ENCE's
        null draws begin) is put there, and a later call finds it and recomputes only ENCE, its test and interval,
        the Levi table and the decisions — the same report as without it, to the last bit (a stage made from
        other rows or options is not used).  Ensembles are not staged (their null is binned).
    cluster : str or None, default "auto"
        Which rows are resampled together (:func:`~calib_core.base.clustering.resolve_clustering`): ``"auto"``
        clusters a forecast hub's rows by their reference date (else independent rows), a column name clusters by
        that column, None or ``"none"``: independent rows.  With a clustering every interval resamples whole
        clusters (or moving blocks) and every test is cluster-aware (cluster-robust t tests of means, centred
        cluster-bootstrap tests of spreads and distances; :mod:`~calib_core.inference.regression_cluster`); a
        statistic without a cluster-aware test gets no p-value and a note.
    block_length : int, "auto" or None, default None
        None: whole clusters drawn independently; k: moving blocks of k consecutive cluster values (clusters in
        time with a shared slow shock); "auto": round(G^{1/3}).

    Returns
    -------
    Report
        ``metrics`` (one row per model, group and metric), ``verdicts`` (one per model and group), ``diagrams``
        and ``options`` (the settings, the layout and the notes, e.g. subsets too small to diagnose).

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*.
    .. [2] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    .. [3] Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       *Journal of the American Statistical Association* 102(477), 359–378.
    .. [4] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    """
    pset = prediction_set
    if pset.task != "regression":
        raise ValueError("diagnose_regression needs a regression PredictionSet")
    tables: list[pd.DataFrame] = []
    verdicts: list[dict] = []
    figs: dict[tuple[str, str], dict[str, pd.DataFrame]] = {}
    notes: list[str] = []
    clustering = resolve_clustering(pset, cluster, block_length)
    wanted = None if isinstance(diagrams, bool) else tuple(diagrams)  # None: every table (or none)
    bins_free_options = (pit_bins, n_resamples, n_simulations, level, seed, diagrams if wanted is None else wanted,
                         clustering_key(clustering))
    few: list[str] = []
    untested: list[str] = []
    for model, group, mask in iter_subsets(pset, by_group):
        n = int(mask.sum())
        sub_clusters = None if clustering is None else clustering.take(mask)
        too_few = sub_clusters is not None and sub_clusters.n_clusters < MIN_TESTABLE_CLUSTERS
        if sub_clusters is not None and sub_clusters.n_clusters < MIN_RELIABLE_CLUSTERS and n >= 2:
            named = f"{subset_name(model, group, pset, mask)} ({sub_clusters.n_clusters})"
            (untested if too_few else few).append(named)
        n_res, n_sim = (0, 0) if too_few else (n_resamples, n_simulations)  # no intervals, no tests
        y = pset.y if n == pset.n_rows else pset.y[mask]
        if n < 2:
            notes.append(f"{subset_name(model, group, pset, mask)}: {n} row(s), too few to diagnose")
            continue
        try:
            if pset.dist is None:  # point predictions only: accuracy, no uncertainty to judge
                err = y - pset.point[mask]
                with np.errstate(over="ignore", invalid="ignore"):  # an overflowing error is an infinite RMSE
                    point = _point_rows(err, model, group, n_res, level, seed, clustering=sub_clusters)
                notes += nonfinite_metric_notes(point, subset_name(model, group, pset, mask), y,
                                                mean=pset.point[mask], row_numbers=_row_numbers(pset, mask),
                                                unit_label=hub_unit_label(pset, mask))
                tables.append(point)
                verdicts.append(verdict_row(model, group, n, verdict=NOT_TESTED, sentence=clustered_sentence(
                    "Point predictions only: no predicted uncertainty to test.", sub_clusters)))
                continue
            # the whole set needs no copy (a 1e7-row take would cost 3 arrays of 80 MB)
            dist = pset.dist if mask.all() else pset.dist.take(mask)
            stage_key = (model, group, n, clustering_key(sub_clusters))
            stage = stages.get(stage_key) if stages is not None else None
            if stage is not None and not stage.serves(y, dist, bins_free_options):
                stage = None
            if stage is None:
                with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                    rows = RegressionRows(y, dist, pit_seed=seed)
                    causes = undefined_z_counts(rows)
            else:
                rows, causes = stage.rows.detached(), stage.causes
            # rows without a usable z give inf/NaN on purpose there: the subset's note says why, not NumPy
            with np.errstate(**({"all": "ignore"} if causes else {})):
                if stage is None:
                    values = summary_statistics(rows, None, n_bins=n_bins, binning=binning)
                    tested = n_res > 0 or n_sim > 0
                    inf_stage = inference_stage(None, rows=rows, values=values, n_bins=n_bins, binning=binning,
                                                clustering=sub_clusters,
                                                **_stage_options(n_res, n_sim, level, seed)) \
                        if tested else None
                    figures = regression_diagrams(rows, n_bins=n_bins, binning=binning, pit_bins=pit_bins,
                                                  n_resamples=n_res, seed=seed,
                                                  clustering=sub_clusters, tables=wanted) if diagrams else None
                    if stages is not None and (inf_stage is None or inf_stage.bins_free):
                        stages[stage_key] = SubsetStage(
                            rows=rows.detached(ENCE_ROW_CACHES), causes=dict(causes), values=dict(values),
                            inference=inf_stage.slimmed(ENCE_ROW_CACHES) if inf_stage is not None else None,
                            diagrams=({k: v.copy() for k, v in figures.items() if k != "levi_bins"}
                                      if figures is not None else None),
                            n_bins=int(n_bins), binning=str(binning), options=bins_free_options)
                else:
                    values = dict(stage.values)
                    prime_sigma_bins(rows, n_bins, binning)  # equal-width bins from the σ order (same integers)
                    if (int(n_bins), str(binning)) != (stage.n_bins, stage.binning):
                        values["ence"] = rows.ence(n_bins=n_bins, binning=binning)
                    inf_stage = stage.inference
                    figures = None
                    if diagrams and (wanted is None or "levi_bins" in wanted):
                        # the Levi bootstrap's blocks and weights drawn once per (N, replicates, seed), not per call
                        levi = (levi_table_from_design(rows, levi_design(rows.n, n_res, int(seed)), n_bins=n_bins,
                                                       binning=binning)
                                if sub_clusters is None and n_res > 0 and isinstance(seed, (int, np.integer))
                                else levi_bins_table(rows, n_bins=n_bins, binning=binning, n_resamples=n_res,
                                                     seed=seed, clustering=sub_clusters))
                        figures = {k: levi if k == "levi_bins" else stage.diagrams[k].copy() for k in _DIAGRAM_ORDER
                                   if k == "levi_bins" or k in stage.diagrams}
                    elif diagrams:  # the tables wanted, none of them binned
                        figures = {k: stage.diagrams[k].copy() for k in _DIAGRAM_ORDER if k in stage.diagrams}
                inf, head = regression_inference(rows, values, model=model, group=group, n_bins=n_bins,
                                                 binning=binning, n_resamples=n_res,
                                                 n_simulations=n_sim, level=level, alpha=alpha, seed=seed,
                                                 stage=inf_stage, clustering=sub_clusters)
                table = inference_metric_rows(model, group, values, inf, kinds=_kinds(values))
        except (ArithmeticError, ValueError, IndexError) as exc:  # one subset never sinks the report
            notes.append(f"{subset_name(model, group, pset, mask)}: could not be diagnosed ({type(exc).__name__}: "
                         f"{str(exc)[:200]}); the other models and groups are not affected")
            continue
        note = degenerate_note(model, group, n, values, causes, layout=layout_name(dist), pset=pset, mask=mask)
        if note:
            notes.append(note)
            mark_undefined_metrics(table, causes, n, layout=layout_name(dist))
        name = subset_name(model, group, pset, mask)
        extra = nonfinite_metric_notes(table, name, y, mean=rows.mean, sigma=rows.sigma,
                                       row_numbers=_row_numbers(pset, mask), unit_label=hub_unit_label(pset, mask))
        if note and extra:  # one note per subset: the rows behind the undefined z join its sentence
            notes[-1] = f"{notes[-1]} Which rows: {extra[0].removeprefix(name + ': ')}"
        else:
            notes += extra
        tables.append(table)
        if too_few:
            head = dict(head, verdict=NOT_TESTED, sentence=too_few_clusters_sentence(sub_clusters))
        verdicts.append(head)
        if figures is not None:
            figs[(model, group)] = figures
    notes += clustering_notes(clustering, few, diagrams, untested)
    return diagnosis_report(
        "regression",
        pset,
        tables=tables,
        verdicts=verdicts,
        diagrams=figs,
        options={
            "n_bins": n_bins,
            "binning": binning,
            "pit_bins": pit_bins,
            "n_resamples": n_resamples,
            "n_simulations": n_simulations,
            "level": level,
            "alpha": alpha,
            "seed": seed,
            "layout": pset.layout,
            "notes": notes,
            **clustering_options(clustering),
        },
    )


def _row_numbers(pset: PredictionSet, mask: np.ndarray) -> np.ndarray | None:
    """The subset's rows as the file numbers them (1-based), when the loader kept them."""
    return None if pset.row_number is None else np.asarray(pset.row_number)[mask]


def clustering_options(clustering: Clustering | None) -> dict[str, Any]:
    """The clustering entries of ``Report.options``: ``cluster`` (the column, None for independent rows),
    ``block_length``, ``n_clusters`` and ``clustering`` (:meth:`Clustering.describe` or "independent rows").

    Parameters
    ----------
    clustering : Clustering or None
        The resolved clustering.

    Returns
    -------
    dict
        The four entries.

    References
    ----------
    .. [1] Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust inference. *Journal of
       Human Resources* 50(2), 317–372.

    Examples
    --------
    >>> clustering_options(None)
    {'cluster': None, 'block_length': None, 'n_clusters': None, 'clustering': 'independent rows'}
    """
    if clustering is None:
        return {"cluster": None, "block_length": None, "n_clusters": None, "clustering": "independent rows"}
    return {"cluster": clustering.column, "block_length": clustering.block_length,
            "n_clusters": clustering.n_clusters, "clustering": clustering.describe()}


def clustering_notes(clustering: Clustering | None, few: list[str], diagrams: bool,
                     untested: list[str] | None = None) -> list[str]:
    """The report's notes on a clustering: subsets with fewer than ``MIN_TESTABLE_CLUSTERS`` clusters (no intervals,
    no tests), with fewer than ``MIN_RELIABLE_CLUSTERS`` (unreliable), and which diagram bands stay per row."""
    if clustering is None:
        return []
    out = []
    if untested:
        out.append(f"fewer than {MIN_TESTABLE_CLUSTERS} {clustering.column} clusters in {', '.join(untested[:8])}"
                   f"{' …' if len(untested) > 8 else ''}: no intervals and no tests (a bootstrap over so few clusters "
                   "has a handful of distinct resamples)")
    if few:
        out.append(f"fewer than {MIN_RELIABLE_CLUSTERS} {clustering.column} clusters in {', '.join(few[:8])}"
                   f"{' …' if len(few) > 8 else ''}: intervals and tests are computed but unreliable with so few "
                   "clusters (the cluster bootstrap and the t test with G − 1 degrees of freedom need more)")
    if diagrams:
        out.append("diagrams: the Levi RMSE intervals resample the clusters; the perfect-calibration bands of the "
                   "calibration curve, PIT and rank histograms and the stated levels' Clopper–Pearson intervals "
                   "are drawn for independent rows (the bands show the null, not the data's uncertainty)")
    return out


def _kinds(values) -> dict[str, str]:
    return {k: metric_kind(k) for k in values}


def layout_name(dist: PredictiveDistribution | None) -> str:
    """The layout a distribution comes from ("sample", "quantile", "gaussian"; "" for another or none).

    Parameters
    ----------
    dist : PredictiveDistribution or None
        The predictions.

    Returns
    -------
    str
        The layout's name.

    References
    ----------
    .. [1] Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       *Journal of the American Statistical Association* 102(477), 359–378.
    """
    if isinstance(dist, SampleSet):
        return "sample"
    if isinstance(dist, QuantileSet):
        return "quantile"
    return "gaussian" if isinstance(dist, Gaussian) else ""


def degenerate_note(
    model: str,
    group: str,
    n: int,
    values: Mapping[str, float],
    causes: Mapping[str, int],
    *,
    layout: str = "",
    pset: PredictionSet | None = None,
    mask: np.ndarray | None = None,
) -> str:
    """The note of a (model, group) of ``n`` rows some of which have no usable z = (y − μ)/σ (``causes`` from
    :func:`~calib_core.metrics.regression.undefined_z_counts`; "" when there are none): which subset, why
    (:func:`~calib_core.metrics.regression.undefined_z_note`, e.g. "all 37 ensembles have zero spread (every member
    equal), so z = (y − mean)/σ is undefined on every row" — an ensemble forecast of rain in a dry-weather group
    where every member forecasts 0) and how many of its metrics are therefore undefined (NaN) or infinite; those
    metrics' rows carry the reason in their ``note``.  ``pset`` and ``mask`` name the group of a one-group set
    (:func:`~calib_core.base.report.subset_name`).

    Parameters
    ----------
    model, group : str
        The (model, group).
    n : int
        Its rows.
    values : mapping of str to float
        Its point values.
    causes : mapping of str to int
        Rows without a usable z, by cause.
    layout : str, default ""
        The predictive layout (the reason's wording).
    pset : PredictionSet, optional
        The prediction set (to name a one-group subset).
    mask : ndarray of bool, optional
        The subset's rows.

    Returns
    -------
    str
        The note ("" when every row has a usable z).

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    """
    reason = undefined_z_note(dict(causes), n, layout=layout)
    if not reason:
        return ""
    v = np.array([float(x) for x in values.values()])
    k_nan, k_inf = int(np.isnan(v).sum()), int(np.isinf(v).sum())
    effects = ([f"{k_nan} undefined (NaN)"] if k_nan else []) + ([f"{k_inf} infinite"] if k_inf else [])
    tail = (f" — {' and '.join(effects)} of its {v.size} metrics (their rows in the metric table say so)"
            if effects else "")
    return f"{subset_name(model, group, pset, mask)}: {reason}{tail}."


def mark_undefined_metrics(
    table: pd.DataFrame, causes: Mapping[str, int], n: int, *, layout: str = "", skip: Iterable[str] = ()
) -> None:
    """Write why (:func:`~calib_core.metrics.regression.undefined_z_note` of ``causes`` over ``n`` rows) into the
    ``note`` of every metric of ``table`` (the metric rows of one subset, in place) whose value is not finite,
    except the metrics in ``skip`` (e.g. those a summary cannot give whatever the rows).

    Parameters
    ----------
    table : DataFrame
        The metric rows of one subset (changed in place).
    causes : mapping of str to int
        Rows without a usable z, by cause.
    n : int
        The subset's rows.
    layout : str, default ""
        The predictive layout (the reason's wording).
    skip : iterable of str, default ()
        Metrics left alone.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    """
    reason = undefined_z_note(dict(causes), n, layout=layout)
    bad = ~np.isfinite(table["value"].to_numpy(dtype=float)) & ~table["metric"].isin(list(skip)).to_numpy()
    prev = table.loc[bad, "note"].astype(str)
    table.loc[bad, "note"] = [f"{p}; {reason}" if p else reason for p in prev]
