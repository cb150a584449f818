"""Validating classification tables into a :class:`~calib_core.base.predictions.PredictionSet`.

``cc.load_predictions`` (:mod:`calib_core.api`) reads the file (``calib_core.data.bytes.read_table``), detects the
task and calls :func:`parse_classification_frame` for classification files (the mirror of
``calib_core.data.regression.parse_regression_frame``).  Column matching reuses :mod:`calib_core.data.columns`
(``find_column`` / ``resolve_column`` with the ``ALIASES`` table) and the rows are read with
:mod:`calib_core.data.rows` (``numeric_block``, ``label_values``, the split/group/model readers ``row_labels`` and
the row bookkeeping ``RowFilter``).

Layouts (``PredictionSet.layout``)
----------------------------------
* ``"probs"`` / ``"logits"``: a label column plus ``prob_*`` / ``logit_*`` columns (also ``proba_*``,
  ``probability_*``, ``logits_*``; ``prob0`` works; and, when at least two columns use them, ``p_<class>`` and
  ``<class>_prob`` / ``<class>_proba`` as pandas / scikit-learn users name them —
  ``calib_core.data.columns.score_column``).
  Integer suffixes are sorted numerically and are the class names; other suffixes (``prob_cat``) are class names
  in file order, with their case kept.  When both kinds exist the logits are used
  (NLL from logits via log-sum-exp) and the probabilities ignored (said in ``messages``).
* ``"binary_prob"`` / ``"binary_logit"``: a single ``prob`` / ``logit`` column (or one ``prob_<c>``) holding the
  positive class's probability / logit; stored as two columns [P(neg), P(pos)] (logits [0, z]).  The positive
  class is ``columns["positive"]``, else the column's suffix when it is a label value (``prob_yes``), else 1 / true /
  yes / positive among the two label values (a mapped column with a free name such as ``score`` carries no class);
  otherwise the loader asks.
* Files as ML tools write them (:mod:`calib_core.data.detect_exports`): ``pd.DataFrame(clf.predict_proba(X),
  columns=clf.classes_)`` beside a label column — columns named by the label values (``0 … 9``, ``barolo`` …) —
  read as ``"probs"``; one free-named probability column (``score``, ``risk``, a class name) beside two label values
  read as ``"binary_prob"``, with the positive class stated (the class the column is named after, else 1 / true /
  yes, else the second of the sorted values as ``predict_proba(X)[:, 1]``) and switched with ``columns["positive"]``;
  several free-named probability columns beside two label values (``Logistic``, ``EMOS`` … and ``obs``), or
  ``columns["model_columns"]``, read as one model per column (:mod:`calib_core.data.classification_models`).
  Label columns: ``ALIASES["label"]``, then ``LABEL_FALLBACK`` (``y``, ``target``, ``actual``, ``obs``, ``matched``
  …).
* ``"top_label"``: ``label, pred, confidence`` (aliases ``true_label``, ``pred_label``, …): only the predicted class
  and its confidence are known.  ``probs`` is None, ``confidence`` holds max_k p_k, ``point`` the predicted class
  and ``top_label_only`` is True: only top-label diagnostics (accuracy, confidence ECE/MCE, reliability diagram)
  and top-label (binary "is the prediction correct") calibration are possible, and the messages say so.

Labels may be integers 0..K−1 or class names.  Names are matched to the score columns' class names (exactly, then
case-insensitively); names with integer-suffixed columns are mapped alphabetically (scikit-learn's column order) when
exactly K distinct names occur, with a message — or explicitly with ``columns["classes"] = [name_0, …, name_{K−1}]``.

Validation — errors raise ``calib_core.InputError`` naming the file, column(s), row(s) and what to do:
non-numeric cells; labels outside 0..K−1 or unknown class names (K mismatch; 1-based labels are recognised and
named); probability columns that are mostly outside [0, 1] (probably logits); rows whose probabilities do not sum to
1 within ``max(1e-3, K·2⁻²⁴)`` (:func:`row_sum_tolerance`) — **never silently fixed**: the error offers
``renormalize=True``, which divides every row by its sum and says so. Counted and dropped
(``PredictionSet.dropped``, ``n_read = n_rows + dropped``): rows with a missing/non-finite label, score or
confidence, a few probabilities outside [0, 1] (beyond a 1e-6 rounding tolerance), and rows summing to 0 under
``renormalize``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..base.classification import softmax
from ..base.predictions import InputError, PredictionSet
from .classification_classes import binary_classes, class_index, positive_message, sorted_class_names
from .classification_models import model_columns_frame, model_columns_messages
from .columns import (
    ALIASES,
    CLASSIFICATION_ROLES,
    LABEL_FALLBACK,
    find_column,
    name_list,
    normalize_name,
    resolve_column,
    slice_columns,
    unused_columns_note,
)
from .columns_patterns import find_score_columns, score_column
from .detect_exports import detect_export
from .rows import RowFilter, label_values, numeric_block, numeric_values, require_valid_rows, rows_text
from .rows_labels import row_labels
from .text import reading_notes
from .timecol import read_time

__all__ = ["parse_classification_frame", "ROLES", "PROB_TOL", "row_sum_tolerance"]

ROLES = frozenset(CLASSIFICATION_ROLES | {"split", "group", "model", "time"})
"""Keys accepted in ``columns`` for classification files (``labels``/``prob``/``logit`` are synonyms of
``label``/``probs``/``logits``)."""

PROB_TOL = 1e-6
"""Probabilities in [−1e-6, 1 + 1e-6] are clipped to [0, 1] (rounding); beyond that a row is invalid."""

_SYNONYMS = {"labels": "label", "prob": "probs", "logit": "logits"}
_PRED_FALLBACK = ("pred", "prediction", "y_pred", "ypred", "predicted")
_MISSING = "(missing)"


ROW_SUM_TOL = 1e-3
"""The fixed part of the row-sum tolerance (:func:`row_sum_tolerance`)."""

FLOAT32_UNIT_ROUNDOFF = 2.0**-24
"""u = 2⁻²⁴ ≈ 5.96e-8, the unit round-off of float32 (half its machine epsilon)."""


def row_sum_tolerance(k: int) -> float:
    """Allowed |Σ_k p_k − 1| for a probability row with K classes: ``max(1e-3, K·u₃₂)``, u₃₂ = 2⁻²⁴.

    Two sources of honest deviation, neither of which grows like a fraction of K:

    * float32 models: a softmax normalised in float32 sums to 1 within the classic bound of recursive summation,
      |Σ p̂_k − 1| ≤ γ_K ≈ K·u₃₂ (Higham 2002, §4.2) — 3e-4 at K = 5,000, 6e-3 at K = 10⁵; and the float32 values
      themselves are each within u₃₂·p_k of the float64 ones, which adds at most u₃₂ to the sum;
    * values written with a few decimals: with 4 significant decimals each p_k is off by ≤ 5e-5, which a fixed
      1e-3 absorbs for the small K where CSV rounding is common.

    The former tolerance max(1e-3, 1e-4·K) grew by a tenth of a percent per class: at K = 5,000 it was 0.5 and
    accepted rows summing to 0.6.  Rows off by more are refused with a message offering ``renormalize=True`` —
    never silently fixed.

    Parameters
    ----------
    k : int
        The number of classes K.

    Returns
    -------
    float
        The tolerance.

    References
    ----------
    .. [1] N. J. Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM, 2002, §4.2.

    Examples
    --------
    >>> from calib_core.data.classification import row_sum_tolerance
    >>> row_sum_tolerance(10), row_sum_tolerance(100_000) == 100_000 * 2.0**-24
    (0.001, True)
    """
    return max(ROW_SUM_TOL, k * FLOAT32_UNIT_ROUNDOFF)


def _score_columns(
    frame: pd.DataFrame, cols: dict[str, Any], src: str, exclude: Sequence[str]
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Score columns per kind ('probs', 'logits') and their class names (suffixes), from the mapping or the names."""
    found: dict[str, list[str]] = {"probs": [], "logits": []}
    names: dict[str, list[str]] = {"probs": [], "logits": []}
    explicit = [k for k in ("probs", "logits") if k in cols]
    for kind in explicit:
        spec = cols[kind]
        if spec is None:
            continue
        if isinstance(spec, str):
            spec = [spec]
        if not isinstance(spec, Sequence):
            raise InputError(
                f"columns[{kind!r}] must be a column name (binary) or a list of column names",
                source=src,
                hint=f"e.g. columns={{'{kind}': ['p_a', 'p_b', 'p_c']}}",
                app_hint="choose the score columns under Column mapping",
            )
        found[kind] = [resolve_column(frame, n, role=kind, source=src) for n in spec]
        names[kind] = []
        for c in found[kind]:
            m = score_column(c)
            # a mapped column named freely (e.g. "score") carries no class name; multi-class falls back to the name
            names[kind].append(m[1] if m else "")
    if explicit:
        return found, names
    auto = find_score_columns(frame, exclude=exclude)
    for kind, pairs in auto.items():
        suffixes = [s for _, s in pairs]
        if len(pairs) > 1 and "" in suffixes:
            bare = [c for c, s in pairs if s == ""]
            raise InputError(
                f"both a single {kind[:-1]!r} column ({bare[0]!r}) and per-class {kind[:-1]}_* columns exist",
                source=src,
                columns=[c for c, _ in pairs],
                hint=f"map the ones to use: columns={{'{kind}': [...]}}",
                app_hint="choose the score columns to use under Column mapping (Task: classification) and load the "
                "file again",
            )
        if pairs and all(re.fullmatch(r"\d+", s) for s in suffixes):
            pairs.sort(key=lambda t: int(t[1]))
            if len({int(s) for s in suffixes}) != len(suffixes):
                raise InputError(
                    f"{kind} columns repeat a class number: {name_list([c for c, _ in pairs], 8)}",
                    source=src,
                    columns=[c for c, _ in pairs],
                    hint="rename the columns so every class appears once",
                )
        found[kind] = [c for c, _ in pairs]
        names[kind] = [s for _, s in pairs]
    return found, names


