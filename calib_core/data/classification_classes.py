"""The classes of a classification file: which label value is which score column.

Labels may be integers 0..K−1 or class names.  :func:`class_index` matches names to the score columns' class names
(exactly, then case-insensitively); names with integer-suffixed columns are mapped alphabetically (scikit-learn's
column order, :func:`sorted_class_names`) when exactly K distinct names occur, with a message; integer labels with
named columns are read as column positions; anything else is refused naming the rows (1-based labels and a K
mismatch are named as such).  :func:`binary_classes` names the negative and the positive class of a single-column
binary file.  Used by :func:`calib_core.data.classification.parse_classification_frame`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import InputError, Message
from .columns import name_list
from .rows import rows_text

__all__ = ["binary_classes", "class_index", "positive_message", "sorted_class_names"]

_POSITIVE_NAMES = ("1", "true", "yes", "y", "pos", "positive")


def sorted_class_names(names: Sequence[str]) -> list[str]:
    """Sorted class names: numerically when all are integers, else as strings.

    Parameters
    ----------
    names : sequence of str
        Class names.

    Returns
    -------
    list of str
        The names in order.

    Examples
    --------
    >>> from calib_core.data.classification_classes import sorted_class_names
    >>> sorted_class_names(["10", "2", "1"]), sorted_class_names(["b", "a"])
    (['1', '2', '10'], ['a', 'b'])
    """
    if all(re.fullmatch(r"[-+]?\d+", n) for n in names):
        return sorted(names, key=int)
    return sorted(names)


def class_index(
    labels: np.ndarray,
    classes: list[str],
    valid: np.ndarray,
    label_col: str,
    src: str,
    messages: list[str],
    integer_columns: bool,
) -> tuple[np.ndarray, list[str]]:
    """Map label strings to 0..K−1 using the class names; raise naming rows when labels are not classes.

    Names are matched exactly, then case-insensitively.  When none matches: integer labels 0..K−1 with named columns
    are read as column positions (a message says so); names with integer-numbered columns are mapped alphabetically
    (scikit-learn's order) when exactly K distinct names occur (a message says so, and the class names become the
    label names).

    Parameters
    ----------
    labels : ndarray of object of shape (n,)
        The label column as strings.
    classes : list of str
        The class name of each score column (K of them).
    valid : ndarray of bool of shape (n,)
        The rows to map (the others get −1).
    label_col : str
        The label column's name, for messages.
    src : str
        The file name for messages.
    messages : list of str
        The parser's messages; notes on the mapping are appended.
    integer_columns : bool
        Whether the score columns are numbered (``prob_0 …``) rather than named.

    Returns
    -------
    codes : ndarray of int64 of shape (n,)
        The class index of every valid row, −1 elsewhere.
    classes : list of str
        The class names (the label names when they were mapped alphabetically).

    Raises
    ------
    InputError
        Labels that are no class; the hint names 1-based labels, a K mismatch or the ``classes`` mapping.
    """
    k = len(classes)
    lut = {c: i for i, c in enumerate(classes)}
    codes = np.full(labels.shape[0], -1, dtype=np.int64)
    # hash-based factorize (O(N)) with its few distinct values sorted, instead of np.unique's sort of all labels
    codes_seen, seen = pd.factorize(labels[valid])
    order = np.argsort(seen, kind="stable")
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    uniq, inv = np.asarray(seen)[order], rank[codes_seen]
    mapped = np.array([lut.get(u, -1) for u in uniq], dtype=np.int64)
    if (mapped < 0).any():  # case-insensitive second chance
        fold = {c.casefold(): i for i, c in enumerate(classes)}
        mapped = np.array([m if m >= 0 else fold.get(u.casefold(), -1) for u, m in zip(uniq, mapped)], dtype=np.int64)
    unknown = uniq[mapped < 0]
    if unknown.size:
        is_int = np.array([bool(re.fullmatch(r"[-+]?\d+", u)) for u in uniq])
        ints_in_range = bool(is_int.all()) and all(0 <= int(u) < k for u in uniq)
        if (mapped < 0).all() and ints_in_range and not integer_columns:
            mapped = np.array([int(u) for u in uniq], dtype=np.int64)
            messages.append(f"integer labels 0..{k - 1} read as positions of the score columns "
                            f"({name_list(classes, 4)}).")
        elif integer_columns and not is_int.any() and uniq.size == k:
            order = sorted_class_names(list(uniq))
            alpha = {u: i for i, u in enumerate(order)}
            mapped = np.array([alpha[u] for u in uniq], dtype=np.int64)
            pairs = (f"{', '.join(f'{u}→{classes[i]}' for u, i in list(alpha.items())[:10])}"
                     f"{' …' if k > 10 else ''}")
            text = f"label names mapped to the score columns alphabetically (scikit-learn's order): {pairs}."
            messages.append(Message(
                f"{text} Pass columns={{'classes': [...]}} if the columns are in another order.",
                f"{text} If the columns are in another order, name them by class (prob_<class name>, e.g. "
                f"prob_{order[0]}) and upload the file again.",
            ))
            classes = order
        else:
            bad_rows = np.flatnonzero(valid)[np.isin(inv, np.flatnonzero(mapped < 0))]
            ints = [int(u) for u in uniq[is_int]]
            hint = "check that the label column and the score columns describe the same classes"
            app_hint = None
            if integer_columns and ints and min(ints) >= 1 and max(ints) == k and all(c.isdigit() for c in classes):
                hint = (
                    f"labels look 1-based (1..{k}) while the score columns are numbered 0..{k - 1}: subtract 1 "
                    "from the labels"
                )
            elif integer_columns and is_int.all():
                hint = (
                    f"labels must be 0..{k - 1} for {k} score columns: is a class column missing (K mismatch) "
                    "or are these the wrong labels?"
                )
            elif not is_int.all():
                hint = (
                    f"pass columns={{'classes': [...]}} listing the {k} class names in the order of the score columns"
                )
                app_hint = (
                    "name each score column after its class (prob_<class name>, e.g. "
                    f"prob_{unknown[0]}) so that the label values match the columns, and upload the file again"
                )
            raise InputError(
                f"column {label_col!r} has {bad_rows.size} label(s) that are not among the {k} classes "
                f"({name_list(classes, 6)}): {name_list(unknown.tolist(), 6)} (rows {rows_text(bad_rows)})",
                source=src,
                columns=[label_col],
                rows=(bad_rows[:20] + 1).tolist(),
                hint=hint,
                app_hint=app_hint,
            )
    codes[valid] = mapped[inv]
    return codes, classes


def binary_classes(
    labels: np.ndarray, valid: np.ndarray, positive: Any, label_col: str, score_col: str, suffix: str, src: str,
    why: list[str] | None = None,
) -> list[str]:
    """[negative, positive] class names of a single-column binary file.

    The positive class is ``positive`` when given, else the score column's suffix (or name) when it is a label value
    (``prob_yes`` or ``malignant`` with labels benign/malignant), else 1 / true / yes / y / pos / positive among the
    label values, else the second of the two sorted label values — the class whose probability scikit-learn's
    ``predict_proba(X)[:, 1]`` gives (its ``classes_`` are sorted).  ``why`` receives how it was chosen.

    Parameters
    ----------
    labels : ndarray of object of shape (n,)
        The label column as strings.
    valid : ndarray of bool of shape (n,)
        The rows whose labels count.
    positive : object or None
        The user's positive class (``columns["positive"]``).
    label_col, score_col : str
        The label and score columns' names, for messages.
    suffix : str
        The class name in the score column's name (``""`` when it has none).
    src : str
        The file name for messages.
    why : list of str, optional
        Receives how the positive class was chosen, in words.

    Returns
    -------
    list of str
        ``[negative, positive]``.

    Raises
    ------
    InputError
        More than two label values, a given positive class that is no label value, or a single label value that
        tells nothing (the positive class is then asked for).

    Examples
    --------
    >>> import numpy as np
    >>> from calib_core.data.classification_classes import binary_classes
    >>> labels = np.array(["benign", "malignant", "benign"], dtype=object)
    >>> why = []
    >>> binary_classes(labels, np.ones(3, bool), None, "y", "prob", "", "f.csv", why), why
    (['benign', 'malignant'], ['the second of the sorted label values, as predict_proba(X)[:, 1] of scikit-learn'])
    """
    why = [] if why is None else why
    present = [str(u) for u in np.unique(labels[valid])]
    explicit = positive is not None
    why.append("as chosen")
    if positive is None and suffix and any(u.casefold() == suffix.strip().casefold() for u in present):
        positive = suffix  # prob_yes with labels no/yes; a suffix that is no label value (prob_cat) is not used
        why[-1] = "the column is named after it"
    elif positive is None and any(u.casefold() == score_col.strip().casefold() for u in present):
        positive, why[-1] = score_col, "the column is named after it"
    if positive is not None:
        pos = str(positive).strip()
        match = [u for u in present if u == pos] or [u for u in present if u.casefold() == pos.casefold()]
        pos = match[0] if match else pos
        others = [u for u in present if u != pos]
        if explicit and not match and len(present) == 2:
            raise InputError(
                f"the positive class {pos!r} of {score_col!r} is not a value of {label_col!r} (values: "
                f"{name_list(present, 8)})",
                source=src,
                columns=[label_col, score_col],
                hint=f"pass columns={{'positive': '{present[-1]}'}} (one of the label values)",
                app_hint=f"choose one of the label values ({name_list(present, 8)}) under 'Positive class' (below the "
                "loaded data, or in the Column mapping) and load the file again",
            )
        if len(others) > 1:
            raise InputError(
                f"column {score_col!r} is a single (binary) score but {label_col!r} has {len(present)} values: "
                f"{name_list(present, 8)}",
                source=src,
                columns=[label_col, score_col],
                hint="a binary file needs two label values; for K classes give prob_0 … prob_{K-1}",
            )
        neg = others[0] if others else ("0" if pos == "1" else f"not {pos}")
        return [neg, pos]
    if len(present) > 2:
        raise InputError(
            f"column {score_col!r} is a single (binary) score but {label_col!r} has {len(present)} values: "
            f"{name_list(present, 8)}",
            source=src,
            columns=[label_col, score_col],
            hint="a binary file needs two label values; for K classes give prob_0 … prob_{K-1}",
        )
    folded = {u.casefold(): u for u in present}
    for name in _POSITIVE_NAMES:
        if name in folded:
            pos = folded[name]
            others = [u for u in present if u != pos]
            neg = others[0] if others else ("0" if pos == "1" else f"not {pos}")
            why[-1] = f"{pos!r} reads as the positive value"
            return [neg, pos]
    if set(present) <= {"0"}:
        why[-1] = "'1' reads as the positive value"
        return ["0", "1"]
    if len(present) == 2:
        why[-1] = "the second of the sorted label values, as predict_proba(X)[:, 1] of scikit-learn"
        return sorted_class_names(present)
    raise InputError(
        f"cannot tell which label value of {label_col!r} is the positive class of {score_col!r} "
        f"(values: {name_list(present, 8)})",
        source=src,
        columns=[label_col, score_col],
        hint=f"pass columns={{'positive': '{present[-1] if present else 'yes'}'}}",
        app_hint="choose the positive class under Column mapping ('Positive class', Task: classification) and load "
        "the file again",
    )


def positive_message(score_col: str, kind: str, classes: Sequence[str], why: Sequence[str]) -> Message:
    """The loader's statement of a binary file's positive class, how it was chosen and how to switch it.

    Parameters
    ----------
    score_col : str
        The probability (or logit) column.
    kind : {"probs", "logits"}
        What the column holds.
    classes : sequence of str
        ``[negative, positive]``.
    why : sequence of str
        How the positive class was chosen (:func:`binary_classes`).

    Returns
    -------
    Message
        The Python wording (``columns={'positive': ...}``) and the Data page's (the Positive class control).
    """
    reason = f" ({why[-1]})" if why else ""
    text = (f"binary file: {score_col!r} is the {'logit' if kind == 'logits' else 'probability'} of the positive class "
            f"{classes[1]!r}{reason}, the negative class is {classes[0]!r}")
    other = f"if the column holds the probability of {classes[0]!r}"
    return Message(f"{text}; {other}, pass columns={{'positive': '{classes[0]}'}}.",
                   f"{text}; {other}, choose {classes[0]!r} under 'Positive class' below the loaded data.")
