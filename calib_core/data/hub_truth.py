"""A forecast hub's truth (target data): reading it and joining it to the forecast units.

Three shapes are read (:func:`read_truth`): a hubverse time series (``observation`` — or ``value`` — with a date
column ``date`` / ``target_end_date`` / ``time_idx`` and task IDs such as ``location`` and ``target``; an ``as_of``
column keeps the latest version of each value), hubverse oracle output (``oracle_value`` with the task IDs and
``output_type`` / ``output_type_id``) and the legacy hub's truth (``date, location, value`` [, ``location_name``]).

:func:`join_truth` joins on the columns both sides share, the truth's date column standing for
``target_end_date``.  Truth rows repeated with different values are refused (file, columns, rows named); forecast
units without truth are returned as such, for the caller to count in ``dropped``; no match at all is refused with
the values compared, column by column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import InputError
from .bytes import read_table, source_name
from .columns import name_list
from .hub_formats import DATE_COLUMNS, NUMERIC_COLUMNS
from .timecol_units import far_dates_error, outside_ns

__all__ = ["Truth", "join_truth", "read_truth"]

TRUTH_DATE_COLUMNS = ("target_end_date", "date", "time_idx", "target_date")
"""The truth's date column, in order of preference; it is joined to the forecasts' ``target_end_date``."""

TRUTH_HINT = ("give the hub's target data: a time series (observation or value, a date column date / "
              "target_end_date / time_idx, and task IDs such as location, target) or oracle output (oracle_value)")


@dataclass
class Truth:
    """A truth table ready to join.

    Attributes
    ----------
    frame : DataFrame
        Key columns (text; dates datetime64[ns]; the date column named ``target_end_date``), ``observed`` (float, or
        text for categories) and ``row`` (1-based data row in the file); oracle rows of pmf / cdf keep
        ``output_type`` and ``output_type_id``.
    name : str
        The file name.
    kind : str
        ``"time series"``, ``"oracle output"`` or ``"legacy truth"``.
    keys : list of str
        The columns that can be joined.
    """

    frame: pd.DataFrame
    name: str
    kind: str
    keys: list[str]
    target_from_name: str | None = None


def read_truth(truth: Any, *, max_bytes: int | None = None, limit_hint: str | None = None) -> Truth:
    """Read a hub's truth file (time series, oracle output or legacy truth) with its task IDs as text.

    Parameters
    ----------
    truth : path, bytes, binary file-like or DataFrame
        The target-data file.
    max_bytes, limit_hint : int and str, optional
        The size limit and how to raise it (:func:`calib_core.data.bytes.read_table`).

    Returns
    -------
    Truth
        The table with its value column ``observed`` and date column ``target_end_date``.

    Raises
    ------
    InputError
        No value column (observation / value / oracle_value), or dates that are no dates.

    Examples
    --------
    >>> from calib_core.data.hub_truth import read_truth
    >>> t = read_truth(b"time_idx,location,value\\n2022-12-01,01,5\\n2022-12-02,01,7\\n", max_bytes=None)
    >>> t.kind, t.keys, t.frame["location"].tolist(), t.frame["observed"].tolist()
    ('time series', ['target_end_date', 'location'], ['01', '01'], [5.0, 7.0])
    """
    if isinstance(truth, pd.DataFrame):
        frame, name = truth.copy(), str(truth.attrs.get("source") or "truth")
    else:
        name = source_name(truth)
        frame = read_table(truth, source=name, max_bytes=max_bytes, limit_hint=limit_hint,
                           text_except=NUMERIC_COLUMNS)
    frame.columns = [str(c).strip() for c in frame.columns]
    lower = {c.lower(): c for c in frame.columns}
    value_col = next((lower[k] for k in ("oracle_value", "observation", "value") if k in lower), None)
    if value_col is None:
        raise InputError(f"no truth value column (looked for observation, value, oracle_value); columns are: "
                         f"{name_list(frame.columns, 12)}", source=name,
                         columns=[str(c) for c in frame.columns[:20]], hint=TRUTH_HINT)
    kind = "oracle output" if value_col.lower() == "oracle_value" else "time series"
    date_col = next((lower[k] for k in TRUTH_DATE_COLUMNS if k in lower), None)
    if kind == "time series" and set(lower) <= {"date", "location", "location_name", "value"}:
        kind = "legacy truth"
    out = pd.DataFrame(index=frame.index)
    for c in frame.columns:
        if c == value_col or c.lower() == "as_of":
            continue
        out[c] = _text(frame[c])
    if date_col is not None:
        out = out.rename(columns={date_col: "target_end_date"})
    for c in out.columns:
        if c in DATE_COLUMNS:
            out[c] = _truth_dates(out[c], name, c if c != "target_end_date" else (date_col or c))
    out["observed"] = _observed(frame[value_col], name, value_col)
    out["row"] = np.arange(1, len(frame) + 1)
    if "as_of" in lower:  # a versioned time series: the latest version of every value
        as_of = pd.to_datetime(frame[lower["as_of"]], errors="coerce", format="ISO8601")
        keys = [c for c in out.columns if c not in ("observed", "row")]
        order = np.argsort(as_of.to_numpy(), kind="stable")
        out = out.iloc[order].drop_duplicates(keys, keep="last").sort_values("row")
    target = _legacy_target(name) if "target" not in out.columns else None
    if target is not None:  # the legacy hub's truth-Incident Deaths.csv is the truth of target "inc death"
        out.insert(0, "target", target)
    keys = [c for c in out.columns if c not in ("observed", "row", "output_type", "output_type_id")]
    truth_table = Truth(out.reset_index(drop=True), name, kind, keys)
    truth_table.target_from_name = target
    return truth_table


LEGACY_TRUTH_NAME = re.compile(r"truth[-_ ]+(incident|cumulative)[-_ ]+(deaths?|cases?|hospitali[sz]ations?)",
                               re.IGNORECASE)
"""The legacy hub's truth file names (``truth-Incident Deaths.csv``): their target (``inc death``)."""