def _check_probabilities(
    P: np.ndarray, rows: RowFilter, cols: list[str], src: str, renormalize: bool, messages: list[str], binary: bool
) -> np.ndarray:
    """Range check (clip rounding, drop a few bad rows, raise when most are bad) and the row-sum check."""
    keep = rows.keep
    v = P if P.ndim == 2 else P[:, None]
    outside = keep & ((v < -PROB_TOL) | (v > 1 + PROB_TOL)).any(axis=1)
    n_valid = int(keep.sum())
    if outside.any() and outside.sum() > 0.5 * n_valid:
        vk = v[keep]
        pct = bool(vk.size) and float(vk.max()) <= 100.0 and float(vk.min()) >= 0.0
        if pct and not binary:  # percentages: rows sum to ~100
            pct = float(np.median(np.abs(vk.sum(axis=1) - 100.0))) < 1.0
        raise InputError(
            f"columns {name_list(cols, 8)} are meant to be probabilities but {int(outside.sum())} of {n_valid} rows "
            f"have values outside [0, 1] (e.g. rows {rows_text(np.flatnonzero(outside))})",
            source=src,
            columns=cols,
            rows=(np.flatnonzero(outside)[:20] + 1).tolist(),
            hint=(
                "these look like percentages: divide by 100"
                + (" (or, if they are logits, name the column logit)" if binary else "")
            )
            if pct
            else "if these are logits, name the columns logit_* (or map columns={'logits': [...]})",
            app_hint=None if pct else "if these are logits, choose 'Scores are: logits' under Column mapping and "
            "load the file again (or name the columns logit_*)",
        )
    rows.drop("probability outside [0, 1]", outside)
    P = np.clip(P, 0.0, 1.0)
    if binary:
        return P
    k = P.shape[1]
    s = P.sum(axis=1)
    tol = row_sum_tolerance(k)
    off = rows.keep & (np.abs(s - 1.0) > tol)
    if off.any():
        idx = np.flatnonzero(off)
        worst = float(np.max(np.abs(s[idx] - 1.0)))
        if not renormalize:
            raise InputError(
                f"{idx.size} row(s) of {name_list(cols, 4)} do not sum to 1 (tolerance {tol:g}; worst deviation "
                f"{worst:.3g}; rows {rows_text(idx)})",
                source=src,
                columns=cols,
                rows=(idx[:20] + 1).tolist(),
                hint="fix the file, or load it with renormalize=True to divide every row by its sum",
                app_hint="fix the file, or tick 'Renormalise probability rows that do not sum to 1' below the upload "
                "to divide every row by its sum",
            )
        zero = rows.keep & (s <= 0)
        rows.drop("probabilities sum to 0 (cannot renormalise)", zero)
        with np.errstate(invalid="ignore", divide="ignore"):
            P = P / s[:, None]
        messages.append(
            f"renormalised: every row divided by its sum ({idx.size} row(s) were off by more than {tol:g}, worst "
            f"{worst:.3g}; rows {rows_text(idx, 5)})."
        )
    elif rows.keep.any():
        dev = float(np.max(np.abs(s[rows.keep] - 1.0)))
        if dev > 1e-6:
            messages.append(f"row sums of the probabilities deviate from 1 by up to {dev:.2g} (within tolerance).")
    return P


