"""Numbers shown as numbers: tiny and huge values in scientific notation inside their table cell.

The grid Streamlit draws tables with formats a float column itself. Tested in Chromium with Streamlit 1.67, it
prints a probability of 2.9e-149 (Gaussian naive Bayes writes such values) as a run of zeros wider than the table,
``%.4g`` prints 123456789 as ``123500000``, and it cannot format 1e300 at all: the cell is marked as an error.
A ``%g`` format writes tiny values with an exponent itself. So a float column that holds a value the
grid cannot write is shown as text formatted here, right-aligned like a number: values
whose size is between :data:`SMALL` and :data:`LARGE` keep the column's own format, all others are written
``2.9e-149`` / ``1.235e+09`` (``%.{digits}g``, which switches to an exponent exactly when fixed notation would
need more digits); ``inf`` and ``-inf`` are written as such, a missing value is an empty cell. Columns without
such values are left alone (they keep sorting as numbers).

Pure pandas / NumPy: :func:`display_numbers` is applied by the dashboard's ``dataframe`` to every table it shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["SMALL", "LARGE", "needs_text", "needs_exponent", "format_numbers", "display_numbers"]

#: Smallest nonzero size a table prints in fixed notation (``%.4f`` would show 0.0000 below it).
SMALL = 1e-4
#: Size from which a table prints a number with an exponent (beyond 9 digits a cell is too wide, and the grid
#: rounds to the 4th digit without saying so).
LARGE = 1e9


def needs_text(values: Any) -> bool:
    """Whether a column holds a value the grid cannot write as a number: ``|x| >= LARGE`` or ±inf.

    Parameters
    ----------
    values : array-like
        The column's values (floats; anything else gives False).

    Returns
    -------
    bool
        True when the column is shown as text by :func:`format_numbers`.

    Examples
    --------
    >>> needs_text([0.5, 1e300]), needs_text([0.5, 2.9e-149]), needs_text([-np.inf])
    (True, False, True)
    """
    x = np.asarray(values)
    if x.dtype.kind != "f" or x.size == 0:
        return False
    return bool(np.any(np.abs(x[~np.isnan(x)]) >= LARGE))


def needs_exponent(values: Any, fmt: str | None = None) -> bool:
    """Whether a column's tiny values need a ``%g`` format: a finite nonzero ``|x| < SMALL`` and ``fmt`` (the
    column's printf format; None for the grid's default, which writes them as rows of zeros) is not ``%g``.

    Parameters
    ----------
    values : array-like
        The column's values (floats; anything else gives False).
    fmt : str, optional
        The column's printf format.

    Returns
    -------
    bool
        True when the column's format should become a ``%g`` format (it stays a number column: it sorts).

    Examples
    --------
    >>> needs_exponent([0.5, 2.9e-149]), needs_exponent([2.9e-149], "%.4g"), needs_exponent([0.5, 12.0])
    (True, False, False)
    """
    x = np.asarray(values)
    if x.dtype.kind != "f" or x.size == 0 or (fmt is not None and fmt.rstrip().endswith("g")):
        return False
    size = np.abs(x[np.isfinite(x)])
    return bool(np.any((size > 0) & (size < SMALL)))


def format_numbers(values: Any, fmt: str = "%.6g", digits: int = 4) -> list[str]:
    """Texts of a column's numbers: ``fmt`` where ``SMALL <= |x| < LARGE`` (or x = 0), ``%.{digits}g`` elsewhere.

    Every text fits a cell: the exponent form ``m.mmme±XX`` has ``digits`` significant digits, so a value of
    2.9e-149 reads ``2.9e-149`` and 1234567890 reads ``1.235e+09`` (never a row of zeros or a silent rounding to
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
    >>> format_numbers([2.9e-149, 0.5, 1234567890.0, float("nan"), float("-inf")], "%.4f")
    ['2.9e-149', '0.5000', '1.235e+09', '', '-inf']
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
    """A table's float columns made readable: huge values as text, tiny values with a ``%g`` format.

    A float column that :func:`needs_text` becomes right-aligned text (:func:`format_numbers` with the column's own
    printf format for ordinary values), keeping its label, width, help and pinning. A float column that only
    :func:`needs_exponent` stays a number column (it still sorts) whose format becomes ``%.4g`` (``%.6g`` when it
    had none: raw data). Other columns, and frames without such values, are returned unchanged.

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
    >>> shown, config = display_numbers(pd.DataFrame({"w": [1e300, 0.25], "p": [2.9e-149, 0.5], "n": [1, 2]}))
    >>> shown["w"].tolist(), config["w"]["alignment"], shown["p"].tolist(), config["p"]["type_config"]["format"]
    (['1e+300', '0.25'], 'right', [2.9e-149, 0.5], '%.6g')
    """
    config = dict(column_config or {})
    if not frame.columns.is_unique:
        return frame, config
    floats = [c for c, dtype in zip(frame.columns, frame.dtypes) if pd.api.types.is_float_dtype(dtype)
              and (c not in config or config[c] is None or _printf(config[c]) is not None)]
    as_text = [c for c in floats if needs_text(frame[c].to_numpy())]
    exponent = [c for c in floats if c not in as_text and needs_exponent(frame[c].to_numpy(), _printf(config.get(c)))]
    for column in exponent:
        own = config.get(column)
        if isinstance(own, Mapping):
            config[column] = {**own, "type_config": {**own["type_config"], "format": "%.4g"}}
        else:
            config[column] = {**_BLANK, "type_config": {"type": "number", "min_value": None, "max_value": None,
                                                       "format": "%.6g", "step": None}}
    if not as_text:
        return frame, config
    frame = frame.copy()
    for column in as_text:
        own = config.get(column)
        fmt = _printf(own) or "%.6g"
        frame[column] = format_numbers(frame[column].to_numpy(dtype=float, na_value=np.nan), fmt)
        kept = {k: own.get(k) for k in ("label", "width", "help", "pinned")} if isinstance(own, Mapping) else {}
        config[column] = {**_BLANK, **kept, "alignment": "right",
                          "type_config": {"type": "text", "max_chars": None, "validate": None}}
    return frame, config


#: The fields of a Streamlit column config, unset.
_BLANK: dict[str, Any] = {k: None for k in ("label", "width", "help", "disabled", "required", "pinned", "alignment",
                                            "default")}
