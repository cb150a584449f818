"""The validated container every part of the core consumes, and the input error type."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from .regression import PredictiveDistribution

__all__ = ["ALL", "InputError", "Message", "PredictionSet", "DropReport", "ReadingNote", "app_text",
           "iter_model_distributions", "iter_subsets"]

ALL = " (all)"
"""The group key of a whole model (every row of it, whatever its group).

It starts with a space so that no group of a file can be named like it: the readers strip every group value
(``calib_core.data.rows.label_values``), so a group literally called ``(all)`` stays a group of its own instead of
replacing the all-rows diagrams and doubling every metric row.  :func:`iter_subsets` refuses a hand-made set whose
group column holds the key itself.  Pages show it as ``views.pages.group_label`` says ("(all rows)").
"""


class InputError(ValueError):
    """Bad input: the message names the file, the column(s), the row(s) and what to do.

    The attributes mirror the message so a UI can highlight them; :meth:`app_message` is the message a page shows.

    Parameters
    ----------
    message : str
        What is wrong.
    source : str or None, default None
        File name.
    columns : list of str or None, default None
        Column names concerned.
    rows : list of int or None, default None
        1-based data row numbers (possibly truncated).
    hint : str or None, default None
        What to do, in the words of the Python API and the CLI (``columns={...}``, ``task=...``).
    app_hint : str or None, default None
        The same in the words of the dashboard's Data page (its column-mapping form and check boxes).
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        columns: list[str] | None = None,
        rows: list[int] | None = None,
        hint: str | None = None,
        app_hint: str | None = None,
    ) -> None:
        self.source = source
        self.columns = list(columns or [])
        self.rows = list(rows or [])
        self.hint = hint
        self.app_hint = app_hint
        self.message = message
        super().__init__(self._text(hint))

    def _text(self, hint: str | None) -> str:
        parts = []
        if self.source:
            parts.append(f"{self.source}:")
        parts.append(self.message)
        if hint:
            parts.append(f"What to do: {hint}")
        return " ".join(parts)

    def app_message(self) -> str:
        """The message in the words of the dashboard: ``app_hint`` instead of ``hint`` when one was given."""
        return self._text(self.app_hint or self.hint)

    def __reduce__(self):  # pickling (Streamlit's cache) keeps every keyword field
        return (_rebuild_input_error, (self.message, self.source, self.columns, self.rows, self.hint, self.app_hint))


def _rebuild_input_error(message, source, columns, rows, hint, app_hint) -> InputError:
    return InputError(message, source=source, columns=columns, rows=rows, hint=hint, app_hint=app_hint)


class Message(str):
    """A loader message whose wording in the dashboard differs from the Python/CLI wording.

    ``str(message)`` is the text for the Python API and the CLI (it may name ``columns={...}``); ``.app`` says the
    same in the words of the Data page.  :func:`app_text` picks the page's wording of any message.

    Attributes
    ----------
    app : str
        The wording of the Data page.
    """

    app: str

    def __new__(cls, text: str, app: str) -> Message:
        obj = super().__new__(cls, text)
        obj.app = app
        return obj

    def __reduce__(self):
        return (Message, (str(self), self.app))


class ReadingNote(str):
    """A loader message on how the file's text was read, which a user must see.

    Shown even where loader messages are not listed (the CLI prints these): lines read as one row because of an
    unbalanced quote, lines that were not UTF-8.

    Parameters
    ----------
    object : str
        The text of the note (as for ``str``).
    """

    def __reduce__(self):
        return (ReadingNote, (str(self),))


def app_text(message: str) -> str:
    """The dashboard's wording of a loader message (``Message.app``; any other string as it is).

    Parameters
    ----------
    message : str
        A loader message.

    Returns
    -------
    str
        Its wording on the Data page.
    """
    return getattr(message, "app", message)


#: The columns of :meth:`DropReport.summary` (made once; each summary gets its own Index object over them).
_DROP_COLUMNS = pd.Index(["reason", "count", "rows"])


