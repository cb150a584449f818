"""Forecast-hub task-ID columns as text codes: one file's column → (codes, distinct text), many files → one column.

The reader never builds a string per row: every column of every file is factorised once (a categorical column —
how :func:`~calib_core.data.bytes.read_table` returns text with ``text_categories=True`` — through its codes), only
its distinct values are turned into text (:func:`text_codes_of`: missing → ``NA``; whole numbers without ``.0``;
dates ``YYYY-MM-DD``; text verbatim), and the files' codes are mapped onto the sorted union of their texts
(:func:`concat_text`).  A column a file lacks is ``NA`` there; a value constant over a file (the model from the
file name, the round) is one code.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["TextColumn", "concat_text", "constant_text", "text_codes_of"]

TextColumn = tuple[np.ndarray, np.ndarray]
"""A column of one file: codes (int64, −1 for missing) into its distinct texts (object array of str)."""


def _one_text(v: Any) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NaT:
        return "NA"
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    if isinstance(v, (pd.Timestamp, np.datetime64)) or type(v).__name__ in ("date", "datetime"):
        stamp = pd.Timestamp(v)
        return stamp.strftime("%Y-%m-%d") if stamp == stamp.normalize() else stamp.isoformat()
    return str(v)


def text_codes_of(values: pd.Series) -> TextColumn:
    """One file's column as codes into its distinct values written as text.

    Parameters
    ----------
    values : Series
        The column (categorical, text, numbers or dates).

    Returns
    -------
    codes : ndarray of int64
        The value of every row as an index into ``texts`` (−1: missing).
    texts : ndarray of object
        The distinct values as text (may repeat when two values write alike, e.g. ``1`` and ``1.0``).

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.hub_columns import text_codes_of
    >>> codes, texts = text_codes_of(pd.Series([1.0, None, 2.0, 1.0]))
    >>> codes.tolist(), texts.tolist()
    ([0, -1, 1, 0], ['1', '2'])
    """
    array = values.array
    if isinstance(array, pd.Categorical):
        codes = array.codes.astype(np.int64)
        uniques = np.asarray(array.categories, dtype=object)
    else:
        plain = values.to_numpy() if values.dtype == object else values  # Python strings: hashed as such
        codes, uniques = pd.factorize(plain, use_na_sentinel=True)
        codes = codes.astype(np.int64)
        uniques = np.asarray(uniques, dtype=object)
    return codes, np.array([_one_text(u) for u in uniques], dtype=object)


def constant_text(value: str, n: int) -> TextColumn:
    """A column holding one text on all ``n`` rows (the model from a file name).

    Parameters
    ----------
    value : str
        The text.
    n : int
        The rows.

    Returns
    -------
    TextColumn
        Codes (all 0) and the one text.
    """
    return np.zeros(n, dtype=np.int64), np.array([value], dtype=object)


def concat_text(parts: list[TextColumn | None], lengths: np.ndarray) -> pd.Categorical:
    """The files' columns as one categorical column of text (categories: the sorted distinct texts and ``NA``).

    Parameters
    ----------
    parts : list of TextColumn or None
        Each file's column (None: the file lacks it, ``NA`` there).
    lengths : ndarray of int
        Each file's rows.

    Returns
    -------
    Categorical
        One value per row of all files in order; missing → ``NA``.

    Examples
    --------
    >>> import numpy as np
    >>> from calib_core.data.hub_columns import concat_text, constant_text
    >>> col = concat_text([constant_text("01", 2), None], np.array([2, 1]))
    >>> col.tolist(), col.categories.tolist()
    (['01', '01', 'NA'], ['01', 'NA'])
    """
    texts = [p[1] for p in parts if p is not None] + [np.array(["NA"], dtype=object)]
    categories, inverse = np.unique(np.concatenate(texts), return_inverse=True)
    na = int(inverse[-1])
    out, start = [], 0
    for part, n in zip(parts, lengths):
        if part is None:
            out.append(np.full(int(n), na, dtype=np.int64))
            continue
        codes, text = part
        mapping = np.append(inverse[start:start + text.size], na)  # code −1 → the last entry: NA
        out.append(mapping[codes])
        start += text.size
    codes = np.concatenate(out) if out else np.zeros(0, dtype=np.int64)
    return pd.Categorical.from_codes(codes, categories=categories.astype(object))
