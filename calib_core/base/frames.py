"""Small tables built column by column, each exactly the frame pandas builds from the same Python objects.

pandas infers a column's dtype from its cells (Python strings: its default string dtype; floats: float64; booleans:
bool; integers: int64) through per-cell checks, and a frame from a dict of arrays pays a fixed cost per column and
per frame that dominates the report's small tables.  :func:`typed_column` builds a column of plain cells directly
with the dtype pandas would infer; :func:`float_frame` builds a table of float64 columns as one block.  Both fall
back to pandas' own inference for anything else, so the frames are the same, dtypes and index included.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["STR_DTYPE", "typed_column", "float_frame"]

#: The dtype pandas infers for a column of Python strings (its default string dtype: stored in Arrow when pyarrow
#: is installed, NaN as the missing value); the fast frame builders give string columns exactly this dtype.
STR_DTYPE = pd.Series(["a"]).dtype


def typed_column(cells: list[Any] | np.ndarray, kind: str) -> Any:
    """The column ``cells`` as pandas would infer it from the same Python objects, built directly.

    Parameters
    ----------
    cells : list or ndarray
        The cells; an ndarray is taken as it is when it is float64 and ``kind`` is "float".
    kind : {"str", "float", "bool", "int"}
        The column's plain type: "str" (every cell a ``str``: :data:`STR_DTYPE`), "float" (``float`` or NumPy's
        float64: float64), "bool" (``bool`` or NumPy's bool: bool), "int" (``int``, not bool: int64).

    Returns
    -------
    ndarray, ExtensionArray or None
        The column; None when a cell is not of the plain type (the caller then lets pandas infer the column).

    References
    ----------
    McKinney, W. (2010). Data structures for statistical computing in Python. Proceedings of the 9th Python in
    Science Conference, 56–61.

    Examples
    --------
    >>> typed_column(["a", "b"], "str").dtype == STR_DTYPE, typed_column([1, 2.0], "float")
    (True, None)
    """
    if isinstance(cells, np.ndarray):  # a float column taken from the inference table as it is
        return cells if kind == "float" and cells.dtype == np.float64 else None
    if kind == "str":
        if all(type(c) is str for c in cells):
            return pd.array(np.array(cells, dtype=object), dtype=STR_DTYPE)
    elif kind == "float":
        if all(type(c) is float or type(c) is np.float64 for c in cells):
            return np.array(cells, dtype=np.float64)
    elif kind == "bool":
        if all(type(c) is bool or type(c) is np.bool_ for c in cells):
            return np.array(cells, dtype=bool)
    elif kind == "int":
        if all(type(c) is int for c in cells):
            return np.array(cells, dtype=np.int64)
    return None


_COLUMN_LABELS: dict[tuple[str, ...], pd.Index] = {}


def float_frame(columns: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """A table of float64 columns (a RangeIndex), built as one block from a 2-D array.

    The frame equals ``pd.DataFrame(columns)`` — values bit for bit, dtypes, index and column order — at a tenth of
    its fixed cost; the column labels' Index is made once per set of names (each frame gets its own Index object).  Any
    column that is not a 1-D float64 array of the common length sends the table through ``pd.DataFrame(columns)``.

    Parameters
    ----------
    columns : mapping of str to ndarray
        Column name to values, in column order.

    Returns
    -------
    DataFrame
        One column per entry.

    References
    ----------
    McKinney, W. (2010). Data structures for statistical computing in Python. Proceedings of the 9th Python in
    Science Conference, 56–61.

    Examples
    --------
    >>> float_frame({"level": np.array([0.0, 0.5]), "observed": np.array([0.0, 0.4])}).columns.tolist()
    ['level', 'observed']
    """
    arrays = list(columns.values())
    if not arrays or any(not isinstance(a, np.ndarray) or a.dtype != np.float64 or a.ndim != 1
                         or a.shape != arrays[0].shape for a in arrays):
        return pd.DataFrame(columns)
    names = tuple(columns)
    index = _COLUMN_LABELS.get(names)
    if index is None:
        if len(_COLUMN_LABELS) > 64:
            _COLUMN_LABELS.clear()
        index = _COLUMN_LABELS[names] = pd.Index(list(names))
    # a new Index object over the same labels: setting one frame's ``columns.name`` leaves the others alone
    return pd.DataFrame(np.column_stack(arrays), columns=index.copy(), copy=False)
