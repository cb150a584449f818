"""What a redraw on unchanged data reuses: figures already turned into Plotly's wire dict, digests of the tables a
figure is drawn from, and diagnoses whose rows are only cut out when the diagnosis is not cached yet.

A rerun of a diagnosis page with every result cached still spent most of its server CPU on work whose inputs had
not changed: ``st.plotly_chart`` turns each figure into a plain dict on every run (``Figure.to_dict``: a deep copy of
every trace and the base64 encoding of every array, ~1.3 ms a figure), the figure keys were digests of the diagram
tables (``dashboard.content_key``: pandas hashing, ~1–2 ms a figure), and a selection's rows were cut out of the
data (``PredictionSet.take``) although only a cache miss reads them.  This module keeps those per explicit key:

* :func:`prepared_figure` — a figure whose ``to_dict`` returns its wire dict, made once per figure object (figures
  of :func:`dashboard.figure` are shared and never mutated, so their dict is too);
* :func:`keyed_digest` — ``content_key(*parts)`` memoised on an explicit key that determines the parts;
* :func:`diagnose_lazily` — ``dashboard.diagnose_cached`` (the same cache entry) whose rows are made only on a miss;
* :func:`keyed_result` — ``dashboard.result_cached`` without the deep copy of a hit (for values nobody mutates).

Nothing here changes a number or a figure: the JSON a browser receives is byte for byte that of the figure
(``tests/dashboard/test_redraw_cache.py``).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import calib_core as cc

from .cache import RESULTS, content_key, memoized

__all__ = ["prepared_figure", "keyed_digest", "diagnose_lazily", "keyed_result", "DIGEST_ENTRIES"]

DIGEST_ENTRIES = 4096  #: digests kept by :func:`keyed_digest` (least recently used dropped; ~100 bytes each)
_DIGESTS: OrderedDict[Hashable, str] = OrderedDict()
_DIGESTS_LOCK = threading.Lock()
_WIRE = "_calab_wire_dict"  # the attribute of a figure holding its wire dict


def _wire_dict(fig: Any) -> dict:
    """The dict ``st.plotly_chart`` serialises: ``fig.to_dict()`` without trace ``uid`` (``plotly.io.to_json``
    drops them; dropping them here means Plotly never changes the shared dict)."""
    wire = fig.__dict__.get(_WIRE)
    if wire is None:
        wire = type(fig).to_dict(fig)
        for trace in wire.get("data", []):
            trace.pop("uid", None)
        object.__setattr__(fig, _WIRE, wire)
    return wire


def prepared_figure(fig: Any) -> Any:
    """A stand-in for the Plotly figure ``fig`` whose ``to_dict()`` returns ``fig``'s wire dict, converted once
    (a deep copy and base64 arrays) and then shared: what ``st.plotly_chart`` needs of a figure on every rerun.

    ``fig`` must never be mutated after this call (figures of :func:`dashboard.figure` never are); the stand-in
    shares its traces and layout and is meant for ``st.plotly_chart`` only.  Anything that is not a Plotly
    figure is returned as it is.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure or any
        The figure.

    Returns
    -------
    plotly.graph_objects.Figure or any
        The stand-in (same class, same traces and layout), or ``fig`` itself when it is not a Plotly figure.

    Examples
    --------
    >>> import plotly.graph_objects as go, plotly.io as pio
    >>> fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    >>> pio.to_json(prepared_figure(fig).to_dict(), validate=False) == pio.to_json(fig, validate=False)
    True
    """
    from plotly.basedatatypes import BaseFigure

    if not isinstance(fig, BaseFigure):
        return fig
    wire = _wire_dict(fig)
    stand_in = object.__new__(type(fig))
    stand_in.__dict__.update(fig.__dict__)
    object.__setattr__(stand_in, "to_dict", lambda: wire)
    return stand_in


def keyed_digest(key: Hashable, parts: Callable[[], tuple]) -> str:
    """``dashboard.content_key(*parts())`` memoised on ``key``, which must determine the parts (e.g. a diagnosis's
    cache key, the selection and the view flags): a rerun with the same key hashes no table again.

    Parameters
    ----------
    key : hashable
        What determines the parts.
    parts : callable
        Returns the tuple of parts to digest (called on a miss only).

    Returns
    -------
    str
        The digest, equal to ``content_key(*parts())``.

    Examples
    --------
    >>> keyed_digest(("doc", 1), lambda: (1, "a")) == content_key(1, "a")
    True
    """
    with _DIGESTS_LOCK:
        known = _DIGESTS.get(key)
        if known is not None:
            _DIGESTS.move_to_end(key)
            return known
    digest = content_key(*parts())
    with _DIGESTS_LOCK:
        _DIGESTS[key] = digest
        while len(_DIGESTS) > DIGEST_ENTRIES:
            _DIGESTS.popitem(last=False)
    return digest


def diagnose_lazily(key: str, rows: Callable[[], cc.PredictionSet], **options: Any) -> cc.Report:
    """``dashboard.diagnose_cached(key, rows(), **options)`` — the same cache entry — with ``rows()`` called only
    when the diagnosis is not cached (cutting a selection's rows out of 1e5 costs ~3 ms a rerun otherwise).

    Parameters
    ----------
    key : str
        The diagnosis's explicit key (data token, filters, selection).
    rows : callable
        Returns the rows to diagnose.
    **options
        Options of ``cc.diagnose``.

    Returns
    -------
    Report
        A private copy of the cached diagnosis.
    """
    options_json = json.dumps(options, sort_keys=True)
    return memoized(RESULTS, ("diagnosis", key, options_json), lambda: cc.diagnose(rows(), by_group=False, **options),
                    copied=True, spinner="Diagnosing (tests, intervals and verdicts)…")


def keyed_result(key: Hashable, compute: Callable[[], Any]) -> Any:
    """``compute()`` cached in ``dashboard.cache.RESULTS`` on ``key`` and shared, not copied: for values the caller
    never mutates (row masks, display frames), so a hit costs nothing.

    Parameters
    ----------
    key : hashable
        Determines the value.
    compute : callable
        Computes it on a miss.

    Returns
    -------
    any
        The shared value (do not mutate it).
    """
    return memoized(RESULTS, ("shared", key), compute, copied=False)
