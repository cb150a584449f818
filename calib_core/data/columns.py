"""Column names and their roles: the alias table, finding the column of a role, the header check, slice columns.

Every name-based guess of the loader starts here: :data:`ALIASES` (role → accepted names, compared after
:func:`normalize_name`); the roles that take many columns (quantiles, ensemble members, class scores, features)
are found by name pattern in :mod:`calib_core.data.columns_patterns`.  :func:`find_column` / :func:`resolve_column`
turn a role (or the user's ``columns=`` mapping) into a column name; :func:`check_columns` refuses too many or
duplicate columns when a file is read; :func:`column_kinds` and :func:`slice_columns` keep the columns no role
took as candidate slice columns.  Task-neutral: both parsers (:mod:`calib_core.data.regression`,
:mod:`calib_core.data.classification`) and :func:`calib_core.data.detect.detect_task` use them.
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
    "frame_source",
    "kept_rows",
    "name_list",
    "normalize_name",
    "resolve_column",
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

Name patterns (regular expressions on normalised names, in :mod:`calib_core.data.columns_patterns`) complete the
table: quantiles ``QUANTILE_PATTERN`` (``q0.05``, ``q_0.05``, ``quantile_0.05``, ``q5``, ``q97.5``, ``q5%``),
members ``SAMPLE_PATTERN`` (``sample_0``, ``member_*``, ``m0``, ``ens_1``, ``draw_3`` …; ECMWF-style
``CTR``/``ctrl`` + ``P1 … Pn`` when both kinds are present), features ``FEATURE_PATTERN`` (``x``, ``x1``,
``x_*``, ``feature_*``) and classification score columns (``score_column``: ``prob_<class>``, ``proba_<class>``,
``p_<class>``, ``<class>_prob``, ``logit_<class>`` …).
"""

REGRESSION_ROLES = frozenset(
    {"y", "mean", "point", "std", "var", "log_var", "log_std", "u95", "error", "quantiles", "samples", "split",
     "group", "model", "features", "time"}
)
"""Keys accepted in ``columns`` for regression files."""

CLASSIFICATION_ROLES = frozenset(
    {"label", "labels", "probs", "prob", "logits", "logit", "confidence", "pred_label", "classes", "positive",
     "model_columns"}
)
"""Keys that, in ``columns``, mark a classification file (they are passed on to the classification loader);
``model_columns`` lists several forecasters' probability columns of one binary event (read as several models)."""


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


LABEL_FALLBACK = ("y", "y_true", "ytrue", "true", "target", "truth", "ground_truth", "gt", "actual", "obs", "observed",
                  "observation", "outcome", "event", "matched", "y_test")
"""Names of a classification file's label column when no ``ALIASES["label"]`` name exists (in this order)."""


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
