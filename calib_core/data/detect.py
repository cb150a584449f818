"""Task detection: regression or classification, from the column names (and the mapping's keys).

:func:`detect_task` decides which parser ``cc.load_predictions`` calls; :func:`guess_columns` tells what detection
makes of every column, as a ``columns=`` mapping (the Data page's mapping form starts from it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import InputError
from .columns import (
    ALIASES,
    CLASSIFICATION_ROLES,
    LABEL_FALLBACK,
    REGRESSION_ROLES,
    find_column,
    frame_source,
    normalize_name,
)
from .columns_patterns import find_quantile_columns, find_sample_columns, find_score_columns, parse_quantile_level
from .detect_exports import detect_export
from .regression_layout import LayoutColumns, choose_layout
from .rows_labels import row_label_columns

__all__ = ["detect_task", "guess_columns"]


def detect_task(frame: pd.DataFrame, columns: Mapping[str, Any] | None = None) -> str:
    """``"classification"`` or ``"regression"`` from the column names (and the mapping's keys).

    Classification when the mapping uses classification roles, or when the file has score columns
    (:func:`~calib_core.data.columns.find_score_columns`: ``prob_<class>``, ``proba_<class>``, ``p_<class>``,
    ``<class>_prob``, ``logit_*`` …), or a label column with a confidence (top-label) column, and no regression
    uncertainty columns (std/var/quantiles/samples/error) unless a label column is present; otherwise regression.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    columns : mapping, optional
        The user's ``columns=`` mapping; its keys decide when they are roles of one task only.

    Returns
    -------
    str
        ``"classification"`` or ``"regression"``.

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.detect import detect_task
    >>> detect_task(pd.DataFrame(columns=["label", "prob_0", "prob_1"]))
    'classification'
    >>> detect_task(pd.DataFrame(columns=["y_true", "CTR", "P1", "P2"]))
    'regression'
    """
    keys = set(columns or ())
    if keys & CLASSIFICATION_ROLES:
        return "classification"
    if keys & (REGRESSION_ROLES - {"split", "group", "model", "features"}):
        return "regression"
    norm = [normalize_name(c) for c in frame.columns]
    scores = find_score_columns(frame)
    has_scores = bool(scores["probs"] or scores["logits"])
    has_label = any(k in ALIASES["label"] for k in norm)
    has_conf = any(k in ALIASES["confidence"] for k in norm)
    has_pred_label = any(k in ALIASES["pred_label"] for k in norm)
    cls = has_scores or (has_conf and (has_label or has_pred_label))
    if not cls:  # files as ML tools write them: class-name columns, several forecasters of one binary event
        return "classification" if detect_export(frame) is not None else "regression"
    reg_roles = ("std", "var", "log_var", "log_std", "error")
    reg = any(k in ALIASES[r] for r in reg_roles for k in norm)
    reg = reg or any(parse_quantile_level(c) is not None for c in frame.columns)
    reg = reg or bool(find_sample_columns(frame))
    return "regression" if reg and not has_label else "classification"


def _guess_layout(frame: pd.DataFrame, samples: list[str], quantiles: list[str], used: list[str]) -> str:
    """The layout the loader reads by default (``choose_layout``: the one that keeps the most rows), never raising."""
    options = [LayoutColumns(layout, role, tuple(cols), layout)
               for layout, role, cols in (("sample", "samples", samples), ("quantile", "quantiles", quantiles))
               if len(cols) >= 2]
    spread, has_mean = None, len(used) > 1  # y (or error) and the mean
    if has_mean:
        for role in ("std", "var", "log_var", "log_std", "u95"):
            try:
                spread = find_column(frame, role, None, exclude=used + samples + quantiles)
            except InputError:
                spread = None
            if spread is not None:
                options.append(LayoutColumns("gaussian", role, (spread,), "gaussian"))
                break
    if len(options) < 2:
        return options[0].layout if options else "gaussian"
    try:
        return choose_layout(frame, options, np.ones(len(frame), dtype=bool), requested=None, crossing="rearrange",
                             source=frame_source(frame, None), has_point=has_mean)[0]
    except InputError:  # e.g. text in a column: the loader will say so
        return options[0].layout


def _text_target(frame: pd.DataFrame) -> bool:
    """Whether the target column (``ALIASES["y"]`` / ``LABEL_FALLBACK``) holds text in most of its first rows."""
    norm = {c: normalize_name(c) for c in frame.columns}
    name = next((c for alias in (*ALIASES["y"], *LABEL_FALLBACK) for c, k in norm.items() if k == alias), None)
    if name is None or pd.api.types.is_numeric_dtype(frame[name].dtype):
        return False
    head = frame[name].iloc[:1000].dropna().astype(str).str.strip()
    head = head[head != ""]
    return bool(head.size) and float(pd.to_numeric(head, errors="coerce").isna().mean()) > 0.5


def guess_columns(frame: pd.DataFrame) -> dict[str, Any]:
    """What detection makes of a file's columns, as a ``columns=`` mapping plus ``"task"`` (for a mapping form).

    The same rules as the parsers (:func:`detect_task`, ``ALIASES``, ``find_score_columns``, the shapes ML tools
    write — :func:`calib_core.data.detect_exports.detect_export` —, the regression layout that keeps the most rows —
    on a tie sample > quantile > gaussian —, ``row_label_columns``), but never raising: a role that cannot be
    decided is left out.  A target column of text (class names) makes the guess a classification one.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.

    Returns
    -------
    dict of str to object
        ``"task"`` and the roles found.  Regression keys: ``y`` / ``error``, ``mean``, one of ``std`` / ``var`` /
        ``log_var`` / ``log_std`` / ``u95`` / ``quantiles`` (a list) / ``samples``; classification keys: ``label``,
        ``probs`` or ``logits`` (lists) or ``model_columns`` (several forecasters of one binary event); both:
        ``split``, ``group``, ``model``.

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.detect import guess_columns
    >>> frame = pd.DataFrame({"target": [1.0, 2.0], "mu": [1.1, 1.9], "sigma": [0.2, 0.3], "split": ["cal", "test"]})
    >>> guess_columns(frame)
    {'task': 'regression', 'y': 'target', 'mean': 'mu', 'std': 'sigma', 'split': 'split'}
    >>> guess_columns(frame.assign(split=[0, 4]))  # fold numbers are no calibration/test roles: a group
    {'task': 'regression', 'y': 'target', 'mean': 'mu', 'std': 'sigma', 'group': 'split'}
    """
    task = detect_task(frame)
    if task == "regression" and _text_target(frame):
        task = "classification"  # class names in the target column: a classification file whose scores are unnamed
    out: dict[str, Any] = {"task": task}
    used: list[str] = []

    def take(role: str) -> str | None:
        try:
            name = find_column(frame, role, None, exclude=used)
        except InputError:
            return None
        if name is not None:
            used.append(name)
        return name

    if task == "classification":
        label = take("label")
        if label is None:
            norm = {c: normalize_name(c) for c in frame.columns}
            label = next((str(c) for alias in LABEL_FALLBACK for c, k in norm.items() if k == alias), None)
            if label is not None:
                used.append(label)
        if label is not None:
            out["label"] = label
        scores = find_score_columns(frame, exclude=used)
        shape = None if scores["probs"] or scores["logits"] else detect_export(frame, label=label)
        if shape is not None and shape.kind == "models":
            out["label"] = shape.label
            out["model_columns"] = list(shape.columns)
            used += [*([] if shape.label in used else [shape.label]), *shape.columns]
        elif shape is not None:
            out["label"] = shape.label
            scores["probs"] = [(c, c) for c in shape.columns]
            used += [] if shape.label in used else [shape.label]
        kind = "logits" if len(scores["logits"]) >= 2 or (scores["logits"] and not scores["probs"]) else "probs"
        if scores[kind]:
            if all(cls.isdigit() for _, cls in scores[kind]):
                scores[kind].sort(key=lambda t: int(t[1]))
            out[kind] = [c for c, _ in scores[kind]]
            used += out[kind]
    else:
        y = take("y") or take("error")
        if y is not None:
            out["y" if normalize_name(y) in ALIASES["y"] else "error"] = y
        mean = take("mean") or take("point")
        if mean is not None:
            out["mean"] = mean
        try:
            samples = [c for c in find_sample_columns(frame) if c not in used]
            levels, quantiles = find_quantile_columns(frame)
        except InputError:
            samples, quantiles = [], []
        quantiles = [c for c in quantiles if c not in used]
        layout = _guess_layout(frame, samples, quantiles, used)
        if layout == "sample":
            out["samples"] = samples
        elif layout == "quantile":
            out["quantiles"] = quantiles
        else:
            for role in ("std", "var", "log_var", "log_std", "u95"):
                col = take(role)
                if col is not None:
                    out[role] = col
                    break
        used += out.get("samples", []) + out.get("quantiles", [])
    try:
        names, _, _ = row_label_columns(frame, {}, frame_source(frame, None), used)
    except InputError:
        names = {}
    out.update({role: name for role, name in names.items() if name is not None})
    return out