@dataclass
class DropReport:
    """Rows removed during validation: one entry per reason, with the 1-based row numbers.

    Attributes
    ----------
    reasons : dict of str to ndarray
        Reason → the 1-based row numbers dropped for it.
    """

    reasons: dict[str, np.ndarray] = field(default_factory=dict)

    def add(self, reason: str, rows: np.ndarray) -> None:
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size:
            prev = self.reasons.get(reason)
            self.reasons[reason] = rows if prev is None else np.union1d(prev, rows)

    @property
    def total(self) -> int:
        if not self.reasons:
            return 0
        return int(np.unique(np.concatenate(list(self.reasons.values()))).size)

    def summary(self) -> pd.DataFrame:
        """Table with one row per reason: reason, count, first rows (1-based)."""
        if not self.reasons:  # the frame pandas builds from no records (object columns), without the inference
            return pd.DataFrame(np.empty((0, 3), dtype=object), columns=_DROP_COLUMNS.copy(), copy=False)
        return pd.DataFrame(
            [
                {"reason": r, "count": int(v.size), "rows": ", ".join(map(str, v[:10])) + (" …" if v.size > 10 else "")}
                for r, v in self.reasons.items()
            ],
            columns=["reason", "count", "rows"],
        )


@dataclass
class PredictionSet:
    """Validated predictions of one file (possibly several models, groups and splits).

    Regression sets carry ``y`` and ``dist`` (``None`` for point-only files, whose point
    prediction is in ``point``); classification sets carry ``labels`` and ``probs`` (and
    ``logits`` when the file gave logits).  ``split``, ``group`` and ``model`` are per-row string
    arrays or ``None``; ``features`` holds the feature columns (those
    feature-based calibrators use) and ``slice_columns`` every column no role took (features included), the
    candidate slice columns of ``calib_core.slices.candidates``; ``time`` the time column (``datetime64[ns]``, or
    ``datetime64[us]`` when a time lies outside 1677-09-21 … 2262-04-11; or numbers; ``calib_core.data.timecol``) or
    ``None``.  ``n_read`` counts the data rows
    in the file and ``dropped`` says which were removed and why (n_read = n_rows + dropped.total).

    Attributes
    ----------
    task : {"regression", "classification"}
        The task.
    source, layout : str
        File name and prediction layout.
    y, dist, point : ndarray, PredictiveDistribution or None
        Regression targets, predictive distributions and point predictions.
    labels, probs, logits, classes : ndarray, list or None
        Classification labels, probabilities, logits and class names.
    top_label_only : bool
        A top-label-only classification file (``confidence`` = max_k p_k, ``point`` = predicted class).
    split, group, model : ndarray of str or None
        Per-row split, group and model.
    features, slice_columns : pandas.DataFrame or None
        Feature columns and every column no role took.
    time : ndarray or None
        The time column.
    row_number : ndarray or None
        1-based row numbers in the file.
    units : pandas.DataFrame or None
        Forecast-hub files: the task-ID columns of every row's forecast unit (one row per row of the set; text ids
        stay text, ``horizon`` an integer, dates ``datetime64[ns]``), e.g. ``location``, ``target``,
        ``reference_date``, ``horizon``, ``target_end_date``.  ``None`` for other files.
    ordinal : bool
        Classification: the classes are ordered categories (a hub's ``pmf`` forecasts), in the order of ``classes``.
    n_read : int
        Data rows read.
    dropped : DropReport
        Rows removed and why.
    messages : list of str
        Loader messages.
    """

    task: Literal["regression", "classification"]
    source: str = "<memory>"
    layout: str = ""
    y: np.ndarray | None = None
    dist: PredictiveDistribution | None = None
    point: np.ndarray | None = None
    labels: np.ndarray | None = None
    probs: np.ndarray | None = None
    logits: np.ndarray | None = None
    classes: list[str] | None = None
    top_label_only: bool = False
    confidence: np.ndarray | None = None  # top-label-only classification files: max_k p_k (``point`` = predicted class)
    split: np.ndarray | None = None
    group: np.ndarray | None = None
    model: np.ndarray | None = None
    features: pd.DataFrame | None = None
    slice_columns: pd.DataFrame | None = None  # every column no role took (features too), for the slice explorer
    time: np.ndarray | None = None
    row_number: np.ndarray | None = None
    units: pd.DataFrame | None = None  # forecast-hub task IDs per row (location, horizon, reference/target dates …)
    ordinal: bool = False
    n_read: int = 0
    dropped: DropReport = field(default_factory=DropReport)
    messages: list[str] = field(default_factory=list)

    @property
    def n_rows(self) -> int:
        """Number of validated rows kept."""
        for a in (self.y, self.labels):
            if a is not None:
                return int(len(a))
        return 0

    def take(self, index: np.ndarray) -> PredictionSet:
        """The same set restricted to some rows (boolean mask or integer index)."""

        def _t(a):
            return None if a is None else a[index]

        return PredictionSet(
            task=self.task,
            source=self.source,
            layout=self.layout,
            y=_t(self.y),
            dist=None if self.dist is None else self.dist.take(index),
            point=_t(self.point),
            labels=_t(self.labels),
            probs=_t(self.probs),
            logits=_t(self.logits),
            classes=self.classes,
            top_label_only=self.top_label_only,
            confidence=_t(self.confidence),
            split=_t(self.split),
            group=_t(self.group),
            model=_t(self.model),
            features=None if self.features is None else self.features.iloc[np.asarray(index)].reset_index(drop=True)
            if np.asarray(index).dtype != bool
            else self.features.loc[np.asarray(index)].reset_index(drop=True),
            slice_columns=None if self.slice_columns is None else _frame_rows(self.slice_columns, index),
            time=_t(self.time),
            row_number=_t(self.row_number),
            units=None if self.units is None else _frame_rows(self.units, index),
            ordinal=self.ordinal,
            n_read=self.n_read,
            dropped=self.dropped,
            messages=list(self.messages),
        )

    def models(self) -> list[str]:
        """Model names in order of first appearance (``["model"]`` when there is no model column)."""
        if self.model is None:
            return ["model"]
        return list(pd.unique(self.model))


