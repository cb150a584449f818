"""Column names and their roles: the alias table, name patterns, finding the column of a role.

Every name-based guess of the loader comes from here: :data:`ALIASES` (role → accepted names, compared after
:func:`normalize_name`) and the name patterns of quantile (:func:`parse_quantile_level`), sample / ensemble-member
(:func:`find_sample_columns`), feature (:func:`find_feature_columns`) and classification score columns
(:func:`score_column`, :func:`find_score_columns`).  :func:`find_column` / :func:`resolve_column` turn a role (or the
user's ``columns=`` mapping) into a column name; :func:`check_columns` refuses too many or duplicate columns when
a file is read; :func:`column_kinds` and :func:`slice_columns` keep the columns no role took as candidate slice
columns.  Task-neutral: both parsers (:mod:`calib_core.data.regression`, :mod:`calib_core.data.classification`)
and :func:`calib_core.data.detect.detect_task` use them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import InputError

__all__ = [
    "ALIASES",
    "CLASSIFICATION_ROLES",
    "LABEL_FALLBACK",
    "MAX_COLUMNS",
    "REGRESSION_ROLES",
    "SLICE_CATEGORICAL_MAX",
    "check_columns",
    "column_kinds",
    "comment_note",
    "find_column",
    "find_feature_columns",
    "find_quantile_columns",
    "find_sample_columns",
    "find_score_columns",
    "frame_source",
    "kept_rows",
    "name_list",
    "normalize_name",
    "parse_quantile_level",
    "resolve_column",
    "score_column",
    "slice_columns",
    "unused_columns_note",
]

MAX_COLUMNS = 10_000
"""Files with more columns than this are refused before they are parsed."""


# ----------------------------------------------------------------------------------------------
# The alias table: every name-based guess in the loader comes from here.
# ----------------------------------------------------------------------------------------------


ALIASES: dict[str, tuple[str, ...]] = {
    # target (observed value)
    "y": ("y", "y_true", "ytrue", "true", "target", "obs", "observed", "observation", "y_obs", "truth",
          "actual", "y_test"),
    # predictive mean / point prediction (``point`` is the fallback used only when no ``mean`` exists)
    "mean": ("mean", "mu", "y_pred", "ypred", "pred", "prediction", "predicted", "y_hat", "yhat", "pred_mean",
             "mean_pred", "predictive_mean", "ens_mean", "ensemble_mean", "loc"),
    "point": ("point_pred", "point", "point_prediction"),
    # predictive spread
    "std": ("std", "sigma", "sd", "stddev", "std_dev", "stdev", "y_std", "pred_std", "std_pred", "predictive_std",
            "uncertainty", "unc", "u", "ue", "u_e", "scale", "ens_std", "ensemble_std", "spread"),
    "var": ("var", "variance", "y_var", "pred_var", "predictive_var", "sigma2", "sigma_sq", "sigma_squared",
            "ens_var"),
    "log_var": ("log_var", "logvar", "log_variance", "log_sigma2", "log_sigma_sq"),
    "log_std": ("log_std", "logstd", "log_sigma", "logsigma", "log_scale"),
    "u95": ("u95", "u_95", "expanded_uncertainty", "expanded_uncertainty_95"),
    # error-only files: E = reference − prediction
    "error": ("e", "error", "err", "errors", "residual", "residuals", "resid"),
    # optional row attributes
    "split": ("split", "subset", "role", "split_role", "is_test", "is_cal", "is_calibration", "fold", "partition",
              "set"),
    "group": ("group", "groups", "slice", "subgroup", "stratum", "category"),
    "model": ("model", "models", "model_name", "method", "forecaster"),
    # classification (used here to detect the task; parsed in classification.reading)
    "label": ("label", "labels", "true_label", "y_label", "class", "class_label", "target_label"),
    "confidence": ("confidence", "conf", "max_prob", "top_prob"),
    "pred_label": ("pred_label", "predicted_label", "pred_class", "predicted_class", "prediction_label"),
}
"""Role → accepted column names, in priority order, compared after ``normalize_name``.

