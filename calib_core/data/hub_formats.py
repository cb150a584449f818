"""Forecast-hub files: finding them in a hub folder, reading them with text task IDs, the legacy COVID-19 / FluSight
format, and the hub's ``hub-config/tasks.json``.

A hubverse model-output file is *long*: one row per (forecast unit × output type × output type id), with task-ID
columns (``origin_date`` / ``reference_date`` / ``forecast_date``, ``horizon``, ``location``, ``target``,
``target_end_date`` …), ``output_type`` (quantile, median, mean, sample, pmf, cdf), ``output_type_id`` (the level,
sample index, category or threshold; ``NA`` for median and mean) and ``value``.  The model is the ``model_id``
column, else the file name ``<round>-<model>.csv|.parquet``, else the folder.  A legacy COVID-19 / FluSight
Forecast Hub file (``forecast_date, target, target_end_date, location, type, quantile, value`` with targets such as
``1 wk ahead inc death``) is rewritten into the same long shape (:func:`legacy_to_hubverse`): horizon and time
unit from the target text, ``type`` point → output type ``median``.

Task-ID columns are read as text, verbatim (location ``01`` stays ``01``, ``NA`` stays ``NA``; through
``read_table(..., text_except=..., text_categories=True)``: Parquet dictionaries kept, delimited text as plain
strings), every file's column factorised once and only its distinct values written as text
(:mod:`calib_core.data.hub_columns`), ``horizon`` as an integer and the date columns as dates
(:func:`read_hub_files`).  ``hub-config/tasks.json`` is read as plain JSON, never executed
(:func:`read_hub_config`): the round's task ID, the time unit of each target and the order of pmf categories.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import InputError
from .bytes import DEFAULT_LIMIT_HINT, DEFAULT_MAX_BYTES, read_table, size_text, source_name
from .columns import name_list
from .hub_columns import TextColumn, concat_text, constant_text, text_codes_of
from .hub_pivot import text_codes
from .timecol_units import far_dates_error, outside_ns

__all__ = [
    "DATE_COLUMNS",
    "HubConfig",
    "HubFile",
    "HubRead",
    "ROUND_COLUMNS",
    "find_hub_files",
    "hub_kind",
    "is_hub_frame",
    "legacy_to_hubverse",
    "read_hub_config",
    "read_hub_files",
]

HUB_COLUMNS = ("output_type", "output_type_id", "value")
"""The columns every hubverse model-output file has."""

LEGACY_COLUMNS = ("forecast_date", "target", "location", "type", "quantile", "value")
"""The columns of a legacy COVID-19 / FluSight Forecast Hub file (``target_end_date`` too, usually)."""

ROUND_COLUMNS = ("reference_date", "origin_date", "forecast_date", "forecast_due_date", "round_id")
"""Names of the round's date column, in order of preference (``hub-config/tasks.json``'s ``round_id`` first)."""

DATE_COLUMNS = ("reference_date", "origin_date", "forecast_date", "forecast_due_date", "target_end_date", "target_date")
"""Task-ID columns read as dates."""

NUMERIC_COLUMNS = ["value", "observation", "oracle_value"]
"""Columns read as numbers; every other column of a hub file is read as text."""

TABLE_FILE = re.compile(r"\.(csv|parquet|pqt|tsv|txt)(\.gz|\.zip|\.bz2|\.xz)?$", re.IGNORECASE)
"""File names read as tables in a hub folder."""

ROUND_FILE = re.compile(r"^(\d{4}-\d{2}-\d{2})-(.+?)\.(csv|parquet|pqt|tsv|txt)(\.gz|\.zip|\.bz2|\.xz)?$", re.I)
"""A model-output file name ``<round>-<model>.<ext>``."""

LEGACY_TARGET = re.compile(r"^\s*(-?\d+)\s*(wk|week|day|d|mo|month)s?\s+ahead\s*(.*?)\s*$", re.IGNORECASE)
"""A legacy hub target: ``<horizon> <unit> ahead <rest>`` (``1 wk ahead inc death``, ``7 day ahead inc hosp``)."""

UNIT_DAYS = {"day": 1, "d": 1, "days": 1, "week": 7, "wk": 7, "weeks": 7}
"""Days per time unit (months are not a fixed number of days: no target date is computed from them)."""


def hub_kind(frame: pd.DataFrame) -> str | None:
    """``"hubverse"``, ``"legacy"`` or None: which forecast-hub format a table's columns are.

    Parameters
    ----------
    frame : DataFrame
        A table (only its column names are looked at).

    Returns
    -------
    str or None
        ``"hubverse"`` with columns ``output_type``, ``output_type_id`` and ``value``; ``"legacy"`` with
        ``forecast_date, target, location, type, quantile, value``; otherwise None.

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.hub_formats import hub_kind
    >>> hub_kind(pd.DataFrame(columns=["location", "output_type", "output_type_id", "value"]))
    'hubverse'
    >>> hub_kind(pd.DataFrame(columns=["y", "mean", "std"])) is None
    True
    """
    names = {str(c).strip().lower() for c in frame.columns}
    if set(HUB_COLUMNS) <= names:
        return "hubverse"
    if set(LEGACY_COLUMNS) <= names:
        return "legacy"
    return None


def is_hub_frame(frame: pd.DataFrame) -> bool:
    """Whether a table is a forecast-hub model-output file (hubverse long format or the legacy COVID-19 hub format).

    Parameters
    ----------
    frame : DataFrame
        A table read from a file.

    Returns
    -------
    bool
        True for a hub file (:func:`hub_kind` is not None).

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.hub_formats import is_hub_frame
    >>> is_hub_frame(pd.DataFrame(columns=["origin_date", "output_type", "output_type_id", "value"]))
    True
    """
    return hub_kind(frame) is not None


@dataclass
class HubConfig:
    """What the reader takes from ``hub-config/tasks.json``.

    Attributes
    ----------
    round_id : str or None
        The task ID that names the round (``round_id_from_variable``), e.g. ``origin_date``.
    time_units : dict of str to str
        Target → its time unit (``day``, ``week``) from ``target_metadata``.
    categories : list of str
        The pmf categories in their stated order (required, then optional).
    """

    round_id: str | None = None
    time_units: dict[str, str] = field(default_factory=dict)
    categories: list[str] = field(default_factory=list)


def read_hub_config(path: Path | None, messages: list[str]) -> HubConfig | None:
    """Read ``hub-config/tasks.json`` as plain JSON (never executed): round ID, time units, pmf category order.

    Parameters
    ----------
    path : Path or None
        The file (None or a missing file: no configuration).
    messages : list of str
        A sentence is appended when the file cannot be read.

    Returns
    -------
    HubConfig or None
        The configuration, or None without a readable file.
    """
    if path is None or not path.is_file():
        return None
    try:
        if path.stat().st_size > 20_000_000:
            raise ValueError("larger than 20 MB")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        messages.append(f"{path.name}: hub-config could not be read ({str(exc)[:120]}); read without it.")
        return None
    config = HubConfig()
    rounds = data.get("rounds") if isinstance(data, dict) else None
    for rnd in rounds if isinstance(rounds, list) else []:
        if not isinstance(rnd, dict):
            continue
        if rnd.get("round_id_from_variable") and isinstance(rnd.get("round_id"), str) and config.round_id is None:
            config.round_id = rnd["round_id"]
        for task in rnd.get("model_tasks") or []:
            if not isinstance(task, dict):
                continue
            for meta in task.get("target_metadata") or []:
                if isinstance(meta, dict) and isinstance(meta.get("time_unit"), str):
                    keys = meta.get("target_keys") or {}
                    target = next(iter(keys.values()), None) if isinstance(keys, dict) and keys else None
                    config.time_units[str(target) if target is not None else ""] = meta["time_unit"]
            pmf = (task.get("output_type") or {}).get("pmf") if isinstance(task.get("output_type"), dict) else None
            ids = pmf.get("output_type_id") if isinstance(pmf, dict) else None
            if isinstance(ids, dict):
                for part in ("required", "optional"):
                    for cat in ids.get(part) or []:
                        if str(cat) not in config.categories:
                            config.categories.append(str(cat))
    return config


@dataclass
class HubFile:
    """One model-output file to read.

    Attributes
    ----------
    obj : object
        A path, bytes, a binary file-like or a DataFrame.
    name : str
        The name in messages (the path inside the hub).
    model : str or None
        The model from the file name or its folder.
    round : str or None
        The round date from the file name.
    """

    obj: Any
    name: str
    model: str | None = None
    round: str | None = None


def _named(obj: Any, name: str, folder_model: str | None = None) -> HubFile:
    m = ROUND_FILE.match(Path(name).name)
    model = m.group(2) if m else folder_model
    return HubFile(obj, name, model, m.group(1) if m else None)


def _model_folder_files(folder: Path, base: Path, skipped: list[str]) -> list[HubFile]:
    out = []
    for p in sorted(folder.iterdir()):
        rel = p.relative_to(base).as_posix()
        if p.name.startswith("."):
            continue
        if p.is_file() and TABLE_FILE.search(p.name):
            out.append(_named(p, rel, folder.name if folder != base else None))
        else:
            skipped.append(rel + ("/" if p.is_dir() else ""))
    return out


def find_hub_files(forecasts: Any) -> tuple[list[HubFile], list[str], Path | None, str]:
    """The model-output files of a hub given as a file, a list of files or a folder.

    A folder is a hub root (``model-output/<model>/<round>-<model>.csv|.parquet``, legacy ``data-processed/``), a
    model-output folder (one sub-folder per model) or one model's folder.  Files that are no tables (README,
    ``.json``, metadata) are skipped and listed.

    Parameters
    ----------
    forecasts : path, bytes, file-like, DataFrame, or a list of them
        What to read.

    Returns
    -------
    files : list of HubFile
        The tables to read, in reading order (folders sorted by name).
    skipped : list of str
        Files and folders left out.
    root : Path or None
        The hub root (with ``hub-config/``, ``target-data/``) when known.
    source : str
        A name for the whole (the hub folder, or the file's name).
    """
    items = list(forecasts) if isinstance(forecasts, (list, tuple)) else [forecasts]
    files: list[HubFile] = []
    skipped: list[str] = []
    root: Path | None = None
    names: list[str] = []
    for item in items:
        if isinstance(item, pd.DataFrame):
            name = str(item.attrs.get("source") or f"table {len(files) + 1}")
            files.append(_named(item, name, None if item.attrs.get("source") else "model"))
            names.append(name)
            continue
        if isinstance(item, (str, Path)) and Path(item).is_dir():
            d = Path(item)
            names.append(d.name)
            if (d / "model-output").is_dir() or (d / "data-processed").is_dir():
                root, base = d, d / ("model-output" if (d / "model-output").is_dir() else "data-processed")
            elif d.name in ("model-output", "data-processed"):
                root, base = d.parent, d
            elif any(p.is_dir() and not p.name.startswith(".") for p in d.iterdir()):
                base = d
            else:
                if d.parent.name in ("model-output", "data-processed"):
                    root = d.parent.parent
                files += _model_folder_files(d, d, skipped)
                for f in files:
                    f.model = f.model or d.name
                continue
            files += _model_folder_files(base, base, skipped)
            for sub in sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")):
                skipped[:] = [s for s in skipped if s != sub.name + "/"]
                found = _model_folder_files(sub, base, skipped)
                files += found
            continue
        name = source_name(item)
        names.append(name)
        files.append(_named(item, name))
    source = names[0] if len(names) == 1 else f"{len(files)} files"
    return files, skipped, root, source


@dataclass
class HubRead:
    """The model-output rows of a hub in one long table, with what the reader learnt.

    Attributes
    ----------
    long : DataFrame
        ``model_id``, the task-ID columns (text; ``horizon`` int64; dates datetime64[ns]), ``output_type``,
        ``output_type_id`` (text), ``value`` (float), ``file`` (index into ``files``) and ``row`` (1-based data row
        in its file).
    files : list of str
        File names by index.
    id_columns : list of str
        The task-ID columns.
    round_column : str or None
        The round's date column.
    kind : str
        ``"hubverse"`` or ``"legacy"``.
    time_units : dict of str to str
        Target → time unit (``""`` for all targets).
    messages : list of str
        What the reader says (skipped and unreadable files, formats).
    """

    long: pd.DataFrame
    files: list[str]
    id_columns: list[str]
    round_column: str | None
    kind: str
    time_units: dict[str, str]
    messages: list[str]


def legacy_to_hubverse(frame: pd.DataFrame, src: str) -> tuple[pd.DataFrame, dict[str, str]]:
    """A legacy COVID-19 / FluSight Forecast Hub table in the hubverse long shape.

    ``target`` ``"<h> wk ahead <rest>"`` → ``horizon`` h, time unit week (``day`` for ``"<h> day ahead …"``) and
    ``target`` ``<rest>`` (e.g. ``inc death``); ``type`` ``quantile`` → output type ``quantile`` with the level of
    ``quantile`` as ``output_type_id``; ``type`` ``point`` → output type ``median`` (``output_type_id`` ``NA``).

    Parameters
    ----------
    frame : DataFrame
        The table (columns ``forecast_date, target, target_end_date, location, type, quantile, value``; text).
    src : str
        The file name for messages.

    Returns
    -------
    frame : DataFrame
        The rows in the hubverse shape (other columns kept as task IDs).
    time_units : dict of str to str
        Target (rewritten) → time unit.

    Raises
    ------
    InputError
        No target names a horizon (``N wk ahead …``), or a ``type`` other than point and quantile.

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.hub_formats import legacy_to_hubverse
    >>> old = pd.DataFrame({"forecast_date": ["2020-05-04"] * 2, "target": ["1 wk ahead inc death"] * 2,
    ...                     "target_end_date": ["2020-05-09"] * 2, "location": ["01"] * 2,
    ...                     "type": ["point", "quantile"], "quantile": ["NA", "0.5"], "value": [10.0, 10.0]})
    >>> new, units = legacy_to_hubverse(old, "x.csv")
    >>> new[["target", "horizon", "output_type", "output_type_id"]].values.tolist(), units
    ([['inc death', 1, 'median', 'NA'], ['inc death', 1, 'quantile', '0.5']], {'inc death': 'week'})
    """
    codes, targets = pd.factorize(frame["target"].astype(str))
    parts = pd.Series(targets).str.extract(LEGACY_TARGET)
    bad_t = parts[0].isna().to_numpy()
    if bad_t.all():
        raise InputError(
            f"column 'target': no target names a horizon (e.g. {name_list(list(targets[:3]))}; expected "
            "'<N> wk ahead …' or '<N> day ahead …')", source=src, columns=["target"],
            hint="give hubverse columns (horizon, target, output_type, output_type_id, value) or legacy targets "
                 "such as '1 wk ahead inc death'")
    kind = frame["type"].astype(str).str.strip().str.lower().to_numpy()
    unknown = ~np.isin(kind, ["point", "quantile"])
    if unknown.any():
        rows = (np.flatnonzero(unknown) + 1).tolist()
        raise InputError(
            f"column 'type': values other than point and quantile ({name_list(sorted(set(kind[unknown])), 5)}) in "
            f"rows {name_list(rows, 10)}", source=src, columns=["type"], rows=rows[:20],
            hint="keep the rows of type point or quantile")
    keep = ~bad_t[codes]
    horizon = pd.to_numeric(parts[0], errors="coerce").to_numpy()
    unit = parts[1].str.lower().map(lambda u: "week" if u in ("wk", "week") else ("day" if u in ("d", "day")
                                                                                      else "month"))
    rest = parts[2].fillna("").to_numpy(dtype=object)
    out = frame.drop(columns=["type", "quantile"]).copy()
    out["target"] = rest[codes]
    out["horizon"] = horizon[codes]
    out["output_type"] = np.where(kind == "point", "median", "quantile")
    out["output_type_id"] = np.where(kind == "point", "NA", frame["quantile"].astype(str).to_numpy())
    out = out.loc[keep]
    units = {str(t): str(u) for t, u, b in zip(rest, unit, bad_t) if not b}
    out.attrs["dropped_targets"] = sorted(set(targets[bad_t]))
    return out, units


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Categorical text columns back to object columns (missing → None), as the legacy rewrite reads them."""
    out = frame.copy()
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype):
            codes = out[c].cat.codes.to_numpy()
            values = np.append(np.asarray(out[c].cat.categories, dtype=object), None)
            out[c] = pd.Series(values[codes], index=out.index, dtype=object)
    return out


