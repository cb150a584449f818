"""The one binning engine behind every binned number and every bar (regression and classification).

A binning assigns each row an integer bin index in 0..B−1; ``bin_sums`` then aggregates any
per-row quantities with ``np.bincount`` (optionally weighted — bootstrap replicates are
multinomial count weights).  Metrics (ENCE, ECE, MCE …) and the diagram tables are computed from
the same sums, so the numbers and the bars always agree.

Conventions
-----------
* Equal-count bins (Levi et al. 2019 §3): rows sorted by the binned value; the row at sorted
  position i (0-based, after the cumulative weight W_<i of the rows before it) goes to bin
  ⌊W_<i · B / W⌋.  With unit weights the bin sizes differ by at most one.
* Equal-width bins on [lo, hi] split in B intervals; ``closed="right"`` gives (a, b] bins with the
  first bin closed ([lo, b]) — Guo et al.'s ((m−1)/M, m/M] for confidences; ``closed="left"``
  gives [a, b) with the last bin closed (netcal's convention).
* Equal-mass bins: edges at the empirical quantiles of the values, then as equal-width with
  ``closed="right"``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

__all__ = [
    "equal_count_bins",
    "equal_width_bins",
    "equal_mass_edges",
    "bins_from_edges",
    "bin_sums",
    "uniform_bin_index",
]


def equal_count_bins(
    values: np.ndarray,
    n_bins: int,
    weights: np.ndarray | None = None,
    order: np.ndarray | None = None,
) -> np.ndarray:
    """Bin index of each row for B equal-count bins of ``values`` (ties in the order given by ``order``).

    bin(i) = ⌊W_<i · B / W⌋ where W_<i is the weight of the rows sorted before row i.
    ``order`` (a stable argsort of ``values``) may be passed to reuse a sort.
    """
    values = np.asarray(values)
    n = values.shape[0]
    if n_bins < 1:
        raise ValueError("n_bins must be at least 1")
    if order is None:
        order = np.argsort(values, kind="stable")
    if weights is None:
        start = np.arange(n, dtype=float)
        total = float(n)
    else:
        w = np.asarray(weights, dtype=float)[order]
        start = np.cumsum(w) - w
        total = float(w.sum())
    b_sorted = np.minimum((start * n_bins // max(total, 1e-300)).astype(np.int64), n_bins - 1)
    out = np.empty(n, dtype=np.int64)
    out[order] = b_sorted
    return out


def bins_from_edges(
    values: np.ndarray, edges: np.ndarray, closed: Literal["right", "left"] = "right"
) -> np.ndarray:
    """Bin index for sorted ``edges`` e_0 < … < e_B; values outside go to the end bins."""
    n_bins = len(edges) - 1
    inner = np.asarray(edges)[1:-1]
    side = "left" if closed == "right" else "right"
    idx = np.searchsorted(inner, values, side=side)
    return np.clip(idx, 0, n_bins - 1).astype(np.int64)


def equal_width_bins(
    values: np.ndarray,
    n_bins: int,
    lo: float | None = None,
    hi: float | None = None,
    closed: Literal["right", "left"] = "right",
) -> tuple[np.ndarray, np.ndarray]:
    """Bin index and edges of B equal-width bins on [lo, hi] (default: min and max of values)."""
    values = np.asarray(values, dtype=float)
    lo = float(values.min()) if lo is None else float(lo)
    hi = float(values.max()) if hi is None else float(hi)
    if hi <= lo:
        hi = lo + 1.0 if lo == 0 else lo + abs(lo) * 1e-9 + 1e-300
    edges = np.linspace(lo, hi, n_bins + 1)
    return bins_from_edges(values, edges, closed), edges


def equal_mass_edges(values: np.ndarray, n_bins: int) -> np.ndarray:
    """Edges at the empirical quantiles of ``values`` (k/B, k = 0..B), made non-decreasing."""
    return np.quantile(np.asarray(values, dtype=float), np.linspace(0.0, 1.0, n_bins + 1))


def bin_sums(
    bin_index: np.ndarray,
    n_bins: int,
    *quantities: np.ndarray,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, ...]:
    """Per-bin (weighted) count followed by the per-bin weighted sum of each quantity.

    count_b = Σ_{i ∈ b} w_i,  sum_b(x) = Σ_{i ∈ b} w_i x_i  (w ≡ 1 without weights).
    """
    count = np.bincount(bin_index, weights=weights, minlength=n_bins).astype(float)
    out = [count]
    for q in quantities:
        qw = q if weights is None else q * weights
        out.append(np.bincount(bin_index, weights=qw, minlength=n_bins))
    return tuple(out)


def uniform_bin_index(
    values: np.ndarray, n_bins: int, lo: float = 0.0, hi: float = 1.0, closed: Literal["right", "left"] = "right"
) -> np.ndarray:
    """Same bin index as ``bins_from_edges(values, np.linspace(lo, hi, n_bins + 1), closed)``, in O(1) per row.

    The arithmetic guess ⌊(v − lo)/(hi − lo)·B⌋ is corrected by one comparison with the actual edges on each
    side, so values exactly on (or a rounding error away from) an edge land where the binary search puts them.
    """
    v = np.asarray(values, dtype=float)
    edges = np.linspace(lo, hi, n_bins + 1)
    g = np.floor((v - lo) * (n_bins / (hi - lo)))
    # fmin/fmax ignore NaN: NaN → last bin, as the binary search puts it
    idx = np.fmax(np.fmin(g, n_bins - 1), 0).astype(np.int64)
    if closed == "right":  # (a, b]: v ≤ lower edge → previous bin; v > upper edge → next bin
        idx -= (v <= edges[idx]) & (idx > 0)
        idx += (v > edges[idx + 1]) & (idx < n_bins - 1)
    else:  # [a, b): v < lower edge → previous bin; v ≥ upper edge → next bin
        idx -= (v < edges[idx]) & (idx > 0)
        idx += (v >= edges[idx + 1]) & (idx < n_bins - 1)
    return idx