Name patterns (regular expressions on normalised names) complete the table:
quantiles ``QUANTILE_PATTERN`` (``q0.05``, ``q_0.05``, ``quantile_0.05``, ``q5``, ``q97.5``, ``q5%``),
members ``SAMPLE_PATTERN`` (``sample_0``, ``member_*``, ``m0``, ``ens_1``, ``draw_3`` …; ECMWF-style
``CTR``/``ctrl`` + ``P1 … Pn`` when both kinds are present), features ``FEATURE_PATTERN`` (``x``, ``x1``,
``x_*``, ``feature_*``) and classification score columns (:func:`score_column`: ``prob_<class>``, ``proba_<class>``,
``p_<class>``, ``<class>_prob``, ``logit_<class>`` …).
"""

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

REGRESSION_ROLES = frozenset(
    {"y", "mean", "point", "std", "var", "log_var", "log_std", "u95", "error", "quantiles", "samples", "split",
     "group", "model", "features", "time"}
)
"""Keys accepted in ``columns`` for regression files."""

CLASSIFICATION_ROLES = frozenset(
    {"label", "labels", "probs", "prob", "logits", "logit", "confidence", "pred_label", "classes", "positive"}
)
"""Keys that, in ``columns``, mark a classification file (they are passed on to the classification loader)."""


def normalize_name(name: Any) -> str:
    """Column name as compared with the alias table: stripped, lower-case, runs of space/hyphen → ``_``.

    Parameters
    ----------
    name : object
        A column name (any type; ``str(name)`` is normalised).

    Returns
    -------
    str
        The normalised name.

    Examples
    --------
    >>> from calib_core.data.columns import normalize_name
    >>> normalize_name("  Y True ")
    'y_true'
    >>> normalize_name("pred-std")
    'pred_std'
    """
    return re.sub(r"[\s\-]+", "_", str(name).strip().lower())


def name_list(names: Sequence[Any], k: int = 20) -> str:
    """The first ``k`` names joined by commas, with the total when there are more.

    Parameters
    ----------
    names : sequence
        Names (converted with ``str``).
    k : int, default 20
        How many names are shown.

    Returns
    -------
    str
        ``"a, b, c"``, or ``"a, b, … (30 in all)"`` when there are more than ``k``.
    """
    names = [str(n) for n in names]
    return ", ".join(names[:k]) + (f", … ({len(names)} in all)" if len(names) > k else "")


def frame_source(frame: pd.DataFrame, source: str | None) -> str:
    """The file name for messages: ``source``, else ``frame.attrs["source"]``, else ``"<memory>"``.

    Parameters
    ----------
    frame : DataFrame
        A table read by :func:`calib_core.data.bytes.read_table` (its ``attrs`` name the file) or built in memory.
    source : str or None
        The name given by the caller, which wins.

    Returns
    -------
    str
        The name shown in messages.
    """
    return source or frame.attrs.get("source") or "<memory>"


def comment_note(frame: pd.DataFrame) -> str:
    """The file's leading '#' comments as a sentence to append to a message ("" when there are none).

    Parameters
    ----------
    frame : DataFrame
        A table whose ``attrs["comments"]`` holds the comment lines read before the header.

    Returns
    -------
    str
        `` The file's header comment says: '…'.`` (at most 200 characters of comments), or ``""``.
    """
    comments = frame.attrs.get("comments") or []
    return f" The file's header comment says: {' / '.join(comments)[:200]!r}." if comments else ""


def check_columns(names: Sequence[Any], src: str) -> None:
    """Refuse too many columns and duplicate names (case-insensitive, ignoring surrounding spaces).

    Every reader calls it on the header before the data are used: more than :data:`MAX_COLUMNS` columns, or two names
    equal after :func:`normalize_name`, raise.

    Parameters
    ----------
    names : sequence
        The column names of the file, in file order.
    src : str
        The file name for the message.

    Raises
    ------
    InputError
        Too many columns, or duplicate names (all spellings of each duplicate are named).
    """
    if len(names) > MAX_COLUMNS:
        raise InputError(
            f"has {len(names):,} columns, more than the limit of {MAX_COLUMNS:,}",
            source=src,
            hint="keep only the columns you need (target, prediction, uncertainty, optional split/group/model)",
        )
    norm = [normalize_name(n) for n in names]
    seen: dict[str, int] = {}
    dups: list[str] = []
    for name, key in zip(names, norm):
        if key and key in seen:
            dups.append(str(name))
        seen[key] = seen.get(key, 0) + 1
    if dups:
        dup_keys = {normalize_name(d) for d in dups}
        shown = sorted({str(n) for n, k in zip(names, norm) if k in dup_keys})
        raise InputError(
            f"duplicate column names: {', '.join(repr(s) for s in shown)} (names are compared case-insensitively)",
            source=src,
            columns=shown,
            hint="rename or remove the duplicate columns so every name is unique",
        )


# ----------------------------------------------------------------------------------------------
# Finding columns
# ----------------------------------------------------------------------------------------------


def resolve_column(frame: pd.DataFrame, name: Any, *, role: str, source: str | None = None) -> str:
    """The frame column a user-given name refers to (exact match first, then case-insensitive).

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    name : object
        The column name the user gave for ``role``.
    role : str
        The role it was given for (named in messages).
    source : str, optional
        The file name for messages (default: :func:`frame_source`).

    Returns
    -------
    str
        The column's name as spelled in the file.

    Raises
    ------
    InputError
        The name is not in the file, or matches several columns case-insensitively.
    """
    src = frame_source(frame, source)
    if name in frame.columns:
        return str(name)
    key = normalize_name(name)
    hits = [c for c in frame.columns if normalize_name(c) == key]
    if len(hits) == 1:
        return str(hits[0])
    if len(hits) > 1:
        raise InputError(f"column name {name!r} (role {role!r}) matches several columns: {hits}", source=src,
                         columns=[str(h) for h in hits], hint="rename the columns so they differ")
    raise InputError(
        f"column {name!r} given for role {role!r} is not in the file (columns: {name_list(frame.columns)})",
        source=src,
        columns=[str(name)],
        hint="check the spelling in the column mapping",
        app_hint="choose the column again under Column mapping",
    )


def find_column(
    frame: pd.DataFrame,
    role: str,
    columns: Mapping[str, Any] | None = None,
    *,
    source: str | None = None,
    exclude: Sequence[str] = (),
) -> str | None:
    """Column for ``role``: the user's mapping if given, else the first alias of ``ALIASES[role]`` present.

    ``columns[role] = None`` means "do not use this role" and returns None.  Columns in ``exclude``
    (already claimed by another role) are skipped.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    role : str
        A key of :data:`ALIASES` (``"y"``, ``"mean"``, ``"std"``, ``"label"``, …).
    columns : mapping, optional
        The user's ``columns=`` mapping (role → column name or None).
    source : str, optional
        The file name for messages.
    exclude : sequence of str, default ()
        Columns already taken by other roles.

    Returns
    -------
    str or None
        The column's name, or None when no alias is present (or the role is switched off).

    Raises
    ------
    InputError
        Several columns match the same alias (e.g. ``Mean`` and ``mean``), or a mapped name is not in the file.

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.columns import find_column
    >>> frame = pd.DataFrame(columns=["Y_True", "Pred", "Sigma"])
    >>> find_column(frame, "y"), find_column(frame, "mean"), find_column(frame, "std")
    ('Y_True', 'Pred', 'Sigma')
    >>> find_column(frame, "std", {"std": None}) is None
    True
    """
    if columns is not None and role in columns:
        name = columns[role]
        return None if name is None else resolve_column(frame, name, role=role, source=source)
    norm = {c: normalize_name(c) for c in frame.columns if c not in exclude}
    for alias in ALIASES.get(role, ()):
        hits = [c for c, k in norm.items() if k == alias]
        if len(hits) == 1:
            return str(hits[0])
        if len(hits) > 1:
            raise InputError(
                f"several columns could be the {role!r} column: {hits}",
                source=frame_source(frame, source),
                columns=[str(h) for h in hits],
                hint=f"pass columns={{'{role}': '<name>'}} to choose one",
                app_hint=f"choose the {role} column under Column mapping and load the file again",
            )
    return None


LABEL_FALLBACK = ("y", "y_true", "ytrue", "true", "target", "truth", "ground_truth", "gt")
"""Names of a classification file's label column when no ``ALIASES["label"]`` name exists (in this order)."""


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
    >>> from calib_core.data.columns import score_column
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
    >>> from calib_core.data.columns import parse_quantile_level
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


