"""The bins of the mergeable slice summaries: which slice columns, their kinds, levels and edges (:class:`SliceSpec`),
the spec of rows in memory (:func:`slice_spec`) and the codes of a column's values in it (:func:`column_codes`).

Numeric slice columns are cut at the quantiles k/n_bins of the column and ENCE's σ-bins at the quintiles of σ, all
over every row; categorical columns need their full list of levels.  Over distributed data the edges come from a
hashed sample instead (:mod:`calib_core.scale.slices_sketch`), with the rank error of
:attr:`SliceSpec.rank_error`.  The summaries themselves: :mod:`calib_core.scale.slices`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..base.predictions import InputError, PredictionSet
from ..base.regression import SampleSet
from ..slices import regression as reg_slices
from ..slices.candidates import DEFAULT_BINS, available_slice_columns

__all__ = ["SliceSpec", "slice_spec", "column_codes", "describe_spec", "SAMPLE_ROWS", "MISSING", "PIT_BINS",
           "PROB_BINS"]

MISSING = "(missing)"
"""The level of a missing categorical value (as :func:`calib_core.slices.candidates.encode_column`)."""
SAMPLE_ROWS = 200_000
"""Expected rows of the hashed sample that gives the quantile edges of distributed data."""
PIT_BINS, PROB_BINS = 10, 10
"""PIT deciles (regression) and equal-width probability bins (classification) of a cell's sums."""


# ---------------------------------------------------------------------------------------------------------------
# the spec: which columns, their kinds, levels and edges
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class SliceSpec:
    """What every chunk is binned by: the slice columns, their kinds, levels and edges.

    Attributes
    ----------
    task : {"regression", "classification"}
        The task.
    columns : list of str
        The slice columns.
    kinds : list of str
        ``"numeric"`` | ``"categorical"`` per column.
    edges : list of (list of float or None)
        The distinct quantile edges of a numeric column (None for a categorical one).
    levels : list of list of str
        The level labels (text levels sorted, or ``[a, b)`` bins).
    none : list of bool
        Whether some value of column i is in no bin (missing or non-finite numeric values: one more code).
    sigma_edges : list of float
        ENCE's inner σ-bin edges (regression).
    ence_tested : bool, default True
        False for ensembles, as in memory.
    target : str, default "auto"
        The classification event.
    seed : int, default 0
        Seed of the PIT randomisation.
    n_bins : int, default DEFAULT_BINS
        Quantile bins of a numeric column.
    rank_error : float, default 0.0
        The stated rank error of the edges (0: exact quantiles of all rows).

    References
    ----------
    .. [1] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [2] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [3] Massart, P. (1990). The tight constant in the Dvoretzky–Kiefer–Wolfowitz inequality. The Annals of
       Probability, 18(3), 1269–1283.
    """

    task: str
    columns: list[str]
    kinds: list[str]
    edges: list[list[float] | None]
    levels: list[list[str]]
    none: list[bool] = field(default_factory=list)
    sigma_edges: list[float] = field(default_factory=list)
    ence_tested: bool = True
    target: str = "auto"
    seed: int = 0
    n_bins: int = DEFAULT_BINS
    rank_error: float = 0.0

    def radix(self, i: int) -> int:
        """Codes of column i: its levels and, with ``none[i]``, one more: "in no slice".

        The extra code holds a missing or non-finite numeric value.

        Parameters
        ----------
        i : int
            A column index.

        Returns
        -------
        int
            The number of codes.
        """
        return len(self.levels[i]) + int(self.none[i])

    @property
    def n_values(self) -> int:
        """V, the sums kept per cell.

        Returns
        -------
        int
            6·(σ-bins) + 20 (regression) or 4·10 (classification).
        """
        return 6 * (len(self.sigma_edges) + 1) + 2 * PIT_BINS if self.task == "regression" else 4 * PROB_BINS


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def numeric_levels(edges: np.ndarray) -> list[str]:
    """Labels ``[a, b)`` of the bins between consecutive edges (the last ``[a, b]``), 3 significant digits.

    Parameters
    ----------
    edges : ndarray
        The edges.

    Returns
    -------
    list of str
        One label per bin.
    """
    return [f"[{_fmt(lo)}, {_fmt(hi)}{']' if i == edges.size - 2 else ')'}"
            for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:], strict=True))]


def _text(values: pd.Series) -> pd.Series:
    s = pd.Series(values).reset_index(drop=True)
    return s.astype(object).where(s.notna(), MISSING).astype(str).str.strip()