def _legacy_target(name: str) -> str | None:
    m = LEGACY_TRUTH_NAME.search(name)
    if m is None:
        return None
    what = {"d": "death", "c": "case", "h": "hosp"}[m.group(2)[0].lower()]
    return f"{'inc' if m.group(1).lower() == 'incident' else 'cum'} {what}"


def _text(values: pd.Series) -> pd.Series:
    if pd.api.types.is_datetime64_any_dtype(values):
        return values.dt.strftime("%Y-%m-%d").fillna("NA")
    if pd.api.types.is_float_dtype(values) and (values.dropna() == np.round(values.dropna())).all():
        return values.astype("Int64").astype(str).replace("<NA>", "NA")
    return values.astype(str).fillna("NA")


def _observed(values: pd.Series, name: str, col: str) -> pd.Series:
    """Numbers when every filled cell is a number, else text (pmf categories)."""
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return values.astype(float)
    conv = pd.to_numeric(values, errors="coerce")
    filled = values.notna() & ~values.astype(str).str.strip().isin(["", "NA", "NaN", "nan", "null", "NULL", "None"])
    if conv[filled].notna().all():
        return conv.astype(float)
    return values.astype(str).where(filled, None)


def _truth_dates(values: pd.Series, name: str, col: str) -> pd.Series:
    codes, uniques = pd.factorize(values)
    parsed = pd.to_datetime(pd.Series(uniques, dtype=object), errors="coerce", format="ISO8601")
    bad_u = parsed.isna().to_numpy() & ~pd.Series(uniques).isin(["NA", ""]).to_numpy()
    if bad_u.any():
        rows = (np.flatnonzero(bad_u[codes]) + 1).tolist()
        raise InputError(f"column {col!r}: {len(rows)} cell(s) are no date (e.g. "
                         f"{name_list([repr(u) for u in uniques[bad_u][:3]])}; rows {name_list(rows, 10)})",
                         source=name, columns=[col], rows=rows[:20], hint="write dates as YYYY-MM-DD")
    far = outside_ns(parsed.to_numpy())  # a nanosecond cast would move them (1500 → 2085): refused, with the rows
    if far.any():
        rows = (np.flatnonzero(far[codes]) + 1).tolist()
        raise far_dates_error(col, np.asarray(uniques, dtype=object)[far], len(rows), name, rows)
    return pd.Series(parsed.to_numpy(dtype="datetime64[ns]")[codes], index=values.index, name=values.name)


