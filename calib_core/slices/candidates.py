"""Candidate slices of a prediction set and their sufficient statistics, all at once (the slice explorer's engine).

A *slice* is a set of rows defined by one condition on a slice column (``group = A``, ``site = s07``,
``x1 ∈ [0.25, 0.84)``) or by the intersection of two conditions on two different columns.  Slice columns are the
``group`` and ``model`` columns of a :class:`~calib_core.base.predictions.PredictionSet` and its ``slice_columns``
(every column no role took, features included): categorical columns give one slice per value, numeric columns are
cut into ``n_bins`` quantile bins (:func:`calib_core.data.columns.column_kinds` decides which is which).  Slices
smaller than ``min_size`` rows are dropped; so is an intersection with as many rows as one of its two parents (it
is that parent).

Each column is encoded once as integer codes (−1: the row is in no kept slice of that column: missing value or a
level below ``min_size``); a *term* is one column or one pair of columns, and a term's rows are grouped by the code
``c₁·K₂ + c₂``.  Any per-row quantity is then summed per slice with one ``np.bincount`` per term (no loop over rows;
the loop over terms costs O(n) each): :func:`slice_sums` for sums, :func:`slice_binned_sums` for sums per slice and
per inner bin (histograms, σ-bins, probability bins).  The task modules (:mod:`calib_core.slices.regression`,
:mod:`calib_core.slices.classification`) turn those sums into statistics, tests and a ranking; :func:`rank_slices` is
their shared multiplicity step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..base.predictions import InputError, PredictionSet
from ..base.significance import holm_adjust
from ..data.columns import column_kinds

__all__ = ["SliceSet", "candidate_slices", "restrict_slices", "encode_column", "slice_sums", "slice_binned_sums",
           "slice_mask", "available_slice_columns", "rank_slices", "DEFAULT_MIN_SIZE", "DEFAULT_BINS", "ALPHA"]

DEFAULT_MIN_SIZE = 100
"""Default smallest slice (rows)."""
DEFAULT_BINS = 5
"""Default number of quantile bins of a numeric slice column."""
ALPHA = 0.05
"""Family-wise level at which a slice is flagged (Holm-adjusted p ≤ ALPHA)."""
_MISSING = "(missing)"


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def encode_column(values: pd.Series | np.ndarray, kind: str, *, n_bins: int = DEFAULT_BINS,
                  min_size: int = DEFAULT_MIN_SIZE) -> tuple[np.ndarray, list[str]]:
    """Integer codes (−1 = in no slice) and one label per code of one slice column.

    ``kind="categorical"``: one code per distinct value (missing values form the level ``(missing)``), levels with
    fewer than ``min_size`` rows get −1.  ``kind="numeric"``: ``n_bins`` bins between the empirical quantiles
    k/n_bins (repeated edges merged; labels ``[a, b)``, the last ``[a, b]``), missing values −1.

    Parameters
    ----------
    values : Series or ndarray of shape (n,)
        The column.
    kind : {"numeric", "categorical"}
        How to cut it.
    n_bins : int, default DEFAULT_BINS
        Quantile bins of a numeric column.
    min_size : int, default DEFAULT_MIN_SIZE
        Smallest level kept (categorical).

    Returns
    -------
    codes : ndarray of shape (n,) of int64
        Level of every row, −1 for none.
    labels : list of str
        The label of each code.

    Raises
    ------
    ValueError
        If ``kind`` is neither.

    Examples
    --------
    >>> codes, labels = encode_column(["a", "b", "a", None], "categorical", min_size=1)
    >>> codes.tolist(), labels
    ([1, 2, 1, 0], ['(missing)', 'a', 'b'])

    References
    ----------
    .. [1] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [2] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. APL Machine Learning, 1(4), 046121 (arXiv:2309.06240).
    """
    s = pd.Series(values).reset_index(drop=True)
    if kind == "numeric":
        x = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
        ok = np.isfinite(x)
        codes = np.full(x.shape[0], -1, dtype=np.int64)
        if not ok.any():
            return codes, []
        edges = np.unique(np.quantile(x[ok], np.linspace(0.0, 1.0, int(n_bins) + 1)))
        if edges.size < 2:
            return codes, []
        inner = edges[1:-1]
        codes[ok] = np.searchsorted(inner, x[ok], side="right")
        labels = [f"[{_fmt(lo)}, {_fmt(hi)}{']' if i == edges.size - 2 else ')'}"
                  for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:], strict=True))]
    elif kind == "categorical":
        text = s.astype(object).where(s.notna(), _MISSING).astype(str).str.strip()
        codes, uniques = pd.factorize(text, sort=True)
        codes = codes.astype(np.int64)
        labels = [str(u) for u in uniques]
    else:
        raise ValueError(f"kind must be 'numeric' or 'categorical', not {kind!r}")
    counts = np.bincount(codes[codes >= 0], minlength=len(labels))
    small = counts < min_size
    if small.any():  # renumber the kept levels 0..K−1
        new = np.cumsum(~small) - 1
        new[small] = -1
        codes = np.where(codes >= 0, new[np.maximum(codes, 0)], -1)
        labels = [lab for lab, s_ in zip(labels, small, strict=True) if not s_]
    return codes, labels


@dataclass
class SliceSet:
    """Candidate slices of n rows: the encoded slice columns, the terms and every slice's rows, label and size.

    Slice s is the rows of term ``term[s]`` whose combined code is ``key[s]``.

    Attributes
    ----------
    n_rows : int
        n.
    columns, kinds : list of str
        The encoded slice columns and their kinds (``"numeric"`` | ``"categorical"``).
    codes : list of ndarray of shape (n,)
        Per column the level code of every row (−1: in no kept slice).
    levels : list of list of str
        Per column the level labels.
    terms : list of tuple of int
        Column indices of each term (one column or a pair).
    term, key : ndarray of shape (S,)
        The term and the combined code of every slice.
    label : list of str
        Readable names (``site = s07 & x1 ∈ [0.25, 0.84)``).
    size : ndarray of shape (S,)
        Rows of every slice.

    References
    ----------
    .. [1] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [2] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. APL Machine Learning, 1(4), 046121 (arXiv:2309.06240).
    """

    n_rows: int
    columns: list[str]
    kinds: list[str]
    codes: list[np.ndarray]
    levels: list[list[str]]
    terms: list[tuple[int, ...]]
    term: np.ndarray
    key: np.ndarray
    label: list[str]
    size: np.ndarray

    @property
    def n_slices(self) -> int:
        """Number of candidate slices S.

        Returns
        -------
        int
            S.
        """
        return int(self.term.size)

    def term_codes(self, t: int) -> tuple[np.ndarray, int]:
        """Per-row combined code of term ``t`` (−1 = in none of its slices) and the number of codes.

        Parameters
        ----------
        t : int
            A term index.

        Returns
        -------
        code : ndarray of shape (n,) of int64
            c₁·K₂ + c₂ for a pair (c₁ for one column).
        k : int
            The number of combined codes.
        """
        cols = self.terms[t]
        code = self.codes[cols[0]].copy()
        k = len(self.levels[cols[0]])
        for c in cols[1:]:
            other = self.codes[c]
            kc = len(self.levels[c])
            code = np.where((code >= 0) & (other >= 0), code * kc + other, -1)
            k *= kc
        return code, k

    def conditions(self, s: int) -> list[tuple[str, str]]:
        """``[(column, level label), …]`` of slice ``s``.

        Parameters
        ----------
        s : int
            A slice index.

        Returns
        -------
        list of (str, str)
            One condition per column of its term.
        """
        cols = self.terms[int(self.term[s])]
        key = int(self.key[s])
        out = []
        for c in reversed(cols):
            kc = len(self.levels[c])
            out.append((self.columns[c], self.levels[c][key % kc]))
            key //= kc
        return out[::-1]


def _condition_text(column: str, kind: str, level: str) -> str:
    return f"{column} ∈ {level}" if kind == "numeric" else f"{column} = {level}"


def available_slice_columns(pset: PredictionSet) -> dict[str, str]:
    """``{column: kind}`` of the slice columns of ``pset``.

    ``group`` and ``model`` (categorical, when present and not constant) and every column of ``pset.slice_columns``
    (:func:`calib_core.data.columns.column_kinds`).

    Parameters
    ----------
    pset : PredictionSet
        The rows.

    Returns
    -------
    dict of str to str
        Column → ``"numeric"`` or ``"categorical"``.

    References
    ----------
    .. [1] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [2] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. APL Machine Learning, 1(4), 046121 (arXiv:2309.06240).
    """
    out: dict[str, str] = {}
    for name in ("group", "model"):
        values = getattr(pset, name)
        if values is not None and pd.unique(np.asarray(values, dtype=object)).size > 1:
            out[name] = "categorical"
    if pset.slice_columns is not None:
        for c, kind in column_kinds(pset.slice_columns).items():
            out.setdefault(c, kind)
    return out


def _column_values(pset: PredictionSet, name: str) -> pd.Series:
    if name in ("group", "model") and getattr(pset, name) is not None and (
            pset.slice_columns is None or name not in pset.slice_columns.columns):
        return pd.Series(np.asarray(getattr(pset, name), dtype=object))
    if pset.slice_columns is None or name not in pset.slice_columns.columns:
        raise InputError(f"no slice column {name!r}", source=pset.source, columns=[name],
                         hint=f"choose among {', '.join(available_slice_columns(pset)) or 'none (the file has none)'}")
    return pset.slice_columns[name]


def candidate_slices(pset: PredictionSet, *, columns: Sequence[str] | None = None, n_bins: int = DEFAULT_BINS,
                     min_size: int = DEFAULT_MIN_SIZE, pairs: bool = True) -> SliceSet:
    """The candidate slices of ``pset``: every level of every slice column and of every pair of columns.

    Each with at least ``min_size`` rows (module docstring).  Cost: O(n) per column and per pair (one
    ``np.bincount``).

    Parameters
    ----------
    pset : PredictionSet
        The rows.
    columns : sequence of str, optional
        Which slice columns (default all of :func:`available_slice_columns`).
    n_bins : int, default DEFAULT_BINS
        Quantile bins of a numeric column (at least 2).
    min_size : int, default DEFAULT_MIN_SIZE
        Smallest slice (at least 1).
    pairs : bool, default True
        Also the intersections of two columns' levels.

    Returns
    -------
    SliceSet
        The candidate slices.

    Raises
    ------
    ValueError
        If ``min_size`` < 1 or ``n_bins`` < 2.
    InputError
        If a named column is not a slice column of ``pset``.

    References
    ----------
    .. [1] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [2] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. APL Machine Learning, 1(4), 046121 (arXiv:2309.06240).
    """
    if min_size < 1 or n_bins < 2:
        raise ValueError("min_size must be ≥ 1 and n_bins ≥ 2")
    avail = available_slice_columns(pset)
    names = list(avail) if columns is None else [str(c) for c in columns]
    n = pset.n_rows
    enc_names, kinds, codes, levels = [], [], [], []
    for name in names:
        kind = avail.get(name)
        if kind is None:
            _column_values(pset, name)  # raises the message naming the column
            continue
        code, lev = encode_column(_column_values(pset, name), kind, n_bins=n_bins, min_size=min_size)
        if len(lev) < 2 and not (len(lev) == 1 and (code < 0).any()):  # one level covering every row: no slice
            continue
        enc_names.append(name)
        kinds.append(kind)
        codes.append(code)
        levels.append(lev)
    singles = [(i,) for i in range(len(enc_names))]
    terms = singles + ([(i, j) for i in range(len(enc_names)) for j in range(i + 1, len(enc_names))] if pairs else [])
    return _assemble(n, enc_names, kinds, codes, levels, terms, min_size)


def restrict_slices(sset: SliceSet, rows: np.ndarray, *, min_size: int = DEFAULT_MIN_SIZE) -> SliceSet:
    """The slices of ``sset`` on a subset of its rows, e.g. the held-out rows of a recalibration.

    The same columns, levels (numeric bins keep the edges cut on all rows), pairs and labels, each slice kept when it
    has at least ``min_size`` of those rows (an intersection as large as one of its parents on them is dropped, as in
    :func:`candidate_slices`).  Cost: O(n) per term.

    Parameters
    ----------
    sset : SliceSet
        Slices of all rows.
    rows : ndarray
        A boolean mask of shape (n,) or row positions.
    min_size : int, default DEFAULT_MIN_SIZE
        Smallest slice on the subset (at least 1).

    Returns
    -------
    SliceSet
        The slices of the subset.

    Raises
    ------
    ValueError
        If ``min_size`` < 1 or the mask has the wrong length.

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
    idx = np.asarray(rows)
    if idx.dtype == bool:
        if idx.shape != (sset.n_rows,):
            raise ValueError(f"the row mask must have the slices' {sset.n_rows} rows, got {idx.shape}")
        idx = np.flatnonzero(idx)
    codes = [c[idx] for c in sset.codes]
    return _assemble(int(idx.size), list(sset.columns), list(sset.kinds), codes, [list(lev) for lev in sset.levels],
                     list(sset.terms), min_size)