def _numeric_value(frame: pd.DataFrame, src: str) -> np.ndarray:
    """The ``value`` column as floats; text cells raise, naming the rows and cells."""
    col = frame["value"]
    if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        return col.to_numpy(dtype=float)
    conv = pd.to_numeric(col, errors="coerce")
    text = col.astype(str).str.strip()
    bad = (conv.isna() & col.notna() & ~text.isin(["", "NA", "NaN", "nan", "N/A", "null", "NULL", "None"])).to_numpy()
    if bad.any():
        idx = np.flatnonzero(bad)
        cells = name_list([repr(v) for v in pd.unique(text.to_numpy()[idx])], 5)
        raise InputError(
            f"column 'value' holds text in {idx.size} row(s) (rows {name_list((idx + 1).tolist(), 10)}: {cells}); "
            "a forecast value must be a number.",
            source=src, columns=["value"], rows=(idx[:20] + 1).tolist(),
            hint="correct those cells in the model-output file (a number, or NA for a missing value)")
    return conv.to_numpy(dtype=float)


def _read_one(f: HubFile, max_bytes: int | None, limit_hint: str | None) -> pd.DataFrame:
    if isinstance(f.obj, pd.DataFrame):
        frame = f.obj.copy()
    else:
        frame = read_table(f.obj, source=f.name, max_bytes=max_bytes, limit_hint=limit_hint,
                           text_except=NUMERIC_COLUMNS, text_categories=True)
    frame.columns = [str(c).strip() for c in frame.columns]
    frame.attrs = {}  # not used here; pandas would copy them into every column taken
    return frame


