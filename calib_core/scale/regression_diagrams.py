"""The diagram tables of ``regression.diagrams`` read off a merged regression summary part: the calibration curve,
the PIT histogram, the Levi σ-bins, the z histogram, the Q-Q pairs and the central intervals — for all rows or a
brushed set of σ-bins, in O(bins), no rows (what a part holds: :mod:`calib_core.scale.regression`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..base.ecdf_bands import ecdf_band
from ..base.mergeable import SummarySpec, exact_float
from ..base.regression import norm_pdf, norm_ppf
from .regression_stated import stated_diagrams
from .regression_values import coverage_tag

__all__ = ["regression_diagrams_from_part"]


# ---------------------------------------------------------------------------------------------------------------
# diagram tables (the schemas of regression.diagrams)
# ---------------------------------------------------------------------------------------------------------------
def regression_diagrams_from_part(
    part: dict, spec: SummarySpec, *, sigma_bins: np.ndarray | None = None, band: float = 0.95,
    rmse_interval: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, pd.DataFrame]:
    """The diagram tables of ``regression.diagrams`` from a part.

    calibration_curve and intervals are exact; pit_histogram is exact (the PIT-diagram edges are fine edges, bins
    [a, b) as in memory); levi_bins is exact except its bootstrap interval (hash blocks); z_histogram and qq are read
    off the fine z histogram (values within one z-bin width).

    Parameters
    ----------
    part : dict of str to ndarray
        A (merged) summary part.
    spec : SummarySpec
        The spec it was summarised with.
    sigma_bins : ndarray of int, optional
        Restrict the curve, the PIT histogram and the interval table to these σ-bins (a brushed selection:
        O(B·L), no rows).
    band : float, default 0.95
        Level of the calibration curve's simultaneous ECDF band.
    rmse_interval : (ndarray, ndarray), optional
        Per σ-bin bootstrap interval of the RMSE (``summary.levi_rmse_interval``); NaN when not given.

    Returns
    -------
    dict of str to DataFrame
        ``calibration_curve``, ``pit_histogram``, ``levi_bins``, ``z_histogram``, ``qq`` and ``intervals`` (those
        with rows to show); for a quantile set also ``stated_levels``, and its PIT histogram is over the cells
        between the stated levels (the whole part only).

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [2] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [3] Gneiting, T., Balabdaoui, F., & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
       sharpness. Journal of the Royal Statistical Society B, 69(2), 243–268.
    .. [4] Säilynoja, T., Bürkner, P.-C., & Vehtari, A. (2022). Graphical test for discrete uniformity and its
       applications in goodness-of-fit evaluation and multiple sample comparison. Statistics and Computing, 32,
       32.
    """
    lev = np.asarray(spec.levels, dtype=float)
    ce = np.asarray(spec.curve_edges, dtype=float)
    sel = np.arange(spec.n_bins) if sigma_bins is None else np.asarray(sigma_bins, dtype=np.int64)
    curve_counts = part["curve"][sel].sum(axis=0)
    n_sel = int(curve_counts.sum())
    tables: dict[str, pd.DataFrame] = {}
    if n_sel:
        cum = np.cumsum(curve_counts)[: ce.size]
        observed = cum[np.searchsorted(ce, lev)] / n_sel
        lo, hi, gamma = ecdf_band(n_sel, lev, band)  # simultaneous, as regression.diagrams.calibration_curve_table
        tables["calibration_curve"] = pd.DataFrame(
            {"level": lev, "observed": observed, "band_low": lo, "band_high": hi})
        tables["calibration_curve"].attrs.update(band="simultaneous", gamma=gamma)
    # PIT histogram [a, b) on pit_bins equal bins
    hist_edges = np.linspace(0.0, 1.0, spec.pit_bins + 1)
    if sigma_bins is None:
        pe = np.asarray(spec.pit_edges, dtype=float)
        cum_le = np.cumsum(part["pit_le"])[: pe.size]
        before = cum_le - part["pit_eq"]  # #{u < e}
        at = np.searchsorted(pe, hist_edges)
        c_lt = before[at].astype(float)
        c_lt[0] = 0.0
        c_lt[-1] = part["pit_le"].sum()  # the last bin is closed: [a, 1]
        cnt = np.diff(c_lt)
        n_all = int(part["pit_le"].sum())
    else:  # on the curve grid: bins (a, b] (differs from [a, b) only for a PIT exactly on a grid level)
        cum = np.concatenate([[0], np.cumsum(curve_counts)])
        at = np.abs(ce[None, :] - hist_edges[:, None]).argmin(axis=1)  # the grid level nearest each edge
        cnt = np.diff(cum[np.minimum(at + 1, cum.size - 1)]).astype(float)
        cnt[0] += curve_counts[0]
        n_all = n_sel
    if n_all:
        tables["pit_histogram"] = pd.DataFrame({"left": hist_edges[:-1], "right": hist_edges[1:],
                                                "count": cnt.astype(np.int64),
                                                "density": cnt / (n_all * np.diff(hist_edges))})
    # Levi bins
    cnt_b = part["n"].astype(float)
    s_var = exact_float(part["x:var"], part.get("nf:var"))
    s_err = exact_float(part["x:sq_err"], part.get("nf:sq_err"))
    with np.errstate(invalid="ignore", divide="ignore"):
        rmv, rmse = np.sqrt(s_var / cnt_b), np.sqrt(s_err / cnt_b)
    lo, hi = rmse_interval if rmse_interval is not None else (np.full(spec.n_bins, np.nan),) * 2
    levi = pd.DataFrame({"bin": np.arange(spec.n_bins), "count": part["n"], "sigma_low": part["sigma_min"],
                         "sigma_high": part["sigma_max"], "rmv": rmv, "rmse": rmse, "rmse_low": lo, "rmse_high": hi})
    tables["levi_bins"] = levi[levi["count"] > 0].reset_index(drop=True)
    # z histogram (40 bins on ±L, L = clip(99.5% of |z|, 4, 10) read off the fine histogram) and Q-Q
    ze = np.asarray(spec.z_edges, dtype=float)
    zc = part["z_hist"]
    nz = int(zc.sum())
    if nz:
        limit = float(np.clip(_abs_quantile(zc, ze, 0.995), 4.0, 10.0))
        edges = np.linspace(-limit, limit, 41)
        cum = np.concatenate([[0], np.cumsum(zc)])  # cum[k] = #{z ≤ e_{k−1}}, k = 1..K+1 → #{z ≤ ze[k-1]}
        le = cum[np.searchsorted(ze, edges) + 1].astype(float)  # #{z ≤ edge} (edges on the fine grid)
        outside = np.zeros(edges.size - 1, dtype=np.int64)  # rows beyond ±L held by the end bins (marked by plots)
        outside[0] += int(le[0])
        outside[-1] += int(nz - le[-1])
        le[0] = 0.0
        le[-1] = nz
        cnt_z = np.diff(le)
        centres = 0.5 * (edges[:-1] + edges[1:])
        tables["z_histogram"] = pd.DataFrame({"left": edges[:-1], "right": edges[1:], "count": cnt_z.astype(np.int64),
                                              "density": cnt_z / (nz * np.diff(edges)),
                                              "normal_density": norm_pdf(centres), "outside": outside})
        idx = np.unique(np.linspace(0, nz - 1, min(nz, 512)).round().astype(np.int64))
        pos = np.searchsorted(np.cumsum(zc), idx, side="right")  # fine bin of the idx-th smallest z
        mids = np.concatenate([[part["z_min"][0]], (ze[:-1] + ze[1:]) / 2.0, [part["z_max"][0]]])
        tables["qq"] = pd.DataFrame({"theoretical": norm_ppf((idx + 0.5) / nz), "observed": mids[pos]})
    # intervals
    n = int(part["n"][sel].sum())
    if n:
        rows = []
        s1 = exact_float(part["x:sigma"])[sel].sum()
        for c in spec.coverages:
            tag = coverage_tag(c)
            obs = int(part[f"in:{tag}"][sel].sum()) / n
            if f"x:pen_{tag}" in part:
                k = float(norm_ppf(0.5 + c / 2.0))
                w = 2.0 * k * s1 / n
                s = w + (2.0 / (1.0 - c)) * exact_float(part[f"x:pen_{tag}"])[sel].sum() / n
            else:
                w = exact_float(part[f"x:width_{tag}"])[sel].sum() / n
                s = exact_float(part[f"x:score_{tag}"])[sel].sum() / n
            rows.append({"coverage": c, "observed": obs, "mean_width": w, "interval_score": s})
        tables["intervals"] = pd.DataFrame(rows, columns=["coverage", "observed", "mean_width", "interval_score"])
    if sigma_bins is None:  # quantile sets: the PIT histogram between the stated levels, the stated_levels table
        tables.update(stated_diagrams(part, spec))
    return tables


def _abs_quantile(counts: np.ndarray, edges: np.ndarray, q: float) -> float:
    """The q-quantile of |z| read off the fine histogram on symmetric edges: the smallest edge t ≥ 0 with
    #{−t < z ≤ t} ≥ qN (within one z-bin width of ``numpy.quantile(|z|, q)``)."""
    nz = counts.sum()
    le = np.cumsum(counts)[: edges.size]  # #{z ≤ e_k}
    centre = edges.size // 2
    j = np.arange(edges.size - centre)
    inside = le[centre + j] - le[centre - j]
    hit = np.flatnonzero(inside >= q * nz)
    return float(edges[centre + (hit[0] if hit.size else j[-1])])