def parse_classification_frame(
    frame: pd.DataFrame,
    source: str | None = None,
    columns: Mapping[str, Any] | None = None,
    renormalize: bool = False,
    *,
    min_rows: int = 2,
) -> PredictionSet:
    """Validate a classification table and build its ``PredictionSet`` (layouts and rules: module docstring).

    Dropped rows are counted in ``.dropped`` and described in ``.messages``.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file (:func:`calib_core.data.bytes.read_table`).
    source : str, optional
        The file name for messages (default: ``frame.attrs["source"]``).
    columns : mapping, optional
        Roles → column names: ``label``, ``probs`` or ``logits`` (a list, or one name for a binary positive-class
        column), ``confidence`` and ``pred_label`` (top-label files), ``classes`` (class names in score-column
        order), ``positive`` (binary: the positive label value), ``split``, ``group``, ``model``, ``time``.
    renormalize : bool, default False
        Divide probability rows by their sums instead of refusing rows that do not sum to 1.
    min_rows : int, default 2
        The fewest valid rows accepted (``min_rows=0`` for one partition of a larger data set).

    Returns
    -------
    PredictionSet
        A classification set (``task="classification"``; ``layout`` ``"probs"``, ``"logits"``, ``"binary_prob"``,
        ``"binary_logit"`` or ``"top_label"``).

    Raises
    ------
    InputError
        Missing label or score columns, labels that match no class, probabilities that are no probabilities, rows
        not summing to 1 (without ``renormalize``), or fewer than ``min_rows`` valid rows.
    """
    src = source or frame.attrs.get("source") or "<memory>"
    cols: dict[str, Any] = {}
    for key, val in dict(columns or {}).items():
        if key not in ROLES:
            raise InputError(
                f"unknown role {key!r} in the column mapping of a classification file",
                source=src,
                hint=f"use the roles {sorted(ROLES)}",
            )
        cols[_SYNONYMS.get(key, key)] = val
    n = len(frame)
    if n == 0:
        raise InputError(
            f"has a header ({name_list(frame.columns, 8)}) but no data rows", source=src, hint="add rows of predictions"
        )
    if "model_columns" in cols:  # several forecasters of one binary event: one model each
        long, mapping, names, prob = model_columns_frame(frame, src, cols)
        pset = parse_classification_frame(long, src, mapping, renormalize, min_rows=min_rows)
        pset.messages = model_columns_messages(pset, names, n, prob)
        return pset
    messages: list[str] = []
    used: list[str] = []

    # -- label -------------------------------------------------------------------------------------
    label_col = find_column(frame, "label", cols, source=src)
    if label_col is None and "label" not in cols:
        norm = {c: normalize_name(c) for c in frame.columns}
        label_col = next((str(c) for alias in LABEL_FALLBACK for c, k in norm.items() if k == alias), None)
    if label_col is None:
        raise InputError(
            f"no label column found (looked for {', '.join(ALIASES['label'][:4])}, y_true, target …); columns are: "
            f"{name_list(frame.columns, 20)}",
            source=src,
            columns=[str(c) for c in frame.columns[:20]],
            hint="name the true-class column 'label' or pass columns={'label': '<name>'}",
            app_hint="choose the label column under Column mapping (Task: classification) and load the file again, "
            "or name the true-class column 'label'",
        )
    used.append(label_col)

    # -- scores ------------------------------------------------------------------------------------
    found, suffixes = _score_columns(frame, cols, src, exclude=used)
    if not (found["probs"] or found["logits"] or {"probs", "logits", "confidence"} & set(cols)):
        shape = detect_export(frame, cols, label=label_col, exclude=used)  # columns named by the classes, …
        if shape is not None and shape.kind == "models":
            return parse_classification_frame(frame, src, {**cols, "label": label_col,
                                                           "model_columns": shape.columns}, renormalize,
                                              min_rows=min_rows)
        if shape is not None:
            found["probs"], suffixes["probs"] = list(shape.columns), [c.strip() for c in shape.columns]
    if found["logits"] and found["probs"] and len(found["logits"]) >= 2:
        messages.append(
            f"both logit and probability columns found: using the logits ({len(found['logits'])} columns); "
            f"probability columns {name_list(found['probs'], 4)} not used."
        )
        found["probs"] = []
    kind = "logits" if len(found["logits"]) >= 2 or (found["logits"] and not found["probs"]) else "probs"
    score_cols = found[kind]
    rows = RowFilter(n, frame)
    raw_labels = label_values(frame, label_col, missing=_MISSING)
    rows.drop(f"label {label_col!r}: missing value", raw_labels == _MISSING)
    confidence = pred_codes = logits = probs = None
    top_label_only = False

    if score_cols:
        used += score_cols
        values = numeric_block(frame, score_cols, source=src, role=kind)
        rows.finite(f"{kind} columns", values)
        binary = len(score_cols) == 1
        if binary:
            layout = f"binary_{'logit' if kind == 'logits' else 'prob'}"
            v = values[:, 0]
            if kind == "probs":
                v = _check_probabilities(v, rows, score_cols, src, renormalize, messages, binary=True)
            why: list[str] = []
            classes = binary_classes(
                raw_labels, rows.keep, cols.get("positive"), label_col, score_cols[0], suffixes[kind][0], src, why
            )
            if "classes" in cols:
                classes = [str(c) for c in cols["classes"]]
                if len(classes) != 2:
                    raise InputError("columns['classes'] must list 2 names for a binary file", source=src)
            codes, classes = class_index(raw_labels, classes, rows.keep, label_col, src, messages, False)
            if kind == "logits":
                logits = np.column_stack([np.zeros(n), v])
            else:
                probs = np.column_stack([1.0 - v, v])
            messages.append(positive_message(score_cols[0], kind, classes, why))
        else:
            layout = kind
            classes = [s if s else c for s, c in zip(suffixes[kind], score_cols)]
            integer_columns = all(re.fullmatch(r"\d+", s or "") for s in suffixes[kind])
            if "classes" in cols:
                classes = [str(c) for c in cols["classes"]]
                if len(classes) != len(score_cols):
                    raise InputError(
                        f"columns['classes'] lists {len(classes)} names but there are {len(score_cols)} {kind} columns",
                        source=src,
                        columns=score_cols,
                        hint="give one class name per score column, in the same order",
                    )
                integer_columns = False
            if kind == "probs":
                values = _check_probabilities(values, rows, score_cols, src, renormalize, messages, binary=False)
                probs = values
            else:
                logits = values
            codes, classes = class_index(raw_labels, classes, rows.keep, label_col, src, messages, integer_columns)
    else:
        conf_col = find_column(frame, "confidence", cols, source=src, exclude=used)
        if conf_col is None:
            raise InputError(
                "no probability or logit columns found (looked for prob_0 … prob_{K−1}, logit_0 …, a binary prob/logit "
                f"column, or a top-label confidence column); columns are: {name_list(frame.columns, 20)}",
                source=src,
                columns=[str(c) for c in frame.columns[:20]],
                hint="name the score columns prob_<class> or logit_<class>, or map them with columns={'probs': [...]}",
                app_hint="choose the score columns under Column mapping (Task: classification) and load the file "
                "again, or name them prob_<class> / logit_<class>",
            )
        used.append(conf_col)
        pred_col = find_column(frame, "pred_label", cols, source=src, exclude=used)
        if pred_col is None and "pred_label" not in cols:
            norm = {c: normalize_name(c) for c in frame.columns if c not in used}
            for alias in _PRED_FALLBACK:
                hits = [c for c, k in norm.items() if k == alias]
                if hits:
                    pred_col = str(hits[0])
                    break
        if pred_col is None:
            raise InputError(
                f"top-label file: confidence column {conf_col!r} found but no predicted-label column",
                source=src,
                columns=[conf_col],
                hint="name it pred_label (or pred), or pass columns={'pred_label': '<name>'}",
                app_hint="name the predicted-class column pred_label (or pred) and upload the file again",
            )
        used.append(pred_col)
        layout = "top_label"
        top_label_only = True
        conf = numeric_values(frame, conf_col, source=src, role="confidence")
        rows.finite(f"confidence {conf_col!r}", conf)
        conf = _check_probabilities(conf, rows, [conf_col], src, False, messages, binary=True)
        raw_pred = label_values(frame, pred_col, missing=_MISSING)
        rows.drop(f"predicted label {pred_col!r}: missing value", raw_pred == _MISSING)
        keep = rows.keep
        classes = sorted_class_names(sorted(set(raw_labels[keep]) | set(raw_pred[keep])))
        if "classes" in cols:
            classes = [str(c) for c in cols["classes"]]
        codes, classes = class_index(raw_labels, classes, keep, label_col, src, messages, False)
        pred_codes, _ = class_index(raw_pred, classes, keep, pred_col, src, messages, False)
        confidence = conf
        messages.append(
            f"top-label-only file ({label_col!r}, {pred_col!r}, {conf_col!r}): only the predicted class and its "
            "confidence are known, so only top-label diagnostics are possible (accuracy, confidence ECE/MCE, "
            "reliability diagram) and only top-label calibration (the confidence as a binary 'prediction is "
            "correct' score); NLL, Brier, class-wise ECE and the multi-class calibrators need the full "
            "probability vectors."
        )

    labels = row_labels(frame, cols, src, used, messages)
    time = read_time(frame, cols, src, used, rows, messages)
    keep = require_valid_rows(rows, source=src, columns=used, min_rows=min_rows)
    n_keep = int(keep.sum())
    if logits is not None:
        logits = logits[keep]
        probs = softmax(logits)
    elif probs is not None:
        probs = probs[keep]
    k = len(classes)
    what = {
        "probs": f"probabilities {name_list(score_cols, 3)}",
        "logits": f"logits {name_list(score_cols, 3)}",
        "binary_prob": f"binary probability {score_cols[0]!r}" if score_cols else "",
        "binary_logit": f"binary logit {score_cols[0]!r}" if score_cols else "",
        "top_label": "top-label confidence",
    }[layout]
    messages.insert(0, f"classification ({what}, K = {k}, label {label_col!r}); {n_keep} of {n} rows kept.")
    if rows.report.total:
        details = "; ".join(
            f"{r}: {c} (rows {name_list(rows.report.reasons[r].tolist(), 5)})" for r, c in rows.counts.items()
        )
        messages.append(f"{rows.report.total} row(s) dropped: {details}.")
    note = unused_columns_note(frame, used)
    if note:
        messages.append(note)
    kept_for_slices = slice_columns(frame, used, keep, messages)
    messages += reading_notes(frame)

    def _take(a: np.ndarray | None) -> np.ndarray | None:
        return None if a is None else a[keep]

    return PredictionSet(
        task="classification",
        source=src,
        layout=layout,
        labels=codes[keep],
        probs=probs,
        logits=logits,
        classes=list(classes),
        top_label_only=top_label_only,
        confidence=_take(confidence),
        point=_take(pred_codes),
        split=_take(labels["split"]),
        group=_take(labels["group"]),
        model=_take(labels["model"]),
        slice_columns=kept_for_slices,
        time=_take(time),
        row_number=np.arange(1, n + 1, dtype=np.int64)[keep],
        n_read=n,
        dropped=rows.report,
        messages=messages,
    )
