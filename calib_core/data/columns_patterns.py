"""Columns found by their name pattern: quantile levels, ensemble members, class scores, features.

Completes the alias table of :mod:`calib_core.data.columns` (one name per role) with the roles that take many
columns: quantiles (:func:`parse_quantile_level`, :func:`find_quantile_columns`: ``q0.05``, ``q_0.05``,
``quantile_0.05``, ``q5``, ``q97.5``, ``q5%``), ensemble members or samples (:func:`find_sample_columns`:
``sample_0``, ``member_*``, ``m0``, ``ens_1``, ``draw_3`` …; ECMWF-style ``CTR``/``ctrl`` + ``P1 … Pn`` when both
kinds are present), classification scores (:func:`score_column`, :func:`find_score_columns`: ``prob_<class>``,
``proba_<class>``, ``p_<class>``, ``<class>_prob``, ``logit_<class>`` …) and features
(:func:`find_feature_columns`: ``x``, ``x1``, ``x_*``, ``feature_*``).  The user's ``columns=`` mapping overrides
each of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import InputError
from .columns import frame_source, normalize_name, resolve_column

__all__ = [
    "find_feature_columns",
    "find_quantile_columns",
    "find_sample_columns",
    "find_score_columns",
    "parse_quantile_level",
    "score_column",
]

QUANTILE_PATTERN = re.compile(r"^(?:q|quantile|qtl|quant|tau)[_\-]?(\d+(?:\.\d*)?|\.\d+)(%?)$")
SAMPLE_PATTERN = re.compile(
    r"^(?:(?:sample|member|mem|draw|particle|realization|realisation)(?:_(?P<any>[a-z0-9][\w.]*)|(?P<num>\d+))"
    r"|(?:m|ens|ensemble)_?\d+)$"
)
SAMPLE_SUFFIX_EXCLUDED = frozenset(
    {"mean", "std", "sd", "var", "avg", "average", "median", "spread", "size", "count", "weight", "id", "idx", "index"}
)
ECMWF_CONTROL = frozenset({"ctr", "ctrl", "control", "cf"})
ECMWF_PERTURBED = re.compile(r"^(?:p|pf)_?\d+$")
FEATURE_PATTERN = re.compile(r"^(?:x|x\d+|x_.+|feature_.+|feat_.+)$")
CLASS_SCORE_PATTERN = re.compile(r"^(?:prob|proba|probability|logit|logits)(?:_.+|\d+)?$")
_SCORE_PREFIX = re.compile(
    r"^(?P<kind>probability|probs|proba|prob|p|logits|logit)(?:[_\s.\-]+(?P<name>\S.*)|(?P<num>\d+))?$", re.IGNORECASE
)
_SCORE_SUFFIX = re.compile(r"^(?P<name>.*\S)[_\s.\-]+(?P<kind>probability|proba|prob|logits|logit)$", re.IGNORECASE)
_SCORE_SUFFIX_EXCLUDED = frozenset(
    {"max", "top", "pred", "predicted", "mean", "avg", "average", "label", "class", "true", "y_true", "y_pred"}
)


# ----------------------------------------------------------------------------------------------
# Classification scores
# ----------------------------------------------------------------------------------------------


def score_column(name: Any) -> tuple[str, str, str] | None:
    """(kind, class name, style) of a classification score column name, or None.

    ``kind`` is ``"probs"`` or ``"logits"``; the class name is the rest of the name with its case kept (``""`` for a
    bare ``prob`` / ``logit`` column).  Styles: ``"prefix"`` — ``prob_<class>``, ``proba_<class>``,
    ``probability_<class>``, ``probs_<class>``, ``prob0``, ``logit_<class>``, ``logits_<class>``; ``"p"`` —
    ``p_<class>`` (not ``p1`` / ``p_value``); ``"suffix"`` — ``<class>_prob``, ``<class>_proba``,
    ``<class>_probability``, ``<class>_logit`` (not ``max_prob`` / ``top_prob``, which are top-label confidences).
    Separators may be ``_``, ``-``, ``.`` or spaces; the kind is matched case-insensitively.

    Parameters
    ----------
    name : object
        A column name.

    Returns
    -------
    tuple of (str, str, str) or None
        ``(kind, class name, style)``, or None when the name is no score column.

    Examples
    --------
    >>> from calib_core.data.columns_patterns import score_column
    >>> score_column("prob_setosa"), score_column("Cat_prob"), score_column("p_value")
    (('probs', 'setosa', 'prefix'), ('probs', 'Cat', 'suffix'), None)
    """
    text = str(name).strip()
    m = _SCORE_PREFIX.match(text)
    if m:
        kind = "logits" if m.group("kind").lower().startswith("logit") else "probs"
        cls = m.group("name") or m.group("num") or ""
        if m.group("kind").lower() == "p":
            if not m.group("name") or normalize_name(cls) in ("value", "val", "adj", "adjusted"):
                return None
            return kind, cls, "p"
        return kind, cls, "prefix"
    m = _SCORE_SUFFIX.match(text)
    if m and normalize_name(m.group("name")) not in _SCORE_SUFFIX_EXCLUDED:
        kind = "logits" if m.group("kind").lower().startswith("logit") else "probs"
        return kind, m.group("name"), "suffix"
    return None


def find_score_columns(frame: pd.DataFrame, *, exclude: Sequence[str] = ()) -> dict[str, list[tuple[str, str]]]:
    """Classification score columns found by name (:func:`score_column`), by kind, in file order.

    ``prob_*`` / ``proba_*`` / ``logit_*`` columns count alone; the weaker ``p_<class>`` and ``<class>_prob`` styles
    only when at least two columns of that kind use them (one ``p_hat`` or ``x_prob`` is no class vector), and
    ``p_<n>`` columns never when the file has an ECMWF control column (``CTR``/``ctrl``: then ``P1 … Pn`` are
    ensemble members).

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    exclude : sequence of str, default ()
        Columns already taken by other roles.

    Returns
    -------
    dict of str to list of (str, str)
        ``{"probs": [(column, class name), …], "logits": [...]}``.
    """
    ecmwf = any(normalize_name(c) in ECMWF_CONTROL for c in frame.columns)
    hits: dict[str, list[tuple[str, str, str]]] = {"probs": [], "logits": []}
    for c in frame.columns:
        if c in exclude:
            continue
        found = score_column(c)
        if found is None:
            continue
        kind, cls, style = found
        if style == "p" and ecmwf and cls.isdigit():
            continue
        hits[kind].append((str(c), cls, style))
    out: dict[str, list[tuple[str, str]]] = {}
    for kind, items in hits.items():
        weak = [t for t in items if t[2] != "prefix"]
        if len(weak) < 2:
            items = [t for t in items if t[2] == "prefix"]
        out[kind] = [(c, cls) for c, cls, _ in items]
    return out


# ----------------------------------------------------------------------------------------------
# Quantiles
# ----------------------------------------------------------------------------------------------


def parse_quantile_level(name: Any) -> float | None:
    """Quantile level from a column name, or None.

    ``q0.05``, ``q_0.05``, ``quantile_0.05`` → 0.05 (a number with a dot ≤ 1 is a level);
    ``q5``, ``q05``, ``q5%``, ``q97.5`` → 0.05, 0.05, 0.05, 0.975 (integers and numbers > 1 are percent).
    Levels outside [0, 1] give None.

    Parameters
    ----------
    name : object
        A column name (matched after :func:`normalize_name` against ``QUANTILE_PATTERN``).

    Returns
    -------
    float or None
        The level in [0, 1], or None when the name is no quantile column.

    Examples
    --------
    >>> from calib_core.data.columns_patterns import parse_quantile_level
    >>> [parse_quantile_level(n) for n in ("q0.05", "quantile_0.5", "q5", "q97.5", "q5%", "mean")]
    [0.05, 0.5, 0.05, 0.975, 0.05, None]
    """
    m = QUANTILE_PATTERN.match(normalize_name(name))
    if not m:
        return None
    num, pct = m.groups()
    value = float(num)
    if pct or "." not in num or value > 1.0:
        value /= 100.0
    return value if 0.0 <= value <= 1.0 else None


def _level_key(key: Any) -> float | None:
    if isinstance(key, (int, float, np.floating, np.integer)) and not isinstance(key, bool):
        v = float(key)
        return v if 0.0 <= v <= 1.0 else None
    s = str(key).strip()
    try:
        v = float(s.rstrip("%"))
    except ValueError:
        return parse_quantile_level(s)
    if s.endswith("%"):
        v /= 100.0
    return v if 0.0 <= v <= 1.0 else None


def find_quantile_columns(
    frame: pd.DataFrame, columns: Mapping[str, Any] | None = None, *, source: str | None = None
) -> tuple[np.ndarray, list[str]]:
    """Quantile levels (sorted, strictly increasing) and their columns; empty when there are none.

    ``columns["quantiles"]`` may be a dict ``{level: column}`` (levels as numbers, ``"0.05"`` or
    ``"5%"``) or a list of column names whose levels are read from the names (:func:`parse_quantile_level`);
    ``None`` switches quantiles off; absent, every column whose name is a quantile level is taken.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    columns : mapping, optional
        The user's ``columns=`` mapping.
    source : str, optional
        The file name for messages.

    Returns
    -------
    levels : ndarray of shape (k,)
        The quantile levels, strictly increasing.
    names : list of str
        The column of each level.

    Raises
    ------
    InputError
        A level that is not a number in [0, 1], a listed column whose level cannot be read from its name, two columns
        with the same level, or a ``columns["quantiles"]`` that is neither a dict nor a list.
    """
    src = frame_source(frame, source)
    spec = ... if columns is None else columns.get("quantiles", ...)
    pairs: list[tuple[float, str]] = []
    if spec is None:
        return np.empty(0), []
    if spec is ...:
        for c in frame.columns:
            lev = parse_quantile_level(c)
            if lev is not None:
                pairs.append((lev, str(c)))
    elif isinstance(spec, Mapping):
        for key, name in spec.items():
            lev = _level_key(key)
            if lev is None:
                raise InputError(f"quantile level {key!r} is not a number in [0, 1]", source=src,
                                 hint="write levels like 0.05 or '5%'")
            pairs.append((lev, resolve_column(frame, name, role="quantiles", source=src)))
    elif isinstance(spec, Sequence) and not isinstance(spec, str):
        for name in spec:
            col = resolve_column(frame, name, role="quantiles", source=src)
            lev = parse_quantile_level(col)
            if lev is None:
                raise InputError(
                    f"the level of quantile column {col!r} cannot be read from its name",
                    source=src,
                    columns=[col],
                    hint="map levels explicitly: columns={'quantiles': {0.05: 'lo', 0.95: 'hi'}}",
                    app_hint="write the levels of the chosen columns under 'Quantile levels of these columns' in "
                    "the Column mapping",
                )
            pairs.append((lev, col))
    else:
        raise InputError("columns['quantiles'] must be a dict {level: column} or a list of column names",
                         source=src, hint="e.g. columns={'quantiles': {0.05: 'lo', 0.5: 'med', 0.95: 'hi'}}",
                         app_hint="choose the quantile columns under Column mapping")
    if not pairs:
        return np.empty(0), []
    pairs.sort(key=lambda t: t[0])
    levels = np.array([p[0] for p in pairs])
    names = [p[1] for p in pairs]
    same = np.flatnonzero(np.diff(levels) <= 0)
    if same.size:
        i = int(same[0])
        raise InputError(
            f"quantile columns {names[i]!r} and {names[i + 1]!r} both give level {levels[i]:g}; levels must be "
            "strictly increasing",
            source=src,
            columns=[names[i], names[i + 1]],
            hint="remove one of them or map the levels explicitly with columns={'quantiles': {...}}",
            app_hint="remove one of them from the file, or choose the quantile columns and write their levels under "
            "Column mapping",
        )
    return levels, names


# ----------------------------------------------------------------------------------------------
# Ensemble members and features
# ----------------------------------------------------------------------------------------------


def find_sample_columns(
    frame: pd.DataFrame, columns: Mapping[str, Any] | None = None, *, source: str | None = None
) -> list[str]:
    """Ensemble-member / sample columns in file order (see ``SAMPLE_PATTERN``), or the user's list.

    ECMWF-style names (a control ``CTR``/``ctrl``/``control``/``cf`` plus perturbed ``P1 … Pn``) are
    recognised only when both kinds are present; a deterministic ``HRES`` run is not a member.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    columns : mapping, optional
        The user's ``columns=`` mapping (``columns["samples"]``: a list of names, or None for none).
    source : str, optional
        The file name for messages.

    Returns
    -------
    list of str
        The member columns (empty when there are none).

    Raises
    ------
    InputError
        ``columns["samples"]`` is not a list, or names a column that is not in the file.
    """
    src = frame_source(frame, source)
    spec = ... if columns is None else columns.get("samples", ...)
    if spec is None:
        return []
    if spec is not ...:
        if isinstance(spec, str) or not isinstance(spec, Sequence):
            raise InputError("columns['samples'] must be a list of column names", source=src,
                             hint="e.g. columns={'samples': ['CTR', 'P1', 'P2']}",
                             app_hint="choose the sample columns under Column mapping")
        return [resolve_column(frame, n, role="samples", source=src) for n in spec]
    found = []
    for c in frame.columns:
        m = SAMPLE_PATTERN.match(normalize_name(c))
        if m and (m.group("any") or "") not in SAMPLE_SUFFIX_EXCLUDED:
            found.append(str(c))
    if not found:
        ctrl = [str(c) for c in frame.columns if normalize_name(c) in ECMWF_CONTROL]
        pert = [str(c) for c in frame.columns if ECMWF_PERTURBED.match(normalize_name(c))]
        if len(ctrl) == 1 and pert:
            found = [str(c) for c in frame.columns if str(c) in ctrl or str(c) in pert]
    return found


def find_feature_columns(
    frame: pd.DataFrame, columns: Mapping[str, Any] | None = None, *, source: str | None = None,
    exclude: Sequence[str] = (),
) -> list[str]:
    """Feature columns: ``x``, ``x1``, ``x_*``, ``feature_*`` (case-insensitive), or the user's list.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    columns : mapping, optional
        The user's ``columns=`` mapping (``columns["features"]``: a name or a list of names, or None for none).
    source : str, optional
        The file name for messages.
    exclude : sequence of str, default ()
        Columns already taken by other roles.

    Returns
    -------
    list of str
        The feature columns in file order.
    """
    spec = ... if columns is None else columns.get("features", ...)
    if spec is None:
        return []
    if spec is not ...:
        if isinstance(spec, str):
            spec = [spec]
        return [resolve_column(frame, n, role="features", source=source) for n in spec]
    return [str(c) for c in frame.columns if c not in exclude and FEATURE_PATTERN.match(normalize_name(c))]
