"""Files as machine-learning tools write them: class-name columns, label aliases, several forecasters of one event.

Three shapes that carry no ``prob_*`` / ``logit_*`` name, found from the label column's values and the other
columns' names and values (:func:`detect_export`):

* ``"classes"`` — ``pd.DataFrame(clf.predict_proba(X), columns=clf.classes_)`` beside a label column: the columns
  are named by the label values themselves (``0 … 9``, ``barolo``, ``grignolino`` …; compared stripped and
  case-insensitively), hold numbers in [0, 1] and their rows sum to 1;
* ``"binary"`` — one probability column beside a label column of two values: the column is named by a label value
  (``malignant``: the positive class), or it is a score by name (``score``, ``probability``, ``risk`` …), or it is
  the only free-named column holding numbers in [0, 1];
* ``"models"`` — several free-named columns of numbers in [0, 1] beside a two-valued label column (``Logistic``,
  ``EMOS``, ``ENS``, ``EPC``, ``obs``): several forecasters of one binary event, read as several models
  (:func:`melt_model_columns`: one row per model and file row, the long format a ``model`` column gives).

The label column is the first of :data:`EXPORT_LABEL_NAMES` present (``label``, ``y``, ``y_true``, ``true_label``,
``target``, ``class``, ``actual``, ``obs``, ``matched`` …).  A file with regression columns (a mean, a spread,
quantiles, members) is never read as one of these.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .columns import ALIASES, LABEL_FALLBACK, normalize_name
from .columns_patterns import FEATURE_PATTERN, find_sample_columns, parse_quantile_level, score_column

__all__ = ["EXPORT_LABEL_NAMES", "ExportShape", "detect_export", "melt_model_columns", "model_rows_note"]

EXPORT_LABEL_NAMES: tuple[str, ...] = (*ALIASES["label"], *LABEL_FALLBACK)
"""Names of a label column (compared after ``normalize_name``), in priority order."""

SCORE_NAMES = frozenset({"score", "scores", "prob", "proba", "probability", "p", "p_hat", "phat", "pred_prob",
                         "pred_proba", "predicted_probability", "y_score", "y_prob", "y_proba", "risk", "pop"})
"""Names of a binary file's single probability column when it is named as a score rather than by a class."""

_REGRESSION_ROLES = ("mean", "point", "std", "var", "log_var", "log_std", "u95", "error")
_OTHER_ROLES = ("split", "group", "model", "confidence", "pred_label")
_INDEX_NAME = re.compile(r"(?:unnamed:_?\d+|index|)")
_HEAD = 5000  # rows looked at to decide a shape (the parser validates every row)
_MAX_CLASSES = 1000


@dataclass(frozen=True)
class ExportShape:
    """A shape detected by :func:`detect_export`.

    Attributes
    ----------
    kind : {"classes", "binary", "models"}
        Class-name columns, one binary probability column, or several forecasters of one binary event.
    label : str
        The label column.
    columns : list of str
        The probability columns (class order for ``"classes"``: numbers sorted numerically).
    positive : str or None
        ``"binary"``: the label value the column is named after (its positive class), else None.
    """

    kind: str
    label: str
    columns: list[str] = field(default_factory=list)
    positive: str | None = None


def _head_values(frame: pd.DataFrame, name: str) -> np.ndarray:
    """The first rows' non-missing values of a column as stripped strings (integral floats without '.0')."""
    s = frame[name].iloc[:_HEAD].dropna()
    if pd.api.types.is_float_dtype(s.dtype):
        v = s.to_numpy(dtype=float)
        integral = np.isfinite(v) & (v == np.round(v)) & (np.abs(v) < 2**53)
        out = s.astype(str).to_numpy(dtype=object)
        out[integral] = v[integral].astype(np.int64).astype(str)
        return out
    return s.astype(str).str.strip().to_numpy(dtype=object)


def _unit_values(frame: pd.DataFrame, name: str) -> np.ndarray | None:
    """The first rows' values of a column as floats when they are all numbers in [0, 1] (None otherwise)."""
    s = frame[name].iloc[:_HEAD]
    if pd.api.types.is_bool_dtype(s.dtype):
        return None
    v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    present = s.notna().to_numpy()
    if not present.any() or np.isnan(v[present]).any():
        return None
    v = v[present]
    return v if bool(((v >= -1e-6) & (v <= 1 + 1e-6)).all()) else None


def _claimed(name: Any) -> bool:
    """Whether a column name belongs to another role (alias, quantile, member, feature, score, row index)."""
    key = normalize_name(name)
    if _INDEX_NAME.fullmatch(key) or FEATURE_PATTERN.match(key) or parse_quantile_level(name) is not None:
        return True
    return any(key in ALIASES[r] for r in (*_REGRESSION_ROLES, *_OTHER_ROLES, "y", "label"))


