"""A classification diagnosis split into the part the confidence bins change and the part they do not.

:func:`calib_core.diagnosis.classification.diagnose_classification` computes, for every (model, group), statistics
that depend on the confidence bins (ECE, MCE, class-wise ECE, the reliability tables and the whole inference, whose
random stream starts with the binned null draws) and statistics that do not: the clinical set (logistic
recalibration, loess ICI / E50 / E90 per class: about 2 s of CPU at 10⁵ rows and K = 10), the smooth ECE and its
curves, the calibration ratio and TCE, the smoothed (loess) calibration curve with its bootstrap band and the ranked
probability score.  :func:`diagnose_classification_staged` gives the same :class:`calib_core.Report` (every number,
table, note and option equal) while keeping the bins-free part of each (model, group) in a ``stages`` mapping the
caller owns: a change of the bins count or binning on the Classification page redoes only the binned part.

The bins-free part is kept per subset under the options it depends on (everything but ``n_bins`` and
``strategy``); the caller keys the mapping on the data (the dashboard: data token + filters + those options).
"""

from __future__ import annotations

import copy
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from calib_core.base.binning import uniform_edges
from calib_core.base.clustering import (
    MIN_RELIABLE_CLUSTERS,
    MIN_TESTABLE_CLUSTERS,
    resolve_clustering,
    too_few_clusters_sentence,
)
from calib_core.base.limits import check_options
from calib_core.base.predictions import PredictionSet, iter_subsets
from calib_core.base.report import NOT_TESTED, Report, diagnosis_report, inference_metric_rows, subset_name
from calib_core.diagnosis.classification import classification_inference, classification_rows
from calib_core.diagnosis.classification_clinical import PER_CLASS_TABLE, apply_prevalence, clinical_table_values
from calib_core.diagrams.classification import classification_diagrams
from calib_core.diagrams.classification_clinical import smoothed_calibration_diagrams
from calib_core.inference.classification import PRIMARY_FAMILY, infer_classification
from calib_core.inference.classification_ordinal import ordinal_metric_rows
from calib_core.inference.classification_subbins import outside_first_cells, top_label_bins
from calib_core.metrics.classification import ClassificationRows, confidence_bins
from calib_core.metrics.classification_kernels import sorted_quantile_edges
from calib_core.metrics.classification_ratio import ratio_values
from calib_core.metrics.classification_smooth import smooth_summaries

__all__ = ["BINS_OPTIONS", "SubsetStage", "diagnose_classification_staged", "rebinned", "sorted_quantile_bins",
           "stable_orders", "stable_sorted"]

#: The options of a classification diagnosis that only the binned part depends on.
BINS_OPTIONS = ("n_bins", "strategy")

#: The defaults of :func:`calib_core.diagnosis.classification.diagnose_classification`.
_DEFAULTS: dict[str, Any] = {"n_bins": 15, "strategy": "uniform", "n_resamples": 1000, "n_simulations": 2000,
                             "level": 0.95, "seed": 0, "alpha": 0.05, "by_group": True, "diagrams": True,
                             "classwise": True, "smooth": True, "tce": True, "cluster": "auto", "block_length": None,
                             "prevalence": None}


