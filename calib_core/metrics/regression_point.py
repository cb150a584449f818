"""The order-free point values of a Gaussian forecast set from two compiled passes (:mod:`.regression_kernels`).

:func:`gaussian_point_values` gives what ``summary_statistics`` computes without a sort — NLL, CRPS, RMSE, MAE,
sharpness, Cv, the moments of z, ZMS, mean log z² — with the same formulas and, where NumPy summed with ``np.mean``,
the same bits; and leaves on the rows the sums that the reliability score, the interval table, the WIS and the
share below the median read (``RegressionRows.__dict__["_fused"]``).  Used only for unweighted Gaussian rows
whose z are all finite and whose σ² neither over- nor underflows; everything else keeps the NumPy formulas.
"""

from __future__ import annotations

import numpy as np

from ..base.regression import norm_ppf
from .regression_kernels import fused_sums
from .regression_rows import RegressionRows, needs_rescaling
from .regression_wis import gaussian_wis_tables, hub_wis_setup, wis_parts

__all__ = ["gaussian_point_values", "fused_eligible"]


class LazyWisParts:
    """The :class:`~calib_core.metrics.regression_wis.WisParts` of (y, dist), computed on first attribute access."""

    def __init__(self, y: np.ndarray, dist) -> None:
        self._y, self._dist, self._parts = y, dist, None

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("_y", "_dist", "_parts"):
            raise AttributeError(name)
        if self._parts is None:
            self._parts = wis_parts(self._y, self._dist)
        return getattr(self._parts, name)


class LazyLogZ2:
    """The pair (2·log|z| of the rows with a finite log, mask or None) that ``summary_statistics`` caches, computed
    when first unpacked (the tests and intervals of mean log z² read it)."""

    def __init__(self, z: np.ndarray) -> None:
        self._z, self._pair = z, None

    def __bool__(self) -> bool:
        return True

    def __iter__(self):
        if self._pair is None:
            with np.errstate(divide="ignore"):
                lz = np.abs(self._z)  # 2 log|z|, in one buffer
                np.log(lz, out=lz)
                lz *= 2.0
            ok = np.isfinite(lz)
            self._pair = (lz, None) if ok.all() else (lz[ok], ok)
        return iter(self._pair)


def fused_eligible(r: RegressionRows) -> bool:
    """Whether :func:`gaussian_point_values` serves these rows: a Gaussian forecast set, every z finite, N ≥ 2 and
    σ² within range (no rescaling, :func:`~calib_core.metrics.regression_rows.needs_rescaling`).

    Parameters
    ----------
    r : RegressionRows
        The rows.

    Returns
    -------
    bool
        True when the compiled passes apply.

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of the
    American Statistical Association 102(477), 359–378.
    """
    return bool(r._gaussian and r.n >= 2 and not needs_rescaling(r.sigma))


def gaussian_point_values(r: RegressionRows, coverages) -> dict[str, float]:
    """NLL, CRPS, RMSE, MAE, sharpness, Cv, z moments, ZMS and mean log z² of Gaussian rows in two passes.

    NLL = mean[log σ + ½log 2π + z²/2], CRPS = mean σ[z(2Φ(z) − 1) + 2φ(z) − 1/√π], RMSE = √mean ε²,
    MAE = mean |ε|, sharpness = √mean σ², Cv = std(σ, ddof=1)/mean σ, the mean, std and standardised third and
    fourth central moments of z, ZMS = mean z², mean log z² = mean 2·log|z|.  The sums of the interval-score
    penalties, the WIS parts (hub levels), Σφ(z) and the signs of ε are kept on the rows for the
    other statistics.

    Parameters
    ----------
    r : RegressionRows
        Rows with :func:`fused_eligible`.
    coverages : sequence of float
        Central interval coverages of the metric table.

    Returns
    -------
    dict of str to float
        The values under their metric keys.

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. Journal of the
    American Statistical Association 102(477), 359–378.

    Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction in
    regression tasks. arXiv:1905.11659 (Sensors 22, 5540, 2022).

    Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the reliability of
    calibration statistics for machine learning regression tasks. arXiv:2402.10043.

    Examples
    --------
    >>> from calib_core.base.regression import Gaussian
    >>> r = RegressionRows(np.array([0.5, -1.0, 2.0]), Gaussian(np.zeros(3), np.ones(3)))
    >>> round(gaussian_point_values(r, (0.9,))["zms"], 4)
    1.75
    """
    setup = hub_wis_setup()
    tables = gaussian_wis_tables(*setup)
    ks = [float(norm_ppf(0.5 + c / 2.0)) for c in coverages]
    sums, counts = fused_sums(r.eps, r.z, r.sigma, r.u, ks, tables, median=setup[3] is not None)
    n = r.n
    wis_ok = tables is not None and counts["wis_nonfinite"] == 0
    r.__dict__["_fused"] = {"sums": sums, "counts": counts, "coverages": tuple(coverages), "wis": wis_ok}
    if wis_ok:  # the per-row WIS parts only when something reads them (the bootstrap's block sums)
        r.__dict__.setdefault("_wis_parts", LazyWisParts(r.y, r.dist))
    mean_sigma = sums["sigma"] / n
    out = {
        "nll": sums["nll"] / n,
        "crps": sums["crps"] / n,
        "rmse": float(np.sqrt(sums["sq_err"] / n)),
        "mae": sums["abs_err"] / n,
        "sharpness": float(1.0 * np.sqrt(sums["var"] / n)),
        "cv": float(np.sqrt(sums["sigma_dev2"] / (n - 1)) / mean_sigma) if mean_sigma > 0 else float("nan"),
    }
    m, m2, m3, m4 = sums["z"] / n, sums["d2"] / n, sums["d3"] / n, sums["d4"] / n
    out.update({
        "z_mean": m,
        "z_std": float(np.sqrt(m2)),
        "z_skewness": float(m3 / m2**1.5) if m2 > 0 else float("nan"),
        "z_excess_kurtosis": float(m4 / m2**2 - 3.0) if m2 > 0 else float("nan"),
        "zms": sums["z2"] / n,
    })
    if counts["zero_z"] == 0:
        out["mean_log_z2"] = sums["log_z2"] / n
        r.__dict__.setdefault("_log_z2", LazyLogZ2(r.z_finite))  # the rows' log z², when the inference reads them
    return out