def _regression_columns(frame: pd.DataFrame) -> bool:
    """Whether the file has a regression prediction column (mean, spread, error, quantiles, members)."""
    norm = [normalize_name(c) for c in frame.columns]
    if any(k in ALIASES[r] for r in _REGRESSION_ROLES for k in norm):
        return True
    if any(parse_quantile_level(c) is not None for c in frame.columns):
        return True
    return bool(find_sample_columns(frame))


def _label_candidates(frame: pd.DataFrame, label: str | None, exclude: Sequence[str]) -> list[str]:
    if label is not None:
        return [label]
    norm = {c: normalize_name(c) for c in frame.columns if c not in exclude}
    return [str(c) for alias in EXPORT_LABEL_NAMES for c, k in norm.items() if k == alias]


def _class_columns(frame: pd.DataFrame, label: str, values: list[str], exclude: Sequence[str]) -> list[str]:
    """Columns named by a label value (stripped, case-insensitive); with integer labels every integer-named column
    (scikit-learn writes a column for every class, observed in these rows or not)."""
    wanted = {v.strip().casefold() for v in values}
    cols = [str(c) for c in frame.columns if c != label and c not in exclude and str(c).strip().casefold() in wanted]
    if cols and all(re.fullmatch(r"\d+", c.strip()) for c in cols):
        cols = [str(c) for c in frame.columns if c != label and c not in exclude
                and re.fullmatch(r"\d+", str(c).strip()) and not _INDEX_NAME.fullmatch(normalize_name(c))]
        cols.sort(key=lambda c: int(c.strip()))
    return cols


def detect_export(
    frame: pd.DataFrame, columns: Mapping[str, Any] | None = None, *, label: str | None = None,
    exclude: Sequence[str] = (),
) -> ExportShape | None:
    """The shape of a file written by an ML tool without ``prob_*`` names (module docstring), or None.

    Decided on the first 5,000 rows: the label column's values against the other columns' names; class-name
    columns must hold numbers in [0, 1] whose rows sum to 1 (nine rows in ten within 0.01; with the other columns of
    numbers in [0, 1] when the rows then sum to 1: classes absent from the labels); a binary event's label
    column has exactly two values and its probability columns hold numbers in [0, 1] that are not all 0/1.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    columns : mapping, optional
        The user's ``columns=`` mapping: a file whose mapping names its probability columns is not guessed.
    label : str, optional
        The label column when already known.
    exclude : sequence of str, default ()
        Columns taken by other roles.

    Returns
    -------
    ExportShape or None
        The shape found, or None.

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.detect_exports import detect_export
    >>> frame = pd.DataFrame({"y": ["barolo", "barbera"], "barbera": [0.2, 0.7], "barolo": [0.7, 0.1],
    ...                       "grignolino": [0.1, 0.2]})
    >>> shape = detect_export(frame)  # no grignolino among these labels, yet its column completes the rows
    >>> shape.kind, shape.label, shape.columns
    ('classes', 'y', ['barbera', 'barolo', 'grignolino'])
    >>> niamey = pd.DataFrame({"Logistic": [0.6, 0.3], "EMOS": [0.5, 0.4], "obs": [1, 0]})
    >>> detect_export(niamey)
    ExportShape(kind='models', label='obs', columns=['Logistic', 'EMOS'], positive=None)
    """
    cols = dict(columns or {})
    if any(k in cols for k in ("probs", "prob", "logits", "logit", "model_columns", "confidence")):
        return None
    if len(frame) == 0 or _regression_columns(frame):
        return None
    exclude = list(exclude) + [str(v) for k, v in cols.items()
                               if isinstance(v, str) and k in ("split", "group", "model", "time", "pred_label")]
    for lab in _label_candidates(frame, cols.get("label") or label, exclude):
        if lab not in frame.columns:
            continue
        head = _head_values(frame, lab)
        if head.size == 0:
            continue
        uniq = pd.unique(head)
        if uniq.size > _MAX_CLASSES:
            continue
        values = [str(u) for u in uniq]
        named = _class_columns(frame, lab, values, exclude)
        unit = {c: _unit_values(frame, c) for c in named}
        free = [str(c) for c in frame.columns if c != lab and c not in exclude and c not in named
                and not _claimed(c) and score_column(c) is None]
        free_unit = {c: _unit_values(frame, c) for c in free}
        free_unit = {c: v for c, v in free_unit.items() if v is not None}
        if named and all(v is not None for v in unit.values()):
            # class columns named by the labels, plus those of classes absent from these rows when with them the
            # rows sum to 1 (a column for every class, as predict_proba writes)
            for cand in ([str(c) for c in frame.columns if str(c) in named or str(c) in free_unit], named):
                if len(cand) >= 2 and _sums_to_one([unit.get(c, free_unit.get(c)) for c in cand]):
                    if all(re.fullmatch(r"\d+", c.strip()) for c in cand):
                        cand = sorted(cand, key=lambda c: int(c.strip()))
                    return ExportShape("classes", lab, cand)
        full = pd.unique(frame[lab].dropna())
        if full.size != 2:
            continue
        if len(named) == 1 and unit[named[0]] is not None:
            positive = next(v for v in values if v.strip().casefold() == named[0].strip().casefold())
            return ExportShape("binary", lab, named, positive)
        scored = [c for c in free if normalize_name(c) in SCORE_NAMES]
        probs = [c for c in (scored or free) if c in free_unit and not np.isin(free_unit[c], (0.0, 1.0)).all()]
        if scored and probs:
            return ExportShape("binary", lab, probs[:1])
        if len(probs) == 1:
            return ExportShape("binary", lab, probs)
        if len(probs) >= 2:
            return ExportShape("models", lab, probs)
    return None


