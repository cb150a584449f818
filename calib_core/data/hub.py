"""Forecast hubs: hubverse (or legacy COVID-19 / FluSight) model output plus its truth → one ``PredictionSet``.

:func:`read_hub` reads a file, a list of files or a hub folder (:mod:`calib_core.data.hub_formats`), joins the
truth (:mod:`calib_core.data.hub_truth`) and pivots the long rows to one row per (model × forecast unit)
(:mod:`calib_core.data.hub_pivot`): quantile (+ median) → layout ``quantile``, sample → ``sample``, mean or median
only → ``point``, pmf → ordinal classification, cdf → ordinal classification over the K + 1 intervals the
thresholds cut.  Regression sets go through :func:`~calib_core.data.regression.parse_regression_frame`, so its
validation, crossing rule (Chernozhukov, Fernández-Val & Galichon 2010) and drops apply.  The set's ``units`` hold
the task IDs of every row; forecast units without truth are counted in ``dropped``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import DropReport, InputError, PredictionSet
from .columns import name_list
from .hub_formats import (
    TABLE_FILE,
    UNIT_DAYS,
    HubRead,
    find_hub_files,
    hub_kind,
    is_hub_frame,
    read_hub_config,
    read_hub_files,
)
from .hub_pivot import Block, category_block, quantile_block, sample_block, text_codes, type_mask, unit_codes
from .hub_truth import Truth, join_truth, read_truth
from .regression import parse_regression_frame
from .regression_layout import LoaderNotice, crossing_notice

__all__ = ["OUTPUT_TYPES", "TRUTH_MISSING", "is_hub_frame", "read_hub", "truth_missing_error"]

OUTPUT_TYPES = ("quantile", "sample", "pmf", "cdf", "median", "mean")
"""Output types in the order the reader prefers them when a file has several and none is asked for."""

TRUTH_MISSING = ("this is a forecast-hub file (output_type / value columns): give its truth (target data) file too "
                 "— `truth=` / CLI --truth / Data page truth file")
"""The message for a hub file given without its truth."""


def truth_missing_error(frame: pd.DataFrame, source: str) -> InputError:
    """The error for a forecast-hub file loaded without its truth (target data).

    Parameters
    ----------
    frame : DataFrame
        The table read (its columns are named).
    source : str
        The file name.

    Returns
    -------
    InputError
        The error to raise.
    """
    kind = hub_kind(frame) or "hubverse"
    what = "legacy COVID-19 hub file (type / quantile / value columns)" if kind == "legacy" else None
    text = TRUTH_MISSING if what is None else TRUTH_MISSING.replace(
        "forecast-hub file (output_type / value columns)", f"forecast-hub file, {what}")
    return InputError(
        text + f"; columns are: {name_list(frame.columns, 10)}.", source=source,
        columns=[str(c) for c in frame.columns[:20]],
        hint="pass truth=<target-data file> (e.g. target-data/<target>.csv: observation or value, a date column and "
             "location), or on the command line --truth <file>",
        app_hint="add the truth file (target data) under Data → forecast hub truth file and load again")


def _auto_truth(root: Path | None, messages: list[str]) -> Path | None:
    if root is None:
        return None
    for sub in ("target-data", "oracle-output"):
        folder = root / sub
        if folder.is_dir():
            tables = sorted(p for p in folder.rglob("*") if p.is_file() and TABLE_FILE.search(p.name))
            for kind in ("time-series", "oracle-output"):  # the hubverse names when target-data holds both
                named = [p for p in tables if p.name.lower().startswith(kind)]
                if len(tables) > 1 and len(named) == 1:
                    tables = named
            if len(tables) == 1:
                messages.append(f"truth: {sub}/{tables[0].name} of the hub (give truth= to use another file).")
                return tables[0]
    return None


def _choose_type(hub: HubRead, output_type: str | None, src: str, messages: list[str]) -> str:
    codes, uniques = text_codes(hub.long["output_type"])  # in order of first appearance
    counts = dict(zip(uniques.tolist(), np.bincount(codes).tolist()))
    present = list(counts)
    text = ", ".join(f"{t} ({int(counts[t]):,} rows)" for t in present)
    if output_type is not None:
        if output_type not in present:
            raise InputError(f"has no output_type {output_type!r} rows (output types present: {text})", source=src,
                             columns=["output_type"], hint=f"choose one of {name_list(present)}")
        chosen = output_type
    else:
        known = [t for t in OUTPUT_TYPES if t in present]
        if not known:
            raise InputError(f"no output type this reader knows (present: {text}; known: "
                             f"{', '.join(OUTPUT_TYPES)})", source=src, columns=["output_type"],
                             hint="give quantile, sample, pmf, cdf, median or mean rows")
        chosen = known[0]
    used = {chosen, "median"} if chosen == "quantile" else {chosen}
    others = [t for t in present if t not in used]
    if len(present) > 1:
        messages.append(f"output types present: {text}; read: {chosen}" + (" (+ median)" if "median" in used and
                        "median" in present else "") + (f"; not read: {', '.join(others)} (choose with output_type="
                                                        f"…)" if others else "") + ".")
    return chosen


def _unit_frame(hub: HubRead, long: pd.DataFrame, first: np.ndarray, messages: list[str]) -> pd.DataFrame:
    units = long.iloc[first][hub.id_columns].reset_index(drop=True)
    for c in units.columns:  # task IDs as plain text (the long table keeps them as categories)
        if isinstance(units[c].dtype, pd.CategoricalDtype):
            units[c] = units[c].astype(str)
    rc = hub.round_column
    if rc is not None and rc != "reference_date" and "reference_date" not in units.columns:
        units.insert(0, "reference_date", units[rc].to_numpy())
    if "target_end_date" not in units.columns and "reference_date" in units.columns and "horizon" in units.columns:
        targets = units["target"].to_numpy() if "target" in units.columns else np.full(len(units), "")
        unit_of = {t: hub.time_units.get(t, hub.time_units.get("", "day")) for t in pd.unique(targets)}
        days = np.array([UNIT_DAYS.get(str(unit_of[t]).lower(), np.nan) for t in targets], dtype=float)
        if np.isnan(days).any():
            messages.append("target_end_date not computed for targets in months (no fixed number of days).")
        step = pd.to_timedelta(np.where(np.isnan(days), np.nan, units["horizon"].to_numpy() * days), unit="D")
        units["target_end_date"] = units["reference_date"].to_numpy() + step.to_numpy()
        named = sorted(set(unit_of.values()))
        messages.append(f"target_end_date = {rc or 'reference_date'} + horizon × {'/'.join(named)} "
                        "(hub-config/tasks.json time unit, else days).")
    for c in units.columns:
        if pd.api.types.is_datetime64_any_dtype(units[c]):
            units[c] = units[c].astype("datetime64[ns]")
    return units


def _coverage_note(model: np.ndarray, units: pd.DataFrame, rc: str | None) -> str:
    per_model = pd.Series(model).value_counts(sort=False)
    text = ", ".join(f"{m} {int(c):,}" for m, c in per_model.items())
    note = f"forecast units per model: {text}."
    if rc is not None and rc in units.columns:
        table = pd.crosstab(pd.Series(model, name="model"), units[rc].to_numpy())
        missing = [(m, str(pd.Timestamp(r).date()) if isinstance(r, (pd.Timestamp, np.datetime64)) else str(r))
                   for m in table.index for r in table.columns if table.loc[m, r] == 0]
        n_rounds = table.shape[1]
        if missing or table.to_numpy().min() != table.to_numpy().max():
            rounds = [str(pd.Timestamp(r).date()) if isinstance(r, (pd.Timestamp, np.datetime64)) else str(r)
                      for r in table.columns]
            rows = [f"{m}: " + ", ".join(f"{r} {int(c):,}" for r, c in zip(rounds, table.loc[m]) if c)
                    for m in table.index[:10]]
            note += " Units per model and round: " + "; ".join(rows) + ("; …" if len(table) > 10 else "") + "."
        if missing:
            note += (f" {n_rounds} rounds; missing: " + "; ".join(f"{m} has no forecasts for round {r}"
                                                                  for m, r in missing[:8])
                     + (f" … ({len(missing)} model-rounds)" if len(missing) > 8 else "") + ".")
        else:
            note += f" {n_rounds} round(s), every model in every round."
    return note


def _slice_frame(units: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame(index=units.index)
    for c in units.columns:
        values = units[c]
        if c == "horizon":
            out[c] = values.astype(np.int64)
        elif pd.api.types.is_datetime64_any_dtype(values):
            out[c] = values.dt.strftime("%Y-%m-%d").to_numpy(dtype=object)
        else:
            out[c] = values.astype(str).to_numpy(dtype=object)
    return out


def _regression(block: Block, otype: str, y: np.ndarray, model: np.ndarray, time: np.ndarray, src: str,
                crossing: str, min_rows: int) -> PredictionSet:
    cols: dict[str, Any] = {"y": "y", "model": "model", "time": "target_end_date", "group": None, "split": None}
    data: dict[str, Any] = {"y": y}
    if otype == "quantile":
        names = [f"q{lv:g}" for lv in block.ids]
        cols["quantiles"] = {f"{lv:g}": n for lv, n in zip(block.ids, names)}
        layout = "quantile"
    elif otype == "sample":
        names = [f"sample_{i}" for i in block.ids]
        cols["samples"] = names
        layout = "sample"
    else:
        names = [otype]
        cols["mean"] = otype
        layout = "point"
    data.update({n: block.values[:, j] for j, n in enumerate(names)})
    data["model"] = model
    if np.isnat(time).all():
        cols["time"] = None
    else:
        data["target_end_date"] = time
    wide = pd.DataFrame(data)
    wide.attrs["source"] = src
    if len(wide) < min_rows:  # said in the hub's words (the parser would count a file's data rows)
        raise InputError(f"{len(wide)} forecast unit(s) with truth; a diagnosis needs at least {min_rows}", source=src,
                         hint="give the model output of more forecast units (more locations, horizons or rounds), "
                         "or a truth file that covers them")
    return parse_regression_frame(wide, src, cols, crossing=crossing, layout=layout, min_rows=min_rows)


def _classification(block: Block, otype: str, observed: pd.Series, model: np.ndarray, time: np.ndarray, src: str,
                    truth_name: str, min_rows: int) -> PredictionSet:
    n = len(observed)
    report = DropReport()
    messages: list[str] = []
    if otype == "pmf":
        classes = [str(c) for c in block.ids]
        probs = block.values
        pos = {c: i for i, c in enumerate(classes)}
        labels = np.array([pos.get(str(v), -1) if v is not None else -1 for v in observed.to_numpy()])
        unknown = labels < 0
        report.add(f"observed category not among the pmf categories ({truth_name})", np.flatnonzero(unknown) + 1)
    else:
        thr = np.asarray(block.ids, dtype=float)
        cdf = block.values
        classes = [f"≤ {thr[0]:g}"] + [f"({a:g}, {b:g}]" for a, b in zip(thr[:-1], thr[1:])] + [f"> {thr[-1]:g}"]
        probs = np.diff(np.concatenate([np.zeros((n, 1)), cdf, np.ones((n, 1))], axis=1), axis=1)
        y = pd.to_numeric(observed, errors="coerce").to_numpy(dtype=float)
        if observed.attrs.get("interval_index"):
            labels = np.where(np.isfinite(y), y, -1).astype(np.int64)
        else:
            labels = np.where(np.isfinite(y), np.searchsorted(thr, y, side="left"), -1).astype(np.int64)
        report.add(f"no numeric truth ({truth_name})", np.flatnonzero(labels < 0) + 1)
        decreasing = (np.diff(cdf, axis=1) < -1e-9).any(axis=1)
        report.add("cdf decreases with the threshold", np.flatnonzero(decreasing) + 1)
    missing = ~np.isfinite(probs).all(axis=1)
    report.add(f"{otype}: a category / threshold not stated", np.flatnonzero(missing) + 1)
    p = np.where(np.isfinite(probs), probs, 0.0)
    bad = ((p < -1e-9) | (p > 1 + 1e-9)).any(axis=1) | (np.abs(p.sum(axis=1) - 1) > 1e-3)
    report.add(f"{otype}: probabilities outside [0, 1] or not summing to 1", np.flatnonzero(bad & ~missing) + 1)
    keep = np.ones(n, dtype=bool)
    for rows in report.reasons.values():
        keep[rows - 1] = False
    if keep.sum() < max(min_rows, 1):
        reasons = "; ".join(f"{r}: {v.size}" for r, v in report.reasons.items())
        raise InputError(f"fewer than {max(min_rows, 1)} forecast units left to read ({reasons})", source=src,
                         hint="check the truth file and the pmf / cdf rows")
    p = np.clip(p[keep], 0.0, None)
    p = p / p.sum(axis=1, keepdims=True)
    messages.append(f"{otype}: {len(classes)} ordered classes ({name_list(classes, 8)}); {int(keep.sum()):,} of {n:,} "
                    "units kept.")
    return PredictionSet(task="classification", source=src, layout="probs", labels=labels[keep], probs=p,
                         classes=classes, model=model[keep], time=time[keep], ordinal=True,
                         row_number=np.arange(1, n + 1, dtype=np.int64)[keep], n_read=n, dropped=report,
                         messages=messages)


def _truth_note(truth: Truth, keys: list[str], observed: pd.Series, units: pd.DataFrame, model: np.ndarray) -> str:
    matched = observed.notna().to_numpy()
    on = ", ".join(k if k != "target_end_date" else "target_end_date" for k in keys)
    named = f"; target {truth.target_from_name!r} from its name" if truth.target_from_name else ""
    note = (f"truth: {truth.name} ({truth.kind}, {len(truth.frame):,} rows{named}), joined on {on}: "
            f"{int(matched.sum()):,} of {matched.size:,} forecast units matched.")
    if not matched.all():
        idx = np.flatnonzero(~matched)[:3]
        examples = "; ".join(", ".join([f"model {model[i]}"] + [f"{k} {_cell(units[k].iloc[i])}" for k in keys])
                             for i in idx)
        note += f" {int((~matched).sum()):,} unit(s) have no truth in {truth.name} and are dropped, e.g. {examples}."
    return note


def _cell(v: Any) -> str:
    return str(pd.Timestamp(v).date()) if isinstance(v, (pd.Timestamp, np.datetime64)) else str(v)


def read_hub(
    forecasts: Any,
    truth: Any = None,
    *,
    output_type: str | None = None,
    source: str | None = None,
    max_bytes: int | None = None,
    limit_hint: str | None = None,
    crossing: str = "rearrange",
    min_rows: int = 2,
) -> PredictionSet:
    """Read forecast-hub model output and its truth into one row per (model × forecast unit).

    Hubverse long format (task IDs, ``output_type``, ``output_type_id``, ``value``) or the legacy COVID-19 /
    FluSight format; a file, a list of files, or a folder (hub root, its ``model-output`` folder or one model's
    folder).  ``quantile`` (+ ``median`` as level 0.5) → a ``QuantileSet`` at the levels every unit states;
    ``sample`` → a ``SampleSet``; ``mean`` / ``median`` only → point forecasts; ``pmf`` → ordinal classification
    (classes in the hub-config order, else first appearance); ``cdf`` with thresholds t₁ < … < t_K → ordinal
    classes ``≤ t₁``, ``(t₁, t₂]``, …, ``> t_K`` with p_k = F(t_k) − F(t_{k−1}) (F(t₀) = 0, F(t_{K+1}) = 1).
    ``target_end_date`` = round date + horizon × time unit when the files have none.

    Parameters
    ----------
    forecasts : path, bytes, file-like, DataFrame, or a list of them
        The model-output files or a hub folder.
    truth : path, bytes, file-like or DataFrame, optional
        The truth (target data: time series, oracle output or legacy truth).  None: a hub root's only
        ``target-data`` file, else an ``InputError`` asks for it.
    output_type : str, optional
        The output type to read (default: quantile, else the first present of sample, pmf, cdf, median, mean).
    source : str, optional
        The name in messages (default: the hub folder or the file).
    max_bytes, limit_hint : int and str, optional
        The size limit of each file and of all together (default 1 GiB), and how to raise it.
    crossing : {"rearrange", "drop"}, default "rearrange"
        Quantiles decreasing with the level: sorted per unit (Chernozhukov, Fernández-Val & Galichon 2010) or
        dropped.
    min_rows : int, default 2
        The fewest units accepted.

    Returns
    -------
    PredictionSet
        One row per (model × forecast unit) with truth: ``y`` (or ``labels``), ``model``, ``time``
        (target_end_date), ``units`` (task IDs), ``slice_columns``; units without truth in ``dropped``.

    Raises
    ------
    InputError
        No truth, unreadable files, text in ``value``, repeated rows, clashing or unmatched truth.

    References
    ----------
    .. [1] V. Chernozhukov, I. Fernández-Val and A. Galichon, "Quantile and probability curves without crossing",
       Econometrica 78(3), 1093–1125, 2010.

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.hub import read_hub
    >>> rows = [("2022-12-05", h, "01", "quantile", str(lv), 10.0 * h + 20 * (lv - 0.5))
    ...         for h in (1, 2) for lv in (0.1, 0.5, 0.9)]
    >>> fc = pd.DataFrame(rows, columns=["reference_date", "horizon", "location", "output_type",
    ...                                  "output_type_id", "value"]).assign(model_id="m")
    >>> truth = pd.DataFrame({"date": ["2022-12-06", "2022-12-07"], "location": ["01", "01"],
    ...                       "observation": [11.0, 18.0]})
    >>> ps = read_hub(fc, truth)
    >>> ps.layout, ps.y.tolist(), ps.dist.levels.tolist(), ps.units["location"].tolist()
    ('quantile', [11.0, 18.0], [0.1, 0.5, 0.9], ['01', '01'])
    """
    files, skipped, root, src = find_hub_files(forecasts)
    src = source or src
    if not files:
        raise InputError("holds no model-output files (CSV or Parquet)", source=src,
                         hint="give the hub folder (with model-output/<model>/<round>-<model>.csv) or the files")
    messages: list[str] = []
    if skipped:
        messages.append(f"{len(skipped)} file(s) in the hub folder are no model-output tables, not read: "
                        f"{name_list(skipped, 8)}.")
    config = read_hub_config(root / "hub-config" / "tasks.json" if root else None, messages)
    hub = read_hub_files(files, src, config=config, max_bytes=max_bytes, limit_hint=limit_hint)
    messages += hub.messages
    if truth is None:
        truth = _auto_truth(root, messages)
        if truth is None:
            first = hub.long.drop(columns=["file", "row"]).head(0)
            raise truth_missing_error(first, src)
    truth_table = read_truth(truth, max_bytes=max_bytes, limit_hint=limit_hint)
    otype = _choose_type(hub, output_type, src, messages)
    mask = type_mask(hub.long, ["quantile", "median"] if otype == "quantile" else [otype])
    long = hub.long.loc[mask].reset_index(drop=True)
    keys = ["model_id"] + hub.id_columns
    codes, first = unit_codes(long, keys)
    units = _unit_frame(hub, long, first, messages)
    model = long["model_id"].iloc[first].astype(str).to_numpy(dtype=object)
    group_by = ["model_id"] + ([hub.round_column] if hub.round_column else [])
    if otype == "quantile":
        block = quantile_block(long, codes, first, hub.files, group_by=group_by)
    elif otype == "sample":
        block = sample_block(long, codes, first, hub.files)
    elif otype in ("pmf", "cdf"):
        block = category_block(long, codes, first, hub.files, order=config.categories if config else (),
                               numeric=otype == "cdf")
    else:
        values = np.full((first.size, 1), np.nan)
        values[codes, 0] = long["value"].to_numpy()
        block = Block(values, [otype])
    observed, join_keys = join_truth(units, truth_table, otype)
    time = units["target_end_date"].to_numpy() if "target_end_date" in units.columns else None
    has = observed.notna().to_numpy()
    idx = np.flatnonzero(has)
    sub = Block(block.values[idx], block.ids)
    t_sub = time[idx] if time is not None else np.full(idx.size, np.datetime64("NaT"), dtype="datetime64[ns]")
    if otype in ("pmf", "cdf"):
        obs = observed.iloc[idx].reset_index(drop=True)
        obs.attrs["interval_index"] = observed.attrs.get("interval_index", False)
        pset = _classification(sub, otype, obs, model[idx], t_sub, src, truth_table.name, min_rows)
    else:
        y = pd.to_numeric(observed.iloc[idx], errors="coerce").to_numpy(dtype=float)
        pset = _regression(sub, otype, y, model[idx], t_sub, src, crossing, min_rows)
    # back to unit numbers (1-based, reading order) for rows and drops
    report = DropReport()
    report.add(f"no truth in {truth_table.name}", np.flatnonzero(~has) + 1)
    for reason, rows in pset.dropped.reasons.items():
        report.add(reason, idx[rows - 1] + 1)
    unit_rows = idx[pset.row_number - 1]
    pset.row_number = unit_rows + 1
    pset.units = units.iloc[unit_rows].reset_index(drop=True)
    alias = hub.round_column is not None and hub.round_column != "reference_date"  # reference_date: a copy
    pset.slice_columns = _slice_frame(pset.units.drop(columns=["reference_date"] if alias else []))
    pset.n_read = int(first.size)
    pset.dropped = report
    pset.source = src
    head = (f"forecast hub ({hub.kind}): {len(hub.files)} file(s), {len(set(model))} model(s), {first.size:,} forecast "
            f"units ({otype}); {pset.n_rows:,} kept.")
    notes = [head] + messages + block.messages + [_coverage_note(model, units, hub.round_column),
                                                  _truth_note(truth_table, join_keys, observed, units, model)]
    pset.messages = notes + _renumbered(pset.messages, sub, idx, unit_rows, first.size, report, otype, crossing)
    return pset


def _renumbered(messages: list[str], sub: Block, idx: np.ndarray, unit_rows: np.ndarray, n_units: int,
                report: DropReport, otype: str, crossing: str) -> list[str]:
    """The parser's messages in forecast-unit numbers: its layout line and row counts (numbered in the wide table of
    the units with truth) are replaced by the same sentences in unit numbers."""
    skip = ("quantile layout (", "sample layout (", "point layout (", "columns kept for slices")
    out = [m for m in messages if not str(m).startswith(skip) and not isinstance(m, LoaderNotice)
           and " row(s) dropped: " not in str(m)]
    out += [m for m in messages if isinstance(m, LoaderNotice) and m.kind != "crossing"]
    if otype == "quantile" and sub.values.size:
        crossed = np.zeros(n_units, dtype=bool)
        crossed[idx] = (np.diff(sub.values, axis=1) < 0).any(axis=1)
        keep = np.zeros(n_units, dtype=bool)
        keep[unit_rows] = True
        notice = crossing_notice(crossed, keep, crossing, int(np.isfinite(sub.values).all(axis=1).sum()))
        if notice is not None:
            out.append(notice)
    if report.total:
        details = "; ".join(f"{r}: {v.size:,} (units {name_list(v.tolist(), 5)})" for r, v in report.reasons.items())
        out.append(f"{report.total:,} forecast unit(s) dropped: {details}.")
    return out