def unused_columns_note(frame: pd.DataFrame, used: Sequence[str]) -> str:
    """The loader's sentence on columns no role took ("" when every column is used); a pandas index is named.

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    used : sequence of str
        The columns taken by a role.

    Returns
    -------
    str
        ``"columns not used: a, b."`` (with a remark when one of them looks like a row index as pandas writes it).
    """
    ignored = [str(c) for c in frame.columns if c not in used]
    if not ignored:
        return ""
    index = [c for c in ignored if re.fullmatch(r"(?:Unnamed: 0|index|)", c)]
    note = f"columns not used: {name_list(ignored, 12)}"
    if index:
        note += f" ({index[0] or 'an unnamed column'!r} looks like a row index, as pandas writes it)"
    return note + "."


# ----------------------------------------------------------------------------------------------
# Columns kept for slices
# ----------------------------------------------------------------------------------------------


#: A numeric column with at most this many distinct values is a categorical slice column (its values are slices);
#: above it, a numeric one (cut into quantile bins).
SLICE_CATEGORICAL_MAX = 12
_INDEX_NAME = re.compile(r"(?:Unnamed: 0|index|)")


def column_kinds(frame: pd.DataFrame) -> dict[str, str]:
    """The kind of every column as a slice column: ``"numeric"`` or ``"categorical"``.

    Numeric when the dtype is a number (not boolean) with more than :data:`SLICE_CATEGORICAL_MAX` distinct values,
    categorical otherwise (text, booleans, few-valued codes).

    Parameters
    ----------
    frame : DataFrame
        The candidate slice columns.

    Returns
    -------
    dict of str to str
        ``{column: "numeric" | "categorical"}``.

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.columns import column_kinds
    >>> column_kinds(pd.DataFrame({"site": ["a", "b"] * 10, "x": range(20), "code": [1, 2] * 10}))
    {'site': 'categorical', 'x': 'numeric', 'code': 'categorical'}
    """
    out = {}
    for c in frame.columns:
        values = frame[c]
        numeric = pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype)
        out[str(c)] = "numeric" if numeric and _more_values_than(values, SLICE_CATEGORICAL_MAX) else "categorical"
    return out


