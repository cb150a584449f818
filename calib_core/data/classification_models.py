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

__all__ = ["parse_model_columns"]


def parse_model_columns(
    frame: pd.DataFrame, source: str, columns: Mapping[str, Any], renormalize: bool = False, *, min_rows: int = 2,
) -> PredictionSet:
    """A classification set with one model per probability column of ``columns["model_columns"]``.

    Row ``j·n + i`` of the set is file row ``i + 1`` under model ``j`` (``model_columns``' order); ``n_read`` counts
    model × file rows, and a message says which rows are which model and which file rows were dropped per model.
    Every other role (label, positive, split, group, time) is read as for one model.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    source : str
        The file name for messages.
    columns : mapping
        The ``columns=`` mapping; ``model_columns`` is a list of column names (one name: one model).
    renormalize : bool, default False
        Passed on (a binary column has nothing to renormalise).
    min_rows : int, default 2
        The fewest valid rows accepted.

    Returns
    -------
    PredictionSet
        Layout ``"binary_prob"`` with ``model`` set.

    Raises
    ------
    InputError
        ``model_columns`` that is no list of columns of the file, given together with a ``model`` column or score
        columns, and every error of the classification parser.

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.classification_models import parse_model_columns
    >>> frame = pd.DataFrame({"obs": [1, 0, 1], "A": [0.8, 0.3, 0.6], "B": [0.5, 0.5, 0.5]})
    >>> ps = parse_model_columns(frame, "rain.csv", {"label": "obs", "model_columns": ["A", "B"]})
    >>> ps.models(), ps.n_rows, ps.probs[:, 1].tolist()
    (['A', 'B'], 6, [0.8, 0.3, 0.6, 0.5, 0.5, 0.5])
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
    from .classification import parse_classification_frame  # the parser calls this module

    pset = parse_classification_frame(long, source, {**cols, "probs": prob, "model": model}, renormalize,
                                      min_rows=min_rows)
    what = f"each of the {len(names)} model columns"
    pset.messages = [_reworded(m, f"binary probability {prob!r}", f"binary probabilities of {len(names)} models")
                     for m in pset.messages]
    pset.messages = [_reworded(m, f"{prob!r} is the probability", f"{what} is the probability") for m in pset.messages]
    pset.messages.insert(1, model_rows_note(names, len(frame), pset.dropped.reasons))
    return pset


def _reworded(message: str, old: str, new: str) -> str:
    """A loader message with ``old`` replaced by ``new`` in both its wordings."""
    if old not in message:
        return message
    if isinstance(message, Message):
        return Message(str(message).replace(old, new), message.app.replace(old, new))
    return type(message)(str(message).replace(old, new))