def _values_text(values: pd.Series, k: int = 6) -> str:
    uniq = pd.unique(values)
    if np.issubdtype(np.asarray(uniq).dtype, np.datetime64):
        uniq = np.sort(uniq)
        shown = [str(pd.Timestamp(u).date()) for u in uniq]
        return f"{shown[0]} … {shown[-1]}" if len(shown) > 2 else ", ".join(shown)
    shown = sorted(str(u) for u in uniq)
    if len(shown) <= k:
        return ", ".join(shown)
    return f"{shown[0]} … {shown[-1]} ({len(shown)} values)"


def truth_rows(truth: Truth, output_type: str) -> pd.DataFrame:
    """The truth rows that apply to an output type: oracle output keeps its rows of that type (pmf / cdf) or of a
    numeric type (quantile, median, mean, sample: all carry the observed value); time series keep every row.

    Parameters
    ----------
    truth : Truth
        The truth table.
    output_type : str
        The output type being read.

    Returns
    -------
    DataFrame
        The rows.
    """
    frame = truth.frame
    if "output_type" not in frame.columns:
        return frame
    types = frame["output_type"].to_numpy()
    if output_type in ("pmf", "cdf"):
        sel = types == output_type
    else:
        sel = ~np.isin(types, ["pmf", "cdf"])
    return frame.loc[sel]