def _more_values_than(values: pd.Series, k: int) -> bool:
    """Whether ``values`` has more than k distinct non-missing values; the first 4,096 rows decide when they
    already have more (the full count only otherwise: same answer, without hashing every row of a wide feature)."""
    return bool(values.iloc[:4096].nunique(dropna=True) > k or values.nunique(dropna=True) > k)


def kept_rows(frame: pd.DataFrame, names: Sequence[str], keep: np.ndarray) -> pd.DataFrame:
    """Columns ``names`` of ``frame`` on the rows where ``keep``, index 0 … k−1.

    When every row is kept the columns are not copied (copy-on-write: a later write to either frame copies then).

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    names : sequence of str
        The columns to keep.
    keep : ndarray of bool of shape (n,)
        The rows to keep.

    Returns
    -------
    DataFrame
        The kept rows of those columns, with a fresh RangeIndex.
    """
    keep = np.asarray(keep, dtype=bool)
    out = frame[list(names)] if keep.all() else frame.loc[keep, list(names)]
    return out.reset_index(drop=True)


def slice_columns(
    frame: pd.DataFrame, used: Sequence[str], keep: np.ndarray, messages: list[str],
) -> pd.DataFrame | None:
    """The columns no role took, on the kept rows, as candidate slice columns (``PredictionSet.slice_columns``).

    Features and any other column count; row-index columns (``Unnamed: 0``, ``index``) are left out.  Text columns
    that are entirely numbers become numbers.  Appends one message counting them by kind (:func:`column_kinds`).

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    used : sequence of str
        The columns taken by a role.
    keep : ndarray of bool of shape (n,)
        The rows kept by the parser.
    messages : list of str
        The parser's messages; the count by kind is appended.

    Returns
    -------
    DataFrame or None
        The slice columns on the kept rows, or None when there is none.
    """
    names = [c for c in frame.columns if c not in used and not _INDEX_NAME.fullmatch(str(c))]
    if not names:
        return None
    out = kept_rows(frame, names, keep)
    out.columns = [str(c) for c in names]
    for c in out.columns:
        if out[c].dtype == object:
            conv = pd.to_numeric(out[c], errors="coerce")
            if conv.notna().sum() == out[c].notna().sum():
                out[c] = conv
    kinds = column_kinds(out)
    by_kind = {kind: [c for c, k in kinds.items() if k == kind] for kind in ("numeric", "categorical")}
    parts = [f"{len(cols)} {kind} ({name_list(cols, 6)})" for kind, cols in by_kind.items() if cols]
    messages.append(f"columns kept for slices: {', '.join(parts)}.")
    return out