@dataclass(frozen=True)
class SubsetStage:
    """The bins-free results of one (model, group): never changed once made (the report gets copies).

    Attributes
    ----------
    smooth_estimates : dict or None
        The smooth ECE estimates (None: smooth ECE off).
    smooth_curves : dict of str to DataFrame
        The kernel-smoothed reliability tables.
    values : dict of str to float
        The bins-free point values: smooth ECE, calibration ratio, TCE and the clinical set.
    clinical_notes : list of str
        The clinical set's notes (without the subset's name).
    per_class : DataFrame or None
        The clinical per-class table (K > 2).
    clinical_kinds : dict of str to str
        The kinds of the clinical rows that get no inference.
    ordinal : DataFrame or None
        The ranked probability score's rows (ordered classes).
    smoothed : dict of str to DataFrame
        The smoothed (loess) calibration diagrams.
    rows : ClassificationRows
        The subset's rows as first binned: a new binning copies their bin-free arrays (:func:`rebinned`).
    inference_memo : dict
        The inference's bin-free parts (``infer_classification(memo=…)``: blocks and weights, class-wise label draw,
        TCE, clinical set, score references), filled by the first inference and grown by later ones with values
        that depend on the stage's rows and options only — so the results are the same whichever call fills it.
    """

    smooth_estimates: dict | None
    smooth_curves: dict
    values: dict
    clinical_notes: list
    per_class: pd.DataFrame | None
    clinical_kinds: dict
    ordinal: pd.DataFrame | None
    smoothed: dict
    rows: ClassificationRows | None = None
    inference_memo: dict = field(default_factory=dict)


#: The attributes of :class:`ClassificationRows` that do not depend on the bins (the rest are re-made by
#: :func:`rebinned`): the data, the top label, and the per-row scores once computed.
_BIN_FREE_ROWS = ("logits", "probs", "k", "labels", "pred", "confidence", "correct", "n", "_sq_sum", "eps",
                  "closed", "nll_rows", "brier_rows", "_p_label", "_sampler")


def rebinned(rows: ClassificationRows, n_bins: int, strategy: str) -> ClassificationRows:
    """``ClassificationRows(labels, probs, logits, n_bins=…, strategy=…)`` of the same rows, from ``rows``: the
    arg-max, confidences, hits and per-row NLL / Brier are shared (they do not depend on the bins); the top-label
    bins (``confidence_bins``) are made anew and every bin-dependent cache starts empty.  Equal to a fresh build,
    bit for bit (tested).

    Parameters
    ----------
    rows : ClassificationRows
        Rows of the same subset, binned any way.
    n_bins : int
        Confidence bins M.
    strategy : {"uniform", "quantile"}
        Equal-width or equal-mass bins.

    Returns
    -------
    ClassificationRows
        The rows with those bins.
    """
    if rows.n_bins == n_bins and rows.strategy == strategy:
        return rows
    new = object.__new__(ClassificationRows)
    new.__dict__.update({k: rows.__dict__[k] for k in _BIN_FREE_ROWS if k in rows.__dict__})
    new.n_bins, new.strategy = int(n_bins), strategy
    if strategy != "quantile":
        new._order = None
        new.edges = confidence_bins(new.confidence[:0], new.n_bins, strategy, new.closed)[1]
        # the bins and their sums (the row pass's of a fresh build), which the statistics and the reliability table
        # read: uniform_bin_index and bin_sums in one compiled pass, the same index and sums
        new.bin_index, new._top_sums = top_label_bins(new.confidence, new.correct, new.n_bins, new.closed, new.edges)
        if new.probs is not None:  # the class-wise entries outside the first bins, from those kept on the stage
            _fill_uniform_class_sums(new, rows)
        return new
    order, ordered = _sorted_top_label(rows)
    new._order = order
    binned = sorted_quantile_bins(ordered, order, new.n_bins, new.closed)
    new.bin_index, new.edges = binned if binned is not None else confidence_bins(new.confidence, new.n_bins,
                                                                                 strategy, new.closed)
    if new.probs is not None:  # the class-wise (and binary positive-class) bins from the per-class sorts
        _fill_class_bins(new, rows)
    return new


#: Keys of a stage's rows (``SubsetStage.rows.__dict__``) holding bin-free sorts, made at the first equal-mass bins:
#: the top label's (stable order, sorted confidences) and every class's (orders (K, N), sorted p_k (K, N)).
_TOP_SORT = "_stage_top_sort"
_CLASS_SORT = "_stage_class_sort"


