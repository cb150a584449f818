"""Which rows make a metric infinite or undefined: the notes of a diagnosis whose metric table holds inf or NaN.

A regression metric that sums squares (RMSE, NLL, ENCE, z moments, the interval scores …) is infinite as soon as one
row has a value whose square overflows: |v| above √(largest double) ≈ 1.34e154 for the target, the predicted mean,
σ or the error y − mean, and σ below 1/1.34e154 for z = (y − mean)/σ.  Such a row is kept (it is a valid number),
so the diagnosis names it: each non-finite metric's ``note`` gets the rows (numbered as the file numbers them) and
the value that made it so, and the report gets one sentence per (model, group), e.g. "model 'model', all rows:
sharpness, cv are inf or NaN because of row 4 (σ = 1e+308)".  A non-finite metric with no such row (e.g.
Spearman's ρ of three rows) is said to be undefined on those rows, never left without a word.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

__all__ = ["SQUARE_LIMIT", "extreme_rows", "extreme_rows_note", "nonfinite_metric_notes", "rows_text"]

SQUARE_LIMIT = float(np.sqrt(np.finfo(float).max))
"""√(largest double) ≈ 1.34e154: a value beyond it overflows when squared."""

_SHOWN = 8


def extreme_rows(
    y: np.ndarray, mean: np.ndarray | None = None, sigma: np.ndarray | None = None
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The rows whose values overflow when squared (or make z = (y − mean)/σ overflow), by role.

    Flags |y| > L, |mean| > L, σ > L or σ non-finite, 0 < σ < 1/L, and |y − mean| > L on rows neither y nor mean
    flagged, with L = √(largest double) (:data:`SQUARE_LIMIT`): ε² = (y − mean)², σ² and z² are then infinite.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    mean : ndarray of shape (n,) or None
        Predicted means (or point predictions).
    sigma : ndarray of shape (n,) or None
        Predicted standard deviations.

    Returns
    -------
    list of (str, ndarray of int, ndarray of float)
        (role label, positions 0..n−1, the values) for each role with at least one flagged row.

    References
    ----------
    Goldberg, D. (1991). What every computer scientist should know about floating-point arithmetic. ACM Computing
    Surveys 23(1), 5–48.

    IEEE (2019). IEEE Standard for Floating-Point Arithmetic, IEEE Std 754-2019.

    Examples
    --------
    >>> [(role, pos.tolist()) for role, pos, _ in extreme_rows(np.array([0.0, 1e300]), np.zeros(2), np.ones(2))]
    [('y', [1])]
    """
    y = np.asarray(y, dtype=float)
    out: list[tuple[str, np.ndarray, np.ndarray]] = []
    big_y = ~(np.abs(y) <= SQUARE_LIMIT)
    if big_y.any():
        out.append(("y", np.flatnonzero(big_y), y[big_y]))
    if mean is not None:
        m = np.asarray(mean, dtype=float)
        big_m = ~(np.abs(m) <= SQUARE_LIMIT)
        if big_m.any():
            out.append(("mean", np.flatnonzero(big_m), m[big_m]))
        with np.errstate(over="ignore", invalid="ignore"):
            e = y - m
        big_e = ~(np.abs(e) <= SQUARE_LIMIT) & ~big_y & ~big_m
        if big_e.any():
            out.append(("y − mean", np.flatnonzero(big_e), e[big_e]))
    if sigma is not None:
        s = np.asarray(sigma, dtype=float)
        odd = ~(s <= SQUARE_LIMIT) | ((s > 0) & (s < 1.0 / SQUARE_LIMIT))
        if odd.any():
            out.append(("σ", np.flatnonzero(odd), s[odd]))
    return out


