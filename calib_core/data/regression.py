"""Parsing regression tables into a :class:`~calib_core.base.predictions.PredictionSet`.

``cc.load_predictions`` reads the file (``calib_core.data.bytes.read_table``), detects the task and calls
:func:`parse_regression_frame` for regression files.  Column matching and the row bookkeeping are the neutral
ones of :mod:`calib_core.data.columns` and :mod:`calib_core.data.rows`.

Layouts
-------
``gaussian`` (mean + std | var | log_var | log_std | u95), ``quantile`` (≥ 2 quantile columns),
``sample`` (≥ 2 members) and ``point`` (a mean only: ``dist`` is ``None``, ``point`` holds it).  When a
file has several, ``layout=`` chooses; by default the one that keeps the most rows is read, on a tie the
full-distribution layouts win: **sample > quantile > gaussian**, because summary columns such as
``ens_mean``/``ens_std`` are usually derived from the members; a message says which was chosen, why, and how to
choose another (:mod:`calib_core.data.regression_layout`).  ``columns`` overrides everything: mapping a layout role
(``std``, ``var``,
``log_var``, ``log_std``, ``u95``, ``quantiles``, ``samples``) switches auto-detection of the other
layout roles off, and mapping a role to ``None`` disables it (``{"samples": None}`` reads a weather file
as ``ens_mean``/``ens_std``).

Error-only files (columns ``E, uE`` as in Palmer et al. 2022 and Pernot's UncVal sets): the ``error``
role (aliases ``E``, ``error``, ``residual`` …) is used when no target column exists; then
y := E and mean := 0, so ε = E (E = reference − prediction; with the opposite sign convention only the
sign of z changes).  ``u95`` (an expanded 95 % uncertainty U) gives σ = U / Φ⁻¹(0.975) (Gaussian
coverage factor 1.95996; GUM's conventional k = 2 would give σ 2 % smaller).

Validation: non-numeric cells raise (column and first rows named; NA spellings such as
``NA``/``nan``/``null`` in text columns of Parquet/npz files are missing values), and so do True/False (never read
as 1/0); rows that an unbalanced quote merged with the lines after it, rows with a missing or
non-finite value in a used column, σ ≤ 0 or var ≤ 0 are dropped and counted per reason in
``PredictionSet.dropped`` (``n_read == n_rows + dropped.total``); fewer than 2 valid rows raise.  A ``model``
column (long multi-model files) keeps every row.  Quantiles that decrease with the level (crossing) are sorted per
row by default — the rearrangement of Chernozhukov, Fernández-Val & Galichon (2010), which never increases the
quantile loss of Koenker & Bassett (1978) — and counted in a message; ``crossing="drop"`` drops those rows instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import InputError, PredictionSet
from ..base.regression import Gaussian, QuantileSet, SampleSet
from .columns import (
    ALIASES,
    REGRESSION_ROLES,
    comment_note,
    find_column,
    frame_source,
    kept_rows,
    name_list,
    slice_columns,
    unused_columns_note,
)
from .columns_patterns import find_feature_columns, find_quantile_columns, find_sample_columns
from .regression_layout import (
    LayoutColumns,
    check_options,
    choose_layout,
    crossing_notice,
    gaussian_sigma,
    layout_label,
    quantile_values,
)
from .rows import RowFilter, numeric_block, numeric_values, require_valid_rows, take_kept
from .rows_labels import row_labels
from .text import reading_notes
from .timecol import read_time

__all__ = ["LAYOUT_ROLES", "parse_regression_frame"]

LAYOUT_ROLES = ("std", "var", "log_var", "log_std", "u95", "quantiles", "samples")


def _unknown_roles(columns: Mapping[str, Any] | None, src: str) -> None:
    unknown = sorted(set(columns or ()) - REGRESSION_ROLES)
    if unknown:
        raise InputError(
            f"unknown role(s) in the column mapping: {unknown}",
            source=src,
            hint=f"use the roles {sorted(REGRESSION_ROLES)}",
        )


@dataclass
class _Roles:
    """Columns chosen for each regression role, and the layout they give."""

    y: str | None
    error: str | None
    mean: str | None
    samples: list[str]
    levels: np.ndarray
    quantiles: list[str]
    spread: dict[str, str | None]
    layout: str
    options: list[LayoutColumns] = field(default_factory=list)

    @property
    def spread_found(self) -> list[str]:
        return [r for r, c in self.spread.items() if c is not None]


def _find_roles(frame: pd.DataFrame, cols: dict[str, Any], src: str, messages: list[str]) -> _Roles:
    """Assign columns to roles (mapping first, then aliases/patterns) and choose the layout."""
    explicit_layout = any(cols.get(r) is not None for r in LAYOUT_ROLES)
    if explicit_layout:
        for r in LAYOUT_ROLES:
            cols.setdefault(r, None)
    used: list[str] = []

    def claim(role: str) -> str | None:
        name = find_column(frame, role, cols, source=src, exclude=used)
        if name is not None:
            used.append(name)
        return name

    y_col = claim("y")
    err_col = claim("error") if y_col is None or cols.get("error") is not None else None
    if y_col is not None and err_col is not None:
        raise InputError(f"both a target column {y_col!r} and an error column {err_col!r} are mapped", source=src,
                         columns=[y_col, err_col], hint="map either y (with mean) or error, not both")
    mean_col = None if err_col is not None and "mean" not in cols else claim("mean")
    if err_col is not None and mean_col is not None:
        raise InputError(f"an error column {err_col!r} and a mean column {mean_col!r} are both mapped", source=src,
                         columns=[err_col, mean_col], hint="an error column already means y − mean; drop one")
    if mean_col is None and err_col is None and ("mean" not in cols or cols.get("point") is not None):
        mean_col = claim("point")
    if y_col is None and err_col is None:
        raise InputError(
            "no target column found (looked for "
            f"{', '.join(ALIASES['y'][:8])}, … or an error column E/error/residual); columns are: "
            f"{name_list(frame.columns)}.{comment_note(frame)}",
            source=src,
            columns=[str(c) for c in frame.columns[:20]],
            hint="rename the target column to y_true (or pass columns={'y': '<name>', 'mean': '<name>', ...}); "
            "for a classification file pass task='classification'",
            app_hint="choose the target y and the mean under Column mapping and load the file again; for a "
            "classification file choose Task: classification there",
        )

    samples = [c for c in find_sample_columns(frame, cols, source=src) if c not in used]
    levels, q_cols = find_quantile_columns(frame, cols, source=src)
    keep_q = np.array([c not in used for c in q_cols], dtype=bool)
    levels, q_cols = levels[keep_q] if q_cols else levels, [c for c, k in zip(q_cols, keep_q) if k]
    spread = {r: find_column(frame, r, cols, source=src, exclude=used + samples + q_cols)
              for r in ("std", "var", "log_var", "log_std", "u95")}

    if explicit_layout:
        mapped = [r for r in ("samples", "quantiles", *spread) if cols.get(r) is not None]
        if len(mapped) > 1:
            raise InputError(f"the column mapping gives several uncertainty layouts: {mapped}", source=src,
                             hint="map exactly one of std, var, log_var, log_std, u95, quantiles, samples")
        for role, found in (("samples", samples), ("quantiles", q_cols)):
            if cols.get(role) is not None and len(found) < 2:
                raise InputError(f"the mapping lists fewer than 2 {role} columns", source=src, columns=found,
                                 hint=f"{role} need at least 2 columns",
                                 app_hint=f"choose at least 2 {role} columns under Column mapping")
    roles = _Roles(y_col, err_col, mean_col, samples, levels, q_cols, spread, "point")
    if len(samples) >= 2:
        roles.options.append(LayoutColumns("sample", "samples", tuple(samples), layout_label("sample", samples)))
    if len(q_cols) >= 2:
        roles.options.append(LayoutColumns("quantile", "quantiles", tuple(q_cols), layout_label("quantile", q_cols)))
    if roles.spread_found and (mean_col is not None or err_col is not None or not roles.options):
        role = roles.spread_found[0]
        col = spread[role]
        assert col is not None
        roles.options.append(LayoutColumns("gaussian", role, (col,), layout_label("gaussian", [col], mean_col)))
    if roles.options:
        roles.layout = roles.options[0].layout  # provisional: choose_layout decides once y and mean are read
    elif len(samples) == 1 or len(q_cols) == 1:
        messages.append(f"column {(samples or q_cols)[0]!r} looks like a single sample/quantile; at least 2 are "
                        "needed, ignored.")
    return roles


def _target_and_point(
    frame: pd.DataFrame, roles: _Roles, rows: RowFilter, src: str, messages: list[str]
) -> tuple[np.ndarray, np.ndarray | None]:
    """y and the point prediction (mean); error files give y := E and mean := 0."""
    n = len(frame)
    if roles.error is not None:
        y = numeric_values(frame, roles.error, source=src, role="error")
        rows.finite(roles.error, y)
        messages.append(
            f"column {roles.error!r} is read as the prediction error E = reference − prediction: "
            f"y := {roles.error}, mean := 0 (so ε = E)."
        )
        return y, np.zeros(n)
    assert roles.y is not None
    y = numeric_values(frame, roles.y, source=src, role="y")
    rows.finite(roles.y, y)
    point = None
    if roles.mean is not None:
        point = numeric_values(frame, roles.mean, source=src, role="mean")
        rows.finite(roles.mean, point)
    if point is None and roles.layout in ("point", "gaussian"):
        raise InputError(
            f"no prediction column found (looked for {', '.join(ALIASES['mean'][:8])}, …, samples or quantiles); "
            f"columns are: {name_list(frame.columns)}.{comment_note(frame)}",
            source=src,
            columns=[str(c) for c in frame.columns[:20]],
            hint="rename the prediction column to mean (or pass columns={'mean': '<name>'}); for a classification "
            "file pass task='classification'",
            app_hint="choose the mean / point prediction under Column mapping and load the file again; for a "
            "classification file choose Task: classification there",
        )
    return y, point


def _feature_frame(frame: pd.DataFrame, feat_cols: list[str], keep: np.ndarray, messages: list[str]) -> pd.DataFrame:
    """Kept rows of the feature columns; text columns that are entirely numeric are converted."""
    features = kept_rows(frame, feat_cols, keep)
    for c in feat_cols:
        if not pd.api.types.is_numeric_dtype(features[c].dtype):
            conv = pd.to_numeric(features[c], errors="coerce")
            if conv.notna().sum() == features[c].notna().sum():
                features[c] = conv
    n_missing = int(features.isna().to_numpy().sum())
    if n_missing:
        messages.append(f"feature columns have {n_missing} missing value(s); those rows are kept.")
    messages.append(f"feature columns: {name_list(feat_cols, 10)}.")
    return features


def _ensemble_notes(samples: np.ndarray, y: np.ndarray, messages: list[str]) -> None:
    """Zero-spread rows and ties between y and a member (zero-inflated ensembles)."""
    zero_spread = int((samples.max(axis=1) == samples.min(axis=1)).sum())
    ties = int((samples == y[:, None]).any(axis=1).sum())
    if zero_spread:
        messages.append(f"{zero_spread} row(s) have all members equal (zero ensemble spread).")
    if ties:
        messages.append(
            f"{ties} row(s) ({100.0 * ties / len(y):.1f} %) have y equal to a member value (ties, e.g. zero "
            "precipitation); an ensemble's PIT there is an interval [F(y−), F(y)] and is randomised."
        )


def parse_regression_frame(
    frame: pd.DataFrame, source: str | None = None, columns: Mapping[str, Any] | None = None, *, min_rows: int = 2,
    crossing: str = "rearrange", layout: str | None = None, consume: bool = False,
) -> PredictionSet:
    """Validate a regression table and build its ``PredictionSet`` (layout rules in the module docstring).

    Layouts and the distribution they give: ``gaussian`` → ``Gaussian(μ, σ)`` with σ from
    ``std``, √``var``, exp(½ ``log_var``), exp(``log_std``) or ``u95``/Φ⁻¹(0.975); ``quantile`` →
    ``QuantileSet(levels, values)``; ``sample`` → ``SampleSet(members)``; ``point`` → no distribution.
    Dropped rows are counted per reason; ``n_read == n_rows + dropped.total``.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file (:func:`calib_core.data.bytes.read_table`).
    source : str, optional
        The file name for messages (default: ``frame.attrs["source"]``).
    columns : mapping, optional
        Roles → column names (``y``, ``error``, ``mean``, ``point``, ``std``, ``var``, ``log_var``, ``log_std``,
        ``u95``, ``quantiles``, ``samples``, ``features``, ``split``, ``group``, ``model``, ``time``); a role mapped to
        None is not used.
    min_rows : int, default 2
        The fewest valid rows accepted (``min_rows=0`` for one partition of a larger data set).
    crossing : {"rearrange", "drop"}, default "rearrange"
        Rows whose quantiles decrease with the level: sorted per row (the rearrangement of Chernozhukov,
        Fernández-Val & Galichon 2010, which never increases the quantile loss of Koenker & Bassett 1978) and
        counted in a message, or dropped and counted in ``dropped``.
    layout : {"gaussian", "quantile", "sample", "point"}, optional
        The layout to read when the file has several; None: the one that keeps the most rows (on a tie sample >
        quantile > gaussian), said in a message with how to choose another.
    consume : bool, default False
        The frame is the caller's to give away (``cc.load_predictions``' own): the columns read into the set are
        dropped from it once converted, so a column of integers is not held as integers and as floats at once.

    Returns
    -------
    PredictionSet
        A regression set (``task="regression"``, ``layout`` one of the four above).

    Raises
    ------
    InputError
        Unknown roles or options, missing target or prediction columns, a requested layout the file lacks,
        non-numeric cells, or fewer than ``min_rows`` valid rows.

    References
    ----------
    .. [1] V. Chernozhukov, I. Fernández-Val and A. Galichon, "Quantile and probability curves without crossing",
       Econometrica 78(3), 1093–1125, 2010.
    .. [2] R. Koenker and G. Bassett, "Regression quantiles", Econometrica 46(1), 33–50, 1978.
    """
    src = frame_source(frame, source)
    _unknown_roles(columns, src)
    requested = check_options(crossing, layout, src)
    cols = dict(columns or {})
    n = len(frame)
    if n == 0:
        raise InputError(f"has a header ({name_list(frame.columns)}) but no data rows", source=src,
                         hint="add at least two rows of predictions")
    messages: list[str] = []
    roles = _find_roles(frame, cols, src, messages)
    rows = RowFilter(n, frame)
    y, point = _target_and_point(frame, roles, rows, src, messages)
    roles.layout, layout_notice = choose_layout(frame, roles.options, rows.keep, requested=requested,
                                                crossing=crossing, source=src, has_point=point is not None)
    if layout_notice is not None:
        messages.append(layout_notice)
    used = [c for c in (roles.y, roles.error, roles.mean) if c is not None]
    crossed, n_finite = np.zeros(n, dtype=bool), 0

    if roles.layout == "gaussian":
        role = roles.spread_found[0]
        col = roles.spread[role]
        assert col is not None and point is not None
        used.append(col)
        if len(roles.spread_found) > 1:
            others = ", ".join(repr(roles.spread[r]) for r in roles.spread_found[1:])
            messages.append(f"uncertainty from {col!r} ({role}); also found {others}, not used.")
        values: np.ndarray = gaussian_sigma(frame, role, col, rows, src, messages)
        layout_text = f"{role}={col!r}"
    elif roles.layout == "quantile":
        used += roles.quantiles
        values, crossed = quantile_values(frame, roles.quantiles, rows, src, crossing)
        n_finite = int(np.isfinite(values).all(axis=1).sum())
        messages.append(f"quantile levels: {', '.join(f'{v:g}' for v in roles.levels)}.")
        layout_text = f"quantiles={name_list(roles.quantiles, 4)}"
    elif roles.layout == "sample":
        used += roles.samples
        values = numeric_block(frame, roles.samples, source=src, role="samples")
        rows.finite("sample columns", values)
        messages.append(f"{len(roles.samples)} ensemble members / samples: {name_list(roles.samples, 8)}.")
        layout_text = f"samples={name_list(roles.samples, 3)}"
    else:
        values = np.empty((n, 0))
        layout_text = ""
        messages.append(
            "point predictions only (no uncertainty column): diagnostics need a predictive distribution — "
            "use a calibrator that estimates σ (ACCRUE, constant σ)."
        )

    if consume:  # the loader's own frame: columns now held as float arrays are not held twice (integers, blocks)
        for name in [c for c in dict.fromkeys(used) if c in frame.columns]:
            del frame[name]
    labels = row_labels(frame, cols, src, used, messages)
    time = read_time(frame, cols, src, used, rows, messages)
    feat_cols = find_feature_columns(frame, cols, source=src, exclude=used)
    used += feat_cols

    keep = require_valid_rows(rows, source=src, columns=used, min_rows=min_rows)
    n_keep = int(keep.sum())
    notice = crossing_notice(crossed, keep, crossing, n_finite) if crossed.any() else None
    if notice is not None:
        messages.append(notice)

    all_kept = n_keep == n  # then the columns are used as read (no copy of a file without dropped rows)
    y_keep = take_kept(y, keep, all_kept)
    point = take_kept(point, keep, all_kept)
    dist: Gaussian | QuantileSet | SampleSet | None = None
    if roles.layout == "gaussian":
        assert point is not None
        dist = Gaussian(point, take_kept(values, keep, all_kept), copy=False)
        point = dist.mean()  # one array for both
    elif roles.layout == "quantile":
        dist = QuantileSet(roles.levels, values[keep])
    elif roles.layout == "sample":
        dist = SampleSet(values[keep])
        _ensemble_notes(dist.samples, y_keep, messages)
    features = _feature_frame(frame, feat_cols, keep, messages) if feat_cols else None

    parts = [f"{k}={v!r}" for k, v in (("y", roles.y), ("error", roles.error), ("mean", roles.mean)) if v]
    messages.insert(0, f"{roles.layout} layout ({', '.join(parts + [layout_text][: bool(layout_text)])}); "
                       f"{n_keep} of {n} rows kept.")
    if rows.report.total:
        details = "; ".join(f"{r}: {c} (rows {name_list(rows.report.reasons[r].tolist(), 5)})"
                            for r, c in rows.counts.items())
        messages.append(f"{rows.report.total} row(s) dropped: {details}.")
    note = unused_columns_note(frame, used)
    if note:
        messages.append(note)
    kept_for_slices = slice_columns(frame, [c for c in used if c not in feat_cols], keep, messages)
    if frame.attrs.get("comments"):
        messages.append(f"file comment: {' / '.join(frame.attrs['comments'])[:200]}")
    messages += reading_notes(frame)
    if frame.attrs.get("decimal") == ",":
        messages.append("numbers read with a decimal comma (';'-separated file).")

    def _take(a: np.ndarray | None) -> np.ndarray | None:
        return take_kept(a, keep, all_kept)

    return PredictionSet(
        task="regression",
        source=src,
        layout=roles.layout,
        y=y_keep,
        dist=dist,
        point=point,
        split=_take(labels["split"]),
        group=_take(labels["group"]),
        model=_take(labels["model"]),
        features=features,
        slice_columns=kept_for_slices,
        time=_take(time),
        row_number=take_kept(np.arange(1, n + 1, dtype=np.int64), keep, all_kept),
        n_read=n,
        dropped=rows.report,
        messages=messages,
    )
