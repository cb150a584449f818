"""Writing tables to files: CSV with spreadsheet formulas neutralised, Parquet, predictions in the loader's layout.

The mirror of reading (:mod:`calib_core.data.bytes`): what the dashboard's download buttons and the command line
write, re-exported by :mod:`calib_core.export`.

* :func:`to_csv_bytes` — CSV with spreadsheet formula injection neutralised (OWASP "CSV injection"): a text cell
  that starts with ``=``, ``+``, ``-``, ``@``, tab, CR or LF gets a leading single quote, so Excel/LibreOffice show
  it as text instead of evaluating it.  Numeric columns are written as numbers (``-1.5`` stays ``-1.5``), and so
  are text cells that are a plain decimal number literal (``"-1.5"``, ``"+3e-2"``): a spreadsheet reads those as
  numbers, never as formulas.  Column names are neutralised like text cells.
* :func:`to_parquet_bytes` — Parquet (pyarrow), a typed binary format that needs no neutralisation.
* :func:`calibrated_predictions_frame` / :func:`calibrated_probabilities_frame` — a (recalibrated) regression
  distribution or classification probability matrix as a tidy table in the loader's own file layout, so
  an exported file can be uploaded again; :func:`calibrated_frame` — the same for a calibrator of an evaluation.
* :func:`check_outputs` / :func:`write_outputs` — output files that never destroy input: an output path equal to
  an input file or to another output is refused, and so is an existing file that is not what is written there
  (not HTML for an HTML output, another header for a CSV output) unless forced; :func:`check_summary_output` —
  the same for a summary file (:func:`is_summary_file`); :func:`same_file` — whether two paths name the same
  file.
"""

from __future__ import annotations

import io
import os
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import InputError, PredictionSet
from ..base.protocol import EvaluationResult
from ..base.regression import PredictiveDistribution

__all__ = [
    "EXPORT_LEVELS",
    "FORMULA_PREFIXES",
    "calibrated_frame",
    "calibrated_predictions_frame",
    "calibrated_probabilities_frame",
    "check_outputs",
    "check_summary_output",
    "is_summary_file",
    "neutralise_formulas",
    "same_file",
    "to_csv_bytes",
    "to_parquet_bytes",
    "write_outputs",
]

#: Quantile levels written by :func:`calibrated_predictions_frame` (columns ``q0.05`` … ``q0.95``).
EXPORT_LEVELS: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
#: First characters that make a spreadsheet evaluate a cell (OWASP CSV injection; LF added for safety).
FORMULA_PREFIXES: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r", "\n")
# A plain decimal number literal (what a spreadsheet parses as a number, never as a formula).
_NUMBER_LITERAL = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"


# =============================================================================================
# CSV / Parquet
# =============================================================================================


_IS_STR = np.frompyfunc(lambda v: isinstance(v, str), 1, 1)
_NUMBER_RE = re.compile(_NUMBER_LITERAL)


def _neutralise_series(s: pd.Series) -> pd.Series:
    """Prefix ``'`` to the string cells of ``s`` that start with a formula character; ``s`` itself when none does.

    Array operations on the cells (their first characters compared at once); only the few cells that start with a
    formula character are matched against the number-literal pattern one by one."""
    values = s.to_numpy(dtype=object)
    if values.size == 0:
        return s
    is_str = _IS_STR(values).astype(bool)
    if not is_str.any():
        return s
    where = np.flatnonzero(is_str)
    first = values[where].astype(str).astype("U1")  # each text cell's first character ('' for an empty cell)
    starts = where[np.isin(first, FORMULA_PREFIXES)]
    risky = [i for i in starts if not _NUMBER_RE.fullmatch(values[i])]
    if not risky:
        return s
    out = s.astype(object).copy()
    out.iloc[risky] = ["'" + values[i] for i in risky]
    return out