def distinct_text(values: pd.Series) -> set[str]:
    """The set of :func:`_text` of the values, converting only the distinct ones.

    Of a categorical column: the categories some row has.

    Parameters
    ----------
    values : Series
        A column.

    Returns
    -------
    set of str
        Its levels (``(missing)`` for missing values).
    """
    raw, uniques = _factorize(pd.Series(values).reset_index(drop=True))
    if isinstance(values.dtype, pd.CategoricalDtype):
        uniques = uniques[np.bincount(raw.astype(np.intp) + 1, minlength=len(uniques) + 1)[1:] > 0]
    out = set(_text(uniques).tolist())
    if raw.size and (raw < 0).any():
        out.add(MISSING)
    return out


def column_values(pset: PredictionSet, name: str) -> pd.Series:
    """The values of slice column ``name`` of a set (``group`` and ``model`` included).

    Parameters
    ----------
    pset : PredictionSet
        The rows.
    name : str
        The column.

    Returns
    -------
    Series
        Its values, index 0 … n − 1.

    Raises
    ------
    InputError
        If the set has no such slice column.
    """
    if name in ("group", "model") and getattr(pset, name) is not None and (
            pset.slice_columns is None or name not in pset.slice_columns.columns):
        return pd.Series(np.asarray(getattr(pset, name), dtype=object))
    if pset.slice_columns is None or name not in pset.slice_columns.columns:
        raise InputError(f"no slice column {name!r}", source=pset.source, columns=[name],
                         hint="the summary's slice columns are fixed by its first rows; check the files")
    return pset.slice_columns[name].reset_index(drop=True)


def numeric_edges(x: np.ndarray, n_bins: int) -> np.ndarray:
    """The distinct quantiles k/n_bins of the finite values (``np.quantile``, linear method).

    Parameters
    ----------
    x : ndarray
        Values.
    n_bins : int
        Number of bins.

    Returns
    -------
    ndarray
        The edges (empty when no value is finite).
    """
    ok = np.isfinite(x)
    if not ok.any():
        return np.empty(0)
    return np.unique(np.quantile(x[ok], np.linspace(0.0, 1.0, int(n_bins) + 1)))


def slice_spec(pset: PredictionSet, *, columns: Sequence[str] | None = None, n_bins: int = DEFAULT_BINS,
               target: str = "auto", seed: int = 0) -> SliceSpec:
    """The spec of rows in memory: the in-memory explorer's own bins.

    The slice columns and kinds of :func:`calib_core.slices.candidates.available_slice_columns`, numeric edges
    ``np.unique(np.quantile(x, k/n_bins))`` and ENCE's σ edges over every row — so that
    :func:`~calib_core.scale.slices_ranking.summary_ranking` of any chunking of ``pset`` equals its in-memory
    ranking — and every text level.

    Parameters
    ----------
    pset : PredictionSet
        All the rows.
    columns : sequence of str, optional
        Slice columns (default all available ones).
    n_bins : int, default DEFAULT_BINS
        Quantile bins of a numeric column.
    target : str, default "auto"
        The classification event.
    seed : int, default 0
        Seed of the PIT randomisation.

    Returns
    -------
    SliceSpec
        The spec (``rank_error`` 0).

    References
    ----------
    .. [1] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [2] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. APL Machine Learning, 1(4), 046121 (arXiv:2309.06240).
    """
    avail = available_slice_columns(pset)
    names = list(avail) if columns is None else [str(c) for c in columns if str(c) in avail]
    kinds, edges, levels, none = [], [], [], []
    for name in names:
        kind = avail[name]
        values = column_values(pset, name)
        if kind == "numeric":
            x = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
            e = numeric_edges(x, n_bins)
            edges.append(e.tolist() if e.size >= 2 else [])
            levels.append(numeric_levels(e) if e.size >= 2 else [])
            none.append(bool(e.size < 2 or not np.isfinite(x).all()))
        else:
            edges.append(None)
            levels.append(sorted(pd.unique(_text(values)).tolist()))
            none.append(False)
        kinds.append(kind)
    sigma_edges: list[float] = []
    ence = True
    if pset.task == "regression":
        _, sigma = reg_slices.slice_row_statistics(pset, seed=seed)
        sigma_edges = reg_slices.sigma_bin_edges(sigma).tolist()
        ence = not isinstance(pset.dist, SampleSet)
    return SliceSpec(pset.task, names, kinds, edges, levels, none, sigma_edges, ence, target, seed, n_bins, 0.0)


