"""Slice statistics from mergeable summaries: the slice explorer over data sets too large for memory.

:func:`calib_core.slices.regression.slice_ranking` (and its classification mirror) needs the rows.  Every statistic
it ranks a slice by is, however, a function of a few sums over the slice's rows (``ranking_from_sums``), and a slice
is one level of a slice column or the intersection of two levels of two columns.  So a chunk of rows is reduced
to a :class:`SliceSummary` — per slice column and per pair of columns, for every (level[, level]) cell, the sums
those statistics need — and summaries of chunks are added (:meth:`SliceSummary.merge`: associative and
commutative).  :func:`summary_ranking` then applies the explorer's minimum size and pair rules to the merged cells
and calls the same ``ranking_from_sums``: on the same bins, the ranking from a summary is the in-memory ranking
(``tests/scale/test_slices.py``, with random chunk boundaries).

Sums kept per cell (V values):

* regression — per σ-bin b of ENCE (fixed edges, :attr:`SliceSpec.sigma_edges`): rows, Σz, Σz², Σσ², Σ(σz)²,
  Σσ⁴ (6 per bin), and rows per (PIT decile, PIT ∈ [0.05, 0.95]) (20): the PIT-decile counts, the coverage counter,
  n, Σz, Σz² and ENCE's per-bin sums of :mod:`calib_core.slices.regression`; z = Φ⁻¹(PIT).
* classification — per equal-width probability bin (10): rows, Σf, Σy, Σf(1 − f).

Counts are integers held exactly in float64 (below 2⁵³); each float sum is a pair (hi, lo) merged by Knuth's
TwoSum, so merging adds no rounding error of its own (a merged sum is the exact sum of the chunks' float sums to
about 2⁻¹⁰⁶ relative); a chunk's own sums are NumPy float sums (error ≤ (n_chunk − 1)·ε·Σ|x|), the ranking's
statistics therefore agree with the in-memory ones to ~1e-12 relative, and the integer-based tests (PIT deciles,
coverage) exactly.

Bins.  Numeric slice columns are cut at the quantiles k/n_bins of the column and ENCE's σ-bins at the quintiles of
σ, all over every row; categorical columns need their full list of levels.  :func:`slice_spec` takes them from rows
in memory (``np.quantile``: the in-memory explorer's own edges).  Over distributed data a first pass builds a
:class:`~calib_core.scale.slices_sketch.SliceSketch` per chunk (merged the same way): the distinct levels of every
text column, whether a numeric column has more than 12 distinct values (the in-memory rule for numeric vs
categorical), and a Bernoulli sample of the rows chosen by a hash of the row id (so independent of the chunking) at
rate m/N; the edges are the sample's quantiles.  Rank error (Dvoretzky–Kiefer–Wolfowitz, Massart 1990): with m
sampled rows, every edge of a column lies within ε = √(ln(2/δ)/(2m)) of its target rank fraction, simultaneously,
with probability 1 − δ — ε = 0.0036 at m = 200,000, δ = 0.01 (:attr:`SliceSpec.rank_error`); with N ≤ m every row is
taken and the edges are exact.

Cost per chunk of n rows and F slice columns: the columns are grouped into blocks whose codes have at most
:data:`BLOCK_CELLS` combinations; one ``np.bincount`` per sum and per *pair of blocks* (not per pair of columns:
7 blocks of 3 columns instead of 190 column pairs for F = 20) gives the joint table of two blocks, and one-hot
projections (matrix products on the small tables) give every column pair inside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from ..base.mergeable import hash_uniform
from ..base.predictions import InputError, PredictionSet
from ..base.regression import SampleSet
from ..slices import classification as cls_slices
from ..slices import regression as reg_slices
from ..slices.candidates import ALPHA, DEFAULT_BINS, DEFAULT_MIN_SIZE, available_slice_columns
from .regression import ensemble_pit

__all__ = ["SliceSpec", "SliceSummary", "slice_spec", "summarize_slices", "summary_ranking", "summary_cells",
           "summary_funnel", "search_sentence", "column_codes", "merge_all", "describe_spec", "BLOCK_CELLS",
           "SAMPLE_ROWS", "MISSING"]

MISSING = "(missing)"
"""The level of a missing categorical value (as :func:`calib_core.slices.candidates.encode_column`)."""
BLOCK_CELLS = 128
"""Largest number of code combinations of a block of slice columns."""
SAMPLE_ROWS = 200_000
"""Expected rows of the hashed sample that gives the quantile edges of distributed data."""
_PIT_BINS, _PROB_BINS = 10, 10
_EPS = 1e-12


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
        return 6 * (len(self.sigma_edges) + 1) + 2 * _PIT_BINS if self.task == "regression" else 4 * _PROB_BINS


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


def _row_values(pset: PredictionSet, task: str, *, target: str, seed: int,
                row_ids: np.ndarray | None) -> tuple[np.ndarray, ...]:
    if task == "regression":
        u, sigma = reg_slices.slice_row_statistics(pset, seed=seed)
        if isinstance(pset.dist, SampleSet) and row_ids is not None:  # V from the row id: chunk-independent
            u = ensemble_pit(np.asarray(pset.y, float), pset.dist, row_ids, seed)
        elif getattr(pset.dist, "is_discrete", False) and row_ids is not None:
            hi = np.asarray(pset.dist.cdf(pset.y), float)
            lo = np.asarray(pset.dist.cdf_left(pset.y), float)
            u = lo + hash_uniform(row_ids, seed, 2) * (hi - lo)
        return u, sigma
    return cls_slices.slice_events(pset, target=target)


def slice_spec(pset: PredictionSet, *, columns: Sequence[str] | None = None, n_bins: int = DEFAULT_BINS,
               target: str = "auto", seed: int = 0) -> SliceSpec:
    """The spec of rows in memory: the in-memory explorer's own bins.

    The slice columns and kinds of :func:`calib_core.slices.candidates.available_slice_columns`, numeric edges
    ``np.unique(np.quantile(x, k/n_bins))`` and ENCE's σ edges over every row — so that :func:`summary_ranking` of
    any chunking of ``pset`` equals its in-memory ranking — and every text level.

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
    return _codes(values, spec, i).astype(np.int64)