def _frame_rows(frame: pd.DataFrame, index: np.ndarray) -> pd.DataFrame:
    index = np.asarray(index)
    out = frame.loc[index] if index.dtype == bool else frame.iloc[index]
    return out.reset_index(drop=True)


def iter_model_distributions(
    pset: PredictionSet, *, min_rows: int = 2
) -> Iterator[tuple[str, np.ndarray, PredictiveDistribution]]:
    """Yield (model, y, predictive distributions) of every model of a regression set with a distribution.

    All its rows, groups together; models with fewer than ``min_rows`` rows are skipped; nothing for point
    predictions or a classification set.  The per-model loop of every regression lens drawn per model (ENCE against
    bins, the quantile-score decomposition, the CORP quantile reliability diagram).

    Parameters
    ----------
    pset : PredictionSet
        The prediction set.
    min_rows : int, default 2
        Fewest rows of a model.

    Yields
    ------
    model : str
        The model.
    y : ndarray
        Its targets.
    dist : PredictiveDistribution
        Its predictive distributions.
    """
    if pset.task != "regression" or pset.dist is None:
        return
    for model, _, mask in iter_subsets(pset, by_group=False):
        if int(mask.sum()) < min_rows:
            continue
        if mask.all():
            yield model, pset.y, pset.dist
        else:
            yield model, pset.y[mask], pset.dist.take(mask)


def iter_subsets(pset: PredictionSet, by_group: bool = True) -> Iterator[tuple[str, str, np.ndarray]]:
    """Yield (model, group, row mask) for every model (group :data:`ALL`), and every group within it.

    Parameters
    ----------
    pset : PredictionSet
        The prediction set.
    by_group : bool, default True
        Also every group within each model.

    Yields
    ------
    model : str
        The model.
    group : str
        The group (:data:`ALL` for all rows of the model).
    mask : ndarray of bool
        Its rows.
    """
    n = pset.n_rows
    models = pset.models()
    if by_group and pset.group is not None and (np.asarray(pset.group, dtype=object) == ALL).any():
        raise InputError(f"the group column holds {ALL!r}, the key reserved for all rows of a model",
                         source=pset.source, columns=["group"], hint="rename that group")
    for model in models:
        mmask = np.ones(n, dtype=bool) if pset.model is None else (pset.model == model)
        yield model, ALL, mmask
        if by_group and pset.group is not None:
            for g in pd.unique(pset.group[mmask]):
                yield model, str(g), mmask & (pset.group == g)