def column_codes(values: pd.Series, spec: SliceSpec, i: int) -> np.ndarray:
    """Codes 0 … radix−1 of column i's values (code len(levels): in no slice).

    A value the spec has no code for raises (the spec must come from every row: each text level, and whether numeric
    values are missing).

    Parameters
    ----------
    values : Series
        The column's values.
    spec : SliceSpec
        The spec.
    i : int
        The column's index in the spec.

    Returns
    -------
    ndarray of shape (n,) of int64
        The codes.

    Raises
    ------
    InputError
        If a value has no code in the spec.

    References
    ----------
    .. [1] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [2] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. APL Machine Learning, 1(4), 046121 (arXiv:2309.06240).
    """
    return compact_codes(values, spec, i).astype(np.int64)


def compact_codes(values: pd.Series, spec: SliceSpec, i: int) -> np.ndarray:
    """:func:`column_codes` in the smallest integer type that holds them."""
    none = len(spec.levels[i])
    series = pd.Series(values)
    if spec.kinds[i] == "numeric":
        x = series.to_numpy(dtype=float) if series.dtype == np.float64 else \
            pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
        e = np.asarray(spec.edges[i], dtype=float)
        small = np.int8 if none < 127 else np.int32
        if e.size < 2:
            codes = np.full(x.shape[0], none, dtype=small)
        else:  # #{inner edges ≤ x} (searchsorted side="right"), by comparisons in one byte: the edges are few
            codes = np.zeros(x.shape[0], dtype=small)
            above = np.empty(x.shape[0], dtype=bool)
            for edge in e[1:-1]:
                np.greater_equal(x, edge, out=above)
                codes += above
            bad = ~np.isfinite(x)
            if bad.any():
                codes[bad] = none
        if not spec.none[i] and (codes == none).any():
            raise InputError(f"column {spec.columns[i]!r} has missing or non-finite values, which the slice "
                             "summary's spec does not expect", columns=[spec.columns[i]],
                             hint="build the spec from every row (the first pass) before summarising")
        return codes
    series = series.reset_index(drop=True)
    raw, uniques = _factorize(series)
    # text of the distinct values only (as calib_core.slices.candidates.encode_column writes every value), then their
    # level
    index = pd.Index(spec.levels[i])
    of_unique = index.get_indexer(_text(pd.Series(uniques, dtype=object)))
    missing = int(index.get_indexer([MISSING])[0]) if raw.size and (raw < 0).any() else -1
    lut = np.append(of_unique, missing).astype(np.int16 if len(spec.levels[i]) < 32_000 else np.int64)
    codes = lut[raw]  # code −1 (a missing value) reads the last entry
    if (codes < 0).any():
        bad = _text(series)[codes < 0].iloc[0]
        raise InputError(f"column {spec.columns[i]!r} has the value {bad!r}, which the slice summary's spec does "
                         "not list", columns=[spec.columns[i]],
                         hint="build the spec from every row (the first pass) before summarising")
    return codes


def _factorize(series: pd.Series) -> tuple[np.ndarray, pd.Series]:
    """``(codes, uniques)`` of a column's values, code −1 for a missing value; a categorical column (a Parquet
    text column read as a dictionary) gives its own codes and categories without hashing any row."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        return series.cat.codes.to_numpy(), pd.Series(np.asarray(series.cat.categories, dtype=object), dtype=object)
    raw, uniques = pd.factorize(series, use_na_sentinel=True)
    return raw, pd.Series(uniques, dtype=object)


def describe_spec(spec: SliceSpec) -> Mapping[str, Any]:
    """A short account of the bins for the page: columns by kind and the rank error.

    Parameters
    ----------
    spec : SliceSpec
        The spec.

    Returns
    -------
    mapping
        ``numeric`` and ``categorical`` (column names) and ``rank_error``.

    References
    ----------
    .. [1] Massart, P. (1990). The tight constant in the Dvoretzky–Kiefer–Wolfowitz inequality. The Annals of
       Probability, 18(3), 1269–1283.
    """
    return {"numeric": [c for c, k in zip(spec.columns, spec.kinds, strict=True) if k == "numeric"],
            "categorical": [c for c, k in zip(spec.columns, spec.kinds, strict=True) if k == "categorical"],
            "rank_error": spec.rank_error}