def neutralise_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells and column names cannot start a spreadsheet formula.

    Rule (OWASP, "CSV Injection"): a text cell whose first character is one of ``= + - @``, tab, CR or LF is
    prefixed with a single quote ``'``, unless the whole cell is a plain decimal number literal (``-1.5``,
    ``+2``, ``1e-3``), which a spreadsheet reads as a number.  Numeric, boolean and datetime columns are left
    untouched, so negative numbers stay numbers.

    Parameters
    ----------
    df : DataFrame
        Any table.

    Returns
    -------
    DataFrame
        The neutralised copy (categorical text columns become object columns).

    References
    ----------
    OWASP Foundation, "CSV Injection", https://owasp.org/www-community/attacks/CSV_Injection.

    Examples
    --------
    >>> import pandas as pd
    >>> from calib_core.data.writing import neutralise_formulas
    >>> neutralise_formulas(pd.DataFrame({"note": ["=1+2", "-1.5", "ok"], "x": [-1.0, 2.0, 3.0]})).to_dict("list")
    {'note': ["'=1+2", '-1.5', 'ok'], 'x': [-1.0, 2.0, 3.0]}
    """
    out = df.copy()
    for col in out.columns:
        s = out[col]
        if (
            pd.api.types.is_numeric_dtype(s)
            or pd.api.types.is_bool_dtype(s)
            or pd.api.types.is_datetime64_any_dtype(s)
        ):
            continue
        categorical = isinstance(s.dtype, pd.CategoricalDtype)
        if categorical:
            s = s.astype(object)
        safe = _neutralise_series(s)
        if safe is not s or categorical:  # an unchanged text column is left as it is
            out[col] = safe
    names = pd.Series([str(c) for c in out.columns], dtype=object)
    out.columns = list(_neutralise_series(names))
    return out


def to_csv_bytes(df: pd.DataFrame, *, index: bool = False) -> bytes:
    """UTF-8 CSV of ``df`` with formula injection neutralised (see :func:`neutralise_formulas`).

    RFC 4180: CRLF line ends, so fields holding CR or LF are quoted.  Floats are written with full precision
    (``repr``), NaN as an empty cell.

    Parameters
    ----------
    df : DataFrame
        Any table.
    index : bool, default False
        Write the index as the first column(s).

    Returns
    -------
    bytes
        The CSV file.
    """
    frame = df.reset_index() if index else df
    # CRLF line ends (RFC 4180): a field holding a lone CR or LF is then always quoted
    return neutralise_formulas(frame).to_csv(index=False, lineterminator="\r\n").encode("utf-8")


def to_parquet_bytes(df: pd.DataFrame, *, index: bool = False) -> bytes:
    """Parquet bytes of ``df`` (pyarrow engine; the index is dropped unless ``index=True``).

    Column names are converted to strings (Parquet requires it); object columns holding mixed types are written
    as strings.

    Parameters
    ----------
    df : DataFrame
        Any table.
    index : bool, default False
        Write the index as column(s).

    Returns
    -------
    bytes
        The Parquet file.
    """
    frame = df.reset_index() if index else df.reset_index(drop=True)
    frame = frame.rename(columns=str)
    for col in frame.columns:
        s = frame[col]
        if s.dtype == object:
            kinds = {type(v) for v in s.dropna()}
            if len(kinds) > 1:
                frame[col] = s.map(lambda v: v if v is None or (isinstance(v, float) and np.isnan(v)) else str(v))
    buf = io.BytesIO()
    frame.to_parquet(buf, engine="pyarrow", index=False)
    return buf.getvalue()


# =============================================================================================
# calibrated predictions as tables
# =============================================================================================


def _meta_columns(pset: PredictionSet, n: int) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    if pset.row_number is not None and len(pset.row_number) == n:
        out["row"] = np.asarray(pset.row_number)
    return out


def _label_columns(pset: PredictionSet, out: dict[str, Any]) -> None:
    for name in ("split", "group", "model"):
        a = getattr(pset, name)
        if a is not None:
            out[name] = np.asarray(a).astype(str)


def _level_name(p: float) -> str:
    return f"q{p:g}"


def calibrated_predictions_frame(
    pset: PredictionSet,
    dist: PredictiveDistribution,
    *,
    levels: Sequence[float] = EXPORT_LEVELS,
    calibrator: str | None = None,
) -> pd.DataFrame:
    """A (recalibrated) regression distribution as a tidy table, one row per prediction row.

    Reading it back with ``cc.load_predictions`` gives the same distribution in the quantile layout
    (piecewise-linear between the exported quantiles).

    Parameters
    ----------
    pset : PredictionSet
        The regression prediction set (targets, row numbers, split / group / model).
    dist : PredictiveDistribution
        The distribution of the same rows as ``pset`` (e.g. ``calibrator.transform(pset.dist)`` or the test rows of
        both).
    levels : sequence of float, default EXPORT_LEVELS
        Quantile levels written, strictly between 0 and 1.
    calibrator : str, optional
        Written as a ``calibrator`` column when given.

    Returns
    -------
    DataFrame
        Columns ``row`` (1-based row in the source file, when known), ``y``, ``mean`` = E[Y], ``std`` = sqrt(Var Y),
        ``q<p>`` = F⁻¹(p) for every level p (default ``q0.05 … q0.95``), then ``split``, ``group``, ``model`` when the
        set has them and ``calibrator`` when given.

    Raises
    ------
    ValueError
        ``dist`` and ``pset`` have different rows, or a level is outside (0, 1).
    """
    n = len(dist)
    if pset.y is None or len(pset.y) != n:
        raise ValueError(f"the distribution has {n} rows but the prediction set has {pset.n_rows}")
    p = np.asarray(sorted({float(v) for v in levels}), dtype=float)
    if p.size and (p.min() <= 0 or p.max() >= 1):
        raise ValueError("quantile levels must lie strictly between 0 and 1")
    out: dict[str, Any] = _meta_columns(pset, n)
    out["y"] = np.asarray(pset.y, dtype=float)
    out["mean"] = np.asarray(dist.mean(), dtype=float)
    out["std"] = np.asarray(dist.std(), dtype=float)
    if p.size:
        q = np.asarray(dist.ppf(p[None, :]), dtype=float).reshape(n, p.size)
        for j, level in enumerate(p):
            out[_level_name(level)] = q[:, j]
    _label_columns(pset, out)
    if calibrator is not None:
        out["calibrator"] = np.full(n, calibrator, dtype=object)
    return pd.DataFrame(out)


def calibrated_probabilities_frame(
    pset: PredictionSet, probs: np.ndarray, *, calibrator: str | None = None
) -> pd.DataFrame:
    """(Recalibrated) class probabilities as a tidy table in the loader's probability layout.

    Parameters
    ----------
    pset : PredictionSet
        The classification prediction set (labels, row numbers, split / group / model).
    probs : ndarray of shape (n, K) or (n,)
        Probabilities of the same rows (a 1-D array: the positive class of a binary problem).
    calibrator : str, optional
        Written as a ``calibrator`` column when given.

    Returns
    -------
    DataFrame
        Columns ``row`` (when known), ``label`` (0..K−1), ``prob_0 … prob_{K−1}``, ``confidence`` = max_k p_k,
        ``prediction`` = argmax_k p_k, ``split``/``group``/``model`` when present and ``calibrator`` when given.

    Raises
    ------
    ValueError
        ``probs`` and ``pset`` have different rows.
    """
    P = np.asarray(probs, dtype=float)
    if P.ndim == 1:
        P = np.column_stack([1.0 - P, P])
    n = P.shape[0]
    if pset.labels is None or len(pset.labels) != n:
        raise ValueError(f"the probabilities have {n} rows but the prediction set has {pset.n_rows}")
    out: dict[str, Any] = _meta_columns(pset, n)
    out["label"] = np.asarray(pset.labels)
    for k in range(P.shape[1]):
        out[f"prob_{k}"] = P[:, k]
    out["confidence"] = P.max(axis=1)
    out["prediction"] = P.argmax(axis=1)
    _label_columns(pset, out)
    if calibrator is not None:
        out["calibrator"] = np.full(n, calibrator, dtype=object)
    return pd.DataFrame(out)


def calibrated_frame(pset: PredictionSet, result: EvaluationResult, name: str) -> pd.DataFrame:
    """Calibrated predictions of every row by calibrator ``name`` of an evaluation.

    The evaluation must have been run with ``cc.evaluate(..., diagrams=True)``: each model's calibrator is then
    fitted on its first trial's calibration rows.  The file layout is that of :func:`calibrated_predictions_frame` /
    :func:`calibrated_probabilities_frame`; ``split`` says which rows were used for fitting (cal) and which were
    held out (test).

    Parameters
    ----------
    pset : PredictionSet
        The prediction set that was evaluated.
    result : EvaluationResult
        The evaluation.
    name : str
        The calibrator's name in the evaluation.

    Returns
    -------
    DataFrame
        The rows of every model, one after the other (empty when no model has that calibrator).
    """
    parts = []
    for model, by_cal in (result.calibrated or {}).items():
        if name not in by_cal:
            continue
        rows = np.arange(pset.n_rows) if pset.model is None else np.flatnonzero(pset.model == model)
        sub = pset.take(rows)
        sub.split = result.split_labels[rows]
        if pset.task == "regression":
            parts.append(calibrated_predictions_frame(sub, by_cal[name], calibrator=name))
        else:
            parts.append(calibrated_probabilities_frame(sub, by_cal[name], calibrator=name))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


# =============================================================================================
# output files: never an input, never a file of another kind
# =============================================================================================


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name the same file.

    ``os.path.samefile`` when both exist (hard links, symbolic links, ``..`` all resolved by the file system), else
    the resolved paths compared.

    Parameters
    ----------
    a, b : Path
        The two paths.

    Returns
    -------
    bool
        True when they are the same file.
    """
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def _looks_like_html(path: Path) -> bool:
    with path.open("rb") as fh:
        head = fh.read(512).lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<!doctype html", b"<html"))