def _check_total_size(files: list[HubFile], limit: int, limit_hint: str | None, source: str) -> None:
    total = 0
    for f in files:
        if isinstance(f.obj, (str, Path)):
            total += Path(f.obj).stat().st_size
        elif isinstance(f.obj, (bytes, bytearray)):
            total += len(f.obj)
    if total > limit:
        raise InputError(f"the {len(files)} model-output files total {size_text(total)}, more than the size limit of "
                         f"{size_text(limit)}", source=source,
                         hint=f"read fewer models or rounds, or raise the limit: {limit_hint or DEFAULT_LIMIT_HINT}")


def read_hub_files(
    files: list[HubFile], source: str, *, config: HubConfig | None = None, max_bytes: int | None = None,
    limit_hint: str | None = None,
) -> HubRead:
    """Read model-output files into one long table (task IDs as text, dates as dates, ``horizon`` as integer).

    Every file is read by :func:`~calib_core.data.bytes.read_table` (its size limits checked before decoding; the
    files' total is bounded by the same limit).  Files that are no hub tables are skipped and named in the messages;
    files that cannot be read are named with the reason (all of them failing raises).

    Parameters
    ----------
    files : list of HubFile
        The files (:func:`find_hub_files`).
    source : str
        The hub's name for messages.
    config : HubConfig, optional
        ``hub-config/tasks.json``: the round's task ID and time units.
    max_bytes, limit_hint : int and str, optional
        The size limit (default ``DEFAULT_MAX_BYTES``) and how to raise it.

    Returns
    -------
    HubRead
        The long table and what was learnt.

    Raises
    ------
    InputError
        No readable hub file, text in ``value``, a horizon that is no integer or a date that is no date.
    """
    limit = DEFAULT_MAX_BYTES if max_bytes is None else int(max_bytes)
    _check_total_size(files, limit, limit_hint, source)
    messages: list[str] = []
    columns: dict[str, list[TextColumn | None]] = {}
    values, lengths, names, unreadable, not_hub = [], [], [], [], []
    order: dict[str, None] = {}
    kinds: set[str] = set()
    time_units: dict[str, str] = dict(config.time_units) if config else {}
    for f in files:
        try:
            frame = _read_one(f, max_bytes, limit_hint)
        except InputError as err:
            if len(files) == 1:
                raise
            unreadable.append(f"{f.name} ({err.message[:120]})")
            continue
        kind = hub_kind(frame)
        if kind is None:
            if len(files) == 1:
                raise InputError(
                    f"is not a forecast-hub file: no output_type / output_type_id / value columns (columns are: "
                    f"{name_list(frame.columns, 12)})", source=f.name, columns=[str(c) for c in frame.columns[:20]],
                    hint="give hubverse model-output files (task IDs, output_type, output_type_id, value) or legacy "
                         "COVID-19 hub files (forecast_date, target, target_end_date, location, type, quantile, value)")
            not_hub.append(f.name)
            continue
        frame.columns = [c.lower() if c.lower() in HUB_COLUMNS + LEGACY_COLUMNS else c for c in frame.columns]
        if kind == "legacy":
            frame, units = legacy_to_hubverse(_plain(frame), f.name)
            time_units.update(units)
            if frame.attrs.get("dropped_targets"):
                messages.append(f"{f.name}: rows of targets without a horizon were not read "
                                f"({name_list(frame.attrs['dropped_targets'], 5)}).")
        kinds.add(kind)
        values.append(_numeric_value(frame, f.name))
        n = len(frame)
        if "model_id" not in frame.columns:  # one code for the whole file
            columns.setdefault("model_id", [None] * len(names)).append(constant_text(f.model or Path(f.name).stem, n))
        for c, column in frame.items():
            if c != "value":
                columns.setdefault(c, [None] * len(names)).append(text_codes_of(column))
        own = [] if "model_id" in frame.columns else ["model_id"]
        for c in own + [c for c in frame.columns if c != "value"] + ["value", "file", "row"]:
            order.setdefault(c, None)  # the columns in order of first appearance (value after a file's task IDs)
        names.append(f.name)
        lengths.append(n)
        for parts in columns.values():  # a column this file lacks: NA here
            parts.extend([None] * (len(names) - len(parts)))
    if not_hub:
        messages.append(f"{len(not_hub)} table(s) are no hub files (no output_type / value columns), not read: "
                        f"{name_list(not_hub, 8)}.")
    if unreadable:
        messages.append(f"{len(unreadable)} file(s) could not be read, left out: {name_list(unreadable, 5)}.")
    if not names:
        raise InputError(f"no readable forecast-hub file among {len(files)} file(s)"
                         + (f" ({name_list(unreadable + not_hub, 5)})" if unreadable or not_hub else ""),
                         source=source, hint="give model-output files (CSV or Parquet) with output_type, "
                                             "output_type_id and value columns")
    long = _concat(columns, values, np.asarray(lengths, dtype=np.int64), list(order))
    id_cols = [c for c in long.columns if c not in ("model_id", "output_type", "output_type_id", "value", "file",
                                                    "row")]
    round_col = _round_column(long, config)
    if round_col is None and all(f.round for f in files):
        rounds, of_file = np.unique(np.array([f.round for f in files if f.name in names], dtype=object),
                                    return_inverse=True)
        long.insert(1, "reference_date", pd.Categorical.from_codes(of_file[long["file"].to_numpy()], rounds))
        id_cols.insert(0, "reference_date")
        round_col = "reference_date"
        messages.append("no round column (reference_date / origin_date / forecast_date): the round is the date in "
                        "each file name.")
    for c in id_cols:
        if c in DATE_COLUMNS or c == round_col:
            long[c] = _dates(long, c, names)
    if "horizon" in long.columns:
        long["horizon"] = _integers(long, "horizon", names)
    return HubRead(long, names, id_cols, round_col, "legacy" if kinds == {"legacy"} else "hubverse", time_units,
                   messages)


