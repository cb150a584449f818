"""Which rows make an evaluation's metric inf or NaN: a ``note`` beside every non-finite mean of the summary.

A metric of ``cc.evaluate`` is the mean over trials of its value on each trial's test rows, so one kept row whose
values overflow when squared (|y|, |mean|, |y − mean| or σ beyond √(largest double) ≈ 1.34e154, σ below its
inverse: :func:`calib_core.diagnosis.nonfinite.extreme_rows`) makes the metric of every trial that tests it inf or
NaN, and the mean too.  The summary then gets a ``note`` column naming, per non-finite mean, those rows among the
test rows of its non-finite trials (numbered as the file numbers them), e.g. "inf in 3 of 5 trials because of row 4
(y = 1e+300)"; a non-finite mean with no such row says that the predictions scored (e.g. a calibrator's density
of 0 at a target) make it so.
Summaries whose means are all finite are left as they are (no column).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..diagnosis.nonfinite import extreme_rows, rows_text

__all__ = ["add_nonfinite_notes", "notes_by_metric"]


def add_nonfinite_notes(result: Any, y: np.ndarray, mean: np.ndarray | None, sigma: np.ndarray | None,
                        row_number: np.ndarray | None = None) -> None:
    """Add the ``note`` column to ``result.summary`` (in place) when some mean is inf or NaN.

    For a (model, calibrator, metric) whose mean is non-finite, the trials whose value is non-finite are found in
    ``result.long``, their test rows in ``result.splits``, and the rows of :func:`extreme_rows` among them named
    with their values.  The rows' values are the uncalibrated predictions; without such a row the note says that the
    scored predictions themselves (a calibrator's) make the metric inf or NaN.

    Parameters
    ----------
    result : EvaluationResult
        ``cc.evaluate``'s result (its ``summary``, ``long`` and ``splits``).
    y : ndarray of shape (n,)
        Targets of the evaluated prediction set.
    mean, sigma : ndarray of shape (n,) or None
        Predicted means (or point predictions) and standard deviations.
    row_number : ndarray of shape (n,) or None
        The rows' numbers in the file (1-based).

    Returns
    -------
    None
        ``result.summary`` gains the ``note`` column.

    References
    ----------
    Goldberg, D. (1991). What every computer scientist should know about floating-point arithmetic. ACM Computing
    Surveys 23(1), 5–48.

    Zelikman, E., Healy, C., Zhou, S. & Avati, A. (2020). CRUDE: calibrating regression uncertainty distributions
    empirically. arXiv:2005.12496.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> long = pd.DataFrame({"model": "m", "calibrator": "none", "trial": [0, 1], "metric": "rmse",
    ...                      "value": [np.inf, 1.0]})
    >>> summary = pd.DataFrame({"model": ["m"], "calibrator": ["none"], "metric": ["rmse"], "mean": [np.inf]})
    >>> splits = [{"model": "m", "trial": 0, "test": np.array([0, 2])}, {"model": "m", "trial": 1,
    ...                                                                   "test": np.array([1])}]
    >>> r = SimpleNamespace(summary=summary, long=long, splits=splits)
    >>> add_nonfinite_notes(r, np.array([1.0, 2.0, 1e300]), np.zeros(3), np.ones(3))
    >>> r.summary["note"].tolist()
    ['inf in 1 of 2 trials because of row 3 (y = 1e+300)']
    """
    s = result.summary
    if s.empty:
        return
    means = pd.to_numeric(s["mean"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(means)
    if not bad.any():
        return
    y = np.asarray(y, dtype=float)
    numbers = np.arange(1, y.size + 1) if row_number is None else np.asarray(row_number)
    with np.errstate(all="ignore"):
        found = extreme_rows(y, mean, sigma)
    flagged = np.zeros(y.size, dtype=bool)
    for _, pos, _ in found:
        flagged[pos] = True
    tests = {(sp["model"], int(sp["trial"])): np.asarray(sp["test"]) for sp in result.splits}
    long = result.long
    notes = [""] * len(s)
    for i in np.flatnonzero(bad):
        row = s.iloc[i]
        sel = long[(long["model"] == row["model"]) & (long["calibrator"] == row["calibrator"])
                   & (long["metric"] == row["metric"])]
        values = pd.to_numeric(sel["value"], errors="coerce").to_numpy(dtype=float)
        trials = sel["trial"].to_numpy()[~np.isfinite(values)]
        kind = "NaN" if np.isnan(means[i]) else "inf"
        where = f"{kind} in {trials.size} of {len(sel)} trial{'s' if len(sel) != 1 else ''}"
        test = [tests.get((row["model"], int(t)), np.zeros(0, dtype=np.int64)) for t in trials]
        pos = np.unique(np.concatenate(test)) if test else np.zeros(0, dtype=np.int64)
        pos = pos[flagged[pos]] if pos.size else pos
        if pos.size:
            keep = np.zeros(y.size, dtype=bool)
            keep[pos] = True
            mine = [(role, p[keep[p]], v[keep[p]]) for role, p, v in found if keep[p].any()]
            text, _ = rows_text(mine, numbers)
            notes[i] = f"{where} because of {text}"
        else:
            notes[i] = (f"{where}: no value of those test rows overflows, so the predictions scored make it so "
                        "(e.g. a density of 0 at a target, a σ of 0, or too few rows)")
    result.summary = s.assign(note=notes)


def notes_by_metric(summary: pd.DataFrame, labels: dict[str, str] | None = None) -> dict[tuple[str, str], str]:
    """Per (model, calibrator), one text of the summary's notes: "RMSE: inf in 5 of 5 trials because of …; …".

    Parameters
    ----------
    summary : DataFrame
        A summary with ``model``, ``calibrator``, ``metric`` and (optionally) ``note``.
    labels : dict of str to str, optional
        Metric key → display label.

    Returns
    -------
    dict of (str, str) to str
        Only the (model, calibrator) pairs with a note.

    References
    ----------
    Goldberg, D. (1991). What every computer scientist should know about floating-point arithmetic. ACM Computing
    Surveys 23(1), 5–48.

    Examples
    --------
    >>> s = pd.DataFrame({"model": "m", "calibrator": "none", "metric": ["rmse", "mae"], "note": ["inf …", ""]})
    >>> notes_by_metric(s, {"rmse": "RMSE"})
    {('m', 'none'): 'RMSE: inf …'}
    """
    if "note" not in summary.columns:
        return {}
    labels = labels or {}
    out: dict[tuple[str, str], list[str]] = {}
    for m, c, k, n in summary[["model", "calibrator", "metric", "note"]].itertuples(index=False):
        if isinstance(n, str) and n:
            out.setdefault((m, c), []).append(f"{labels.get(k, k)}: {n}")
    return {key: "; ".join(v) for key, v in out.items()}