def _assemble(n: int, enc_names: list[str], kinds: list[str], codes: list[np.ndarray], levels: list[list[str]],
              terms: list[tuple[int, ...]], min_size: int) -> SliceSet:
    """The SliceSet of encoded columns and terms: every combined code of a term with ≥ ``min_size`` rows."""
    sset = SliceSet(n, enc_names, kinds, codes, levels, terms, np.empty(0, np.int64), np.empty(0, np.int64), [],
                    np.empty(0, np.int64))
    term_ids, keys, sizes, labels = [], [], [], []
    single_counts = [np.bincount(c[c >= 0], minlength=len(lev)) for c, lev in zip(codes, levels, strict=True)]
    for t, cols in enumerate(terms):
        code, k = sset.term_codes(t)
        counts = np.bincount(code[code >= 0], minlength=k)
        kept = np.flatnonzero(counts >= min_size)
        if len(cols) == 2:  # an intersection as large as a parent is that parent
            a, b = divmod(kept, len(levels[cols[1]]))
            kept = kept[(counts[kept] < single_counts[cols[0]][a]) & (counts[kept] < single_counts[cols[1]][b])]
        term_ids.append(np.full(kept.size, t, dtype=np.int64))
        keys.append(kept.astype(np.int64))
        sizes.append(counts[kept])
        for key in kept:
            parts, rest = [], int(key)
            for c in reversed(cols):
                kc = len(levels[c])
                parts.append(_condition_text(enc_names[c], kinds[c], levels[c][rest % kc]))
                rest //= kc
            labels.append(" & ".join(parts[::-1]))
    sset.term = np.concatenate(term_ids) if term_ids else np.empty(0, np.int64)
    sset.key = np.concatenate(keys) if keys else np.empty(0, np.int64)
    sset.size = np.concatenate(sizes).astype(np.int64) if sizes else np.empty(0, np.int64)
    sset.label = labels
    return sset


