"""Forecast-hub long rows → one row per (model × forecast unit): the unit codes and the wide value blocks.

:func:`unit_codes` numbers the forecast units (model × task IDs) in reading order, vectorised (one factorisation per
column, combined).  :func:`quantile_block` puts the quantile (and median) rows of every unit into a units × levels
matrix; levels not stated by every unit are left out and said; a median becomes level 0.5 when 0.5 is not stated,
and when both are given and differ the quantile wins (counted).  :func:`sample_block` does the same for samples
(members numbered within their unit; different counts per unit: the common count is used and said),
:func:`category_block` for pmf / cdf rows (categories or thresholds).  Duplicated rows (one unit stating one level
twice) are refused, naming the file and rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..base.predictions import InputError
from .columns import name_list

__all__ = ["Block", "category_block", "quantile_block", "sample_block", "text_codes", "type_mask", "unit_codes"]


def text_codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The codes (0 … k − 1, in order of first appearance) and the distinct values of a column.

    A categorical column (how the reader keeps task IDs) is factorised through its integer codes, so its unused
    categories are not among the values; other columns through ``pandas.factorize``.

    Parameters
    ----------
    values : Series
        A column.

    Returns
    -------
    codes : ndarray of int64
        The value of every row as an index into ``uniques``.
    uniques : ndarray
        The distinct values (missing values included as such).

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.hub_pivot import text_codes
    >>> codes, uniques = text_codes(pd.Series(["b", "a", "b"], dtype="category"))
    >>> codes.tolist(), uniques.tolist()
    ([0, 1, 0], ['b', 'a'])
    """
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes, used = pd.factorize(values.cat.codes.to_numpy())
        categories = np.append(np.asarray(values.cat.categories, dtype=object), None)
        return codes.astype(np.int64), categories[used]
    codes, uniques = pd.factorize(values.to_numpy(), use_na_sentinel=False)
    return codes.astype(np.int64), np.asarray(uniques, dtype=object)


def type_mask(long: pd.DataFrame, types: Sequence[str]) -> np.ndarray:
    """Whether each long row's ``output_type`` is one of ``types``.

    Parameters
    ----------
    long : DataFrame
        The long rows.
    types : sequence of str
        Output types.

    Returns
    -------
    ndarray of bool
        One entry per row.
    """
    codes, uniques = text_codes(long["output_type"])
    return np.isin(uniques, list(types))[codes]


