"""Non-finite cells of the numeric slice columns (features): counted and named, never kept without a word.

A numeric column no role took (a feature, e.g. ``age``) is a candidate slice column: the slice explorer cuts it at
its quantiles.  A cell that is empty, NaN or ±inf has no place among those bins, so its row belongs to no slice of
that column (it still counts in every statistic of the file and in the slices of the other columns).  The loader's
messages and the slice explorer say so per column, with the rows as the file numbers them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["nonfinite_cell_notes"]

_SHOWN = 8


def _cell_word(v: float) -> str:
    return "NaN or empty" if np.isnan(v) else ("inf" if v > 0 else "−inf")


def nonfinite_cell_notes(
    columns: pd.DataFrame | None,
    row_numbers: np.ndarray | None = None,
    *,
    only: Sequence[str] | None = None,
) -> list[str]:
    """One sentence per numeric column with empty, NaN or ±inf cells: how many, which rows (1-based, as the file
    numbers them), and that those rows get no slice bin of that column.

    A column counts as numeric when its dtype is (the loader has already turned all-number text columns into
    numbers); text columns are left alone — their empty cells form the "(missing)" level.

    Parameters
    ----------
    columns : DataFrame or None
        ``PredictionSet.slice_columns`` (one row per kept row).
    row_numbers : ndarray of shape (n,) or None
        ``PredictionSet.row_number``; None: positions from 1.
    only : sequence of str, optional
        Restrict to these columns (the slice explorer's chosen ones).

    Returns
    -------
    list of str
        The sentences, in column order; empty when every numeric cell is finite.

    References
    ----------
    Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H. & Whang, S. E. (2019). Slice Finder: automated data slicing
    for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering (ICDE),
    1550–1553.

    Examples
    --------
    >>> frame = pd.DataFrame({"age": [30.0, np.inf, 41.0, np.nan], "site": ["a", None, "b", "a"]})
    >>> nonfinite_cell_notes(frame, np.array([2, 3, 5, 9]))
    ["feature 'age': 2 of 4 cells are not finite numbers (rows 3 (inf), 9 (NaN or empty)); those rows get no slice \
bin of 'age' (they stay in every other statistic)."]
    """
    if columns is None or columns.empty:
        return []
    n = len(columns)
    numbers = np.arange(1, n + 1) if row_numbers is None else np.asarray(row_numbers)
    notes = []
    for name in columns.columns if only is None else [c for c in only if c in columns.columns]:
        col = columns[name]
        if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            continue
        x = col.to_numpy(dtype=float, na_value=np.nan)
        bad = ~np.isfinite(x)
        k = int(bad.sum())
        if k == 0:
            continue
        pos = np.flatnonzero(bad)
        shown = ", ".join(f"{int(numbers[p]):,} ({_cell_word(x[p])})" for p in pos[:_SHOWN]) + (" …" if k > _SHOWN
                                                                                                   else "")
        notes.append(f"feature {str(name)!r}: {k:,} of {n:,} cells are not finite numbers (row{'s' if k > 1 else ''} "
                     f"{shown}); {'those rows get' if k > 1 else 'that row gets'} no slice bin of {str(name)!r} "
                     f"({'they stay' if k > 1 else 'it stays'} in every other statistic).")
    return notes