def _concat(columns: dict[str, list[TextColumn | None]], values: list[np.ndarray], lengths: np.ndarray,
            order: list[str]) -> pd.DataFrame:
    """The files' columns → one long table: task IDs as text categories (codes mapped onto the union of the files'
    texts; a column a file lacks is ``NA`` there), ``value``, ``file`` (index) and ``row`` (1-based in its file)."""
    file = np.repeat(np.arange(lengths.size, dtype=np.int32), lengths)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    fixed = {"value": np.concatenate(values), "file": file,
             "row": np.arange(1, int(lengths.sum()) + 1, dtype=np.int64) - starts[file]}
    return pd.DataFrame({c: fixed[c] if c in fixed else concat_text(columns[c], lengths) for c in order})


def _round_column(long: pd.DataFrame, config: HubConfig | None) -> str | None:
    if config and config.round_id and config.round_id in long.columns:
        return config.round_id
    return next((c for c in ROUND_COLUMNS if c in long.columns), None)


def _where(long: pd.DataFrame, bad: np.ndarray, names: list[str]) -> tuple[str, list[int]]:
    idx = np.flatnonzero(bad)
    files = long["file"].to_numpy()[idx]
    rows = long["row"].to_numpy()[idx]
    first = files[0]
    in_first = rows[files == first]
    return names[first], in_first[:20].tolist()