def _codes(values: pd.Series, spec: SliceSpec, i: int) -> np.ndarray:
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


# ---------------------------------------------------------------------------------------------------------------
# the summary
# ---------------------------------------------------------------------------------------------------------------
def _two_sum(a_hi: np.ndarray, a_lo: np.ndarray, b_hi: np.ndarray, b_lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a_hi + b_hi
    bb = s - a_hi
    err = (a_hi - (s - bb)) + (b_hi - bb)
    return s, a_lo + b_lo + err


@dataclass
class SliceSummary:
    """Per-cell sums of a chunk or of merged chunks.

    Attributes
    ----------
    spec : SliceSpec
        The bins.
    n_rows : int
        Rows summarised.
    singles : list of ndarray of shape (radix_i, V)
        Sums per level of every column.
    pairs : dict of (int, int) to ndarray of shape (radix_i, radix_j, V)
        Sums per cell of every pair of columns i < j.
    singles_lo, pairs_lo : as ``singles``, ``pairs``
        Their compensation terms (the value is hi + lo).

    References
    ----------
    .. [1] Knuth, D. E. (1997). The Art of Computer Programming, Vol. 2: Seminumerical Algorithms, 3rd ed.,
       §4.2.2. Addison-Wesley.
    .. [2] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    """

    spec: SliceSpec
    n_rows: int
    singles: list[np.ndarray]
    pairs: dict[tuple[int, int], np.ndarray]
    singles_lo: list[np.ndarray]
    pairs_lo: dict[tuple[int, int], np.ndarray]

    def merge(self, other: SliceSummary) -> SliceSummary:
        """The summary of both chunks' rows.

        Cell-wise TwoSum: associative and commutative up to the ~2⁻¹⁰⁶ relative error of the compensated sum.

        Parameters
        ----------
        other : SliceSummary
            A summary with the same spec.

        Returns
        -------
        SliceSummary
            The merge.

        Raises
        ------
        ValueError
            If the specs' columns or levels differ.
        """
        if other.spec.columns != self.spec.columns or other.spec.levels != self.spec.levels:
            raise ValueError("slice summaries with different specs cannot be merged")
        singles, singles_lo = zip(*(_two_sum(a, al, b, bl) for a, al, b, bl in zip(
            self.singles, self.singles_lo, other.singles, other.singles_lo, strict=True))) if self.singles else ((), ())
        pairs, pairs_lo = {}, {}
        for k in self.pairs:
            pairs[k], pairs_lo[k] = _two_sum(self.pairs[k], self.pairs_lo[k], other.pairs[k], other.pairs_lo[k])
        return SliceSummary(self.spec, self.n_rows + other.n_rows, list(singles), pairs, list(singles_lo), pairs_lo)

    def single(self, i: int) -> np.ndarray:
        """Sums of column i's cells.

        Parameters
        ----------
        i : int
            A column index.

        Returns
        -------
        ndarray of shape (radix_i, V)
            hi + lo.
        """
        return self.singles[i] + self.singles_lo[i]

    def pair(self, i: int, j: int) -> np.ndarray:
        """Sums of the cells of the pair (i, j), either order.

        Parameters
        ----------
        i, j : int
            Two column indices.

        Returns
        -------
        ndarray of shape (radix_i, radix_j, V)
            hi + lo.
        """
        if i < j:
            return self.pairs[(i, j)] + self.pairs_lo[(i, j)]
        return np.swapaxes(self.pairs[(j, i)] + self.pairs_lo[(j, i)], 0, 1)


def merge_all(summaries: Sequence[SliceSummary]) -> SliceSummary:
    """Merge a sequence of slice summaries (pairwise, in order).

    Parameters
    ----------
    summaries : sequence of SliceSummary
        At least one summary, all with the same spec.

    Returns
    -------
    SliceSummary
        The summary of all their rows.

    References
    ----------
    .. [1] Knuth, D. E. (1997). The Art of Computer Programming, Vol. 2: Seminumerical Algorithms, 3rd ed.,
       §4.2.2. Addison-Wesley.
    """
    out = summaries[0]
    for s in summaries[1:]:
        out = out.merge(s)
    return out


def _blocks(radices: Sequence[int]) -> list[list[int]]:
    out: list[list[int]] = []
    prod = BLOCK_CELLS + 1
    for i, r in enumerate(radices):
        if out and prod * r <= BLOCK_CELLS:
            out[-1].append(i)
            prod *= r
        else:
            out.append([i])
            prod = r
    return out


def _inner(u_or_f: np.ndarray, other: np.ndarray, spec: SliceSpec) -> tuple[list, np.ndarray, int, np.ndarray, int]:
    """Per row: (weights of the sums keyed by the inner bin, inner bin, its count, second key's state, its count)."""
    if spec.task == "regression":
        u, sigma = u_or_f, other
        z = special.ndtri(np.clip(u, _EPS, 1.0 - _EPS))
        covered = ((u >= 0.05) & (u <= 0.95)).astype(np.int64)
        dec = np.minimum((u * _PIT_BINS).astype(np.int64), _PIT_BINS - 1)
        finite = np.isfinite(sigma) & (sigma > 0)
        s_bin = np.searchsorted(np.asarray(spec.sigma_edges, float), sigma, side="right")
        s2 = np.where(finite, sigma, 0.0) ** 2
        weights = [None, z, z * z, s2, s2 * z * z, s2 * s2]
        return weights, s_bin, len(spec.sigma_edges) + 1, dec * 2 + covered, 2 * _PIT_BINS
    f, y = u_or_f, other
    b = np.minimum((f * _PROB_BINS).astype(np.int64), _PROB_BINS - 1)
    return [None, f, y, f * (1.0 - f)], b, _PROB_BINS, np.empty(0, np.int64), 0


def _cell_sums(ca: np.ndarray, scale: int, k_inner: np.ndarray, k_state: np.ndarray | None, n_cells: int,
               weights: list, n_inner: int, n_state: int, buf: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out`` (n_cells, V) ← per cell and inner bin the sums of ``weights`` (None: rows), then per cell the rows
    per state, by one ``np.bincount`` per sum.  The keys are ca·scale·n_inner + ``k_inner`` and
    ca·scale·n_state + ``k_state``, with the second block's part (cb·n_inner + inner bin, cb·n_state + state)
    precomputed once per block, built in the preallocated int64 ``buf``."""
    size = n_cells * n_inner
    W = len(weights)
    view = out[:, :n_inner * W].reshape(n_cells, n_inner, W)
    np.multiply(ca, scale * n_inner, out=buf, dtype=np.int64)
    buf += k_inner
    for j, w in enumerate(weights):
        view[:, :, j] = np.bincount(buf, weights=w, minlength=size).reshape(n_cells, n_inner)
    if n_state:
        np.multiply(ca, scale * n_state, out=buf, dtype=np.int64)
        buf += k_state
        out[:, n_inner * W:] = np.bincount(buf, minlength=n_cells * n_state).reshape(n_cells, n_state)
    return out


def _projector(radices: Sequence[int]) -> np.ndarray:
    """(Π r, Σ r) one-hot: block code → the positions of its columns' codes."""
    n_codes = int(np.prod(radices))
    codes = np.unravel_index(np.arange(n_codes), tuple(radices))
    out = np.zeros((n_codes, int(sum(radices))))
    off = 0
    for c, r in zip(codes, radices, strict=True):
        out[np.arange(n_codes), off + c] = 1.0
        off += r
    return out


def summarize_slices(pset: PredictionSet, spec: SliceSpec, *, row_ids: np.ndarray | None = None) -> SliceSummary:
    """The :class:`SliceSummary` of a chunk of rows.

    Cost: O(n) per sum and per pair of column blocks (module docstring).

    Parameters
    ----------
    pset : PredictionSet
        The chunk.
    spec : SliceSpec
        The bins every chunk shares.
    row_ids : ndarray of shape (n,) of int64, optional
        The rows' global ids (default ``pset.row_number``): they randomise the PIT of ensembles and distributions
        with atoms by a hash of the id, so a row gives the same numbers whichever chunk it is in.

    Returns
    -------
    SliceSummary
        Per cell the sums of the module docstring.

    References
    ----------
    .. [1] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [2] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [3] Czado, C., Gneiting, T., & Held, L. (2009). Predictive model assessment for count data. Biometrics,
       65(4), 1254–1261.
    """
    n = pset.n_rows
    ids = np.asarray(pset.row_number if row_ids is None else row_ids, dtype=np.int64)
    a, b = _row_values(pset, spec.task, target=spec.target, seed=spec.seed, row_ids=ids)
    weights, inner, n_inner, state, n_state = _inner(np.asarray(a, float), np.asarray(b, float), spec)
    F = len(spec.columns)
    radices = [spec.radix(i) for i in range(F)]
    V = spec.n_values
    codes = [_codes(column_values(pset, name), spec, i) for i, name in enumerate(spec.columns)]
    singles = [np.zeros((r, V)) for r in radices]
    pairs = {(i, j): np.zeros((radices[i], radices[j], V)) for i in range(F) for j in range(i + 1, F)}
    blocks = _blocks(radices)
    bcode, bsize, proj, offs = [], [], [], []
    for blk in blocks:
        r = [radices[i] for i in blk]
        code = codes[blk[0]]  # small integers: the keys are built in int64 buffers
        if len(blk) > 1:
            code = code.astype(np.int32 if int(np.prod(r)) < 2 ** 31 else np.int64)
        for i in blk[1:]:
            code *= radices[i]
            code += codes[i]
        bcode.append(code)
        bsize.append(int(np.prod(r)))
        proj.append(_projector(r))
        offs.append(np.concatenate([[0], np.cumsum(r)]))

    def within(bi: int, table: np.ndarray) -> None:  # table (cells of block bi, V): its singles and inner pairs
        P = proj[bi]
        blk = blocks[bi]
        for x, i in enumerate(blk):
            Pi = P[:, offs[bi][x]:offs[bi][x + 1]]
            singles[i] += Pi.T @ table
            for y in range(x + 1, len(blk)):
                Pj = P[:, offs[bi][y]:offs[bi][y + 1]]
                both = (Pi[:, :, None] * Pj[:, None, :]).reshape(P.shape[0], -1)  # (cells, p·q) one-hot
                pairs[(i, blk[y])] += (both.T @ table).reshape(Pi.shape[1], Pj.shape[1], -1)

    # one key buffer and one table reused by every pair of blocks (fewer page faults than fresh arrays per pair)
    buf = np.empty(n, dtype=np.int64)
    most = max(bsize) ** 2 if len(blocks) > 1 else bsize[0]
    store = np.empty(most * V)

    k_bufs = np.empty(n, dtype=np.int64), np.empty(n if n_state else 0, dtype=np.int64)

    def second(bi: int) -> tuple[np.ndarray, np.ndarray | None]:  # a block's part of the keys
        k_inner = np.multiply(bcode[bi], n_inner, out=k_bufs[0], dtype=np.int64)
        k_inner += inner
        if not n_state:
            return k_inner, None
        k_state = np.multiply(bcode[bi], n_state, out=k_bufs[1], dtype=np.int64)
        k_state += state
        return k_inner, k_state

    if len(blocks) == 1:
        within(0, _cell_sums(np.zeros(1, dtype=np.int64), 0, *second(0), bsize[0], weights, n_inner, n_state, buf,
                             store[:bsize[0] * V].reshape(bsize[0], V)))
    done = set()
    for bb in range(1, len(blocks)):
        k_inner, k_state = second(bb)
        for ba in range(bb):
            ra, rb = bsize[ba], bsize[bb]
            table = _cell_sums(bcode[ba], rb, k_inner, k_state, ra * rb, weights, n_inner, n_state, buf,
                               store[:ra * rb * V].reshape(ra * rb, V))
            t3 = table.reshape(ra, rb, V)
            for bi, marg in ((ba, t3.sum(axis=1)), (bb, t3.sum(axis=0))):
                if bi not in done:
                    within(bi, marg)
                    done.add(bi)
            # cross pairs: project block a's codes onto its columns, then block b's
            U = (proj[ba].T @ table.reshape(ra, rb * V)).reshape(-1, rb, V)  # (Σr_a, rb, V)
            W = np.tensordot(U, proj[bb], axes=([1], [0])).transpose(0, 2, 1)  # (Σr_a, Σr_b, V)
            for x, i in enumerate(blocks[ba]):
                for y, j in enumerate(blocks[bb]):
                    pairs[(i, j)] += W[offs[ba][x]:offs[ba][x + 1], offs[bb][y]:offs[bb][y + 1]]
    return SliceSummary(spec, n, singles, pairs, [np.zeros_like(s) for s in singles],
                        {k: np.zeros_like(v) for k, v in pairs.items()})


# ---------------------------------------------------------------------------------------------------------------
# the ranking
# ---------------------------------------------------------------------------------------------------------------
def _condition(spec: SliceSpec, i: int, level: str) -> str:
    return f"{spec.columns[i]} ∈ {level}" if spec.kinds[i] == "numeric" else f"{spec.columns[i]} = {level}"


def summary_cells(summary: SliceSummary, *, columns: Sequence[str] | None = None, min_size: int = DEFAULT_MIN_SIZE,
                  pairs: bool = True) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The candidate slices of :func:`calib_core.slices.candidates.candidate_slices` read off a summary.

    The same slices in the same order (levels below ``min_size`` dropped, a column left with one level that covers
    every row dropped, an intersection as large as a parent dropped).

    Parameters
    ----------
    summary : SliceSummary
        A (merged) summary.
    columns : sequence of str, optional
        Slice columns (default all of the spec's).
    min_size : int, default DEFAULT_MIN_SIZE
        Smallest slice (at least 1).
    pairs : bool, default True
        Also the intersections of two columns' levels.

    Returns
    -------
    labels : list of str
        The slices' names.
    sizes : ndarray of shape (S,) of int64
        Their rows.
    sums : ndarray of shape (S, V)
        Their cells' sums.

    Raises
    ------
    ValueError
        If ``min_size`` < 1.
    InputError
        If a named column is not in the spec.

    References
    ----------
    .. [1] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [2] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. APL Machine Learning, 1(4), 046121 (arXiv:2309.06240).
    """
    if min_size < 1:
        raise ValueError("min_size must be ≥ 1")
    spec = summary.spec
    names = spec.columns if columns is None else [str(c) for c in columns]
    idx = []
    for name in names:
        if name not in spec.columns:
            raise InputError(f"no slice column {name!r}", columns=[name],
                             hint=f"choose among {', '.join(spec.columns) or 'none (the data set has none)'}")
        idx.append(spec.columns.index(name))
    n_total = summary.n_rows
    kept_cols, kept_levels, counts = [], [], []
    for i in idx:
        cnt = summary.single(i)[:len(spec.levels[i]), :]
        c = _rows(spec, cnt)
        keep = np.flatnonzero(c >= min_size)
        if keep.size < 2 and not (keep.size == 1 and n_total > c[keep].sum()):
            continue
        kept_cols.append(i)
        kept_levels.append(keep)
        counts.append(c)
    labels: list[str] = []
    sizes: list[np.ndarray] = []
    sums: list[np.ndarray] = []
    for x, i in enumerate(kept_cols):
        cells = summary.single(i)[kept_levels[x]]
        sizes.append(counts[x][kept_levels[x]])
        sums.append(cells)
        labels += [_condition(spec, i, spec.levels[i][k]) for k in kept_levels[x]]
    if pairs:
        for x, i in enumerate(kept_cols):
            for y in range(x + 1, len(kept_cols)):
                j = kept_cols[y]
                li, lj = kept_levels[x], kept_levels[y]
                table = summary.pair(i, j)[np.ix_(li, lj)]  # (Ki, Kj, V) in combined-code order
                flat = table.reshape(li.size * lj.size, -1)
                c = _rows(spec, flat)
                a, b = np.divmod(np.arange(c.size), lj.size)
                ok = (c >= min_size) & (c < counts[x][li][a]) & (c < counts[y][lj][b])
                sel = np.flatnonzero(ok)
                sizes.append(c[sel])
                sums.append(flat[sel])
                labels += [f"{_condition(spec, i, spec.levels[i][li[a_]])} & "
                           f"{_condition(spec, j, spec.levels[j][lj[b_]])}" for a_, b_ in zip(a[sel], b[sel])]
    V = spec.n_values
    size = np.concatenate(sizes).astype(np.int64) if sizes else np.empty(0, np.int64)
    return labels, size, (np.concatenate(sums, axis=0) if sums else np.empty((0, V)))


def _rows(spec: SliceSpec, cells: np.ndarray) -> np.ndarray:
    """Rows of each cell (…, V) → (…)."""
    if spec.task == "regression":
        n_s = len(spec.sigma_edges) + 1
        return np.rint(cells[..., 0:6 * n_s:6].sum(axis=-1))
    return np.rint(cells[..., 0:4 * _PROB_BINS:4].sum(axis=-1))


def summary_ranking(summary: SliceSummary, *, columns: Sequence[str] | None = None,
                    min_size: int = DEFAULT_MIN_SIZE, pairs: bool = True, n_null: int = 200, seed: int = 0,
                    alpha: float = ALPHA) -> pd.DataFrame:
    """The explorer's ranking from a merged summary, as in memory.

    :func:`calib_core.slices.regression.slice_ranking` / :func:`calib_core.slices.classification.slice_ranking` (same
    columns, same order): :func:`summary_cells`, then the task's ``ranking_from_sums``.  ``index`` is the slice's
    position in :func:`summary_cells` (there are no rows to mask).

    Parameters
    ----------
    summary : SliceSummary
        A (merged) summary.
    columns : sequence of str, optional
        Slice columns (default all).
    min_size : int, default DEFAULT_MIN_SIZE
        Smallest slice.
    pairs : bool, default True
        Also the intersections of two columns' levels.
    n_null : int, default 200
        Simulated draws of ENCE's / ECE's null.
    seed : int, default 0
        Seed of the null draws.
    alpha : float, default ALPHA
        Family-wise level of the flags.

    Returns
    -------
    DataFrame
        The ranking, worst first.

    References
    ----------
    .. [1] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [2] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [3] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [4] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
       Statistics, 6(2), 65–70.
    """
    spec = summary.spec
    labels, size, cells = summary_cells(summary, columns=columns, min_size=min_size, pairs=pairs)
    if spec.task == "regression":
        n_s = len(spec.sigma_edges) + 1
        per_bin = cells[:, :6 * n_s].reshape(-1, n_s, 6)
        states = cells[:, 6 * n_s:].reshape(-1, _PIT_BINS, 2)
        pit_counts = states.sum(axis=2)
        sums = np.column_stack([per_bin[:, :, 0].sum(axis=1), per_bin[:, :, 1].sum(axis=1),
                                per_bin[:, :, 2].sum(axis=1), states[:, :, 1].sum(axis=1)])
        ence_sums = per_bin[:, :, [0, 3, 4, 5]]
        return reg_slices.ranking_from_sums(labels, size, pit_counts, sums, ence_sums, ence_tested=spec.ence_tested,
                                            n_null=n_null, seed=seed, alpha=alpha)
    return cls_slices.ranking_from_sums(labels, size, cells.reshape(-1, _PROB_BINS, 4), n_null=n_null, seed=seed,
                                        alpha=alpha)



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


def summary_funnel(summary: SliceSummary, ranking: pd.DataFrame, statistic: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The funnel plot's ``(points, limits)`` of a ranking from a summary.

    The task's ``funnel_table``; for classification the base rate Σf/n is read off the summary's totals.

    Parameters
    ----------
    summary : SliceSummary
        The summary the ranking comes from.
    ranking : DataFrame
        Its ranking (:func:`summary_ranking`).
    statistic : str
        The statistic shown.

    Returns
    -------
    points, limits : DataFrame
        As ``slices.regression.funnel_table``.

    References
    ----------
    .. [1] Spiegelhalter, D. J. (2005). Funnel plots for comparing institutional performance. Statistics in
       Medicine, 24(8), 1185–1202.
    """
    if summary.spec.task == "regression":
        return reg_slices.funnel_table(ranking, statistic)
    totals = summary.single(0).sum(axis=0) if summary.spec.columns else np.zeros(summary.spec.n_values)
    n = totals[0:4 * _PROB_BINS:4].sum()
    base = float(totals[1:4 * _PROB_BINS:4].sum() / n) if n > 0 else 0.5
    return cls_slices.funnel_table(ranking, statistic, base_rate=base)


def search_sentence(summary: SliceSummary, ranking: pd.DataFrame, *, alpha: float = ALPHA) -> str:
    """One sentence: how many slices of how many rows were searched, how many are flagged, how exact the bins are.

    Parameters
    ----------
    summary : SliceSummary
        The summary searched.
    ranking : DataFrame
        Its ranking.
    alpha : float, default ALPHA
        The family-wise level of the flags.

    Returns
    -------
    str
        Plain text.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
       Statistics, 6(2), 65–70.
    .. [2] Massart, P. (1990). The tight constant in the Dvoretzky–Kiefer–Wolfowitz inequality. The Annals of
       Probability, 18(3), 1269–1283.
    """
    spec = summary.spec
    flagged = int(ranking["flagged"].sum()) if len(ranking) else 0
    bins = ("numeric bins at the exact quantiles of every row" if spec.rank_error == 0.0 else
            f"numeric bins at the quantiles of a hashed sample of the rows (each edge within "
            f"{100 * spec.rank_error:.2g}% of its rank, with probability 99%)")
    return (f"{len(ranking):,} slices of {summary.n_rows:,} rows searched from the data set's slice summary "
            f"({len(spec.columns)} columns; {bins}); {flagged:,} flagged as miscalibrated at family-wise level "
            f"{alpha:g} (Holm).")
