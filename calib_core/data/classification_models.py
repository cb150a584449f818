"""Several forecasters of one binary event, one probability column each, read as several models.

``columns={"label": "obs", "model_columns": ["Logistic", "EMOS", "ENS", "EPC"]}`` (or the columns detected by
:func:`calib_core.data.detect_exports.detect_export`) is read as the long table a user would write by hand
(:func:`calib_core.data.detect_exports.melt_model_columns`: one row per model and file row, a ``model`` column,
one ``probability`` column): every page that handles several models (the Classification page's model filter,
Compare models) then works on it, with the same results as the hand-written long file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ..base.predictions import InputError, Message, PredictionSet
from .columns import resolve_column
from .detect_exports import melt_model_columns, model_rows_note

__all__ = ["model_columns_frame", "model_columns_messages"]


def model_columns_frame(
    frame: pd.DataFrame, source: str, columns: Mapping[str, Any],
) -> tuple[pd.DataFrame, dict[str, Any], list[str], str]:
    """The long table and mapping that read ``columns["model_columns"]`` as one model per probability column.

    Row ``j·n + i`` of the long table is file row ``i + 1`` under model ``j`` (``model_columns``' order); the
    classification parser reads it with the returned mapping (``probs``: the probability column, ``model``: the model
    column; every other role — label, positive, split, group, time — as for one model), and
    :func:`model_columns_messages` then words its messages for the file.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    source : str
        The file name for messages.
    columns : mapping
        The ``columns=`` mapping; ``model_columns`` is a list of column names (one name: one model).

    Returns
    -------
    long : DataFrame
        One row per model and file row.
    mapping : dict
        The mapping to parse it with.
    names : list of str
        The model columns (the models), in order.
    probability : str
        The long table's probability column.

    Raises
    ------
    InputError
        ``model_columns`` that is no list of columns of the file, or given together with a ``model`` column or score
        columns.

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.classification_models import model_columns_frame
    >>> frame = pd.DataFrame({"obs": [1, 0, 1], "A": [0.8, 0.3, 0.6], "B": [0.5, 0.5, 0.5]})
    >>> long, mapping, names, _ = model_columns_frame(frame, "rain.csv", {"label": "obs", "model_columns": ["A", "B"]})
    >>> len(long), mapping, names
    (6, {'label': 'obs', 'probs': 'probability', 'model': 'model'}, ['A', 'B'])
    """
    cols = dict(columns)
    spec = cols.pop("model_columns")
    spec = [spec] if isinstance(spec, str) else spec
    if not isinstance(spec, Sequence) or not spec:
        raise InputError("columns['model_columns'] must list the models' probability columns", source=source,
                         hint="e.g. columns={'label': 'obs', 'model_columns': ['Logistic', 'EMOS']}",
                         app_hint="choose the model columns under Column mapping (Task: classification)")
    names = list(dict.fromkeys(resolve_column(frame, c, role="model_columns", source=source) for c in spec))
    clash = [k for k in ("model", "probs", "prob", "logits", "logit") if cols.get(k) is not None]
    if clash:
        raise InputError(
            f"model columns ({', '.join(names[:6])}) and a {clash[0]!r} column cannot be read together: each model "
            "column is one model's probability",
            source=source, columns=names,
            hint=f"leave out columns['{clash[0]}'], or leave out columns['model_columns']",
            app_hint="choose either the model columns or the score and model columns under Column mapping")
    long, prob, model = melt_model_columns(frame, names)
    return long, {**cols, "probs": prob, "model": model}, names, prob


def model_columns_messages(pset: PredictionSet, names: Sequence[str], n: int, probability: str) -> list[str]:
    """The parser's messages on a long table of model columns, worded for the file.

    Parameters
    ----------
    pset : PredictionSet
        The set parsed from :func:`model_columns_frame`'s table.
    names : sequence of str
        The model columns.
    n : int
        The file's data rows.
    probability : str
        The long table's probability column.

    Returns
    -------
    list of str
        The messages, the second saying which rows are which model and which file rows were dropped per model.
    """
    what = f"each of the {len(names)} model columns"
    out = [_reworded(m, f"binary probability {probability!r}", f"binary probabilities of {len(names)} models")
           for m in pset.messages]
    out = [_reworded(m, f"{probability!r} is the probability", f"{what} is the probability") for m in out]
    out.insert(1, model_rows_note(names, n, pset.dropped.reasons))
    return out


def _reworded(message: str, old: str, new: str) -> str:
    """A loader message with ``old`` replaced by ``new`` in both its wordings."""
    if old not in message:
        return message
    if isinstance(message, Message):
        return Message(str(message).replace(old, new), message.app.replace(old, new))
    return type(message)(str(message).replace(old, new))