def _sorted_top_label(rows: ClassificationRows) -> tuple[np.ndarray, np.ndarray]:
    """(``np.argsort(confidence, kind="stable")``, the sorted confidences) of ``rows``, kept on them."""
    kept = rows.__dict__.get(_TOP_SORT)
    if kept is None:
        order = rows.__dict__.get("_order")
        values = np.asarray(rows.confidence, dtype=float)
        if order is None:
            orders, ordered = stable_sorted(values[None, :])
            kept = (orders[0], ordered[0])
        else:
            kept = (order, values[order])
        rows.__dict__[_TOP_SORT] = kept
    return kept


def _sorted_classes(rows: ClassificationRows) -> tuple[np.ndarray, np.ndarray]:
    """((K, N) stable orders of every class column p_k, (K, N) sorted p_k as float), kept on ``rows``: the transpose
    of ``np.argsort(probs, axis=0, kind="stable")`` (a stable order is unique, so equal to it)."""
    kept = rows.__dict__.get(_CLASS_SORT)
    if kept is None:
        columns = np.ascontiguousarray(np.asarray(rows.probs).T, dtype=float)
        kept = stable_sorted(columns)
        rows.__dict__[_CLASS_SORT] = kept
    return kept


def stable_orders(rows: np.ndarray) -> np.ndarray:
    """``np.argsort(rows, axis=1, kind="stable")`` from NumPy's faster unstable sort: a stable order is the order of
    the (value, position) pairs, so the unstable order is already it wherever no two values of a row are equal
    (NaN counted equal to NaN, as the sort puts them last); a row with ties gets its runs of equal values put in
    position order (one ``lexsort`` of that row).  Equal to the stable sort, element for element (tested).

    Parameters
    ----------
    rows : ndarray of shape (r, n)
        Values, one sort per row.

    Returns
    -------
    ndarray of int, shape (r, n)
        The stable order of every row.

    Examples
    --------
    >>> x = np.array([[0.5, 0.1, 0.5, np.nan, 0.1, np.nan]])
    >>> bool((stable_orders(x) == np.argsort(x, axis=1, kind="stable")).all())
    True
    """
    return stable_sorted(rows)[0]


