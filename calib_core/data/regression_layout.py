"""Which regression layout a file is read in, σ from a spread column, and quantiles that cross.

Crossing quantiles
------------------
A row's quantiles q_1 … q_L at the levels τ_1 < … < τ_L *cross* when q_{j+1} < q_j for some j: models that fit
each level on its own (a quantile network, one gradient-boosting model per level) produce them.  By default
(``crossing="rearrange"``) each such row is sorted, the *rearrangement* of Chernozhukov, Fernández-Val & Galichon
(2010): q*_j = q_(j), the j-th smallest value of the row.  It never increases the quantile loss of Koenker &
Bassett (1978), whatever the target y:

    Σ_j ρ_τj(y − q*_j) ≤ Σ_j ρ_τj(y − q_j),      ρ_τ(u) = u (τ − 1{u < 0}),

because Σ_j ρ_τj(y − q_j) = Σ_j τ_j (y − q_j) + Σ_j (q_j − y)⁺: the second sum does not depend on the order of
the q_j, and the first is smallest when the q_j are in the order of the τ_j (the rearrangement inequality).
``crossing="drop"`` leaves those rows out instead, counted in the ``DropReport`` under :data:`CROSSING_REASON`.
Rows with a missing or infinite quantile are dropped as such in both modes (they are not "crossing").

Layouts
-------
A file can have several uncertainty layouts (ensemble members, quantile columns, a mean with a spread column).
``layout=None`` reads it in the one that keeps the most rows — on a tie in the order sample > quantile >
gaussian —, and a :class:`LoaderNotice` says which was chosen, why, and how to choose another
(``layout="gaussian"`` …; on the Data page the Layout control).

References
----------
Chernozhukov, V., Fernández-Val, I. & Galichon, A. (2010). Quantile and probability curves without crossing.
Econometrica 78(3), 1093–1125.

Koenker, R. & Bassett, G. (1978). Regression quantiles. Econometrica 46(1), 33–50.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..base.predictions import InputError, Message
from ..base.regression import norm_ppf
from .rows import RowFilter, numeric_block, numeric_values, rows_text

__all__ = ["CROSSING_MODES", "CROSSING_REASON", "LAYOUTS", "LoaderNotice", "rearrange_quantiles"]

#: The ``crossing=`` options of ``cc.load_predictions``: sort each crossing row (default) or drop it.
CROSSING_MODES = ("rearrange", "drop")
#: The ``layout=`` options of ``cc.load_predictions`` (None: the one that keeps the most rows).
LAYOUTS = ("sample", "quantile", "gaussian", "point")
#: The drop reason of a row whose quantiles decrease with the level (``crossing="drop"``).
CROSSING_REASON = "quantiles decrease with the level (crossing)"
#: The Data page's section with the crossing and layout controls, named in the page's wording of the messages.
PLACE = "Upload a prediction file"
WHERE = f"under {PLACE}"

_LAYOUT_SPELLINGS = {"samples": "sample", "quantiles": "quantile", "auto": None, "": None}
_Z_975 = float(norm_ppf(0.975))


class LoaderNotice(Message):
    """A loader message the user must read wherever they are: the CLI prints it, the Data page shows it above the
    tables.  ``str(notice)`` is the Python / CLI wording, ``.app`` the Data page's.

    Parameters
    ----------
    text : str
        The Python / command-line wording.
    app : str
        The Data page's wording.
    kind : str
        What it is about: ``"crossing"`` (rearranged or dropped crossing quantiles) or ``"layout"``.
    rows : array_like of int, optional
        The 1-based rows it is about (the rearranged rows for ``"crossing"``).

    Attributes
    ----------
    kind : str
        As given.
    rows : ndarray of int64
        As given (empty when none).
    """

    kind: str
    rows: np.ndarray

    def __new__(cls, text: str, app: str, kind: str = "", rows: Sequence[int] | np.ndarray | None = None
                ) -> LoaderNotice:
        obj = super().__new__(cls, text, app)
        obj.kind = kind
        obj.rows = np.asarray([] if rows is None else rows, dtype=np.int64)
        return obj

    def __reduce__(self):
        return (LoaderNotice, (str(self), self.app, self.kind, self.rows))


def check_options(crossing: str, layout: str | None, source: str) -> str | None:
    """Validate ``crossing=`` and ``layout=`` and return the layout's canonical name (None: automatic).

    Parameters
    ----------
    crossing : str
        One of :data:`CROSSING_MODES`.
    layout : str or None
        One of :data:`LAYOUTS` (plurals ``"quantiles"`` / ``"samples"`` and ``"auto"`` accepted) or None.
    source : str
        The file name for messages.

    Returns
    -------
    str or None
        The layout, or None for the automatic choice.

    Raises
    ------
    InputError
        An unknown option value.
    """
    if crossing not in CROSSING_MODES:
        raise InputError(f"unknown crossing option {crossing!r}", source=source,
                         hint="use crossing='rearrange' (sort each row's quantiles, the default) or crossing='drop'",
                         app_hint="choose how crossing quantiles are handled " + WHERE)
    if layout is None:
        return None
    name = str(layout).strip().lower()
    name = _LAYOUT_SPELLINGS.get(name, name)
    if name is not None and name not in LAYOUTS:
        raise InputError(f"unknown layout {layout!r}", source=source,
                         hint="use layout='gaussian', 'quantile', 'sample', 'point' or None (the one that keeps "
                         "the most rows)", app_hint="choose the layout " + WHERE)
    return name


def rearrange_quantiles(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort each row's quantiles whose values decrease with the level (the rearrangement); other rows unchanged.

    q*_i = sort(q_i) on the rows i with q_{i,j+1} < q_{i,j} for some j (all values finite); rows with a missing or
    infinite value are left as they are (the loader drops them as such).  For every target y the rearranged row has
    a quantile loss Σ_j ρ_τj(y − q*_ij) no larger than the original's (ρ_τ(u) = u (τ − 1{u < 0}), Koenker &
    Bassett 1978), equal only when the row was sorted already (up to ties) — see the module docstring.

    Parameters
    ----------
    values : ndarray of shape (n, L)
        Quantiles per row, columns in increasing level.

    Returns
    -------
    sorted_values : ndarray of shape (n, L)
        The values with the crossing rows sorted (a new array; ``values`` itself when no row crosses).
    crossing : ndarray of bool of shape (n,)
        The rows that were sorted.

    References
    ----------
    .. [1] V. Chernozhukov, I. Fernández-Val and A. Galichon, "Quantile and probability curves without crossing",
       Econometrica 78(3), 1093–1125, 2010.
    .. [2] R. Koenker and G. Bassett, "Regression quantiles", Econometrica 46(1), 33–50, 1978.

    Examples
    --------
    >>> import numpy as np
    >>> from calib_core.data.regression_layout import rearrange_quantiles
    >>> q, crossing = rearrange_quantiles(np.array([[0.0, 2.0, 1.0], [0.0, 1.0, 2.0], [np.nan, 1.0, 0.0]]))
    >>> q[:2].tolist(), crossing.tolist()
    ([[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]], [True, False, False])
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 2 or v.shape[1] < 2:
        return v, np.zeros(len(v), dtype=bool)
    finite = np.isfinite(v).all(axis=1)
    with np.errstate(invalid="ignore"):
        crossing = finite & (np.diff(v, axis=1) < 0).any(axis=1)
    if not crossing.any():
        return v, crossing  # no copy of a large file's block when nothing crosses
    out = v.copy()
    out[crossing] = np.sort(v[crossing], axis=1)
    return out, crossing


# ----------------------------------------------------------------------------------------------------------------
# reading one layout's values
# ----------------------------------------------------------------------------------------------------------------
def gaussian_sigma(
    frame: pd.DataFrame, role: str, col: str, rows: RowFilter, src: str, messages: list[str]
) -> np.ndarray:
    """σ from a std / var / log_var / log_std / u95 column; rows with σ ≤ 0 or non-finite σ are dropped.

    σ = std, √var, exp(½ log_var), exp(log_std) or u95 / Φ⁻¹(0.975).

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    role : str
        The spread role of the column.
    col : str
        The column.
    rows : RowFilter
        The parser's row bookkeeping (drops are added to it).
    src : str
        The file name for messages.
    messages : list of str
        The loader's messages (appended to).

    Returns
    -------
    ndarray of shape (n,)
        σ per row (NaN where dropped).
    """
    raw = numeric_values(frame, col, source=src, role=role)
    rows.finite(col, raw)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if role in ("std", "u95", "var"):
            name = {"std": "σ", "u95": "U95", "var": "variance"}[role]
            rows.drop(f"{col}: {name} = 0", raw == 0)
            rows.drop(f"{col}: {name} < 0", raw < 0)
            above = raw > 0
            positive = raw if role == "std" and above.all() else np.where(above, raw, np.nan)  # no copy when valid
            sigma = positive if role == "std" else positive / _Z_975 if role == "u95" else np.sqrt(positive)
            if role == "u95":
                messages.append(f"σ = {col} / {_Z_975:.5f} (a 95 % expanded uncertainty of a Gaussian).")
            zero = int((raw == 0).sum())
            if zero:
                messages.append(
                    f"{zero} row(s) with zero predicted uncertainty dropped (σ must be > 0 for z, NLL and PIT); "
                    "they are listed in the drop report."
                )
            negative = raw < 0
            if negative.any():
                lo, hi = float(raw[negative].min()), float(raw[negative].max())
                tiny = " (tiny negatives are usually round-off of 0)" if hi > -1e-6 else ""
                messages.append(
                    f"{int(negative.sum())} row(s) with negative {role} dropped (values {lo:.3g} … {hi:.3g}){tiny}."
                )
        else:
            sigma = np.exp(0.5 * raw) if role == "log_var" else np.exp(raw)
            rows.drop(f"{col}: σ = exp({'log_var/2' if role == 'log_var' else 'log_std'}) overflows or underflows",
                      np.isfinite(raw) & ((sigma == 0) | ~np.isfinite(sigma)))
    return sigma


def quantile_values(
    frame: pd.DataFrame, columns: list[str], rows: RowFilter, src: str, crossing: str
) -> tuple[np.ndarray, np.ndarray]:
    """(N, L) quantile values, crossing rows sorted (``"rearrange"``) or dropped (``"drop"``; all → error).

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    columns : list of str
        The quantile columns in increasing level.
    rows : RowFilter
        The parser's row bookkeeping (missing / infinite values and, with ``"drop"``, crossing rows are dropped).
    src : str
        The file name for messages.
    crossing : {"rearrange", "drop"}
        What happens to a row whose quantiles decrease with the level.

    Returns
    -------
    values : ndarray of shape (n, L)
        The quantiles (crossing rows sorted with ``"rearrange"``).
    crossed : ndarray of bool of shape (n,)
        The rows whose quantiles crossed (finite rows only).

    Raises
    ------
    InputError
        With ``"drop"``, when every row with finite quantiles crosses.
    """
    raw = numeric_block(frame, columns, source=src, role="quantiles")
    rows.finite("quantile columns", raw)
    values, crossed = rearrange_quantiles(raw)
    if crossing == "rearrange":
        return values, crossed
    rows.drop(CROSSING_REASON, crossed)
    finite_rows = np.isfinite(raw).all(axis=1)
    if finite_rows.any() and crossed[finite_rows].all():
        bad_rows = (np.flatnonzero(crossed)[:20] + 1).tolist()
        raise InputError(
            f"every row has quantiles that decrease with the level (e.g. rows {', '.join(map(str, bad_rows[:5]))}) "
            "and crossing='drop' leaves such rows out",
            source=src,
            columns=columns,
            rows=bad_rows,
            hint="pass crossing='rearrange' (the default) to sort each row's quantiles instead, and check that "
            "each column's level is right",
            app_hint="choose Crossing quantiles: sort per row (rearrangement) " + WHERE + ", and check that each "
            "column's level is right",
        )
    return raw, crossed


def crossing_notice(crossed: np.ndarray, keep: np.ndarray, crossing: str, n_finite: int) -> LoaderNotice | None:
    """The loader's message on crossing quantiles among the kept rows (rearranged) or the dropped ones.

    Parameters
    ----------
    crossed : ndarray of bool of shape (n,)
        The rows whose quantiles crossed.
    keep : ndarray of bool of shape (n,)
        The rows kept.
    crossing : {"rearrange", "drop"}
        What was done to them.
    n_finite : int
        The rows with all quantiles finite (to tell "every row crossed").

    Returns
    -------
    LoaderNotice or None
        None when no row crossed.
    """
    if crossing == "drop":
        idx = np.flatnonzero(crossed)
        if not idx.size:
            return None
        text = (f"{idx.size} row(s) had crossing quantiles (values decreasing with the level) and were dropped "
                f"({{how}}; rows {rows_text(idx)}).")
        return LoaderNotice(
            text.format(how="crossing='drop'") + " crossing='rearrange' (the default) keeps them, each sorted "
            "(rearrangement).",
            text.format(how="Crossing quantiles: drop those rows") + " Choose Crossing quantiles: sort per row "
            f"(rearrangement) {WHERE} to keep them.",
            "crossing", idx + 1)
    idx = np.flatnonzero(crossed & keep)
    if not idx.size:
        return None
    k = idx.size
    text = (f"{k} {'row' if k == 1 else 'rows'} had crossing quantiles; sorted per row (rearrangement): "
            f"{k} of {int(keep.sum())} kept rows (rows {rows_text(idx)}). Sorting never increases a row's quantile "
            "loss (Chernozhukov, Fernández-Val & Galichon 2010).")
    if n_finite and int(crossed.sum()) == n_finite:
        text += " Every row crossed: check that each column's level is right (a column named with a wrong level " \
                "crosses in every row)."
    return LoaderNotice(f"{text} crossing='drop' would leave these rows out instead.",
                        f"{text} Crossing quantiles: drop those rows ({WHERE}) would leave them out instead.",
                        "crossing", idx + 1)


# ----------------------------------------------------------------------------------------------------------------
# the layout choice
# ----------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LayoutColumns:
    """One uncertainty layout a file offers: its name, role and columns, and how messages name it.

    Attributes
    ----------
    layout : {"sample", "quantile", "gaussian"}
        The layout.
    role : str
        ``"samples"``, ``"quantiles"`` or the spread role (``std``, ``var``, …).
    columns : tuple of str
        Its columns (quantiles in increasing level).
    label : str
        How messages name it (``"10 quantile columns q0.05 … q0.95"``).
    """

    layout: str
    role: str
    columns: tuple[str, ...]
    label: str


def layout_label(layout: str, columns: Sequence[str], mean: str | None = None) -> str:
    """How messages name a layout's columns.

    Parameters
    ----------
    layout : str
        The layout.
    columns : sequence of str
        Its columns.
    mean : str, optional
        The mean column (Gaussian layout).

    Returns
    -------
    str
        E.g. ``"10 quantile columns q0.05 … q0.95"`` or ``"Gaussian columns 'mean'/'std'"``.
    """
    if layout == "gaussian":
        return f"Gaussian columns {mean!r}/{columns[0]!r}" if mean else f"the spread column {columns[0]!r}"
    what = {"quantile": "quantile", "sample": "sample"}[layout]
    return f"{len(columns)} {what} columns {columns[0]} … {columns[-1]}"


def _kept_in(frame: pd.DataFrame, option: LayoutColumns, keep: np.ndarray, crossing: str, src: str) -> np.ndarray:
    """The rows a layout would keep (``keep``: the rows every layout keeps, i.e. valid y and mean)."""
    rows = RowFilter(len(frame), frame)
    if option.layout == "gaussian":
        gaussian_sigma(frame, option.role, option.columns[0], rows, src, [])
    else:
        values = numeric_block(frame, list(option.columns), source=src, role=option.role)
        rows.finite(option.role, values)
        if option.layout == "quantile" and crossing == "drop":
            rows.drop(CROSSING_REASON, rearrange_quantiles(values)[1])
    return keep & rows.keep


def choose_layout(
    frame: pd.DataFrame, options: Sequence[LayoutColumns], keep: np.ndarray, *, requested: str | None, crossing: str,
    source: str, has_point: bool
) -> tuple[str, LoaderNotice | None]:
    """The layout a file is read in, and the message that says which, why, and how to choose another.

    ``requested`` (the ``layout=`` keyword) wins when the file has it; otherwise, among several layouts, the one
    that keeps the most rows, on a tie the first of ``options`` (the order sample > quantile > gaussian).

    Parameters
    ----------
    frame : DataFrame
        The table read from the file.
    options : sequence of LayoutColumns
        The layouts the file offers, in the order of preference.
    keep : ndarray of bool of shape (n,)
        The rows every layout keeps (valid target and mean).
    requested : str or None
        The layout asked for (None: automatic).
    crossing : {"rearrange", "drop"}
        What happens to crossing quantiles (it changes the rows the quantile layout keeps).
    source : str
        The file name for messages.
    has_point : bool
        The file has a mean / point column (the ``point`` layout is possible).

    Returns
    -------
    layout : str
        ``"sample"``, ``"quantile"``, ``"gaussian"`` or ``"point"``.
    notice : LoaderNotice or None
        Said when the file offers more than one layout.

    Raises
    ------
    InputError
        The requested layout is not in the file.
    """
    names = [o.layout for o in options]
    if requested is not None and requested not in names and not (requested == "point" and has_point):
        found = ", ".join(f"{o.layout} ({o.label})" for o in options) or "no uncertainty columns"
        need = {"gaussian": "a mean and a std / var / log_var / log_std / u95 column",
                "quantile": "at least 2 quantile columns (q0.05 …)", "sample": "at least 2 sample / member columns",
                "point": "a mean / point prediction column"}[requested]
        raise InputError(f"the {requested} layout was asked for, but the file has no {requested} layout (it needs "
                         f"{need}); found: {found}", source=source,
                         hint="pass layout=None to use what the file has, or map the columns with columns={...}",
                         app_hint="choose another layout " + WHERE + ", or map the columns under Column mapping")
    if len(options) < 2:
        return requested or (names[0] if names else "point"), None
    kept = {o.layout: int(_kept_in(frame, o, keep, crossing, source).sum()) for o in options}
    chosen = requested or max(names, key=lambda name: (kept[name], -names.index(name)))
    n = len(frame)
    label = {o.layout: o.label for o in options}
    label.setdefault("point", "the mean column only")
    others = [name for name in names if name != chosen]
    would = "; ".join(f"the {label[o]} would keep {kept[o]:,}" for o in others)
    kept_text = f"{kept[chosen]:,} of {n:,} rows" if chosen in kept else "all rows with a valid mean and y"
    if requested is not None:
        py_why, app_why = f"as asked (layout={requested!r})", "as chosen under Layout"
        text = f" {{why}}: it keeps {kept_text}; {would}."
    elif len(set(kept.values())) == 1:
        py_why = app_why = "on a tie, in the order sample > quantile > gaussian"
        text = f": it keeps {kept_text}, and so would the {' and the '.join(label[o] for o in others)}; {{why}}."
    else:
        py_why = app_why = "because it keeps the most rows"
        text = f" {{why}}: {kept_text}; {would}."
    head = f"using the {chosen} layout ({label[chosen]})"
    py = f"{head}{text.format(why=py_why)} To use another, pass {' or '.join(f'layout={o!r}' for o in others)}."
    app = f"{head}{text.format(why=app_why)} To use another, choose it under Layout ({PLACE})."
    return chosen, LoaderNotice(py, app, "layout")