def _sums_to_one(blocks: Sequence[np.ndarray | None]) -> bool:
    """Whether columns of numbers in [0, 1] have rows summing to 1 (nine rows in ten within 0.01)."""
    if any(b is None for b in blocks) or len({b.size for b in blocks}) != 1:
        return False
    total = np.sum(np.column_stack(blocks), axis=1)
    return bool(total.size) and float(np.quantile(np.abs(total - 1.0), 0.9)) < 0.01


def _unique_name(frame: pd.DataFrame, name: str) -> str:
    taken = {normalize_name(c) for c in frame.columns}
    out = name
    while normalize_name(out) in taken:
        out = f"{out}_"
    return out


def melt_model_columns(frame: pd.DataFrame, model_columns: Sequence[str]) -> tuple[pd.DataFrame, str, str]:
    """Several forecasters' probability columns as one long table: one row per model and file row.

    Row ``j·n + i`` of the result is file row ``i`` (0-based) under model ``j`` (the columns' order): every other
    column repeated, the model's probability in a ``probability`` column and its name in a ``model`` column — the
    table a user would write by hand (``pd.melt``), so that every page reads it as several models.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file (its ``attrs`` are kept; broken rows are repeated per model).
    model_columns : sequence of str
        The models' probability columns.

    Returns
    -------
    long : DataFrame
        The long table (``m·n`` rows).
    probability : str
        The name of its probability column (``probability``, with ``_`` appended while the file has that name).
    model : str
        The name of its model column (``model``, likewise).

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.detect_exports import melt_model_columns
    >>> long, p, m = melt_model_columns(pd.DataFrame({"a": [0.1, 0.2], "b": [0.3, 0.4], "obs": [0, 1]}), ["a", "b"])
    >>> long.to_dict("list")
    {'obs': [0, 1, 0, 1], 'probability': [0.1, 0.2, 0.3, 0.4], 'model': ['a', 'a', 'b', 'b']}
    """
    n, names = len(frame), [str(c) for c in model_columns]
    others = [c for c in frame.columns if str(c) not in names]
    long = frame[others].iloc[np.tile(np.arange(n), len(names))].reset_index(drop=True)
    prob = _unique_name(frame, "probability")
    model = _unique_name(frame, "model")
    long[prob] = pd.concat([frame[c] for c in names], ignore_index=True)
    long[model] = np.repeat(np.array(names, dtype=object), n)
    long.attrs = dict(frame.attrs)
    merged = frame.attrs.get("merged_rows") or []
    if merged:
        long.attrs["merged_rows"] = [{**m, "row": m["row"] + j * n} for j in range(len(names)) for m in merged]
    return long, prob, model


def model_rows_note(model_columns: Sequence[str], n: int, dropped: Mapping[str, np.ndarray]) -> str:
    """The sentence that says how several models' columns were read, and which file rows were dropped per model.

    Parameters
    ----------
    model_columns : sequence of str
        The models' probability columns.
    n : int
        The file's data rows.
    dropped : mapping of str to ndarray
        The long table's drop reasons → 1-based rows (``PredictionSet.dropped.reasons``).

    Returns
    -------
    str
        E.g. ``"4 probability columns of one binary event read as 4 models (Logistic, EMOS, …): one row per model
        and file row, rows 1–92 Logistic, 93–184 EMOS, …"``.

    Examples
    --------
    >>> from calib_core.data.detect_exports import model_rows_note
    >>> model_rows_note(["a", "b"], 3, {"probability: missing value": [5]}).split(". ")[-1]
    'Rows dropped by model: b file row 2 (probability: missing value).'
    """
    names = [str(c) for c in model_columns]
    ranges = ", ".join(f"rows {j * n + 1}–{(j + 1) * n} {c}" for j, c in enumerate(names[:6]))
    more, ranges_more = (", …" if len(names) > 8 else ""), (", …" if len(names) > 6 else "")
    text = (f"{len(names)} probability columns of one binary event read as {len(names)} models "
            f"({', '.join(names[:8])}{more}): one row per model and file row ({ranges}{ranges_more}).")
    parts = []
    for reason, rows in dropped.items():
        rows = np.asarray(rows, dtype=np.int64)[:10] - 1
        where = ", ".join(f"{names[r // n]} file row {r % n + 1}" for r in rows.tolist() if r // n < len(names))
        if where:
            parts.append(f"{where} ({reason})")
    if parts:
        text += " Rows dropped by model: " + "; ".join(parts) + "."
    return text
