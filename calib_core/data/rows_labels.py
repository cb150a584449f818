"""The split, group and model columns of a prediction file: which columns they are and their per-row labels.

A split column's values are calibration / test roles (:func:`split_roles`: ``cal``/``calibration``/``val`` …,
``test``/``holdout`` …, ``train``; 0/1 in a column named like a split); a column named like a split whose values are
no roles (fold numbers, site names) is read as the group column instead, and a note says so
(:func:`row_label_columns`).  :func:`row_labels` gives the parsers the three columns as per-row string arrays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import Message
from .columns import find_column, normalize_name
from .rows import label_values

__all__ = ["SPLIT_SYNONYMS", "SPLIT_TRAIN", "row_label_columns", "row_labels", "split_roles"]

SPLIT_SYNONYMS = {
    "cal": "cal", "calib": "cal", "calibration": "cal", "calibrate": "cal", "val": "cal", "valid": "cal",
    "validation": "cal", "test": "test", "testing": "test", "eval": "test", "evaluation": "test", "holdout": "test",
}

SPLIT_TRAIN = frozenset({"train", "training", "fit"})
"""Split values of rows used for neither calibration nor testing (kept as ``train``)."""

_SPLIT_01_NAMES = frozenset({"split", "role", "split_role", "subset", "partition", "set", "is_test", "is_cal",
                             "is_calibration"})
_SPLIT_01_CAL = frozenset({"is_cal", "is_calibration"})
_TRUE = frozenset({"1", "true", "yes"})
_FALSE = frozenset({"0", "false", "no"})


def split_roles(values: np.ndarray, name: str, missing: str = "(missing)") -> tuple[np.ndarray, str] | None:
    """The per-row roles ``cal`` / ``test`` (/ ``train``) of a split column's values, or None when they are no roles.

    Values are roles when every distinct value is a role word — ``cal``, ``calib``, ``calibration``, ``val``,
    ``valid``, ``validation`` → ``cal``; ``test``, ``testing``, ``eval``, ``holdout`` → ``test``; ``train``,
    ``training``, ``fit`` → ``train`` (case-insensitive) — and one of cal/test occurs; or when they are 0/1
    (true/false) in a column named like a split (``split``, ``role``, ``is_test`` …): 1 = test, 0 = cal (``is_cal`` /
    ``is_calibration``: 1 = cal).  Anything else (fold numbers 0–4, site names) gives None: such a column is a
    group, not a split.

    Parameters
    ----------
    values : ndarray of object of shape (n,)
        The column's values as strings (:func:`label_values`).
    name : str
        The column's name.
    missing : str, default "(missing)"
        The label of missing cells (kept as it is).

    Returns
    -------
    tuple of (ndarray, str) or None
        The mapped values (``missing`` kept) and a sentence on any renaming (``""`` if none); None when the values are
        no roles.

    Examples
    --------
    >>> import numpy as np
    >>> from calib_core.data.rows_labels import split_roles
    >>> roles, note = split_roles(np.array(["Calibration", "test", "test"], dtype=object), "split")
    >>> roles.tolist(), note
    (['cal', 'test', 'test'], 'split values renamed: Calibration→cal.')
    >>> split_roles(np.array(["0", "1", "2"], dtype=object), "fold") is None
    True
    """
    uniq = [str(u) for u in pd.unique(values) if str(u) != missing]
    if not uniq:
        return None
    low = {u: u.strip().lower() for u in uniq}
    words = {**SPLIT_SYNONYMS, **{w: "train" for w in SPLIT_TRAIN}}
    mapping: dict[str, str] | None = None
    note = ""
    if all(v in words for v in low.values()) and any(words[v] in ("cal", "test") for v in low.values()):
        mapping = {u: words[v] for u, v in low.items()}
        renamed = sorted(f"{k}→{v}" for k, v in mapping.items() if k != v)
        note = f"split values renamed: {', '.join(renamed[:10])}." if renamed else ""
    elif normalize_name(name) in _SPLIT_01_NAMES and set(low.values()) <= (_TRUE | _FALSE):
        one, zero = ("cal", "test") if normalize_name(name) in _SPLIT_01_CAL else ("test", "cal")
        mapping = {u: one if v in _TRUE else zero for u, v in low.items()}
        note = f"split column {name!r}: 1 read as {one}, 0 as {zero}."
    if mapping is None:
        return None
    mapping[missing] = missing
    return pd.Series(values).map(mapping).to_numpy(dtype=object), note


def _value_list(values: np.ndarray, k: int = 6) -> str:
    uniq = pd.unique(values)
    shown = ", ".join(str(u) for u in uniq[:k])
    return shown + (f", … ({len(uniq)} values)" if len(uniq) > k else "")


def row_label_columns(
    frame: pd.DataFrame, cols: Mapping[str, Any], src: str, used: Sequence[str]
) -> tuple[dict[str, str | None], np.ndarray | None, list[str]]:
    """Which columns are the split, group and model columns, the split's per-row roles, and notes on the choice.

    The mapping's choice is taken as given.  Found by name (``ALIASES``), a split column is taken only when its
    values are calibration/test roles (:func:`split_roles`); otherwise (e.g. ``fold`` 0–4) it becomes the group
    column when the file has none, and a note says so.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    cols : mapping
        The user's ``columns=`` mapping (may be empty).
    src : str
        The file name for messages.
    used : sequence of str
        Columns already taken by other roles.

    Returns
    -------
    names : dict of str to str or None
        ``{"split": …, "group": …, "model": …}``: the column of each role, or None.
    split_values : ndarray or None
        The split roles per row (None without a split column).
    notes : list of str
        Sentences on the choice, for the loader's messages.
    """
    taken = list(used)
    names: dict[str, str | None] = {}
    notes: list[str] = []
    split_values: np.ndarray | None = None
    offered: str | None = None
    name = find_column(frame, "split", cols, source=src, exclude=taken)
    if name is not None:
        raw = label_values(frame, name)
        roles = split_roles(raw, name)
        if roles is not None:
            split_values, note = roles
            notes += [note] if note else []
        elif "split" in cols:  # the user's choice: values kept as they are
            split_values = raw
            notes.append(
                f"split values other than cal/test kept as they are: {sorted({str(v) for v in pd.unique(raw)})[:10]}."
            )
        else:
            offered, name = name, None
        if name is not None:
            taken.append(name)
    names["split"] = name
    for role in ("group", "model"):
        found = find_column(frame, role, cols, source=src, exclude=taken)
        if role == "group" and found is None and offered is not None and "group" not in cols:
            found = offered
            values = _value_list(label_values(frame, offered))
            notes.append(Message(
                f"column {offered!r} (values {values}) does not hold calibration/test roles (cal/test, 0/1 in a "
                "column named split or is_test), so it is read as a group, not as the split. If it is the split, "
                f"pass columns={{'split': '{offered}'}}.",
                f"column {offered!r} (values {values}) does not hold calibration/test roles (cal/test, 0/1 in a "
                "column named split or is_test), so it is read as a group, not as the split. If it is the split, "
                f"choose it as the split column under Column mapping above and load the file again.",
            ))
        elif role == "group" and offered is not None:
            notes.append(Message(
                f"column {offered!r} does not hold calibration/test roles and a group column exists: not used. "
                f"Pass columns={{'split': '{offered}'}} to use it as the split.",
                f"column {offered!r} does not hold calibration/test roles and a group column exists: not used. "
                "Choose it as the split column under Column mapping above to use it as the split.",
            ))
        names[role] = found
        if found is not None:
            taken.append(found)
    return names, split_values, notes


def row_labels(
    frame: pd.DataFrame, cols: Mapping[str, Any], src: str, used: list[str], messages: list[str]
) -> dict[str, np.ndarray | None]:
    """Optional split / group / model columns as string arrays (:func:`row_label_columns`; split roles cal/test).

    The columns taken are appended to ``used`` and the notes on the choice to ``messages``.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    cols : mapping
        The user's ``columns=`` mapping (may be empty).
    src : str
        The file name for messages.
    used : list of str
        Columns already taken by other roles; the split / group / model columns are appended.
    messages : list of str
        The parser's messages; the notes are appended.

    Returns
    -------
    dict of str to ndarray or None
        ``{"split": …, "group": …, "model": …}``: per-row labels (split: ``cal`` / ``test`` / ``train``), or None.
    """
    names, split_values, notes = row_label_columns(frame, cols, src, used)
    messages += notes
    out: dict[str, np.ndarray | None] = {}
    for role in ("split", "group", "model"):
        name = names[role]
        if name is not None:
            used.append(name)
        out[role] = None if name is None else label_values(frame, name)
    if names["split"] is not None:
        out["split"] = split_values
        unknown = sorted({str(v) for v in pd.unique(split_values)} - {"cal", "test", "train", "(missing)"})
        if unknown and "split" not in cols:
            messages.append(f"split values other than cal/test kept as they are: {unknown[:10]}.")
    return out