def rows_text(found: Sequence[tuple[str, np.ndarray, np.ndarray]], row_numbers: np.ndarray,
              unit_label: Callable[[int], str] | None = None) -> tuple[str, int]:
    """The rows of :func:`extreme_rows` in words: 'rows 4 (σ = 1e+300), 8 (mean = -1e+300)' (the first 8) and the
    number of rows; with ``unit_label`` (a forecast hub: position → its task IDs) 'forecast unit 4 [location 01,
    horizon 0] (σ = 1e+300)'.

    Parameters
    ----------
    found : sequence of (str, ndarray of int, ndarray of float)
        :func:`extreme_rows`'s answer (non-empty).
    row_numbers : ndarray of shape (n,)
        The rows' numbers in the file (1-based).
    unit_label : callable or None
        Position → task IDs of a forecast hub's unit.

    Returns
    -------
    (str, int)
        The text and the number of distinct rows.

    References
    ----------
    Goldberg, D. (1991). What every computer scientist should know about floating-point arithmetic. ACM Computing
    Surveys 23(1), 5–48.

    Examples
    --------
    >>> rows_text(extreme_rows(np.array([0.0, 1e300])), np.array([5, 9]))
    ('row 9 (y = 1e+300)', 1)
    """
    parts: list[tuple[int, int, str]] = []
    for role, pos, values in found:
        parts += [(int(row_numbers[p]), int(p), f"{role} = {v:.3g}") for p, v in zip(pos[:_SHOWN], values[:_SHOWN])]
    by_row: dict[tuple[int, int], list[str]] = {}
    for r, p, t in sorted(parts):
        by_row.setdefault((r, p), []).append(t)
    rows = list(by_row.items())
    total = len(np.unique(np.concatenate([pos for _, pos, _ in found])))
    ids = {key: f" [{unit_label(key[1])}]" if unit_label is not None else "" for key, _ in rows[:_SHOWN]}
    shown = ", ".join(f"{key[0]:,}{ids[key]} ({', '.join(ts)})" for key, ts in rows[:_SHOWN])
    shown += " …" if total > _SHOWN else ""
    word = ("row", "rows") if unit_label is None else ("forecast unit", "forecast units")
    return (f"{word[0]} " if total == 1 else f"{total:,} {word[1]}: ") + shown, total


def extreme_rows_note(
    y: np.ndarray,
    mean: np.ndarray | None = None,
    sigma: np.ndarray | None = None,
    row_numbers: np.ndarray | None = None,
    *,
    what: str = "the metrics of every trial whose test rows hold them may be inf or NaN",
) -> str:
    """One sentence naming the rows of :func:`extreme_rows` (as the file numbers them) and their values, ``""``
    when there is none — the evaluation's message before its trials.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Targets.
    mean : ndarray of shape (n,) or None
        Predicted means or point predictions.
    sigma : ndarray of shape (n,) or None
        Predicted standard deviations.
    row_numbers : ndarray of shape (n,) or None
        The rows' numbers in the file (1-based).
    what : str
        What follows for the metrics.

    Returns
    -------
    str
        The sentence or ``""``.

    References
    ----------
    Goldberg, D. (1991). What every computer scientist should know about floating-point arithmetic. ACM Computing
    Surveys 23(1), 5–48.

    Examples
    --------
    >>> extreme_rows_note(np.zeros(3), np.zeros(3), np.array([1.0, 1e300, 1.0])).split(':')[0]
    'row 2 (σ = 1e+300)'
    """
    found = extreme_rows(y, mean, sigma)
    if not found:
        return ""
    y = np.asarray(y, dtype=float)
    rows, _ = rows_text(found, np.arange(1, y.size + 1) if row_numbers is None else np.asarray(row_numbers))
    return (f"{rows}: beyond ±{SQUARE_LIMIT:.2g} a value's square overflows (and below {1 / SQUARE_LIMIT:.2g} a σ "
            f"makes z = (y − mean)/σ overflow); {what}.")


