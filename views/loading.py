"""The Data page's reading options of regression files and the loader's notices, without Streamlit.

Two controls under *Upload a prediction file*: **Crossing quantiles** — rows whose quantiles decrease with the level
are sorted per row (the rearrangement of Chernozhukov, Fernández-Val & Galichon 2010, the default) or dropped — and
**Layout** — which uncertainty layout a file with several is read in (auto: the one that keeps the most rows).
Their values are the keywords of :func:`calib_core.load_predictions` (``crossing=``, ``layout=``); the labels here
are the words the loader's Data-page messages use (``calib_core.data.regression_layout``).
"""

from __future__ import annotations

from typing import Any

from calib_core.base.predictions import PredictionSet, app_text
from calib_core.data.regression_layout import CROSSING_MODES, LAYOUTS, LoaderNotice

__all__ = ["CROSSING_LABELS", "LAYOUT_LABELS", "loader_notices", "options_token", "reading_options"]

#: The Crossing quantiles control: value (``crossing=``) → label.
CROSSING_LABELS = {"rearrange": "sort per row (rearrangement)", "drop": "drop those rows"}
#: The Layout control: value (``layout=``; ``"auto"`` is None) → label.
LAYOUT_LABELS = {"auto": "auto (the one that keeps the most rows)", "gaussian": "gaussian (mean, spread)",
                 "quantile": "quantile", "sample": "sample (ensemble members)", "point": "point (mean only)"}


def reading_options(crossing: Any, layout: Any) -> dict[str, Any]:
    """The ``crossing=`` / ``layout=`` keywords of ``cc.load_predictions`` from the two controls' values.

    Parameters
    ----------
    crossing : str or None
        The Crossing quantiles control's value (None or unknown: ``"rearrange"``).
    layout : str or None
        The Layout control's value (None, ``"auto"`` or unknown: automatic).

    Returns
    -------
    dict
        ``{"crossing": ..., "layout": ...}``.

    Examples
    --------
    >>> from views.loading import reading_options
    >>> reading_options(None, "auto"), reading_options("drop", "gaussian")
    ({'crossing': 'rearrange', 'layout': None}, {'crossing': 'drop', 'layout': 'gaussian'})
    """
    return {"crossing": crossing if crossing in CROSSING_MODES else "rearrange",
            "layout": layout if layout in LAYOUTS else None}


def options_token(options: dict[str, Any]) -> str:
    """The part of the loaded data's token that tells the reading options apart (``rearrange-auto`` …).

    Parameters
    ----------
    options : dict
        :func:`reading_options`' result.

    Returns
    -------
    str
        ``"<crossing>-<layout or auto>"``.
    """
    return f"{options['crossing']}-{options['layout'] or 'auto'}"


def loader_notices(pset: PredictionSet) -> list[str]:
    """The loader's notices a user must read (crossing quantiles sorted or dropped, the layout chosen among several),
    in the Data page's words; the text came partly from the file, so the page escapes it.

    Parameters
    ----------
    pset : PredictionSet
        The loaded set.

    Returns
    -------
    list of str
        One text per notice.
    """
    return [app_text(m) for m in pset.messages if isinstance(m, LoaderNotice)]