def unit_codes(long: pd.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The forecast unit of every long row, numbered in order of first appearance.

    Parameters
    ----------
    long : DataFrame
        The long rows.
    keys : sequence of str
        The columns that make a unit (``model_id`` and the task IDs).

    Returns
    -------
    codes : ndarray of int64 of shape (n,)
        The unit of every row (0 … U − 1).
    first : ndarray of int64 of shape (U,)
        The first row of every unit.

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.hub_pivot import unit_codes
    >>> long = pd.DataFrame({"model_id": ["a", "a", "b", "a"], "location": ["01", "02", "01", "01"]})
    >>> codes, first = unit_codes(long, ["model_id", "location"])
    >>> codes.tolist(), first.tolist()
    ([0, 1, 2, 0], [0, 1, 2])
    """
    n = len(long)
    combined = np.zeros(n, dtype=np.int64)
    for k in keys:
        codes, uniques = text_codes(long[k])
        if n and (int(combined.max()) + 1) * (len(uniques) + 1) >= 1 << 62:  # keep the mixed-radix number in int64
            combined = pd.factorize(combined)[0].astype(np.int64)
        combined = combined * np.int64(len(uniques) + 1) + codes
    codes = pd.factorize(combined)[0].astype(np.int64)
    first = np.full(int(codes.max()) + 1 if n else 0, n, dtype=np.int64)
    np.minimum.at(first, codes, np.arange(n, dtype=np.int64))
    return codes, first


@dataclass
class Block:
    """The values of every unit in one matrix.

    Attributes
    ----------
    values : ndarray of shape (U, K)
        One row per unit (NaN where a stated value is missing).
    ids : list
        The column meaning: levels (floats), member numbers, categories or thresholds.
    messages : list of str
        What was left out or changed.
    """

    values: np.ndarray
    ids: list
    messages: list[str] = field(default_factory=list)


def _where(long: pd.DataFrame, idx: np.ndarray, files: list[str]) -> tuple[str, list[int]]:
    f = long["file"].to_numpy()[idx]
    r = long["row"].to_numpy()[idx]
    return files[int(f[0])], r[f == f[0]][:20].tolist()


def _refuse_duplicates(long: pd.DataFrame, sel: np.ndarray, key: np.ndarray, files: list[str], what: str) -> None:
    order = np.argsort(key, kind="stable")
    ks = key[order]
    dup_sorted = np.zeros(ks.size, dtype=bool)
    dup_sorted[1:] = ks[1:] == ks[:-1]
    if dup_sorted.any():
        j = int(np.flatnonzero(dup_sorted)[0])
        same = order[ks == ks[j]]
        src, rows = _where(long, sel[same], files)
        raise InputError(
            f"{what} is stated {same.size} times for one forecast unit (rows {name_list(rows, 10)}; "
            f"{int(dup_sorted.sum())} repeated row(s) in all).", source=src, rows=rows,
            columns=["output_type_id"],
            hint="keep one row per task IDs × output_type × output_type_id (a repeated file or a missing task-ID "
                 "column, e.g. target, can cause this)")


def _labels(long: pd.DataFrame, units: np.ndarray, first: np.ndarray, by: Sequence[str]) -> list[str]:
    frame = long.iloc[first[units]][list(by)].astype(str).drop_duplicates()  # the distinct (model, round) pairs
    out = frame[by[0]]
    for c in by[1:]:
        out = out + " " + frame[c]
    return sorted(out.tolist())


def quantile_block(
    long: pd.DataFrame, codes: np.ndarray, first: np.ndarray, files: list[str], *, group_by: Sequence[str] = (),
) -> Block:
    """The quantiles of every unit at the levels every unit states (+ the median as level 0.5 when not stated).

    Parameters
    ----------
    long : DataFrame
        The long rows of the output types ``quantile`` and ``median`` (``output_type_id`` the level as text).
    codes, first : ndarray
        The unit of every row and the first row of every unit (:func:`unit_codes`).
    files : list of str
        File names (for messages).
    group_by : sequence of str
        Columns naming who stated a level left out (``model_id`` and the round).

    Returns
    -------
    Block
        values (U, L) at the common levels (sorted), the levels, and messages.

    Raises
    ------
    InputError
        A level that is no number in (0, 1), a level stated twice for a unit, fewer than 2 common levels.
    """
    n_units = first.size
    q_idx = np.flatnonzero(type_mask(long, ["quantile"]))
    id_codes, id_text = text_codes(long["output_type_id"].iloc[q_idx])
    lev_codes, used = pd.factorize(id_codes)
    lev_text = id_text[used]
    lev_num = pd.to_numeric(pd.Series(lev_text, dtype=object), errors="coerce").to_numpy(dtype=float)
    bad = ~(np.isfinite(lev_num) & (lev_num > 0) & (lev_num < 1))
    if bad.any():
        rows_bad = q_idx[bad[lev_codes]]
        src, rows = _where(long, rows_bad, files)
        raise InputError(
            f"column 'output_type_id': quantile levels must be numbers between 0 and 1; {rows_bad.size} row(s) "
            f"state {name_list([repr(t) for t in lev_text[bad]], 5)} (rows {name_list(rows, 10)})",
            source=src, columns=["output_type_id"], rows=rows,
            hint="write the level of every quantile row in output_type_id (e.g. 0.025)")
    levels, li = np.unique(np.round(lev_num, 10), return_inverse=True)
    li = li[lev_codes]
    med_idx = np.flatnonzero(type_mask(long, ["median"]))
    if med_idx.size and not np.any(np.isclose(levels, 0.5)):
        levels = np.append(levels, 0.5)
        levels.sort()
        li = np.searchsorted(levels, np.round(lev_num, 10))[lev_codes]
    n_lev = levels.size
    ucode = codes[q_idx]
    _refuse_duplicates(long, q_idx, ucode * n_lev + li, files, "a quantile level")
    values = np.full((n_units, n_lev), np.nan)
    stated = np.zeros((n_units, n_lev), dtype=bool)
    v = long["value"].to_numpy()
    values[ucode, li] = v[q_idx]
    stated[ucode, li] = True
    messages: list[str] = []
    if med_idx.size:
        _refuse_duplicates(long, med_idx, codes[med_idx], files, "a median")
        j = int(np.flatnonzero(np.isclose(levels, 0.5))[0])
        mu = codes[med_idx]
        mv = v[med_idx]
        both = stated[mu, j]
        differ = both & ~np.isclose(values[mu, j], mv, rtol=1e-9, atol=1e-12, equal_nan=True)
        fill = ~both
        values[mu[fill], j] = mv[fill]
        stated[mu[fill], j] = True
        if fill.any():
            messages.append(f"the median is level 0.5 in {int(fill.sum()):,} unit(s) that state no 0.5 quantile.")
        if differ.any():
            messages.append(f"{int(differ.sum()):,} unit(s) give a median that differs from their 0.5 quantile: the "
                            "quantile is used.")
    everywhere = stated.all(axis=0)
    if (~everywhere).any():
        dropped = levels[~everywhere]
        parts = []
        for lv in dropped[:6]:
            has = np.flatnonzero(stated[:, np.flatnonzero(levels == lv)[0]])
            who = _labels(long, has, first, group_by) if group_by else []
            parts.append(f"{lv:g} (stated by {has.size:,} of {n_units:,} units" +
                         (f": {name_list(who, 4)}" if who else "") + ")")
        more = f" and {dropped.size - 6} more" if dropped.size > 6 else ""
        messages.append(f"quantile levels not stated by every forecast unit are left out: {'; '.join(parts)}{more}. "
                        f"Used: the {int(everywhere.sum())} levels every unit states.")
    if everywhere.sum() < 2:
        stated_counts = name_list([f"{lv:g}: {int(c)}" for lv, c in zip(levels, stated.sum(axis=0))], 12)
        raise InputError(
            f"fewer than 2 quantile levels are stated by every forecast unit (units stating each level: "
            f"{stated_counts})", source=files[0] if len(files) == 1 else f"{len(files)} files",
            columns=["output_type_id"],
            hint="read models or rounds with the same quantile levels together (output_type_id)")
    return Block(values[:, everywhere], levels[everywhere].tolist(), messages)


def sample_block(long: pd.DataFrame, codes: np.ndarray, first: np.ndarray, files: list[str]) -> Block:
    """The samples of every unit as members 1 … m (the common count m when units differ).

    Parameters
    ----------
    long : DataFrame
        The long rows of output type ``sample``.
    codes, first : ndarray
        The unit of every row and the first row of every unit.
    files : list of str
        File names (for messages).

    Returns
    -------
    Block
        values (U, m), member numbers, and messages.

    Raises
    ------
    InputError
        A sample index stated twice for a unit, or fewer than 2 samples in some unit.
    """
    n_units = first.size
    ids = text_codes(long["output_type_id"])[0]
    _refuse_duplicates(long, np.arange(len(long)), codes * (ids.max() + 1) + ids, files, "a sample index")
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=n_units)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.empty(len(long), dtype=np.int64)
    rank[order] = np.arange(len(long)) - starts[codes[order]]
    m = int(counts.min())
    messages = []
    if m < 2:
        few = np.flatnonzero(counts < 2)
        src, rows = _where(long, first[few], files)
        raise InputError(f"{few.size} forecast unit(s) have fewer than 2 samples (first at rows {name_list(rows, 5)})",
                         source=src, rows=rows, columns=["output_type"],
                         hint="give at least 2 sample rows per forecast unit, or read another output_type")
    if counts.max() != m:
        messages.append(f"forecast units state different numbers of samples ({m} to {int(counts.max())}): the first "
                        f"{m} of every unit are used.")
    take = rank < m
    values = np.full((n_units, m), np.nan)
    values[codes[take], rank[take]] = long["value"].to_numpy()[take]
    messages.append(f"{m} samples per forecast unit.")
    return Block(values, list(range(1, m + 1)), messages)


def category_block(
    long: pd.DataFrame, codes: np.ndarray, first: np.ndarray, files: list[str], *, order: Sequence[str] = (),
    numeric: bool = False,
) -> Block:
    """pmf or cdf rows → units × categories (pmf: the stated order, else first appearance; cdf: thresholds sorted).

    Parameters
    ----------
    long : DataFrame
        The long rows of output type ``pmf`` or ``cdf``.
    codes, first : ndarray
        The unit of every row and the first row of every unit.
    files : list of str
        File names (for messages).
    order : sequence of str
        The categories' order from ``hub-config/tasks.json`` (pmf).
    numeric : bool
        cdf: the ids are thresholds, sorted as numbers.

    Returns
    -------
    Block
        values (U, K) (NaN where a unit states no value), the categories or thresholds, and messages.

    Raises
    ------
    InputError
        A threshold that is no number, or a category stated twice for a unit.
    """
    cat_codes, cats = text_codes(long["output_type_id"])
    if numeric:
        thr = pd.to_numeric(pd.Series(cats, dtype=object), errors="coerce").to_numpy(dtype=float)
        if not np.isfinite(thr).all():
            bad = np.flatnonzero(~np.isfinite(thr)[cat_codes])
            src, rows = _where(long, bad, files)
            raise InputError(f"column 'output_type_id': cdf thresholds must be numbers (rows {name_list(rows, 10)})",
                             source=src, columns=["output_type_id"], rows=rows,
                             hint="write the threshold of every cdf row in output_type_id")
        rank = np.argsort(np.argsort(thr, kind="stable"), kind="stable")
        labels: list = sorted(thr.tolist())
    else:
        stated = [c for c in order if c in set(cats)]
        rest = [c for c in cats if c not in set(stated)]
        labels = stated + rest
        pos = {c: i for i, c in enumerate(labels)}
        rank = np.array([pos[c] for c in cats], dtype=np.int64)
    k = rank[cat_codes]
    _refuse_duplicates(long, np.arange(len(long)), codes * len(labels) + k, files, "a category / threshold")
    values = np.full((first.size, len(labels)), np.nan)
    values[codes, k] = long["value"].to_numpy()
    return Block(values, labels, [])