def nonfinite_metric_notes(
    table: pd.DataFrame,
    name: str,
    y: np.ndarray,
    *,
    mean: np.ndarray | None = None,
    sigma: np.ndarray | None = None,
    row_numbers: np.ndarray | None = None,
    unit_label: Callable[[int], str] | None = None,
) -> list[str]:
    """Name the rows behind every inf / NaN metric of one (model, group): in each such metric's ``note`` (the table
    is changed in place) and in the returned report notes.

    The rows are those of :func:`extreme_rows` (values whose squares overflow), numbered as the file numbers them
    (``row_numbers``, 1-based; positions from 1 without them).  A non-finite metric with no such row gets "undefined
    on these n rows" in its note when it has none yet (a metric's own reason, e.g. z undefined on zero-spread
    ensembles, stays first).

    Parameters
    ----------
    table : DataFrame
        The metric rows of one (model, group): columns ``metric``, ``value``, ``note`` (changed in place).
    name : str
        How the notes name the subset (:func:`calib_core.base.report.subset_name`).
    y : ndarray of shape (n,)
        Targets.
    mean : ndarray of shape (n,) or None
        Predicted means or point predictions.
    sigma : ndarray of shape (n,) or None
        Predicted standard deviations.
    row_numbers : ndarray of shape (n,) or None
        The rows' numbers in the file (1-based).
    unit_label : callable or None
        A forecast hub's rows: position (0-based in the subset) → its task IDs; the rows are then named as the
        hub's forecast units, e.g. "forecast unit 1 [location 01, horizon 0] (y = 1e+300)".

    Returns
    -------
    list of str
        One report note when some metric is non-finite and some row explains it, else none.

    References
    ----------
    Goldberg, D. (1991). What every computer scientist should know about floating-point arithmetic. ACM Computing
    Surveys 23(1), 5–48.

    Examples
    --------
    >>> t = pd.DataFrame({"metric": ["rmse", "mae"], "value": [np.inf, 1e299], "note": ["", ""]})
    >>> notes = nonfinite_metric_notes(t, "model 'm', all rows", np.array([0.0, 2e300]), mean=np.zeros(2))
    >>> notes[0].split(":")[:2]
    ["model 'm', all rows", ' rmse is inf because of row 2 (y = 2e+300)']
    >>> t["note"].tolist()
    ['inf because of row 2 (y = 2e+300)', '']
    """
    values = pd.to_numeric(table["value"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if not bad.any():
        return []
    y = np.asarray(y, dtype=float)
    numbers = np.arange(1, y.size + 1) if row_numbers is None else np.asarray(row_numbers)
    found = extreme_rows(y, mean, sigma)
    notes = table["note"].fillna("").astype(str).tolist()
    metrics = table["metric"].astype(str).tolist()
    idx = np.flatnonzero(bad)
    if not found:
        for i in idx:
            if not notes[i]:
                notes[i] = (f"undefined on these {y.size:,} rows (no single row causes it, e.g. too few rows or no "
                            "spread)")
        table["note"] = notes
        return []
    rows, total = rows_text(found, numbers, unit_label)
    for i in idx:
        why = f"{'NaN' if np.isnan(values[i]) else 'inf'} because of {rows}"
        notes[i] = f"{notes[i]}; {why}" if notes[i] else why
    table["note"] = notes
    thing = ("row" if total == 1 else "rows") if unit_label is None else ("forecast unit" if total == 1 else "units")
    named = [metrics[i] for i in idx]
    listed = ", ".join(named[:12]) + (f" and {len(named) - 12} more" if len(named) > 12 else "")
    kinds = sorted({"NaN" if np.isnan(values[i]) else "inf" for i in idx})
    verb = ("is" if len(named) == 1 else "are") + " " + " or ".join(kinds)
    return [f"{name}: {listed} {verb} because of {rows}: beyond ±{SQUARE_LIMIT:.2g} a value's square overflows "
            f"(and below {1 / SQUARE_LIMIT:.2g} a σ makes z = (y − mean)/σ overflow); the "
            f"{thing} {'is' if total == 1 else 'are'} kept — check {'it' if total == 1 else 'them'} (a placeholder "
            "such as 1e300 for a missing value, or a unit error?)"]
