"""σ maps: regression recalibrators that keep a Gaussian and change its spread (and, for one, its centre).

* :class:`StdScaling` — σ' = sσ, s² = mean z², the NLL minimiser (Levi et al. 2019, eq. 12);
* :class:`GaussianShiftScale` — μ' = μ + mσ, σ' = sσ with m = mean z, s = std z (CRUDE's Gaussian-MLE baseline);
* :class:`SigmaBinning`, :class:`SigmaIsotonic` — σ mapped to the RMSE of its σ-bin / isotonic regression of ε² on
  σ (Levi et al. §3.1);
* :class:`ConstantSigma`, :class:`KMeansSigma` — constant σ and per-cluster σ (ACCRUE Table 1).

Notation: μ and σ are ``dist.mean()`` and ``dist.std()``, ε = y − μ, z = ε/σ.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from sklearn.cluster import KMeans
from sklearn.isotonic import IsotonicRegression
from threadpoolctl import threadpool_limits

from ..base.binning import bin_sums, bins_from_edges, equal_count_bins
from ..base.regression import Gaussian
from .regression_base import RegressionCalibrator, as_distribution, check_features, check_targets, mean_and_std

__all__ = ["StdScaling", "GaussianShiftScale", "SigmaBinning", "SigmaIsotonic", "ConstantSigma", "KMeansSigma"]


class StdScaling(RegressionCalibrator):
    """STD scaling (Levi et al. 2019, eq. 12): σ' = s·σ with s² = mean(z²), the exact NLL minimiser.

    argmin_s Σ_t [log(sσ_t) + ε_t²/(2s²σ_t²)]  ⇒  s² = (1/n) Σ_t (ε_t/σ_t)²,

    with ε = y − μ and z = ε/σ on the calibration rows.  ``transform`` returns ``Gaussian(μ, s·σ)``.  From point
    predictions (σ ≡ 1) it is the constant σ equal to the calibration RMSE.

    Attributes
    ----------
    scale_ : float
        The factor s.
    n_calibration_ : int
        Number of calibration rows.

    References
    ----------
    .. [1] D. Levi, L. Gispan, N. Giladi and E. Fetaya, "Evaluating and calibrating uncertainty prediction in
           regression tasks", arXiv:1905.11659, 2019 (Sensors 22(15), 5540, 2022).

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> rng = np.random.default_rng(0)
    >>> mu, sigma = rng.normal(size=200), rng.uniform(0.5, 1.5, 200)
    >>> y = mu + 2 * sigma * rng.standard_normal(200)  # the errors are twice the predicted σ
    >>> cal = cc.StdScaling().fit(cc.Gaussian(mu, sigma), y)
    >>> round(cal.scale_, 3)
    1.991
    >>> cal.transform(cc.Gaussian(mu, sigma)).std()[:3].round(3)
    array([1.384, 2.145, 2.194])
    """

    def fit(self, dist, y, *, features=None) -> StdScaling:
        """s = sqrt(mean(z²)), z = (y − μ)/σ (Levi eq. 12)."""
        d = as_distribution(dist)
        y = check_targets(y, len(d))
        mu, sigma = mean_and_std(d)
        z = (y - mu) / sigma
        self.scale_ = float(np.sqrt(np.mean(z * z)))
        self.n_calibration_ = int(y.size)
        return self

    def transform(self, dist, *, features=None) -> Gaussian:
        """Gaussian(μ, s·σ) (Levi et al. 2019, STD scaling)."""
        self._check_fitted("scale_")
        mu, sigma = mean_and_std(as_distribution(dist))
        return Gaussian(mu, self.scale_ * sigma)


class GaussianShiftScale(RegressionCalibrator):
    """Gaussian MLE with shift (CRUDE's baseline after Levi et al.): μ' = μ + m·σ, σ' = s·σ.

    The Gaussian maximum-likelihood fit N(m, s²) of the calibration z-scores z = (y − μ)/σ:
    m = mean(z), s = std(z) (ddof = 0).  ``transform`` returns ``Gaussian(μ + m·σ, s·σ)``.

    Attributes
    ----------
    shift_ : float
        m, the mean z-score.
    scale_ : float
        s, the standard deviation of the z-scores (ddof = 0).
    n_calibration_ : int
        Number of calibration rows.

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020.
    .. [2] D. Levi, L. Gispan, N. Giladi and E. Fetaya, "Evaluating and calibrating uncertainty prediction in
           regression tasks", arXiv:1905.11659, 2019.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> rng = np.random.default_rng(0)
    >>> mu, sigma = rng.normal(size=200), rng.uniform(0.5, 1.5, 200)
    >>> y = mu + 2 * sigma * rng.standard_normal(200)  # the errors are twice the predicted σ
    >>> cal = cc.GaussianShiftScale().fit(cc.Gaussian(mu, sigma), y)
    >>> round(cal.shift_, 3), round(cal.scale_, 3)
    (0.065, 1.989)
    """

    def fit(self, dist, y, *, features=None) -> GaussianShiftScale:
        """m = mean(z), s = std(z) (ddof 0): the Gaussian MLE of the calibration z-scores (CRUDE's baseline)."""
        d = as_distribution(dist)
        y = check_targets(y, len(d))
        mu, sigma = mean_and_std(d)
        z = (y - mu) / sigma
        self.shift_ = float(np.mean(z))
        self.scale_ = float(np.std(z))
        self.n_calibration_ = int(y.size)
        return self

    def transform(self, dist, *, features=None) -> Gaussian:
        """Gaussian(μ + m·σ, s·σ) (Gaussian MLE with shift, Zelikman et al.)."""
        self._check_fitted("scale_")
        mu, sigma = mean_and_std(as_distribution(dist))
        return Gaussian(mu + self.shift_ * sigma, self.scale_ * sigma)


class SigmaBinning(RegressionCalibrator):
    """σ-binning (Levi et al. §3.1, "histogram binning applied to the STDs").

    The calibration rows are split into B equal-count bins of predicted σ (the Levi bins of the
    ENCE, :func:`calib_core.base.binning.equal_count_bins`); a new σ is mapped to its bin's
    RMSE_j = sqrt(mean ε²) (``mode="rmse"``), or rescaled by RMSE_j/RMV_j with
    RMV_j = sqrt(mean σ²) (``mode="ratio"``, keeps the within-bin ordering).  Bin boundaries are
    midway between the largest σ of a bin and the smallest σ of the next.  After the map the
    calibration rows have ENCE = 0 by construction.

    Parameters
    ----------
    n_bins : int, default 15
        Number B of equal-count σ-bins (at most the number of calibration rows).
    mode : {"rmse", "ratio"}, default "rmse"
        σ' = RMSE_j, or σ' = σ·RMSE_j/RMV_j.

    Attributes
    ----------
    edges_ : ndarray of shape (B − 1,)
        Inner bin boundaries.
    rmse_ : ndarray of shape (B,)
        RMSE_j of every bin (floored at 1e-12 times the overall RMSE).
    rmv_ : ndarray of shape (B,)
        RMV_j of every bin.
    counts_ : ndarray of shape (B,)
        Calibration rows per bin.
    n_calibration_ : int
        Number of calibration rows.

    References
    ----------
    .. [1] D. Levi, L. Gispan, N. Giladi and E. Fetaya, "Evaluating and calibrating uncertainty prediction in
           regression tasks", arXiv:1905.11659, 2019 (Sensors 22(15), 5540, 2022).

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> rng = np.random.default_rng(0)
    >>> mu, sigma = rng.normal(size=200), rng.uniform(0.5, 1.5, 200)
    >>> y = mu + 2 * sigma * rng.standard_normal(200)  # the errors are twice the predicted σ
    >>> cal = cc.SigmaBinning(n_bins=4).fit(cc.Gaussian(mu, sigma), y)
    >>> cal.rmse_.round(3)
    array([1.289, 2.014, 2.335, 2.219])
    """

    def __init__(self, *, n_bins: int = 15, mode: Literal["rmse", "ratio"] = "rmse"):
        self.n_bins = n_bins
        self.mode = mode

    def fit(self, dist, y, *, features=None) -> SigmaBinning:
        """Equal-count σ-bins; per bin RMSE_j = sqrt(mean ε²) and RMV_j = sqrt(mean σ²) (Levi §3.1)."""
        if self.mode not in ("rmse", "ratio"):
            raise ValueError(f"mode must be 'rmse' or 'ratio', got {self.mode!r}")
        d = as_distribution(dist)
        y = check_targets(y, len(d))
        mu, sigma = mean_and_std(d)
        n_bins = int(max(1, min(self.n_bins, y.size)))
        order = np.argsort(sigma, kind="stable")
        b = equal_count_bins(sigma, n_bins, order=order)
        eps = y - mu
        cnt, s_err, s_var = bin_sums(b, n_bins, eps * eps, sigma * sigma)
        self.counts_ = cnt
        floor = 1e-12 * max(float(np.sqrt(np.mean(eps * eps))), 1e-300)
        self.rmse_ = np.maximum(np.sqrt(s_err / cnt), floor)
        self.rmv_ = np.sqrt(s_var / cnt)
        bmax = np.full(n_bins, -np.inf)
        bmin = np.full(n_bins, np.inf)
        np.maximum.at(bmax, b, sigma)
        np.minimum.at(bmin, b, sigma)
        self.edges_ = 0.5 * (bmax[:-1] + bmin[1:])
        self.n_calibration_ = int(y.size)
        return self

    def bin_index(self, sigma: np.ndarray) -> np.ndarray:
        """Bin of each σ (edges ``edges_``; (a, b] bins, outside values go to the end bins)."""
        self._check_fitted("edges_")
        edges = np.concatenate([[-np.inf], self.edges_, [np.inf]])
        return bins_from_edges(np.asarray(sigma, dtype=float), edges, closed="right")

    def transform(self, dist, *, features=None) -> Gaussian:
        """Gaussian(μ, RMSE_j) ("rmse") or Gaussian(μ, σ·RMSE_j/RMV_j) ("ratio"), j the σ-bin (Levi §3.1)."""
        self._check_fitted("edges_")
        mu, sigma = mean_and_std(as_distribution(dist))
        b = self.bin_index(sigma)
        if self.mode == "rmse":
            return Gaussian(mu, self.rmse_[b])
        return Gaussian(mu, sigma * (self.rmse_ / self.rmv_)[b])


class SigmaIsotonic(RegressionCalibrator):
    """σ-isotonic (Levi et al. §3.1): σ'² = isotonic (increasing) regression of ε² on the predicted σ².

    The smooth counterpart of :class:`SigmaBinning`: the adaptive bins are the PAVA blocks, whose
    fitted value is the block's mean ε² (so the calibration mean of σ'² equals the mean ε²).
    ``on="var"`` (default) regresses on σ² and interpolates linearly in σ² between block ends —
    the recalibration published by Busk et al. 2022 for their QM9 ensemble, reproduced to 1e-6 in
    the tests; ``on="std"`` regresses on σ (same blocks, interpolation linear in σ).  Outside the
    calibration range the map is constant; a zero fitted value (all-zero errors in the lowest
    block) is floored at the smallest positive one.

    Parameters
    ----------
    on : {"var", "std"}, default "var"
        Regress ε² on σ² (interpolating linearly in σ²) or on σ.

    Attributes
    ----------
    isotonic_ : sklearn.isotonic.IsotonicRegression
        The fit of ε² on σ² (or σ).
    floor_ : float
        The smallest positive fitted value (the floor of σ'²).
    n_calibration_ : int
        Number of calibration rows.

    References
    ----------
    .. [1] D. Levi, L. Gispan, N. Giladi and E. Fetaya, "Evaluating and calibrating uncertainty prediction in
           regression tasks", arXiv:1905.11659, 2019 (Sensors 22(15), 5540, 2022).
    .. [2] J. Busk, P. B. Jørgensen, A. Bhowmik, M. N. Schmidt, O. Winther and T. Vegge, "Calibrated uncertainty
           for molecular property prediction using ensembles of message passing neural networks", Machine
           Learning: Science and Technology 3(1), 015012, 2022.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> rng = np.random.default_rng(0)
    >>> mu, sigma = rng.normal(size=200), rng.uniform(0.5, 1.5, 200)
    >>> y = mu + 2 * sigma * rng.standard_normal(200)  # the errors are twice the predicted σ
    >>> cal = cc.SigmaIsotonic().fit(cc.Gaussian(mu, sigma), y)
    >>> cal.transform(cc.Gaussian(mu, sigma)).std()[:3].round(3)
    array([1.424, 2.079, 2.167])
    """

    def __init__(self, *, on: Literal["var", "std"] = "var"):
        self.on = on

    def _x(self, sigma: np.ndarray) -> np.ndarray:
        if self.on == "var":
            return sigma * sigma
        if self.on == "std":
            return sigma
        raise ValueError(f"on must be 'var' or 'std', got {self.on!r}")

    def fit(self, dist, y, *, features=None) -> SigmaIsotonic:
        """Isotonic (PAVA) regression of ε² on σ² (or σ) (Levi et al. 2019 §3.1; Busk et al. 2022)."""
        d = as_distribution(dist)
        y = check_targets(y, len(d))
        mu, sigma = mean_and_std(d)
        eps = y - mu
        self.isotonic_ = IsotonicRegression(increasing=True, out_of_bounds="clip").fit(self._x(sigma), eps * eps)
        fitted = self.isotonic_.y_thresholds_
        pos = fitted[fitted > 0]
        self.floor_ = float(pos.min()) if pos.size else 1e-300
        self.n_calibration_ = int(y.size)
        return self

    def transform(self, dist, *, features=None) -> Gaussian:
        """Gaussian(μ, sqrt(iso(σ²))) (σ-isotonic, Levi et al. 2019 §3.1)."""
        self._check_fitted("isotonic_")
        mu, sigma = mean_and_std(as_distribution(dist))
        var = np.maximum(self.isotonic_.predict(self._x(sigma)), self.floor_)
        return Gaussian(mu, np.sqrt(var))


class ConstantSigma(RegressionCalibrator):
    """Constant-σ baseline (Camporeale & Carè 2021, Table 1): σ' = sqrt(mean ε²) for every row, the NLL-optimal
    constant.

    Uses only the predictive means, so it works from point predictions; ``transform`` returns ``Gaussian(μ, σ')``.

    Attributes
    ----------
    sigma_ : float
        σ' = the calibration RMSE.
    n_calibration_ : int
        Number of calibration rows.

    References
    ----------
    .. [1] E. Camporeale and A. Carè, "ACCRUE: Accurate and reliable uncertainty estimate in deterministic
           models", International Journal for Uncertainty Quantification 11(4), 81–94, 2021.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> rng = np.random.default_rng(0)
    >>> mu, sigma = rng.normal(size=200), rng.uniform(0.5, 1.5, 200)
    >>> y = mu + 2 * sigma * rng.standard_normal(200)  # the errors are twice the predicted σ
    >>> cal = cc.ConstantSigma().fit(mu, y)  # point predictions suffice
    >>> round(cal.sigma_, 3)
    2.006
    """

    def fit(self, dist, y, *, features=None) -> ConstantSigma:
        """σ = sqrt(mean ε²) over the calibration rows (ACCRUE Table 1's constant-σ baseline)."""
        d = as_distribution(dist)
        y = check_targets(y, len(d))
        eps = y - np.asarray(d.mean(), dtype=float)
        self.sigma_ = float(max(np.sqrt(np.mean(eps * eps)), 1e-300))
        self.n_calibration_ = int(y.size)
        return self

    def transform(self, dist, *, features=None) -> Gaussian:
        """Gaussian(μ, σ) with the same σ for every row (constant-σ baseline, ACCRUE Table 1)."""
        self._check_fitted("sigma_")
        mu = np.asarray(as_distribution(dist).mean(), dtype=float)
        return Gaussian(mu, np.full(mu.shape, self.sigma_))


class KMeansSigma(RegressionCalibrator):
    """k-means σ baseline (ACCRUE Table 1, "KM"): cluster the features, σ' = RMSE of the cluster.

    Features are standardised (``standardize=True``) before ``sklearn.cluster.KMeans``; the σ of
    cluster c is sqrt(mean ε²) over its calibration rows (aggregated with the binning engine's
    ``bin_sums``).  Needs ``features``; uses only the means of ``dist``.

    Parameters
    ----------
    n_clusters : int, default 5
        Number of clusters (at most the number of calibration rows).
    standardize : bool, default True
        Standardise every feature column (mean 0, std 1 on the calibration rows) before clustering.
    n_init : int, default 4
        Restarts of k-means.
    random_state : int, default 0
        Seed of k-means.

    Attributes
    ----------
    kmeans_ : sklearn.cluster.KMeans
        The fitted clustering.
    sigma_ : ndarray of shape (n_clusters,)
        σ' per cluster.
    center_, scale_ : ndarray of shape (d,)
        The standardiser of the features.
    n_calibration_ : int
        Number of calibration rows.

    References
    ----------
    .. [1] E. Camporeale and A. Carè, "ACCRUE: Accurate and reliable uncertainty estimate in deterministic
           models", International Journal for Uncertainty Quantification 11(4), 81–94, 2021.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> rng = np.random.default_rng(0)
    >>> mu, sigma = rng.normal(size=200), rng.uniform(0.5, 1.5, 200)
    >>> y = mu + 2 * sigma * rng.standard_normal(200)  # the errors are twice the predicted σ
    >>> x = rng.uniform(size=(200, 1))
    >>> cal = cc.KMeansSigma(n_clusters=3).fit(mu, y, features=x)
    >>> cal.sigma_.round(3)
    array([1.879, 2.3  , 1.735])
    """

    uses_features = True

    def __init__(self, *, n_clusters: int = 5, standardize: bool = True, n_init: int = 4, random_state: int = 0):
        self.n_clusters = n_clusters
        self.standardize = standardize
        self.n_init = n_init
        self.random_state = random_state

    def _scaled(self, X: np.ndarray) -> np.ndarray:
        return (X - self.center_) / self.scale_

    def fit(self, dist, y, *, features=None) -> KMeansSigma:
        """k-means on the standardised features; σ_c = sqrt(mean ε²) per cluster (ACCRUE Table 1, "KM")."""
        d = as_distribution(dist)
        y = check_targets(y, len(d))
        X = check_features(features, len(d), required=True, who="KMeansSigma")
        if self.standardize:
            self.center_ = X.mean(axis=0)
            sd = X.std(axis=0)
            self.scale_ = np.where(sd > 0, sd, 1.0)
        else:
            self.center_ = np.zeros(X.shape[1])
            self.scale_ = np.ones(X.shape[1])
        k = int(max(1, min(self.n_clusters, y.size)))
        self.kmeans_ = KMeans(n_clusters=k, n_init=self.n_init, random_state=self.random_state)
        with threadpool_limits(limits=1):  # OpenMP/BLAS threads only add contention at these sizes
            labels = self.kmeans_.fit_predict(self._scaled(X))
        eps = y - np.asarray(d.mean(), dtype=float)
        cnt, s_err = bin_sums(labels, k, eps * eps)
        overall = float(np.sqrt(np.mean(eps * eps)))
        with np.errstate(invalid="ignore", divide="ignore"):
            sig = np.where(cnt > 0, np.sqrt(s_err / np.maximum(cnt, 1)), overall)
        self.sigma_ = np.maximum(sig, 1e-12 * max(overall, 1e-300))
        self.n_calibration_ = int(y.size)
        return self

    def transform(self, dist, *, features=None) -> Gaussian:
        """Gaussian(μ, σ_c) with c the nearest cluster centre of each row (ACCRUE Table 1, "KM")."""
        self._check_fitted("sigma_")
        d = as_distribution(dist)
        X = check_features(features, len(d), required=True, who="KMeansSigma")
        with threadpool_limits(limits=1):
            labels = self.kmeans_.predict(self._scaled(X))
        return Gaussian(np.asarray(d.mean(), dtype=float), self.sigma_[labels])
