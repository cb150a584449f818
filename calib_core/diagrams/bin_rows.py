"""Which rows fall in which diagram bin: the σ-bin of Levi et al.'s RMSE-vs-RMV diagram and the confidence bin of
Guo et al.'s reliability diagram, per row and per model, and the rows of a set of selected bins.

The bins are computed exactly as the diagram tables compute them (:meth:`RegressionRows.sigma_bins
<calib_core.metrics.regression.RegressionRows.sigma_bins>`, :func:`calib_core.metrics.classification.confidence_bins`),
so a bin picked in a figure selects the rows that made it.  Everything is vectorised over rows; loops run over
models only.

References
----------
Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
regression tasks. arXiv:1905.11659.
Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from ..base.binning import equal_count_bins, equal_width_bins
from ..metrics.classification import confidence_bins

__all__ = ["sigma_bins", "confidence_row_bins", "rows_in_bins"]


def _groups(n: int, group: np.ndarray | None, default_name: str) -> list[tuple[str, np.ndarray]]:
    """(name, row mask) of every value of ``group`` in order of first appearance (one group if None)."""
    if group is None:
        return [(default_name, np.ones(n, dtype=bool))]
    group = np.asarray(group)
    _, first = np.unique(group, return_index=True)
    names = group[np.sort(first)]
    return [(str(g), group == g) for g in names]


def sigma_bins(
    sigma: np.ndarray,
    n_bins: int = 15,
    binning: str = "count",
    group: np.ndarray | None = None,
    default_name: str = "model",
) -> np.ndarray:
    """Levi σ-bin (0..B−1) of every row, computed within each group (model) as the diagram does.

    Identical to ``RegressionRows(y, dist).sigma_bins(n_bins, binning)`` on each model's rows: equal-count bins of the
    rows sorted by σ (stable: ties in row order; the row at sorted position i goes to bin ⌊i·B/n⌋, Levi et al. 2019
    §3) or netcal's equal-width ``[a, b)`` bins between min and max σ.

    Parameters
    ----------
    sigma : ndarray of shape (n,)
        Predicted σ.
    n_bins : int, default 15
        B.
    binning : {"count", "width"}, default "count"
        Equal-count or equal-width bins.
    group : ndarray of shape (n,) or None, default None
        Group (model) of every row; None: one group.
    default_name : str, default "model"
        Name of the single group.

    Returns
    -------
    ndarray of int, shape (n,)
        The bin of every row.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).
    """
    if binning not in ("count", "width"):
        raise ValueError(f"binning must be 'count' or 'width', got {binning!r}")
    sigma = np.asarray(sigma, dtype=float)
    out = np.zeros(sigma.shape[0], dtype=np.int64)
    for _, mask in _groups(sigma.shape[0], group, default_name):  # loop over models, not rows
        s = sigma[mask]
        if s.size == 0:
            continue
        if binning == "count":
            out[mask] = equal_count_bins(s, n_bins)
        else:
            out[mask] = equal_width_bins(s, n_bins, closed="left")[0]
    return out


def confidence_row_bins(
    values: np.ndarray,
    n_bins: int = 15,
    strategy: str = "uniform",
    group: np.ndarray | None = None,
    default_name: str = "model",
) -> np.ndarray:
    """Confidence bin (0..M−1) of every row, within each group (model), as the reliability tables do.

    Bins as ``calib_core.metrics.classification.confidence_bins`` (equal-width ((m−1)/M, m/M], or equal-mass edges
    at the empirical quantiles of the group's values).

    Parameters
    ----------
    values : ndarray of shape (n,)
        The top-label confidence max_k p_k (or P(y = 1) for the positive-class diagram).
    n_bins : int, default 15
        M.
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal-width or equal-mass bins.
    group : ndarray of shape (n,) or None, default None
        Group (model) of every row; None: one group.
    default_name : str, default "model"
        Name of the single group.

    Returns
    -------
    ndarray of int, shape (n,)
        The bin of every row.

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.
    """
    values = np.asarray(values, dtype=float)
    out = np.zeros(values.shape[0], dtype=np.int64)
    for _, mask in _groups(values.shape[0], group, default_name):
        if mask.any():
            out[mask] = confidence_bins(values[mask], n_bins, strategy)[0]  # type: ignore[arg-type]
    return out


def rows_in_bins(
    row_bins: np.ndarray,
    selection: Mapping[str, Iterable[int]],
    group: np.ndarray | None = None,
    default_name: str = "model",
) -> np.ndarray:
    """Boolean mask of the rows whose bin is selected for their group: OR_g (group = g) ∧ (bin ∈ bins_g).

    One ``np.isin`` on the encoded (group, bin) key, whatever the number of groups.

    Parameters
    ----------
    row_bins : ndarray of int, shape (n,)
        Per-row bin index (:func:`sigma_bins`, :func:`confidence_row_bins`).
    selection : mapping of str to iterable of int
        Group → selected bins.
    group : ndarray of shape (n,) or None, default None
        Group of every row; None: every row belongs to ``default_name``.
    default_name : str, default "model"
        Name of the single group.

    Returns
    -------
    ndarray of bool, shape (n,)
        The selected rows.

    References
    ----------
    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).

    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.
    """
    row_bins = np.asarray(row_bins, dtype=np.int64)
    n = row_bins.shape[0]
    if not selection:
        return np.zeros(n, dtype=bool)
    if group is None:
        names = np.array([default_name])
        codes = np.zeros(n, dtype=np.int64)
    else:
        names, codes = np.unique(np.asarray(group).astype(str), return_inverse=True)
    stride = int(max(row_bins.max(initial=0), max((max(b, default=0) for b in selection.values()), default=0))) + 1
    lookup = {str(name): i for i, name in enumerate(names)}
    keys = [lookup[str(g)] * stride + int(b) for g, bins in selection.items() if str(g) in lookup for b in bins]
    if not keys:
        return np.zeros(n, dtype=bool)
    return np.isin(codes.astype(np.int64) * stride + row_bins, np.asarray(keys, dtype=np.int64))