def slice_binned_sums(sset: SliceSet, values: np.ndarray, inner: np.ndarray | None = None,
                      n_inner: int = 1) -> np.ndarray:
    """Σ over the rows of each slice and each inner bin of each column of ``values``.

    One ``np.bincount`` per term and per column of ``values`` over the rows of the term's slices: O(n·k) per term, no
    loop over rows.

    Parameters
    ----------
    sset : SliceSet
        The slices.
    values : ndarray of shape (n, k) or (n,)
        Per-row quantities (a 1-d array is one column).
    inner : ndarray of shape (n,) of int, optional
        Integer bin of each row in ``[0, n_inner)`` (e.g. the PIT decile, the σ-bin, the probability bin); None for
        one bin.
    n_inner : int, default 1
        Number of inner bins.

    Returns
    -------
    ndarray of shape (S, n_inner, k)
        The sums.

    References
    ----------
    .. [1] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [2] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. APL Machine Learning, 1(4), 046121 (arXiv:2309.06240).
    """
    v = np.asarray(values, dtype=float)
    if v.ndim == 1:
        v = v[:, None]
    cols = [np.ascontiguousarray(v[:, j]) for j in range(v.shape[1])]
    inner_idx = np.zeros(sset.n_rows, dtype=np.int64) if inner is None else np.asarray(inner, dtype=np.int64)
    out = np.empty((sset.n_slices, int(n_inner), v.shape[1]))
    for t in range(len(sset.terms)):
        pick = np.flatnonzero(sset.term == t)
        if not pick.size:
            continue
        code, k = sset.term_codes(t)
        size = k * n_inner
        flat = np.where(code >= 0, code * n_inner + inner_idx, size)  # rows in no slice of the term: one spare bin
        sums = np.stack([np.bincount(flat, weights=c, minlength=size + 1)[:size] for c in cols], axis=1)
        out[pick] = sums.reshape(k, n_inner, v.shape[1])[sset.key[pick]]
    return out