def _dates(long: pd.DataFrame, c: str, names: list[str]) -> pd.Series:
    codes, uniques = text_codes(long[c])
    parsed = pd.to_datetime(pd.Series(uniques, dtype=object), errors="coerce", format="ISO8601")
    bad_u = parsed.isna().to_numpy() & ~pd.Series(uniques).isin(["NA", ""]).to_numpy()
    if bad_u.any():
        bad = bad_u[codes]
        src, rows = _where(long, bad, names)
        raise InputError(f"column {c!r}: {int(bad.sum())} cell(s) are no date (e.g. "
                         f"{name_list([repr(u) for u in uniques[bad_u][:3]])}; rows {name_list(rows, 10)})",
                         source=src, columns=[c], rows=rows, hint="write dates as YYYY-MM-DD")
    far = outside_ns(parsed.to_numpy())  # a nanosecond cast would move them (1500 → 2085): refused, with the rows
    if far.any():
        src, rows = _where(long, far[codes], names)
        raise far_dates_error(c, uniques[far], int(far[codes].sum()), src, rows)
    values = parsed.to_numpy(dtype="datetime64[ns]")[codes]
    return pd.Series(values, index=long.index, name=c)


def _integers(long: pd.DataFrame, c: str, names: list[str]) -> pd.Series:
    codes, uniques = text_codes(long[c])
    conv = pd.to_numeric(pd.Series(uniques, dtype=object), errors="coerce").to_numpy(dtype=float)
    bad_u = ~np.isfinite(conv) | (conv != np.round(conv))
    if bad_u.any():
        bad = bad_u[codes]
        src, rows = _where(long, bad, names)
        raise InputError(f"column {c!r}: {int(bad.sum())} cell(s) are no whole number (e.g. "
                         f"{name_list([repr(u) for u in uniques[bad_u][:3]])}; rows {name_list(rows, 10)})",
                         source=src, columns=[c], rows=rows, hint=f"write {c} as a whole number (steps ahead)")
    return pd.Series(conv.astype(np.int64)[codes], index=long.index, name=c)
