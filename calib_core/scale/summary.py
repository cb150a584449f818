"""Summaries that merge: diagnose data that does not fit in memory, chunk by chunk, exactly where exactness is
possible and with a stated bound where it is not.

::

    spec = spec_for(sample_or_first_pass, ...)          # fixed bins: the same for every chunk
    parts = [summarize(chunk, spec=spec, row_ids=ids) for chunk, ids in chunks]   # anywhere (Dask workers, …)
    total = functools.reduce(merge, parts)               # associative and commutative, in any tree
    rep = report(total)                                  # the Report of cc.diagnose: metrics, verdicts, diagrams
    open("run.summary", "wb").write(total.to_bytes())    # versioned zip of JSON + .npy, no pickle

A :class:`Summary` holds per (model, group) integer counts, exact sums (every float sum is kept as an exact
integer multiple of 2⁻¹¹³⁸ and rounded once, when a metric is computed; :mod:`calib_core.base.mergeable`) and
per-bootstrap-block sums; what each task keeps is listed in :mod:`calib_core.scale.regression` and
:mod:`calib_core.scale.classification`.  Merging adds integers, so a summary does not depend on how the rows
were chunked nor on the merge order: counts and exact sums are bit for bit equal (tested with random chunk
boundaries); the few float sums (block sums for the bootstrap, Σu per fine PIT bin, Σz per fine z bin) agree to
rounding (≈ 1e-16 relative).

Every random choice is a hash of the row id (bootstrap block, an ensemble's PIT randomisation), so ``row_ids``
must identify rows globally (e.g. file index × 2⁴⁰ + row in file); by default a chunk's ``row_number`` is used,
which is global only for a single in-memory set.

The report (:func:`report`, its intervals and tests) is in :mod:`calib_core.scale.summary_report`, re-exported
here.  Exactness of the report against ``cc.diagnose`` on the same rows: see :data:`EXACTNESS` and the task modules.
Equal-count σ-bins (regression) and equal-mass confidence bins need the data's quantiles: two passes — the first
computes, per (model, group), the order statistics at :func:`calib_core.base.mergeable.equal_count_positions` (value
and row id; ties broken by row id, as the in-memory stable sort breaks them by row order) and passes them in the
spec (:func:`calib_core.scale.regression.regression_spec`).  With those edges the σ-bins are the in-memory bins
and ENCE is exact; a spec built from a sample (:func:`spec_from_sample`) gives approximate equal-count bins, and
ENCE is then the ENCE of those (still fixed, mergeable) bins.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from functools import reduce
from typing import Any

import numpy as np
import pandas as pd

from ..base.mergeable import Summary, SummarySpec
from ..base.predictions import PredictionSet, iter_subsets
from ..data.classification import parse_classification_frame
from ..data.regression import parse_regression_frame
from .classification import classification_rows_values, spec_for_classification, summarize_classification
from .regression import spec_for_regression, summarize_regression
from .summary_nulls import curve_null
from .summary_report import (
    EXACTNESS,
    PIT_ENTROPY_NOTE,
    SPEARMAN_NOTE,
    levi_rmse_interval,
    regression_primary,
    report,
)

__all__ = [
    "Summary",
    "SummarySpec",
    "EXACTNESS",
    "SPEARMAN_NOTE",
    "PIT_ENTROPY_NOTE",
    "spec_for",
    "spec_from_sample",
    "edge_values",
    "with_edges",
    "summarize",
    "merge",
    "merge_all",
    "report",
    "curve_null",
    "levi_rmse_interval",
    "regression_primary",
]


def spec_for(data: PredictionSet, **options: Any) -> SummarySpec:
    """The :class:`SummarySpec` for data like ``data``: the bins every chunk will be summarised on.

    The task's grids and, from ``data`` itself, the equal-count σ edges (regression) or equal-mass confidence edges
    (classification, ``strategy="quantile"``) of every (model, group).  On the whole data this is the exact first
    pass; on a sample see :func:`spec_from_sample`.

    Parameters
    ----------
    data : PredictionSet
        The rows (all of them, or a sample).
    **options
        ``regression.summary.regression_spec`` / ``classification.summary.classification_spec`` options
        (``n_bins``, ``coverages``, ``n_blocks``, ``seed``, …) and ``row_ids`` / ``by_group``.

    Returns
    -------
    SummarySpec
        The spec.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    """
    if data.task == "classification":
        options.pop("row_ids", None)
        return spec_for_classification(data, **options)
    return spec_for_regression(data, **options)


def spec_from_sample(sample: PredictionSet, **options: Any) -> SummarySpec:
    """:func:`spec_for` on a sample of the data, its edges marked as not the data's own.

    The bins are the sample's equal-count σ bins (for a uniform random sample of s rows, each bin's share of the
    data is within about √(p(1 − p)/s) of 1/B); the summary is exact for those fixed bins, but ENCE then differs
    from the in-memory ENCE (whose bins are the data's own).

    Parameters
    ----------
    sample : PredictionSet
        A sample of the rows.
    **options
        As :func:`spec_for`.

    Returns
    -------
    SummarySpec
        The spec, with ``edges_exact=False``.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """
    return dataclasses.replace(spec_for(sample, **options), edges_exact=False)


def edge_values(
    chunk: PredictionSet | pd.DataFrame,
    *,
    task: str,
    row_ids: np.ndarray | None = None,
    columns: Any = None,
    by_group: bool = True,
) -> pd.DataFrame:
    """The first pass of a two-pass summary: the value equal-count bins are cut on, per row and subset.

    Per row of the chunk and per (model, group) it belongs to: σ (regression) or the top-label confidence
    (classification), with the row's global id.  Exact edges are the order statistics of ``value`` (ties by
    ``row_id``) at :func:`calib_core.base.mergeable.equal_count_positions` of each (model, group), which
    :func:`with_edges` puts into a spec (in memory: ``mergeable.equal_count_edges``).

    Parameters
    ----------
    chunk : PredictionSet or DataFrame
        The rows (a frame in the upload format is validated with the task's reader).
    task : {"regression", "classification"}
        The task.
    row_ids : ndarray of shape (n,) of int64, optional
        Global ids of the chunk's rows (default: the frame's positions or the set's row numbers).
    columns : mapping, optional
        The column mapping of a frame.
    by_group : bool, default True
        Also emit each row under its group.

    Returns
    -------
    DataFrame
        Columns ``model, group, value, row_id``.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Naeini, M. P., Cooper, G. F., & Hauskrecht, M. (2015). Obtaining well calibrated probabilities using
       Bayesian binning. Proceedings of the 29th AAAI Conference on Artificial Intelligence, 2901–2907.
    """
    if isinstance(chunk, pd.DataFrame):
        ids_frame = np.arange(len(chunk), dtype=np.int64) if row_ids is None else np.asarray(row_ids, np.int64)
        probe = SummarySpec(task=task)
        pset = _frame_to_set(chunk, probe, columns, "<chunk>")
        ids = ids_frame[np.asarray(pset.row_number, dtype=np.int64) - 1]
    else:
        pset = chunk
        ids = np.asarray(pset.row_number if row_ids is None else row_ids, dtype=np.int64)
    if task == "classification":
        from_rows = classification_rows_values(pset)
    else:
        from_rows = np.asarray(pset.dist.std(), dtype=float)
    frames = []
    for model, group, mask in iter_subsets(pset, by_group):
        frames.append(pd.DataFrame({"model": str(model), "group": str(group), "value": from_rows[mask],
                                    "row_id": ids[mask]}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["model", "group", "value",
                                                                                      "row_id"])


def with_edges(spec: SummarySpec, edges: dict[tuple[str, str], Any]) -> SummarySpec:
    """A copy of ``spec`` with the first pass's edges.

    Parameters
    ----------
    spec : SummarySpec
        The spec without (or with other) edges.
    edges : dict of (str, str) to edges
        Regression: (model, group) → (values, row_ids), the inner equal-count σ edges; classification:
        (model, group) → the M + 1 equal-mass confidence edges.

    Returns
    -------
    SummarySpec
        The spec with ``sigma_edges`` or ``conf_edges`` replaced.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Naeini, M. P., Cooper, G. F., & Hauskrecht, M. (2015). Obtaining well calibrated probabilities using
       Bayesian binning. Proceedings of the 29th AAAI Conference on Artificial Intelligence, 2901–2907.
    """
    if spec.task == "regression":
        table = tuple((m, g, tuple(float(v) for v in np.asarray(e[0], dtype=float)),
                       tuple(int(i) for i in np.asarray(e[1], dtype=np.int64))) for (m, g), e in sorted(edges.items()))
        return dataclasses.replace(spec, sigma_edges=table)
    table = tuple((m, g, tuple(float(v) for v in np.asarray(e, dtype=float))) for (m, g), e in sorted(edges.items()))
    return dataclasses.replace(spec, conf_edges=table)


def _frame_to_set(frame: pd.DataFrame, spec: SummarySpec, columns: Any, source: str) -> PredictionSet:
    if spec.task == "classification":
        return parse_classification_frame(frame, source, columns, False)
    return parse_regression_frame(frame, source, columns, layout=spec.layout)


def summarize(
    chunk: PredictionSet | pd.DataFrame,
    *,
    spec: SummarySpec,
    row_ids: np.ndarray | None = None,
    columns: Any = None,
    by_group: bool = True,
    source: str | None = None,
) -> Summary:
    """The :class:`Summary` of one chunk of rows.

    Parameters
    ----------
    chunk : PredictionSet or DataFrame
        A validated set, or a pandas frame in the upload format (validated here with the task's reader and
        ``columns``; rows it drops are counted per reason with the first row ids).
    spec : SummarySpec
        The bins every chunk shares.
    row_ids : ndarray of shape (n,) of int64, optional
        The chunk's global row ids (default: the set's row numbers), from which the bootstrap blocks and an
        ensemble's PIT randomisation are hashed.
    columns : mapping, optional
        The column mapping of a frame.
    by_group : bool, default True
        Also summarise each group of each model.
    source : str, optional
        Where the rows come from (default: the set's source).

    Returns
    -------
    Summary
        Per (model, group) the counts, exact sums and block sums; the dropped rows per reason.

    Raises
    ------
    ValueError
        If the chunk's task is not the spec's.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [3] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    """
    if isinstance(chunk, pd.DataFrame):
        n_frame = len(chunk)
        ids_frame = np.arange(n_frame, dtype=np.int64) if row_ids is None else np.asarray(row_ids, dtype=np.int64)
        pset = _frame_to_set(chunk, spec, columns, source or "<chunk>")
        keep = np.asarray(pset.row_number, dtype=np.int64) - 1
        ids = ids_frame[keep]
        dropped = {reason: {"count": int(rows.size), "first": [int(i) for i in ids_frame[np.asarray(rows)[:10] - 1]]}
                   for reason, rows in pset.dropped.reasons.items()}
    else:
        pset = chunk
        ids = row_ids
        dropped = {reason: {"count": int(rows.size), "first": [int(i) for i in np.asarray(rows)[:10]]}
                   for reason, rows in pset.dropped.reasons.items()}
    if pset.task != spec.task:
        raise ValueError(f"the spec is for {spec.task} but the chunk is {pset.task}")
    if pset.task == "classification":
        parts = summarize_classification(pset, spec=spec, row_ids=ids, by_group=by_group)
    else:
        parts = summarize_regression(pset, spec=spec, row_ids=ids, by_group=by_group)
    return Summary(spec, parts, pset.n_rows, dropped, source or pset.source, tuple(sorted({m for m, _ in parts})))


def merge(a: Summary, b: Summary) -> Summary:
    """The summary of the rows of both summaries.

    Associative and commutative: counts and exact sums add as integers.  Summaries of different specs raise
    ``InputError`` naming the fields that differ (e.g. ``n_bins 15 vs 10``); parts whose arrays differ in shape or
    kind raise ``ValueError`` naming the part and the array (never a broadcast error).

    Parameters
    ----------
    a, b : Summary
        Summaries with the same spec.

    Returns
    -------
    Summary
        Their merge.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [2] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """
    return a.merge(b)


def merge_all(summaries: Iterable[Summary]) -> Summary:
    """Merge any number of summaries (a left fold; any tree gives the same counts and exact sums).

    Parameters
    ----------
    summaries : iterable of Summary
        At least one summary, all with the same spec.

    Returns
    -------
    Summary
        The summary of all their rows.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [2] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """
    return reduce(merge, summaries)
