"""Numbers shown as numbers: tiny and huge values in scientific notation inside their table cell.

The grid Streamlit draws tables with formats a float column itself. Tested in Chromium with Streamlit 1.67, it
prints a probability of 2.9e-149 (Gaussian naive Bayes writes such values) as a run of zeros wider than the table,
``%.4g`` prints 123456789 as ``123500000``, and it cannot format 1e300 at all: the cell is marked as an error.
So a float column that holds such a value is shown as text formatted here, right-aligned like a number: values
whose size is between :data:`SMALL` and :data:`LARGE` keep the column's own format, all others are written
``2.9e-149`` / ``1.235e+08`` (``%.{digits}g``, which switches to an exponent exactly when fixed notation would
need more digits); ``inf`` and ``-inf`` are written as such, a missing value is an empty cell. Columns without
such values are left alone (they keep sorting as numbers).

Pure pandas / NumPy: :func:`display_numbers` is applied by the dashboard's ``dataframe`` to every table it shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["SMALL", "LARGE", "needs_text", "format_numbers", "display_numbers"]

#: Smallest nonzero size a table prints in fixed notation (``%.4f`` would show 0.0000 below it).
SMALL = 1e-4
#: Size from which a table prints a number with an exponent (beyond 9 digits a cell is too wide, and the grid
#: rounds to the 4th digit without saying so).
LARGE = 1e9


def needs_text(values: Any) -> bool:
    """Whether a column holds a value a table cell cannot show as a plain number.

    True when a finite nonzero value has ``|x| < SMALL`` or ``|x| >= LARGE``, or a value is ±inf.

    Parameters
    ----------
    values : array-like
        The column's values (floats; anything else gives False).

    Returns
    -------
    bool
        True when the column is better shown by :func:`format_numbers`.

    Examples
    --------
    >>> needs_text([0.5, 2.9e-149]), needs_text([0.5, 12.0]), needs_text([1e300])
    (True, False, True)
    """
    x = np.asarray(values)
    if x.dtype.kind != "f" or x.size == 0:
        return False
    size = np.abs(x[~np.isnan(x)])
    return bool(np.any(np.isinf(size) | ((size > 0) & (size < SMALL)) | (size >= LARGE)))


def format_numbers(values: Any, fmt: str = "%.6g", digits: int = 4) -> list[str]:
    """Texts of a column's numbers: ``fmt`` where ``SMALL <= |x| < LARGE`` (or x = 0), ``%.{digits}g`` elsewhere.

    Every text fits a cell: the exponent form ``m.mmme±XX`` has ``digits`` significant digits, so a value of
    2.9e-149 reads ``2.9e-149`` and 123456789 reads ``1.235e+08`` (never a row of zeros or a silent rounding to
    ``123500000``). Missing values give an empty text; ±inf give ``inf`` / ``-inf``.

    Parameters
    ----------
    values : array-like of float
        The column.
    fmt : str
        printf format of the values of ordinary size (the column's own format; ``%.6g`` for raw data).
    digits : int
        Significant digits of the exponent form.

    Returns
    -------
    list of str
        One text per value.

    Examples
    --------
    >>> format_numbers([2.9e-149, 0.5, 123456789.0, float("nan"), float("-inf")], "%.4f")
    ['2.9e-149', '0.5000', '1.235e+08', '', '-inf']
    """
    x = np.asarray(values, dtype=float)
    out = np.full(x.shape, "", dtype=object)
    size = np.abs(x)
    finite = np.isfinite(x)
    ordinary = finite & ((size == 0) | ((size >= SMALL) & (size < LARGE)))
    extreme = finite & ~ordinary
    if ordinary.any():
        out[ordinary] = np.char.mod(fmt, x[ordinary]).astype(object)
    if extreme.any():
        out[extreme] = np.char.mod(f"%.{int(digits)}g", x[extreme]).astype(object)
    out[np.isposinf(x)] = "inf"
    out[np.isneginf(x)] = "-inf"
    return out.tolist()


def _printf(config: Any) -> str | None:
    """The printf format of a Streamlit number-column config (a dict), else None."""
    if not isinstance(config, Mapping):
        return None
    type_config = config.get("type_config") or {}
    if type_config.get("type") != "number":
        return None
    fmt = type_config.get("format")
    return fmt if isinstance(fmt, str) and fmt.startswith("%") else "%.4g"


def display_numbers(frame: pd.DataFrame, column_config: Mapping[str, Any] | None = None,
                    ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A table's float columns that :func:`needs_text` as right-aligned text, and the column configs to match.

    A column with a number config keeps its printf format for ordinary values and its label, width, help and
    pinning; its type becomes text (alignment right). Other columns and frames without such values are returned
    unchanged (the same objects).

    Parameters
    ----------
    frame : DataFrame
        The table to show.
    column_config : mapping, optional
        Streamlit column configs by column name (dicts, as ``st.column_config.*`` return them).

    Returns
    -------
    (DataFrame, dict)
        The frame to show and its column configs.

    Examples
    --------
    >>> shown, config = display_numbers(pd.DataFrame({"p": [2.9e-149, 0.25], "n": [1, 2]}))
    >>> shown["p"].tolist(), config["p"]["alignment"], shown["n"].tolist()
    (['2.9e-149', '0.25'], 'right', [1, 2])
    """
    config = dict(column_config or {})
    if not frame.columns.is_unique:
        return frame, config
    columns = list(frame.columns)
    changed = [c for c in columns if pd.api.types.is_float_dtype(frame[c].dtype) and needs_text(frame[c].to_numpy())]
    if not changed:
        return frame, config
    frame = frame.copy()
    for column in changed:
        own = config.get(column)
        fmt = _printf(own) or "%.6g"
        frame[column] = format_numbers(frame[column].to_numpy(dtype=float, na_value=np.nan), fmt)
        kept = {k: own.get(k) for k in ("label", "width", "help", "pinned")} if isinstance(own, Mapping) else {}
        config[column] = {**{k: None for k in ("label", "width", "help", "disabled", "required", "pinned",
                                               "default")},
                          **kept, "alignment": "right",
                          "type_config": {"type": "text", "max_chars": None, "validate": None}}
    return frame, config