def join_truth(units: pd.DataFrame, truth: Truth, output_type: str = "quantile") -> tuple[pd.Series, list[str]]:
    """The observed value of every forecast unit: truth joined on the columns both sides share.

    The truth's date column stands for ``target_end_date``.  Truth rows repeated with the same keys and the same
    value are kept once; with different values they are refused.

    Parameters
    ----------
    units : DataFrame
        One row per forecast unit: its task-ID columns (text; dates datetime64[ns]).
    truth : Truth
        The truth table (:func:`read_truth`).
    output_type : str, default "quantile"
        The output type read (oracle output: which of its rows apply; pmf: the category whose oracle value is 1).

    Returns
    -------
    observed : Series
        One value per unit (NaN / None without truth), indexed as ``units``.
    keys : list of str
        The columns joined on.

    Raises
    ------
    InputError
        No shared column, truth rows with the same keys and different values, or no unit matched.
    """
    rows = truth_rows(truth, output_type)
    keys = [c for c in truth.keys if c in units.columns]
    if "target" not in truth.keys and "target" in units.columns and units["target"].nunique() > 1:
        targets = sorted(pd.unique(units["target"]).tolist())
        raise InputError(f"the truth has no target column but the forecasts have {len(targets)} targets "
                         f"({name_list(targets, 6)}): each would be compared to the same values",
                         source=truth.name, columns=["target"],
                         hint="give a truth file with a target column (hubverse target data), or read the model "
                              "output of one target at a time")
    if "target_end_date" in truth.keys and "target_end_date" not in units.columns:
        raise InputError("the truth is dated but the forecasts have no target date: no target_end_date column, and "
                         "no round date (reference_date / origin_date / forecast_date) with a horizon to compute it",
                         source=truth.name, columns=["target_end_date", "horizon"],
                         hint="give model-output files with target_end_date, or with a round date and horizon")
    if not keys:
        raise InputError(f"the truth shares no column with the forecasts (truth columns: {name_list(truth.keys, 10)}; "
                         f"forecast task IDs: {name_list(list(units.columns), 10)})", source=truth.name,
                         columns=truth.keys[:20], hint=TRUTH_HINT)
    cdf_oracle = output_type == "cdf" and "output_type_id" in rows.columns
    if output_type == "pmf" and "output_type_id" in rows.columns:
        rows = rows.loc[rows["observed"].astype(float).to_numpy() == 1.0]
        rows = rows.assign(observed=rows["output_type_id"].astype(str))
    elif cdf_oracle:
        rows = _cdf_oracle_rows(rows, keys)  # observed: the index of the interval holding y
    table = rows[keys + ["observed", "row"]].copy()
    for k in keys:  # the truth's keys in the forecasts' types (horizon an integer, dates as dates)
        if pd.api.types.is_integer_dtype(units[k]) and not pd.api.types.is_integer_dtype(table[k]):
            table[k] = pd.to_numeric(table[k], errors="coerce").astype("Int64")
        elif pd.api.types.is_datetime64_any_dtype(units[k]) and not pd.api.types.is_datetime64_any_dtype(table[k]):
            table[k] = _truth_dates(table[k], truth.name, k)
    dup = table.duplicated(keys, keep=False).to_numpy()
    if dup.any():
        clash = table.loc[dup].groupby(keys, sort=False, observed=True, dropna=False)["observed"].transform("nunique")
        conflict = table.loc[dup].loc[clash.to_numpy() > 1]
        if len(conflict):
            first = conflict.iloc[0]
            same = conflict
            for k in keys:
                same = same.loc[same[k] == first[k]]
            where = ", ".join(f"{k}={_scalar(first[k])}" for k in keys)
            raise InputError(
                f"the truth has {len(conflict)} rows with the same {name_list(keys)} and different values, e.g. "
                f"rows {name_list(same['row'].tolist(), 6)} ({where}: {name_list(same['observed'].tolist(), 6)}).",
                source=truth.name, columns=keys, rows=conflict["row"].head(20).tolist(),
                hint="keep one value per " + " × ".join(keys) + " (a versioned file needs an as_of column; with "
                     "several targets the truth needs a target column)")
        table = table.drop_duplicates(keys)
    merged = units[keys].merge(table[keys + ["observed"]], on=keys, how="left", sort=False)
    observed = pd.Series(merged["observed"].to_numpy(), index=units.index)
    observed.attrs["interval_index"] = cdf_oracle
    if observed.notna().sum() == 0:
        raise InputError(_no_match_text(units, table, keys), source=truth.name, columns=keys,
                         hint="give the truth (target data) of these forecasts: the same locations, targets and "
                              "target dates, spelt the same (location codes as text, e.g. 01 not 1)")
    return observed, keys


def _scalar(v: Any) -> str:
    return str(pd.Timestamp(v).date()) if isinstance(v, (pd.Timestamp, np.datetime64)) else str(v)


def _no_match_text(units: pd.DataFrame, table: pd.DataFrame, keys: list[str]) -> str:
    parts = []
    for k in keys:
        f_vals, t_vals = set(pd.unique(units[k])), set(pd.unique(table[k]))
        overlap = len(f_vals & t_vals)
        word = "none shared" if overlap == 0 else f"{overlap} shared"
        parts.append(f"forecast {k} {_values_text(units[k])} vs truth {k} {_values_text(table[k])} ({word})")
    return "no forecast unit has a truth value; compared " + "; ".join(parts) + "."


def _cdf_oracle_rows(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Oracle cdf rows (1 where y ≤ threshold) → one row per key with the index of the observed interval."""
    thr = pd.to_numeric(rows["output_type_id"], errors="coerce").to_numpy(dtype=float)
    below = (rows["observed"].astype(float).to_numpy() == 0.0)
    frame = rows[keys + ["row"]].assign(above=below.astype(np.int64), thr=thr)
    out = frame.groupby(keys, sort=False, observed=True, dropna=False).agg(observed=("above", "sum"),
                                                                             row=("row", "first")).reset_index()
    out["observed"] = out["observed"].astype(float)
    return out