def slice_sums(sset: SliceSet, values: np.ndarray) -> np.ndarray:
    """Σ over the rows of each slice of each column of ``values`` (:func:`slice_binned_sums` with one inner bin).

    Parameters
    ----------
    sset : SliceSet
        The slices.
    values : ndarray of shape (n, k) or (n,)
        Per-row quantities.

    Returns
    -------
    ndarray of shape (S, k)
        The sums.

    References
    ----------
    .. [1] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [2] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. APL Machine Learning, 1(4), 046121 (arXiv:2309.06240).
    """
    return slice_binned_sums(sset, values)[:, 0, :]


def slice_mask(sset: SliceSet, s: int) -> np.ndarray:
    """Boolean row mask of slice ``s``.

    Parameters
    ----------
    sset : SliceSet
        The slices.
    s : int
        A slice index.

    Returns
    -------
    ndarray of shape (n,) of bool
        Its rows.

    References
    ----------
    .. [1] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [2] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. APL Machine Learning, 1(4), 046121 (arXiv:2309.06240).
    """
    code, _ = sset.term_codes(int(sset.term[s]))
    return code == int(sset.key[s])


def rank_slices(table: pd.DataFrame, pvalues: np.ndarray, log_pvalues: np.ndarray, *,
                alpha: float = ALPHA, effect: np.ndarray | None = None) -> pd.DataFrame:
    """Combine, adjust and rank: the m tests of each of S slices into one flagged, sorted table.

    Per slice, the Bonferroni combination p_s = min(1, m_s·min_j p_sj) over its m_s tests that have a p-value (NaN:
    none) — valid whatever the dependence between a slice's tests; ``evidence`` = −log₁₀ p_s, from the log p-values
    so that it stays finite where p_s underflows.  Across the S slices searched, Holm's step-down adjustment
    (``adjusted p``) — valid under any dependence, so under the overlap of slices and their intersections
    (conservative where they overlap; a max-statistic simulation would be less so).  A slice is ``flagged`` when its
    adjusted p ≤ ``alpha``: the chance of flagging any slice of perfectly calibrated predictions is at most
    ``alpha`` (a false-discovery-rate list, Benjamini & Hochberg 1995, would flag more slices but promises only that
    most flags are real).  Cf. the multicalibration error of Guy et al. (2025, "Measuring multi-calibration"), the
    largest standardised deviation over subpopulations; here each slice's deviation is standardised by its exact or
    simulated null at its own n.  The task modules compute every log p from its exact tail in log space
    (:mod:`calib_core.base.significance_tails`), so the evidence of a slice whose p is far below float range (10⁵ rows
    with σ off by half: p ≈ 10⁻⁵⁰⁰⁰) is still a finite number and such slices are ranked by it rather than tied at
    infinity.  Rows are sorted worst first: largest evidence, ties broken by the larger ``effect`` (the deciding
    test's deviation in units of its per-row null standard deviation, an n-free effect size), then by the larger
    slice.

    Parameters
    ----------
    table : DataFrame
        One row per slice (with a column ``n``).
    pvalues : ndarray of shape (S, m)
        The tests' p-values (NaN: no test).
    log_pvalues : ndarray of shape (S, m)
        Their logarithms (−inf, which the log-space tails never return for a finite statistic: the strongest
        evidence).
    alpha : float, default ALPHA
        Family-wise level of the flags.
    effect : ndarray of shape (S, m), optional
        Each test's effect size (default: none, ties broken by size alone).

    Returns
    -------
    DataFrame
        ``table`` with ``rank``, ``evidence``, ``effect`` (the deciding test's, NaN without ``effect``), ``p``,
        ``adjusted p``, ``flagged`` and ``_worst`` (the index of the deciding test), sorted worst first.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
       Statistics, 6(2), 65–70.
    .. [2] Chung, Y., Kraska, T., Polyzotis, N., Tae, K. H., & Whang, S. E. (2019). Slice Finder: automated data
       slicing for model validation. Proceedings of the 35th IEEE International Conference on Data Engineering
       (ICDE), 1550–1553.
    .. [3] Hébert-Johnson, Ú., Kim, M. P., Reingold, O., & Rothblum, G. N. (2018). Multicalibration: calibration
       for the (computationally-identifiable) masses. Proceedings of the 35th International Conference on Machine
       Learning (ICML), PMLR 80, 1939–1948.
    .. [4] Abramowitz, M., & Stegun, I. A. (1964). Handbook of Mathematical Functions. National Bureau of Standards,
       Applied Mathematics Series 55.
    .. [5] Benjamini, Y., & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and powerful
       approach to multiple testing. Journal of the Royal Statistical Society B, 57(1), 289–300.
    """
    p = np.asarray(pvalues, dtype=float)
    logp = np.asarray(log_pvalues, dtype=float)
    # tests without a p-value (NaN) do not count; a log p of −inf (a tail beyond float range, e.g. a χ² log-sf of a
    # 10⁵-row slice with std z 1.2) is the strongest evidence, not a missing p-value
    m = np.maximum((~np.isnan(logp)).sum(axis=1), 1)
    worst = np.argmin(np.where(np.isnan(logp), np.inf, logp), axis=1) if p.size else np.empty(0, np.int64)
    log_comb = np.minimum(0.0, np.log(m) + logp[np.arange(p.shape[0]), worst]) if p.size else np.empty(0)
    out = table.copy()
    out["evidence"] = -log_comb / np.log(10.0)
    out["effect"] = (np.asarray(effect, dtype=float)[np.arange(p.shape[0]), worst] if effect is not None and p.size
                     else np.full(p.shape[0], np.nan))
    out["p"] = np.exp(log_comb)
    out["adjusted p"] = holm_adjust(out["p"].to_numpy())
    out["flagged"] = out["adjusted p"].to_numpy() <= alpha
    out["_worst"] = worst
    out = out.sort_values(["evidence", "effect", "n"], ascending=[False, False, False], kind="stable",
                          na_position="last").reset_index(drop=True)
    out.insert(0, "rank", np.arange(1, len(out) + 1))
    return out
