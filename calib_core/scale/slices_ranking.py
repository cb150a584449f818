"""The slice explorer's ranking read off a merged slice summary, as the in-memory explorer ranks the rows.

:func:`summary_cells` lists the candidate slices of :func:`calib_core.slices.candidates.candidate_slices` with their
cells' sums, :func:`summary_ranking` ranks them with the task's ``ranking_from_sums`` (the same statistics, tests
and Holm adjustment as :func:`calib_core.slices.regression.slice_ranking` /
:func:`calib_core.slices.classification.slice_ranking`), :func:`summary_funnel` gives the funnel plot of a ranking
and :func:`search_sentence` says what was searched.  The summaries themselves: :mod:`calib_core.scale.slices`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..base.predictions import InputError
from ..slices import classification as cls_slices
from ..slices import regression as reg_slices
from ..slices.candidates import ALPHA, DEFAULT_MIN_SIZE
from .slices import SliceSummary
from .slices_spec import PIT_BINS, PROB_BINS, SliceSpec

__all__ = ["summary_cells", "summary_ranking", "summary_funnel", "search_sentence"]


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
    return np.rint(cells[..., 0:4 * PROB_BINS:4].sum(axis=-1))


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
        states = cells[:, 6 * n_s:].reshape(-1, PIT_BINS, 2)
        pit_counts = states.sum(axis=2)
        sums = np.column_stack([per_bin[:, :, 0].sum(axis=1), per_bin[:, :, 1].sum(axis=1),
                                per_bin[:, :, 2].sum(axis=1), states[:, :, 1].sum(axis=1)])
        ence_sums = per_bin[:, :, [0, 3, 4, 5]]
        return reg_slices.ranking_from_sums(labels, size, pit_counts, sums, ence_sums, ence_tested=spec.ence_tested,
                                            n_null=n_null, seed=seed, alpha=alpha)
    return cls_slices.ranking_from_sums(labels, size, cells.reshape(-1, PROB_BINS, 4), n_null=n_null, seed=seed,
                                        alpha=alpha)




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
    n = totals[0:4 * PROB_BINS:4].sum()
    base = float(totals[1:4 * PROB_BINS:4].sum() / n) if n > 0 else 0.5
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