def stable_sorted(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(:func:`stable_orders` of ``rows``, ``np.take_along_axis(rows, orders, axis=1)``) without the gather: a row
    without ties or NaN is strictly increasing once sorted, so ``np.sort``'s values are the gather's, bit for bit
    (each value a distinct element); a row with ties or NaN is gathered through its stable order (equal values may
    differ in their bits: −0 and +0; ``np.sort`` writes NaN with its own payload).  Equal to the stable sort's
    order and values, bit for bit (tested).

    Parameters
    ----------
    rows : ndarray of shape (r, n)
        Values, one sort per row.

    Returns
    -------
    tuple of ndarray
        The stable order of every row (int, (r, n)) and the sorted values ((r, n), the dtype of ``rows``).

    References
    ----------
    .. [1] Knuth, D. E. (1998). *The Art of Computer Programming, Vol. 3: Sorting and Searching* (2nd ed.), §5
       (a sort is stable when equal keys keep their input order). Addison-Wesley.

    Examples
    --------
    >>> x = np.array([[0.5, -0.0, 0.0, 0.2]])
    >>> orders, ordered = stable_sorted(x)
    >>> orders.tolist(), np.signbit(ordered).tolist()
    ([[1, 2, 3, 0]], [[True, False, False, False]])
    """
    orders = np.argsort(rows, axis=1)
    ordered = np.sort(rows, axis=1)  # a row without ties: its values in the one order, the gather's bits
    for r in range(rows.shape[0]):  # loop over the K sorted columns, not over values
        s = ordered[r]
        same = s[1:] == s[:-1]
        nan = bool(np.isnan(s[-1:]).any())  # np.sort writes its own NaN: the row's are gathered
        if nan:
            same |= np.isnan(s[1:]) & np.isnan(s[:-1])
        if same.any():
            run = np.cumsum(np.concatenate(([True], ~same)))  # run number of every sorted position
            orders[r] = orders[r][np.lexsort((orders[r], run))]
        if nan or same.any():
            ordered[r] = rows[r][orders[r]]
    return orders, ordered


def sorted_quantile_bins(ordered: np.ndarray, order: np.ndarray, n_bins: int, closed: str
                         ) -> tuple[np.ndarray, np.ndarray] | None:
    """``confidence_bins(values, n_bins, "quantile", closed)`` from the sorted values and their order, without
    sorting or searching every value: the edges are ``equal_mass_edges`` of the sorted values (the same order
    statistics, so the same edges, bit for bit; read off them by ``sorted_quantile_edges`` without NumPy's
    partition), and bin b holds the sorted values between the positions where the
    inner edges e_1 ≤ … ≤ e_{M−1} fall — value v is in bin #{j: e_j < v} ((a, b] bins; #{j: e_j ≤ v} for [a, b)),
    so the first #{v ≤ e_j} sorted values are in bins 0…j−1 — scattered back through ``order``.  None where that
    does not hold (NaN values or edges, edges not sorted, a value with its sign bit set — with a −0 among
    equal values, which zero NumPy's partition puts at an order statistic decides the sign of an edge): then the
    caller bins as ``confidence_bins`` does.

    Parameters
    ----------
    ordered : ndarray of shape (n,)
        The values, sorted (float).
    order : ndarray of int, shape (n,)
        Their positions in the unsorted values (``values[order] == ordered``).
    n_bins : int
        Equal-mass bins M.
    closed : {"right", "left"}
        (a, b] or [a, b) bins, as ``binning.bins_from_edges``.

    Returns
    -------
    tuple or None
        The bin of every (unsorted) value and the M + 1 edges, or None.

    Examples
    --------
    >>> v = np.array([0.3, 0.1, 0.9, 0.5, 0.7, 0.2])
    >>> order = np.argsort(v, kind="stable")
    >>> idx, edges = sorted_quantile_bins(v[order], order, 3, "right")
    >>> [int(b) for b in idx] == [int(b) for b in confidence_bins(v, 3, "quantile")[0]]
    True
    """
    n = ordered.shape[0]
    if n == 0 or np.isnan(ordered[-1]) or np.signbit(ordered).any():  # a −0: its sign in an edge is partition's
        return None
    edges = sorted_quantile_edges(ordered, n_bins)  # np.quantile's order statistics read off, in O(M)
    inner = edges[1:-1]
    if np.any(inner[1:] < inner[:-1]) or np.isnan(inner).any():  # NaN edges: ±inf among the values
        return None
    ends = np.searchsorted(ordered, inner, side="right" if closed == "right" else "left")
    out = np.empty(n, dtype=np.int64)
    out[order] = np.repeat(np.arange(n_bins, dtype=np.int64), np.diff(ends, prepend=0, append=n))
    return out, edges


#: Key of a stage's rows: the entries p_ik outside the first of :data:`FINEST_WIDTH` equal-width bins (flat
#: row-major positions, values as stored) and the column totals Σ_i p_ik — bin-free, made at the first re-binning.
_CLASS_ENTRIES = "_stage_class_entries"
#: The finest equal-width bins count whose class-wise entries are kept (the page's largest); more bins: computed.
FINEST_WIDTH = 30


def _first_upper(n_bins: int, closed: str) -> Any:
    """The upper edge of the first of ``n_bins`` equal-width bins (as ``ClassificationRows`` reads it)."""
    return confidence_bins(np.zeros(0), n_bins, "uniform", closed)[1][1]


def _outside_first(values: np.ndarray, upper: Any, closed: str) -> np.ndarray:
    """Whether each value lies outside the first equal-width bin ((a, b] bins: not ≤ b; [a, b): not < b; NaN:
    outside), as ``ClassificationRows`` decides it."""
    return ~(values <= upper) if closed == "right" else ~(values < upper)


def _class_entries(rows: ClassificationRows) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
    """(upper edge of the first of :data:`FINEST_WIDTH` bins, the flat positions of the entries outside it, their
    values, Σ_i p_ik), kept on ``rows``."""
    kept = rows.__dict__.get(_CLASS_ENTRIES)
    if kept is None:
        flat_p = rows.probs.reshape(-1)
        upper = _first_upper(FINEST_WIDTH, rows.closed)
        j = np.flatnonzero(_outside_first(flat_p, upper, rows.closed))
        kept = (upper, j, flat_p.take(j), rows.probs.sum(axis=0, dtype=float))
        rows.__dict__[_CLASS_ENTRIES] = kept
    return kept


def _fill_uniform_class_sums(new: ClassificationRows, kept: ClassificationRows) -> None:
    """Set the cached class-wise sums of equal-width ``new`` rows (``ClassificationRows._classwise_sparse``: row,
    flat cell k·M + b and p_ik of the entries outside their class's first bin, row-major; ``_classwise_unweighted``:
    the (K, M) counts and Σ p_ik, the first bins by complement of n and of Σ_i p_ik) as the rows compute them, from
    the entries outside the first of :data:`FINEST_WIDTH` bins kept on the stage's rows ``kept``: an entry outside
    the first of M ≤ that many bins is outside that one too (its upper edge is the lowest), so the entries are
    picked from those kept — the same positions in the same order, the same values and sums, bit for bit."""
    upper, j_kept, p_kept, total_p = _class_entries(kept)
    nb, k, closed = new.n_bins, new.k, new.closed
    first_upper = _first_upper(nb, closed)
    if not first_upper >= upper:  # finer bins than those kept: the rows compute them
        return
    # the kept entries outside the new first bins, their rows, cells k·M + b and the cells' counts and Σ p: one
    # compiled pass, the arrays and sums of the NumPy passes (pick, take, uniform_bin_index, np.bincount) bit for bit
    rows_nz, flat_nz, p_nz, count, s_conf = outside_first_cells(
        p_kept, j_kept, k, nb, closed, first_upper, uniform_edges(0.0, 1.0, nb))
    new.__dict__["_classwise_sparse"] = (rows_nz, flat_nz, p_nz)
    count, s_conf = count.reshape(k, nb), s_conf.reshape(k, nb)
    count[:, 0] = float(new.n) - count[:, 1:].sum(axis=1)
    s_conf[:, 0] = total_p - s_conf[:, 1:].sum(axis=1)
    new.__dict__["_classwise_unweighted"] = (count, s_conf)


def _fill_class_bins(new: ClassificationRows, kept: ClassificationRows) -> None:
    """Set the cached class-wise bins of equal-mass ``new`` rows (``ClassificationRows._classwise``: the (N, K) flat
    cell k·M + b of every p_ik, the per-class edges, the (N, K) per-class orders; and for binary rows ``_pos``) from
    the per-class sorts kept on the stage's rows ``kept`` — what the rows would compute, without K sorts."""
    orders, ordered = _sorted_classes(kept)
    n, k, nb = new.n, new.k, new.n_bins
    flat = np.empty((n, k), dtype=np.int64)
    all_edges = []
    for c in range(k):  # loop over classes (not rows), as ClassificationRows._classwise
        binned = sorted_quantile_bins(ordered[c], orders[c], nb, new.closed)
        if binned is None:
            return  # the rows compute their bins themselves
        flat[:, c] = binned[0] + c * nb
        all_edges.append(binned[1])
    new.__dict__["_classwise"] = (flat, all_edges, orders.T)
    if k == 2:  # the positive-class view: values p_i1, hits 1[y = 1], bins, sort order, edges
        v = new.probs[:, 1].astype(float)
        new.__dict__["_pos"] = (v, (new.labels == 1).astype(float), flat[:, 1] - nb, orders[1], all_edges[1])


def _stage_of(rows: Any, pset: PredictionSet, model: str, group: str, *, smooth: bool, tce: bool, alpha: float,
              level: float, n_res: int, seed: int | None, sub: Any, diagrams: bool) -> SubsetStage:
    """The bins-free results of one subset's rows (as :func:`diagnose_classification` computes them)."""
    smooth_est, smooth_curves = smooth_summaries(rows) if smooth else (None, {})
    values = {k: e.value for k, e in (smooth_est or {}).items()}
    values.update(ratio_values(rows, tce=tce, alpha=alpha))
    clin, clin_notes, per_class, clin_kinds = clinical_table_values(rows, level=level)
    values.update(clin)
    ordinal = None
    if pset.ordinal and not rows.top_label_only:
        ordinal = ordinal_metric_rows(rows.probs, rows.labels, model=model, group=group, n_resamples=n_res,
                                      level=level, seed=seed, clustering=sub)
    smoothed = smoothed_calibration_diagrams(rows, n_resamples=n_res, level=level, seed=seed,
                                             clustering=sub) if diagrams else {}
    kept = _bin_free_copy(rows)
    _sorted_top_label(kept)  # the sorts equal-mass bins of any count read (bin-free): made with the data's stage,
    if kept.probs is not None:  # so that a change of binning or bins count re-bins without sorting, and the
        _sorted_classes(kept)  # class-wise entries outside the first equal-width bins
        _class_entries(kept)
    return SubsetStage(smooth_est, smooth_curves, values, list(clin_notes), per_class, dict(clin_kinds), ordinal,
                       smoothed, kept)


def _bin_free_copy(rows: ClassificationRows) -> ClassificationRows:
    """The rows with their bins but without their bin-dependent caches (the class-wise cells: N·K indices), to keep
    in a stage; :func:`rebinned` makes rows of any bins from it."""
    new = object.__new__(ClassificationRows)
    new.__dict__.update({k: v for k, v in rows.__dict__.items()
                         if k in _BIN_FREE_ROWS or k in ("n_bins", "strategy", "_order", "bin_index", "edges")})
    return new


def _keep_bin_free(kept: ClassificationRows, rows: ClassificationRows) -> None:
    """Copy the bin-free per-row caches ``rows`` computed (NLL and Brier rows, …) onto the stage's ``kept`` rows."""
    for k in _BIN_FREE_ROWS:
        if k in rows.__dict__ and k not in kept.__dict__:
            kept.__dict__[k] = rows.__dict__[k]


def _inference(rows: ClassificationRows, *, model: str, group: str, n_resamples: int, n_simulations: int,
               memo: dict, **options: Any) -> tuple[pd.DataFrame | None, dict]:
    """:func:`calib_core.diagnosis.classification.classification_inference` with the inference's bin-free parts kept
    in ``memo`` (the same table and verdict row)."""
    if n_resamples <= 0 and n_simulations <= 0:  # as classification_inference: nothing drawn
        return classification_inference(rows, model=model, group=group, n_resamples=n_resamples,
                                        n_simulations=n_simulations, **options)
    smooth_estimates = options.pop("smooth_estimates")
    res = infer_classification(rows, n_null=max(int(n_simulations), 1), n_boot=max(int(n_resamples), 1),
                               smooth=smooth_estimates is not None, smooth_estimates=smooth_estimates, memo=memo,
                               **options)
    return res.report_rows(model, group, intervals=n_resamples > 0, tests=n_simulations > 0)


def diagnose_classification_staged(pset: PredictionSet, stages: MutableMapping[Any, SubsetStage] | None = None,
                                   **options: Any) -> Report:
    """``diagnose_classification(pset, **options)`` with the bins-free part of every (model, group) taken from (or
    put into) ``stages``, keyed on (model, group): the same report, every number equal.

    ECE = Σ_m |B_m|/N · |acc(B_m) − conf(B_m)| and everything else binned is recomputed with the options' bins;
    the smooth ECE, the calibration ratio Σf/Σy, TCE, the clinical set, the smoothed calibration curve and the RPS
    come from the stage when there is one.

    Parameters
    ----------
    pset : PredictionSet
        A classification prediction set.
    stages : mutable mapping, optional
        The bins-free stages of this data and these bins-free options (the caller keys it so; None: none kept).
    **options
        The options of :func:`calib_core.diagnosis.classification.diagnose_classification`.

    Returns
    -------
    Report
        Equal to ``diagnose_classification(pset, **options)``.
    """
    if pset.task != "classification":
        raise ValueError("diagnose_classification_staged needs a classification PredictionSet")
    check_options(options, source=pset.source)  # as cc.diagnose: every user-set size capped first
    known = {k: options.pop(k) for k in list(options) if k in _DEFAULTS}
    ignored = options
    o = {**_DEFAULTS, **known}
    n_bins, strategy, n_resamples, n_simulations = o["n_bins"], o["strategy"], o["n_resamples"], o["n_simulations"]
    level, seed, alpha, tce, smooth = o["level"], o["seed"], o["alpha"], o["tce"], o["smooth"]
    clustering = resolve_clustering(pset, o["cluster"], o["block_length"])
    tables: list[pd.DataFrame] = []
    verdicts: list[dict] = []
    figs: dict[tuple[str, str], dict[str, pd.DataFrame]] = {}
    notes: list[str] = []
    prevalence = o["prevalence"]
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
    for model, group, mask in iter_subsets(pset, o["by_group"]):
        n = int(mask.sum())
        if n < 2:
            notes.append(f"{subset_name(model, group, pset, mask)}: {n} row(s), too few to diagnose")
            continue
        if n < n_bins:
            notes.append(f"{subset_name(model, group, pset, mask)}: {n} rows for {n_bins} bins — most bins are empty")
        stage = None if stages is None else stages.get((model, group))
        if stage is not None and stage.rows is not None:
            rows = rebinned(stage.rows, n_bins, strategy)
        else:
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
        use_cw = o["classwise"] and not rows.top_label_only

        if stage is None:
            stage = _stage_of(rows, pset, model, group, smooth=smooth, tce=tce, alpha=alpha, level=level,
                              n_res=n_res, seed=seed, sub=sub, diagrams=o["diagrams"])
            if stages is not None:
                stages[(model, group)] = stage
        values = rows.statistics(None, classwise=use_cw)
        values.update(stage.values)
        notes.extend(f"{subset_name(model, group, pset, mask)}: {text}" for text in stage.clinical_notes)
        inf, head = _inference(rows, model=model, group=group, n_resamples=n_res, n_simulations=n_sim, level=level,
                               alpha=alpha, classwise=use_cw, seed=seed, smooth_estimates=stage.smooth_estimates,
                               tce=tce, clustering=sub, memo=stage.inference_memo)
        if stage.rows is not None:
            _keep_bin_free(stage.rows, rows)  # the next bins count re-bins rows with their NLL / Brier computed
        tables.append(inference_metric_rows(model, group, values, inf, extra=PRIMARY_FAMILY + ("confidence_gap",),
                                            kinds=stage.clinical_kinds))
        if stage.ordinal is not None:
            tables.append(stage.ordinal.copy())
        if too_few:
            head = dict(head, verdict=NOT_TESTED, sentence=too_few_clusters_sentence(sub))
        verdicts.append(head)
        if o["diagrams"]:
            figs[(model, group)] = classification_diagrams(rows, per_class=use_cw, classes=pset.classes)
            figs[(model, group)].update(copy.deepcopy(stage.smooth_curves))
            if stage.per_class is not None:
                figs[(model, group)][PER_CLASS_TABLE] = stage.per_class.copy()
            figs[(model, group)].update(copy.deepcopy(stage.smoothed))
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
            "cluster": o["cluster"],
            "block_length": o["block_length"],
            "prevalence": prevalence,
            "prevalence_adjustment": prevalence_note or "none",
            "n_clusters": None if clustering is None else clustering.n_clusters,
            "clustering": "independent rows" if clustering is None else clustering.describe(),
        },
    )
