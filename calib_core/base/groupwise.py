"""Slice labels and the book-keeping of slice-wise (group-conditional) calibrators.

A slice-wise calibrator fits one set of parameters per slice g on the calibration rows of g (Vovk et al.'s Mondrian
taxonomy: the category of a row is known before its target).  This module holds what the regression and the
classification calibrators share:

* :func:`slice_columns` / :func:`slice_labels` — which columns of a prediction set can define slices (the ``group``
  column, every feature column and every other column no role took) and the per-row slice label of one of them:
  the value itself for a categorical column or a numeric one with at most :data:`MAX_LEVELS` distinct values, else
  the equal-count quantile bin (:data:`NUMERIC_BINS` bins over all rows of the set; the bins use the feature only,
  never a target);
* :class:`SliceFit` — the slices seen at fit time, their calibration-row counts, which ones have enough rows
  (``min_rows``) to get their own parameters, and the lookup of new rows: a row whose slice was unseen at fit time or
  had fewer than ``min_rows`` calibration rows uses the global fit, and :meth:`SliceFit.note` counts those rows in
  words.

Every step is vectorised: slice codes come from ``np.unique(..., return_inverse=True)`` and per-slice sums from
``np.bincount``; lookups of new rows are a ``searchsorted`` into the sorted fitted slices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .binning import equal_count_bins
from .predictions import PredictionSet

__all__ = [
    "GROUP",
    "MAX_LEVELS",
    "NUMERIC_BINS",
    "SliceFit",
    "as_labels",
    "slice_columns",
    "slice_labels",
]

#: The name under which the ``group`` column of a prediction set is offered as a slice column.
GROUP = "group"
#: A numeric feature with more distinct values than this is cut into :data:`NUMERIC_BINS` quantile bins.
MAX_LEVELS = 20
#: Equal-count bins of a numeric feature used as a slice column.
NUMERIC_BINS = 5


def as_labels(groups: Any, n: int, *, who: str = "a slice-wise calibrator") -> np.ndarray:
    """The slice label of every row as a 1-D array of str.

    Parameters
    ----------
    groups : array_like
        One label per row, any dtype.
    n : int
        Number of rows.
    who : str, default "a slice-wise calibrator"
        Who asks, for the error message.

    Returns
    -------
    ndarray of str, shape (n,)
        The labels.

    References
    ----------
    Vovk, V., Lindsay, D., Nouretdinov, I. & Gammerman, A. (2003). Mondrian confidence machine. Technical
    report, Royal Holloway, University of London.
    """
    if groups is None:
        raise ValueError(f"{who} needs the slice of every row (groups=..., e.g. the group column)")
    arr = np.asarray(groups)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"groups must have shape ({n},), got {arr.shape}")
    if arr.dtype.kind in "fc" and np.isnan(arr.astype(float)).any():
        raise ValueError("groups contains NaN: give every row a slice (e.g. 'missing')")
    return arr.astype(str)


def slice_columns(pset: PredictionSet) -> list[str]:
    """Columns of ``pset`` that can define slices.

    ``"group"`` (when the set has a group column), every feature column, in file order, then every other column no
    role took (``pset.slice_columns``, the slice explorer's columns, e.g. a text column ``region``).

    Parameters
    ----------
    pset : PredictionSet
        The prediction set.

    Returns
    -------
    list of str
        The column names.

    References
    ----------
    Vovk, V., Lindsay, D., Nouretdinov, I. & Gammerman, A. (2003). Mondrian confidence machine. Technical
    report, Royal Holloway, University of London.
    """
    out = [GROUP] if pset.group is not None else []
    if pset.features is not None:
        out += [str(c) for c in pset.features.columns if str(c) != GROUP]
    if pset.slice_columns is not None:
        out += [str(c) for c in pset.slice_columns.columns if str(c) not in out and str(c) != GROUP]
    return out


def slice_labels(pset: PredictionSet, by: str) -> np.ndarray:
    """Per-row slice label (str) of column ``by`` of ``pset`` (see the module docstring).

    A numeric feature with more than :data:`MAX_LEVELS` distinct values is cut into :data:`NUMERIC_BINS` equal-count
    bins labelled by their closed range ``"[lo, hi]"`` (:func:`calib_core.base.binning.equal_count_bins`); missing
    feature values form the slice ``"missing"``.

    Parameters
    ----------
    pset : PredictionSet
        The prediction set.
    by : str
        The column.

    Returns
    -------
    ndarray of str, shape (n,)
        The labels.

    References
    ----------
    Vovk, V., Lindsay, D., Nouretdinov, I. & Gammerman, A. (2003). Mondrian confidence machine. Technical
    report, Royal Holloway, University of London.
    """
    if by == GROUP:
        if pset.group is None:
            raise ValueError("this data has no group column to slice by")
        return np.asarray(pset.group).astype(str)
    frame = next((f for f in (pset.features, pset.slice_columns)
                  if f is not None and by in [str(c) for c in f.columns]), None)
    if frame is None:
        raise ValueError(f"no column {by!r} to slice by; slice columns: {slice_columns(pset)}")
    col = frame[[c for c in frame.columns if str(c) == by][0]]
    missing = col.isna().to_numpy()
    if pd.api.types.is_numeric_dtype(col.dtype) and col.nunique(dropna=True) > MAX_LEVELS:
        x = col.to_numpy(dtype=float)
        out = np.full(x.size, "missing", dtype=object)
        ok = ~missing
        b = equal_count_bins(x[ok], NUMERIC_BINS)
        lo = np.full(NUMERIC_BINS, np.inf)
        hi = np.full(NUMERIC_BINS, -np.inf)
        np.minimum.at(lo, b, x[ok])
        np.maximum.at(hi, b, x[ok])
        names = np.array([f"[{a:.4g}, {c:.4g}]" for a, c in zip(lo, hi)], dtype=object)
        out[ok] = names[b]
        return out.astype(str)
    out = col.astype(object).where(~missing, "missing").to_numpy()
    return out.astype(str)


@dataclass(frozen=True)
class SliceFit:
    """The slices of the calibration rows and which of them are fitted on their own.

    ``own``: ``counts >= min_rows`` and not failed (those slices get their own parameters, the others the global
    fit).

    Parameters
    ----------
    levels : ndarray of str
        The sorted distinct slice labels of the calibration rows.
    counts : ndarray of int
        Their calibration rows.
    min_rows : int
        Fewest calibration rows of a slice fitted on its own.
    failed : ndarray of bool or None, default None
        Slices whose own fit was degenerate (None: none).

    References
    ----------
    Vovk, V., Lindsay, D., Nouretdinov, I. & Gammerman, A. (2003). Mondrian confidence machine. Technical
    report, Royal Holloway, University of London.

    Vovk, V., Gammerman, A. & Shafer, G. (2005). Algorithmic Learning in a Random World. Springer.
    """

    levels: np.ndarray
    counts: np.ndarray
    min_rows: int
    failed: np.ndarray | None = None

    def with_failed(self, failed: np.ndarray) -> SliceFit:
        """The same slices with ``failed`` (bool per level) marking degenerate own fits (they use the global fit)."""
        return SliceFit(self.levels, self.counts, self.min_rows, np.asarray(failed, dtype=bool))

    @classmethod
    def of(cls, labels: np.ndarray, min_rows: int) -> tuple[SliceFit, np.ndarray]:
        """(the SliceFit of the calibration labels, the code of each row: index into ``levels``)."""
        if int(min_rows) < 1:
            raise ValueError(f"min_rows must be at least 1, got {min_rows}")
        levels, codes = np.unique(labels, return_inverse=True)
        counts = np.bincount(codes, minlength=levels.size)
        return cls(levels, counts, int(min_rows)), codes.astype(np.int64)

    @property
    def own(self) -> np.ndarray:
        """Slices with at least ``min_rows`` calibration rows and a non-degenerate fit (fitted on their own)."""
        own = self.counts >= self.min_rows
        return own if self.failed is None else own & ~self.failed

    def codes(self, labels: np.ndarray) -> np.ndarray:
        """Index into ``levels`` of every label; −1 for a slice unseen at fit time."""
        labels = np.asarray(labels).astype(str)
        if self.levels.size == 0:
            return np.full(labels.size, -1, dtype=np.int64)
        pos = np.clip(np.searchsorted(self.levels, labels), 0, self.levels.size - 1)
        return np.where(self.levels[pos] == labels, pos, -1).astype(np.int64)

    def own_codes(self, labels: np.ndarray) -> np.ndarray:
        """Index into ``levels`` of every row fitted by its own slice, −1 for a row that uses the global fit."""
        c = self.codes(labels)
        ok = c >= 0
        ok[ok] = self.own[c[ok]]
        return np.where(ok, c, -1)

    def note(self, labels: np.ndarray, *, who: str) -> str | None:
        """Words counting the rows of ``labels`` that use the global fit, and why; None when there are none."""
        labels = np.asarray(labels).astype(str)
        c = self.codes(labels)
        unseen = c < 0
        few = np.zeros(labels.size, dtype=bool)
        few[~unseen] = self.counts[c[~unseen]] < self.min_rows
        bad = np.zeros(labels.size, dtype=bool)
        if self.failed is not None:
            bad[~unseen] = self.failed[c[~unseen]] & ~few[~unseen]
        n_global = int(unseen.sum() + few.sum() + bad.sum())
        if n_global == 0:
            return None
        parts = []
        if unseen.any():
            names = np.unique(labels[unseen])
            parts.append(f"{_names(names)} had no calibration rows")
        if few.any():
            idx = np.unique(c[few])
            parts.append(f"{_names(self.levels[idx])} had fewer than {self.min_rows} calibration rows")
        if bad.any():
            idx = np.unique(c[bad])
            parts.append(f"{_names(self.levels[idx])} had a degenerate fit of their own")
        return (f"{who}: {n_global:,} of {labels.size:,} rows use the global fit ("
                + "; ".join(parts) + ")")


def _names(values: np.ndarray, limit: int = 5) -> str:
    shown = ", ".join(repr(str(v)) for v in values[:limit])
    more = f" and {values.size - limit} more" if values.size > limit else ""
    word = "slice" if values.size == 1 else "slices"
    return f"{word} {shown}{more}"