def _first_line(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.readline(65536).rstrip(b"\r\n")


def check_outputs(inputs: Sequence[Path], outputs: Sequence[tuple[str, str | None, bytes | None]],
                  force: bool) -> None:
    """Refuse to destroy input before anything is written.

    Refused: an output path equal to an input file or to another output, a directory, and (without ``force``) an
    existing file that is not what is written there — for an HTML output (``data`` None or HTML) a file that does
    not start like HTML, for a CSV output a file whose header line is not the one about to be written (a previous
    run's table is overwritten).

    Parameters
    ----------
    inputs : sequence of Path
        The input files, never overwritten.
    outputs : sequence of (str, str or None, bytes or None)
        (option, path or None, data) triples: the option names the output in messages (``--out``); a None path is
        an output not asked for; ``data`` None checks an HTML output before the work is done.
    force : bool
        Replace an existing file of another kind (``--force``); inputs, duplicates and directories stay refused.

    Raises
    ------
    InputError
        An output is an input file.
    ValueError
        Two outputs name the same file, an output is a directory, or (without ``force``) an existing file is not
        what would be written there.
    """
    seen: list[tuple[str, Path]] = []
    for option, name, data in outputs:
        if name is None:
            continue
        path = Path(name)
        for source in inputs:
            if same_file(path, source):
                raise InputError(f"{option} {name} is the input file", source=str(source),
                                 hint=f"choose another {option} path; the input is never overwritten")
        for other_option, other in seen:
            if same_file(path, other):
                raise ValueError(f"{option} and {other_option} name the same file {name}: choose different paths")
        seen.append((option, path))
        if not path.exists():
            continue
        if path.is_dir():
            raise ValueError(f"{option} {name} is a directory: give a file name")
        if force:
            continue
        html_output = data is None or data.lstrip().lower().startswith((b"<!doctype html", b"<html"))
        if html_output and not _looks_like_html(path):
            raise ValueError(
                f"{option} {name} exists and is not an HTML file: refusing to overwrite it "
                "(choose another path, or pass --force to replace it)"
            )
        if not html_output and _first_line(path) != data.split(b"\n", 1)[0].rstrip(b"\r"):
            raise ValueError(
                f"{option} {name} exists and is not a table this command wrote: refusing to overwrite it "
                "(choose another path, or pass --force to replace it)"
            )


def write_outputs(inputs: Sequence[Path], outputs: Sequence[tuple[str, str | None, bytes]], force: bool) -> None:
    """Check every output with its content (:func:`check_outputs`), then write them all — none on a refusal.

    Parameters
    ----------
    inputs : sequence of Path
        The input files, never overwritten.
    outputs : sequence of (str, str or None, bytes)
        (option, path or None, data) triples; a None path is not written.
    force : bool
        Replace an existing file of another kind (see :func:`check_outputs`).

    Raises
    ------
    InputError, ValueError
        A refusal of :func:`check_outputs` (nothing is written).
    OSError
        A file could not be written.
    """
    check_outputs(inputs, outputs, force)
    for _, name, data in outputs:
        if name is not None:
            Path(name).write_bytes(data)


def is_summary_file(path: Path) -> bool:
    """Whether ``path`` is a summary file (``Summary.to_bytes``, written by ``--save-summary``).

    A zip archive (it starts with ``PK\\x03\\x04``) that holds ``header.json``, the member naming the summary
    format.

    Parameters
    ----------
    path : Path
        Any path.

    Returns
    -------
    bool
        True for a summary file; False for anything else (a missing path, a directory, another zip).
    """
    if not path.is_file():
        return False
    with path.open("rb") as fh:
        if fh.read(4) != b"PK\x03\x04":
            return False
    try:
        with zipfile.ZipFile(path) as zf:
            return "header.json" in zf.namelist()
    except zipfile.BadZipFile:
        return False


def check_summary_output(inputs: Sequence[Path], name: str | None, outputs: Sequence[tuple[str, str | None]],
                         force: bool) -> None:
    """Refuse a ``--save-summary`` path that would destroy input, before the work is done.

    Refused: an input file, another output, a directory, and (without ``force``) an existing file that is not a
    summary file (:func:`is_summary_file`); an existing summary file is replaced.

    Parameters
    ----------
    inputs : sequence of Path
        The input files, never overwritten.
    name : str or None
        The summary file's path (None: no summary is written, nothing to check).
    outputs : sequence of (str, str or None)
        The other outputs as (option, path or None) pairs.
    force : bool
        Replace an existing file that is not a summary file (``--force``).

    Raises
    ------
    InputError
        The path is an input file.
    ValueError
        It names another output or a directory, or (without ``force``) an existing file that is not a summary.
    """
    if name is None:
        return
    path = Path(name)
    for source in inputs:
        if same_file(path, source):
            raise InputError(f"--save-summary {name} is an input file", source=str(source),
                             hint="choose another --save-summary path; the input is never overwritten")
    for option, other in outputs:
        if other is not None and same_file(path, Path(other)):
            raise ValueError(f"--save-summary and {option} name the same file {name}: choose different paths")
    if path.is_dir():
        raise ValueError(f"--save-summary {name} is a directory: give a file name")
    if path.exists() and not force and not is_summary_file(path):
        raise ValueError(f"--save-summary {name} exists and is not a summary file: refusing to overwrite it "
                         "(choose another path, or pass --force to replace it)")
