"""Regression recalibrators, scikit-learn style.

Every calibrator has ``fit(dist, y, *, features=None)`` (on calibration rows) and
``transform(dist, *, features=None)`` (on any rows) returning a
:class:`~calib_core.base.regression.PredictiveDistribution` that every diagnostic of
:mod:`calib_core.metrics.regression` accepts; ``fit_transform`` does both.  The order is
scikit-learn's ``fit(X, y)``: the predictions ``dist`` are the inputs, the targets ``y`` second;
``features`` are the optional per-row covariates (the ``x*`` columns) that :class:`KMeansSigma`
and :class:`ACCRUE` need and the other calibrators ignore.
Hyper-parameters are set in ``__init__`` only, fitted attributes end with an underscore, and
``sklearn.base.clone`` works.

Point predictions
-----------------
``dist`` may be a predictive distribution **or a 1-D array of point predictions**.  An array is
read as the predictive means with no uncertainty and wrapped as ``Gaussian(mean, 1)``: the
calibrators that estimate σ from scratch (:class:`ConstantSigma`, :class:`KMeansSigma`,
:class:`ACCRUE`) only use the means (plus the ``features``), and the σ-rescaling calibrators
then treat σ ≡ 1 (e.g. :class:`StdScaling` becomes a constant σ equal to the calibration RMSE).

Notation: μ and σ are ``dist.mean()`` and ``dist.std()``, ε = y − μ, z = ε/σ,
u = F(y) the PIT.

* :class:`StdScaling` — σ' = sσ, s² = mean z², the NLL minimiser (Levi et al. 2019, eq. 12);
* :class:`GaussianShiftScale` — μ' = μ + mσ, σ' = sσ with m = mean z, s = std z (CRUDE's
  Gaussian-MLE baseline);
* :class:`IsotonicRecalibration` — G = R∘F, R the isotonic fit of (u_i, rank/n) (Kuleshov et al.
  2018; side effects from Utpala & Rai, QR §3);
* :class:`CRUDE` — μ + σ·Ẑ, Ẑ the empirical calibration z-scores (Zelikman et al., Algorithm 1);
* :class:`SplitConformal` — μ ± σ·q on the |z| score, or signed z bounds (Papadopoulos 2008;
  Linusson et al. 2014; CRUDE §3.3);
* :class:`SigmaBinning`, :class:`SigmaIsotonic` — σ mapped to the RMSE of its σ-bin / isotonic
  regression of ε² on σ (Levi et al. §3.1);
* :class:`ConstantSigma`, :class:`KMeansSigma` — constant σ and per-cluster σ (ACCRUE Table 1);
* :class:`ACCRUE` — σ(x) minimising β·mean CRPS + (1 − β)·RS (Camporeale & Carè, eqs. 11–13);
* :class:`GroupStdScaling`, :class:`MondrianConformal` — slice-wise (group-conditional) STD scaling and Mondrian
  split conformal (Vovk et al. 2003): one fit per slice g on the calibration rows of g, the global fit for a slice
  unseen at fit time or with fewer than ``min_rows`` calibration rows.  They take the slice of every row as
  ``groups=`` in ``fit``/``transform`` (``uses_groups = True``; ``by`` names the column ``cc.evaluate`` reads it
  from: ``"group"`` or a feature column, :func:`calib_core.base.groupwise.slice_labels`).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from scipy import optimize, special
from sklearn.base import BaseEstimator
from sklearn.cluster import KMeans
from sklearn.isotonic import IsotonicRegression
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from ..base.binning import bin_sums, bins_from_edges, equal_count_bins
from ..base.groupwise import GROUP, SliceFit, as_labels
from ..base.regression import Gaussian, PredictiveDistribution, gaussian_crps, norm_pdf
from ..base.regression_recalibrated import IsotonicRecalibrated, ShapeScale, SlicedDistribution, normalise_mapping
from ..metrics import regression as rm

__all__ = [
    "as_distribution",
    "RegressionCalibrator",
    "StdScaling",
    "GaussianShiftScale",
    "IsotonicRecalibration",
    "CRUDE",
    "SplitConformal",
    "SigmaBinning",
    "SigmaIsotonic",
    "ConstantSigma",
    "KMeansSigma",
    "ACCRUE",
    "SliceWiseCalibrator",
    "GroupStdScaling",
    "MondrianConformal",
    "conformal_bounds",
    "accrue_objective",
    "polynomial_sigma_cost",
    "mlp_sigma_cost",
    "crps_min",
    "rs_min",
    "accrue_beta",
]

SQRT2 = np.sqrt(2.0)
SQRT_PI = np.sqrt(np.pi)


# =============================================================================================
# helpers
# =============================================================================================


def as_distribution(dist: PredictiveDistribution | np.ndarray) -> PredictiveDistribution:
    """A predictive distribution, or an array of point predictions read as ``Gaussian(mean, 1)``."""
    if isinstance(dist, PredictiveDistribution):
        return dist
    arr = np.asarray(dist, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"point predictions must be one-dimensional, got shape {arr.shape}")
    return Gaussian(arr, np.ones_like(arr))


def _targets(y: Any, n: int) -> np.ndarray:
    if isinstance(y, PredictiveDistribution):
        raise TypeError(
            "regression calibrators take fit(dist, y, *, features=None): predictions first, targets second "
            "(the order of scikit-learn's fit(X, y)); got a predictive distribution as y"
        )
    y = np.asarray(y, dtype=float)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"y must have shape ({n},), got {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or inf")
    return y


def _features(features: Any, n: int | None = None, required: bool = False, who: str = "") -> np.ndarray | None:
    if features is None:
        if required:
            raise ValueError(f"{who} needs the feature matrix (features=..., the x* columns)")
        return None
    arr = np.asarray(features, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"features must be 2-D (rows × features), got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"features has {arr.shape[0]} rows but the predictions have {n}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("features contains NaN or inf")
    return arr


def _mu_sigma(dist: PredictiveDistribution) -> tuple[np.ndarray, np.ndarray]:
    mu = np.asarray(dist.mean(), dtype=float)
    sigma = np.asarray(dist.std(), dtype=float)
    if np.any(~(sigma > 0)):
        raise ValueError("the predictive standard deviations must be positive")
    return mu, sigma


class RegressionCalibrator(BaseEstimator):
    """Base class: ``fit(dist, y, *, features=None)``, ``transform(dist, *, features=None)``, ``fit_transform``.

    The scikit-learn order ``fit(X, y)``: the model's predictions ``dist`` play the role of X (inputs first),
    the targets ``y`` come second.  ``features`` are optional per-row covariates (the ``x*`` columns, an
    (N, d) array or DataFrame) read only by the calibrators with ``uses_features = True`` (:class:`KMeansSigma`,
    :class:`ACCRUE`), which raise without them; the others ignore them.
    """

    uses_features: bool = False

    def fit(
        self, dist: PredictiveDistribution | np.ndarray, y: np.ndarray, *, features: Any = None
    ) -> RegressionCalibrator:
        """Fit on calibration rows: predictions ``dist`` (N rows or point array), targets y (N,), features."""
        raise NotImplementedError  # pragma: no cover

    def transform(self, dist: PredictiveDistribution | np.ndarray, *, features: Any = None) -> PredictiveDistribution:
        """The recalibrated predictive distribution of the rows of ``dist`` (``features`` when used)."""
        raise NotImplementedError  # pragma: no cover

    def fit_transform(
        self, dist: PredictiveDistribution | np.ndarray, y: np.ndarray, *, features: Any = None
    ) -> PredictiveDistribution:
        """``fit(dist, y, features=features)`` then ``transform(dist, features=features)`` on the same rows."""
        return self.fit(dist, y, features=features).transform(dist, features=features)

    def _check_fitted(self, attr: str) -> None:
        """Raise ``sklearn.exceptions.NotFittedError`` unless the fitted attribute ``attr`` exists."""
        check_is_fitted(self, attr)


# =============================================================================================
# σ rescaling: STD scaling and Gaussian MLE with shift
# =============================================================================================


class StdScaling(RegressionCalibrator):
    """STD scaling (Levi et al. 2019, eq. 12): σ' = s·σ with s² = mean(z²), the exact NLL minimiser.

    argmin_s Σ_t [log(sσ_t) + ε_t²/(2s²σ_t²)]  ⇒  s² = (1/n) Σ_t (ε_t/σ_t)².

    Fitted attribute: ``scale_`` (s).  ``transform`` returns ``Gaussian(μ, s·σ)``.
    """

    def fit(self, dist, y, *, features=None) -> StdScaling:
        """s = sqrt(mean(z²)), z = (y − μ)/σ (Levi eq. 12)."""
        d = as_distribution(dist)
        y = _targets(y, len(d))
        mu, sigma = _mu_sigma(d)
        z = (y - mu) / sigma
        self.scale_ = float(np.sqrt(np.mean(z * z)))
        self.n_calibration_ = int(y.size)
        return self

    def transform(self, dist, *, features=None) -> Gaussian:
        """Gaussian(μ, s·σ) (Levi et al. 2019, STD scaling)."""
        self._check_fitted("scale_")
        mu, sigma = _mu_sigma(as_distribution(dist))
        return Gaussian(mu, self.scale_ * sigma)


class GaussianShiftScale(RegressionCalibrator):
    """Gaussian MLE with shift (CRUDE's baseline after Levi et al.): μ' = μ + m·σ, σ' = s·σ.

    The Gaussian maximum-likelihood fit N(m, s²) of the calibration z-scores:
    m = mean(z), s = std(z) (ddof = 0).  Fitted attributes: ``shift_`` (m), ``scale_`` (s).
    """

    def fit(self, dist, y, *, features=None) -> GaussianShiftScale:
        """m = mean(z), s = std(z) (ddof 0): the Gaussian MLE of the calibration z-scores (CRUDE's baseline)."""
        d = as_distribution(dist)
        y = _targets(y, len(d))
        mu, sigma = _mu_sigma(d)
        z = (y - mu) / sigma
        self.shift_ = float(np.mean(z))
        self.scale_ = float(np.std(z))
        self.n_calibration_ = int(y.size)
        return self

    def transform(self, dist, *, features=None) -> Gaussian:
        """Gaussian(μ + m·σ, s·σ) (Gaussian MLE with shift, Zelikman et al.)."""
        self._check_fitted("scale_")
        mu, sigma = _mu_sigma(as_distribution(dist))
        return Gaussian(mu + self.shift_ * sigma, self.scale_ * sigma)


# =============================================================================================
# Kuleshov isotonic recalibration
# =============================================================================================


class IsotonicRecalibration(RegressionCalibrator):
    """Isotonic recalibration of the PIT (Kuleshov et al. 2018), with its side effects (QR §3).

    Fit: PIT values u_i = F_i(y_i) on the calibration rows, targets P̂(u_i) = #{j : u_j ≤ u_i}/m;
    an isotonic regression (scikit-learn, PAVA) gives the monotone piecewise-linear map R and the
    recalibrated CDF is G = R∘F (:class:`~calib_core.base.regression_recalibrated.IsotonicRecalibrated`).
    The knots (0, 0) and (1, 1) close the map (QR eq. 10 starts at c_(0) = 0).

    Parameters
    ----------
    add_endpoint : bool, default False
        QR §3's remedy: targets #{u_j ≤ u_i}/(m + 1) and the end point (1, 1), so R < 1 on [0, 1)
        and the support is not truncated.  Without it R reaches 1 at c_(m) = max u_i and the
        recalibrated distribution is truncated at y_trun = F⁻¹(c_(m)) (QR B.2): every test target
        above it gets zero likelihood.
    randomize_pit : bool or None
        Randomise the PIT of distributions with atoms (``None``: when ``dist.is_discrete``).
    random_state : int
        Seed of that randomisation.

    Fitted attributes
    -----------------
    isotonic_ : sklearn.isotonic.IsotonicRegression
    mapping_x_, mapping_y_ : knots (a_k, b_k) of R including (0, 0) and (1, 1)
    truncation_u_ : smallest u with R(u) = 1 (1.0 when there is no truncation)
    spike_ratio_ : max_k of the slopes of R = max g/f, the largest density spike (QR eq. 10)
    delta_ : QR claim 3's δ for a Gaussian base (recalibrated mean μ − δσ)
    n_calibration_ : m
    """

    def __init__(self, *, add_endpoint: bool = False, randomize_pit: bool | None = None, random_state: int = 0):
        self.add_endpoint = add_endpoint
        self.randomize_pit = randomize_pit
        self.random_state = random_state

    def fit(self, dist, y, *, features=None) -> IsotonicRecalibration:
        """Isotonic fit of (u_i, #{u_j ≤ u_i}/m) (or /(m + 1) with the (1, 1) end point), u = F(y)
        (Kuleshov et al. 2018; the end point from Utpala & Rai, QR §3)."""
        d = as_distribution(dist)
        y = _targets(y, len(d))
        u = np.clip(rm.pit(y, d, randomize=self.randomize_pit, seed=self.random_state), 0.0, 1.0)
        m = u.size
        us = np.sort(u)
        target = np.searchsorted(us, us, side="right") / (m + 1.0 if self.add_endpoint else float(m))
        if self.add_endpoint:
            us = np.append(us, 1.0)
            target = np.append(target, 1.0)
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
        iso.fit(us, target)
        self.isotonic_ = iso
        self.mapping_x_, self.mapping_y_ = normalise_mapping(iso)
        slopes = np.diff(self.mapping_y_) / np.diff(self.mapping_x_)
        self.spike_ratio_ = float(np.max(slopes))
        self.truncation_u_ = float(self.mapping_x_[np.argmax(self.mapping_y_ >= 1.0)])
        # δ = Σ_k s_k [φ(Φ⁻¹(a_{k+1})) − φ(Φ⁻¹(a_k))]   (QR claim 3 written on the knots of R)
        phi = norm_pdf(special.ndtri(self.mapping_x_))
        self.delta_ = float(np.dot(slopes, np.diff(phi)))
        self.n_calibration_ = int(m)
        return self

    def transform(self, dist, *, features=None) -> IsotonicRecalibrated:
        """IsotonicRecalibrated(dist, R): CDF R∘F, quantiles F⁻¹∘R⁻¹, density R'(F)·f (QR eq. 10)."""
        self._check_fitted("mapping_x_")
        return IsotonicRecalibrated(as_distribution(dist), (self.mapping_x_, self.mapping_y_))

    # -- side effects made visible --------------------------------------------------------------
    def recalibration_map(self, u: np.ndarray) -> np.ndarray:
        """R(u)."""
        self._check_fitted("mapping_x_")
        return np.interp(u, self.mapping_x_, self.mapping_y_)

    def truncation_point(self, dist) -> np.ndarray:
        """y_trun = F⁻¹(truncation_u_) per row (+inf when the support is not truncated)."""
        return self.transform(dist).truncation_point()

    def recalibrated_mean(self, dist) -> np.ndarray:
        """Mean of R∘F per row, exact (QR claim 3 for Gaussian bases: μ − δσ)."""
        return self.transform(dist).mean()

    def density(self, dist, y: np.ndarray) -> np.ndarray:
        """Recalibrated piecewise density g(y) = R'(F(y))·f(y) (QR eq. 10)."""
        return self.transform(dist).pdf(y)


# =============================================================================================
# CRUDE and split conformal
# =============================================================================================


class CRUDE(RegressionCalibrator):
    """CRUDE (Zelikman et al., Algorithm 1): the empirical distribution of calibration z-scores.

    Ẑ = sorted {(y − μ)/σ} on the calibration rows; the recalibrated distribution of a row is
    μ + σ·Ẑ (:class:`~calib_core.base.regression_recalibrated.ShapeScale`): quantile
    q_p = μ + σ·Ẑ[int(p·L)] (index clipped to L − 1), mean μ + σ·mean(Ẑ), variance σ²·var(Ẑ).

    Fitted attribute: ``z_sorted_`` (Ẑ).
    """

    def fit(self, dist, y, *, features=None) -> CRUDE:
        """Ẑ = sorted (y − μ)/σ on the calibration rows (CRUDE Algorithm 1)."""
        d = as_distribution(dist)
        y = _targets(y, len(d))
        mu, sigma = _mu_sigma(d)
        self.z_sorted_ = np.sort((y - mu) / sigma)
        self.n_calibration_ = int(y.size)
        return self

    def transform(self, dist, *, features=None) -> ShapeScale:
        """ShapeScale(μ, σ, Ẑ): quantiles μ + σ·Ẑ[int(p·L)] (CRUDE Algorithm 1)."""
        self._check_fitted("z_sorted_")
        mu, sigma = _mu_sigma(as_distribution(dist))
        return ShapeScale(mu, sigma, self.z_sorted_, assume_sorted=True)

    def quantile(self, dist, p: float | np.ndarray) -> np.ndarray:
        """q_p = μ + σ·Ẑ[int(p·L)] (Algorithm 1)."""
        return self.transform(dist).ppf(p)

    def interval(self, dist, coverage: float) -> tuple[np.ndarray, np.ndarray]:
        """Central interval [q_{(1−c)/2}, q_{(1+c)/2}] (CRUDE §3.3, "two-sided")."""
        return self.transform(dist).interval(coverage)


class SplitConformal(RegressionCalibrator):
    """Normalised split conformal prediction (Papadopoulos 2008; signed: Linusson et al. 2014).

    Scores on the L calibration rows: |z| (``signed=False``, symmetric intervals) or z
    (``signed=True``, CRUDE §3.3's signed nonconformity).  For coverage c = 1 − α:

    * symmetric: μ ± σ·q, q the ⌈(L + 1)(1 − α)⌉-th smallest |z| (+inf if that exceeds L);
    * signed:    [μ + σ·z_(⌊(L+1)α/2⌋), μ + σ·z_(⌈(L+1)(1−α/2)⌉)] (−inf/+inf when the rank is
      below 1 / above L).

    These finite-sample ranks guarantee coverage ≥ c for exchangeable rows; they are returned by
    :meth:`interval`.  :meth:`transform` returns the full predictive distribution implied by the
    scores — μ + σ·Ẑ with Ẑ = sorted z (signed) or the symmetrised sorted {−|z|, +|z|} — whose
    central intervals are the same order statistics without the (L + 1) correction.

    Fitted attributes: ``scores_`` (sorted scores), ``z_sorted_`` (the shape used by transform).
    """

    def __init__(self, *, signed: bool = False):
        self.signed = signed

    def fit(self, dist, y, *, features=None) -> SplitConformal:
        """Sorted scores z (signed; Linusson et al. 2014) or |z| (symmetric; Papadopoulos 2008) of the
        calibration rows."""
        d = as_distribution(dist)
        y = _targets(y, len(d))
        mu, sigma = _mu_sigma(d)
        self.scores_, self.z_sorted_ = _conformal_scores((y - mu) / sigma, self.signed)
        self.n_calibration_ = int(y.size)
        return self

    def transform(self, dist, *, features=None) -> ShapeScale:
        """ShapeScale(μ, σ, Ẑ), Ẑ the sorted z (signed) or the symmetrised ±|z| (split conformal; class docstring)."""
        self._check_fitted("scores_")
        mu, sigma = _mu_sigma(as_distribution(dist))
        return ShapeScale(mu, sigma, self.z_sorted_, assume_sorted=True)

    def score_quantiles(self, coverage: float) -> tuple[float, float]:
        """(lower, upper) standardised bounds of the conformal interval of coverage c (:func:`conformal_bounds`)."""
        self._check_fitted("scores_")
        return conformal_bounds(self.scores_, coverage, signed=self.signed)

    def interval(self, dist, coverage: float) -> tuple[np.ndarray, np.ndarray]:
        """Conformal interval [μ + σ·lower, μ + σ·upper] with the (L + 1) finite-sample ranks."""
        self._check_fitted("scores_")
        mu, sigma = _mu_sigma(as_distribution(dist))
        lo, hi = self.score_quantiles(coverage)
        with np.errstate(invalid="ignore"):
            return mu + sigma * lo, mu + sigma * hi


def _conformal_scores(z: np.ndarray, signed: bool) -> tuple[np.ndarray, np.ndarray]:
    """(sorted scores, the shape Ẑ of the predictive distribution): z and z (signed), or |z| and ±|z| symmetrised."""
    if signed:
        scores = np.sort(z)
        return scores, scores
    scores = np.sort(np.abs(z))
    return scores, np.sort(np.concatenate([-scores, scores]))


def _order_stat(scores: np.ndarray, rank: int) -> float:
    if rank < 1:
        return -np.inf
    if rank > scores.size:
        return np.inf
    return float(scores[rank - 1])


def conformal_bounds(scores: np.ndarray, coverage: float, *, signed: bool = False) -> tuple[float, float]:
    """Standardised bounds (lower, upper) of the split-conformal interval of coverage c = 1 − α from L sorted scores.

    Symmetric (scores |z|): ±q, q the ⌈(L + 1)(1 − α)⌉-th smallest score (Papadopoulos 2008); signed (scores z):
    [z_(⌊(L+1)α/2⌋), z_(⌈(L+1)(1−α/2)⌉)] (Linusson et al. 2014); ±inf when a rank leaves 1..L.  For exchangeable
    rows the interval μ + σ·[lower, upper] covers a new target with probability ≥ c.
    """
    L = scores.size
    alpha = 1.0 - float(coverage)
    if signed:
        lo = _order_stat(scores, int(np.floor((L + 1) * alpha / 2.0 + 1e-9)))
        hi = _order_stat(scores, int(np.ceil((L + 1) * (1.0 - alpha / 2.0) - 1e-9)))
        return lo, hi
    q = _order_stat(scores, int(np.ceil((L + 1) * (1.0 - alpha) - 1e-9)))
    return -q, q


# =============================================================================================
# slice-wise (group-conditional) recalibration
# =============================================================================================


class SliceWiseCalibrator(RegressionCalibrator):
    """Base class of the slice-wise calibrators: ``fit(dist, y, *, features=None, groups=...)`` and
    ``transform(dist, *, features=None, groups=...)`` with ``groups`` the slice label of every row.

    Parameters shared by all: ``by`` — the column the slices come from when ``cc.evaluate`` supplies ``groups``
    (``"group"`` or a feature column, :func:`calib_core.base.groupwise.slice_labels`); ``min_rows`` — a slice with fewer
    calibration rows, or one unseen at fit time, uses the global fit (fitted on every calibration row).
    Fitted attributes: ``slices_`` (:class:`~calib_core.base.groupwise.SliceFit`: the slices, their calibration rows,
    which are fitted on their own), ``n_calibration_``.  :meth:`note` counts the rows of a transform that use the
    global fit.
    """

    uses_groups: bool = True

    def fit_transform(self, dist, y, *, features=None, groups=None) -> PredictiveDistribution:
        """``fit`` then ``transform`` on the same rows (same ``groups``)."""
        return self.fit(dist, y, features=features, groups=groups).transform(dist, features=features, groups=groups)

    def note(self, groups: Any) -> str | None:
        """Words counting the rows of ``groups`` that use the global fit (unseen slice or too few calibration rows);
        None when every row has its own slice's fit."""
        self._check_fitted("slices_")
        labels = np.asarray(groups).astype(str)
        return self.slices_.note(labels, who=_SLICE_NAMES.get(type(self).__name__, type(self).__name__))

    def _fit_slices(self, n: int, groups: Any) -> np.ndarray:
        labels = as_labels(groups, n, who=type(self).__name__)
        self.slices_, codes = SliceFit.of(labels, self.min_rows)
        return codes

    def _own_codes(self, n: int, groups: Any) -> np.ndarray:
        return self.slices_.own_codes(as_labels(groups, n, who=type(self).__name__))


_SLICE_NAMES = {"GroupStdScaling": "std scaling per slice", "MondrianConformal": "Mondrian conformal"}


class GroupStdScaling(SliceWiseCalibrator):
    """Slice-wise STD scaling: σ' = s_g·σ for the rows of slice g, s_g² = mean over the calibration rows of g of z².

    Levi et al. 2019's STD scaling (eq. 12; the σ-recalibration of Kuleshov et al. 2018 restricted to a scale)
    fitted separately per slice, the group-conditional recalibration asked of a model that is calibrated on
    average but not within groups: s_g = argmin_s Σ_{i∈g} [log(sσ_i) + ε_i²/(2s²σ_i²)] = sqrt(mean_{i∈g} z_i²).
    A slice with fewer than ``min_rows`` calibration rows, or unseen at fit time, gets the global s =
    sqrt(mean z²) of every calibration row (:class:`StdScaling`).  With one slice it is :class:`StdScaling`.

    Fitted attributes: ``scale_`` (s_g per slice of ``slices_.levels``, the global s where a slice is not fitted on
    its own), ``global_scale_``, ``slices_``, ``n_calibration_``.  ``transform`` returns ``Gaussian(μ, s_g·σ)``.
    """

    def __init__(self, *, by: str = GROUP, min_rows: int = 30):
        self.by = by
        self.min_rows = min_rows

    def fit(self, dist, y, *, features=None, groups=None) -> GroupStdScaling:
        """s_g = sqrt(mean_{i∈g} z_i²) per slice (one ``bincount``), s = sqrt(mean z²) globally (Levi eq. 12)."""
        d = as_distribution(dist)
        y = _targets(y, len(d))
        codes = self._fit_slices(len(d), groups)
        mu, sigma = _mu_sigma(d)
        z2 = ((y - mu) / sigma) ** 2
        self.global_scale_ = float(np.sqrt(np.mean(z2)))
        sums = np.bincount(codes, weights=z2, minlength=self.slices_.levels.size)
        with np.errstate(invalid="ignore", divide="ignore"):
            own = np.sqrt(sums / self.slices_.counts)
        self.scale_ = np.where(self.slices_.own, own, self.global_scale_)
        self.n_calibration_ = int(y.size)
        return self

    def transform(self, dist, *, features=None, groups=None) -> Gaussian:
        """Gaussian(μ, s_g·σ), g the slice of each row (the global s for the rows of other slices)."""
        self._check_fitted("scale_")
        mu, sigma = _mu_sigma(as_distribution(dist))
        c = self._own_codes(mu.size, groups)
        s = np.where(c >= 0, self.scale_[np.maximum(c, 0)], self.global_scale_)
        return Gaussian(mu, s * sigma)


class MondrianConformal(SliceWiseCalibrator):
    """Mondrian (group-conditional) normalised split conformal prediction (Vovk, Lindsay, Nouretdinov & Gammerman
    2003, "Mondrian confidence machine"; Vovk, Gammerman & Shafer 2005, §4.5).

    The calibration scores are split by slice: for a row of slice g with L_g calibration rows, the interval of
    coverage c = 1 − α is μ ± σ·q_g with q_g the ⌈(L_g + 1)(1 − α)⌉-th smallest |z| of slice g (``signed=True``:
    the signed ranks of :func:`conformal_bounds`).  Rows exchangeable within their slice are covered with
    probability ≥ c in every slice (slice-conditional validity), where one pooled split-conformal quantile only
    guarantees c on average over slices.  A slice with fewer than ``min_rows`` calibration rows, or unseen at fit
    time, uses the pooled scores of every calibration row (:class:`SplitConformal`); ``min_rows`` ≥ ⌈1/α⌉ − 1 keeps
    q_g finite.

    :meth:`interval` returns these finite-sample intervals; :meth:`transform` the predictive distribution
    μ + σ·Ẑ_g of each row (:class:`~calib_core.base.regression_recalibrated.SlicedDistribution` of one
    :class:`~calib_core.base.regression_recalibrated.ShapeScale` per slice, Ẑ_g the symmetrised ±|z| or the signed z of
    slice g), whose central intervals are the same order statistics without the (L_g + 1) correction.  With one
    slice both equal :class:`SplitConformal`'s.

    Fitted attributes: ``scores_`` (sorted scores per slice of ``slices_.levels``; the pooled scores where a slice is
    not fitted on its own), ``global_scores_``, ``slices_``, ``n_calibration_``.
    """

    def __init__(self, *, by: str = GROUP, min_rows: int = 30, signed: bool = False):
        self.by = by
        self.min_rows = min_rows
        self.signed = signed

    def fit(self, dist, y, *, features=None, groups=None) -> MondrianConformal:
        """Sorted scores |z| (or z) of the calibration rows of every slice, and pooled (Vovk et al. 2003)."""
        d = as_distribution(dist)
        y = _targets(y, len(d))
        codes = self._fit_slices(len(d), groups)
        mu, sigma = _mu_sigma(d)
        z = (y - mu) / sigma
        self.global_scores_, self.global_shape_ = _conformal_scores(z, self.signed)
        raw = np.abs(z) if not self.signed else z
        order = np.lexsort((raw, codes))  # by slice, then by score: each slice's sorted scores are contiguous
        bounds = np.concatenate([[0], np.cumsum(self.slices_.counts)])
        pieces = np.split(raw[order], bounds[1:-1])
        self.scores_ = [p if own else self.global_scores_ for p, own in zip(pieces, self.slices_.own)]
        self.shapes_ = [
            (p if self.signed else np.sort(np.concatenate([-p, p]))) if own else self.global_shape_
            for p, own in zip(pieces, self.slices_.own)
        ]
        self.n_calibration_ = int(y.size)
        return self

    def transform(self, dist, *, features=None, groups=None) -> PredictiveDistribution:
        """μ + σ·Ẑ_g for the rows of slice g (a ``ShapeScale`` when every row follows the same shape, else a
        ``SlicedDistribution`` of one ``ShapeScale`` per slice present)."""
        self._check_fitted("scores_")
        mu, sigma = _mu_sigma(as_distribution(dist))
        c = self._own_codes(mu.size, groups)
        keys, part_of = np.unique(c, return_inverse=True)
        shapes = [self.global_shape_ if k < 0 else self.shapes_[k] for k in keys]
        if len(keys) == 1:
            return ShapeScale(mu, sigma, shapes[0], assume_sorted=True)
        parts = [ShapeScale(mu[part_of == j], sigma[part_of == j], shapes[j], assume_sorted=True)
                 for j in range(len(keys))]
        return SlicedDistribution(parts, part_of)

    def interval(self, dist, coverage: float, *, groups=None) -> tuple[np.ndarray, np.ndarray]:
        """Mondrian conformal interval μ + σ·[lower_g, upper_g] with the (L_g + 1) finite-sample ranks of the slice
        g of each row (the pooled ranks for rows without their own fit)."""
        self._check_fitted("scores_")
        mu, sigma = _mu_sigma(as_distribution(dist))
        c = self._own_codes(mu.size, groups)
        b = np.array([conformal_bounds(s, coverage, signed=self.signed) for s in self.scores_] or np.empty((0, 2)))
        g_lo, g_hi = conformal_bounds(self.global_scores_, coverage, signed=self.signed)
        lo = np.where(c >= 0, b[np.maximum(c, 0), 0] if b.size else g_lo, g_lo)
        hi = np.where(c >= 0, b[np.maximum(c, 0), 1] if b.size else g_hi, g_hi)
        with np.errstate(invalid="ignore"):
            return mu + sigma * lo, mu + sigma * hi


# =============================================================================================
# σ-binning, σ-isotonic
# =============================================================================================


class SigmaBinning(RegressionCalibrator):
    """σ-binning (Levi et al. §3.1, "histogram binning applied to the STDs").

    The calibration rows are split into B equal-count bins of predicted σ (the Levi bins of the
    ENCE, :func:`calib_core.base.binning.equal_count_bins`); a new σ is mapped to its bin's
    RMSE_j = sqrt(mean ε²) (``mode="rmse"``), or rescaled by RMSE_j/RMV_j with
    RMV_j = sqrt(mean σ²) (``mode="ratio"``, keeps the within-bin ordering).  Bin boundaries are
    midway between the largest σ of a bin and the smallest σ of the next.  After the map the
    calibration rows have ENCE = 0 by construction.

    Fitted attributes: ``edges_`` (B − 1 inner boundaries), ``rmse_``, ``rmv_``, ``counts_``.
    """

    def __init__(self, *, n_bins: int = 15, mode: Literal["rmse", "ratio"] = "rmse"):
        self.n_bins = n_bins
        self.mode = mode

    def fit(self, dist, y, *, features=None) -> SigmaBinning:
        """Equal-count σ-bins; per bin RMSE_j = sqrt(mean ε²) and RMV_j = sqrt(mean σ²) (Levi §3.1)."""
        if self.mode not in ("rmse", "ratio"):
            raise ValueError(f"mode must be 'rmse' or 'ratio', got {self.mode!r}")
        d = as_distribution(dist)
        y = _targets(y, len(d))
        mu, sigma = _mu_sigma(d)
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
        mu, sigma = _mu_sigma(as_distribution(dist))
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

    Fitted attribute: ``isotonic_`` (sklearn IsotonicRegression of ε² on σ² or σ), ``floor_``.
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
        y = _targets(y, len(d))
        mu, sigma = _mu_sigma(d)
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
        mu, sigma = _mu_sigma(as_distribution(dist))
        var = np.maximum(self.isotonic_.predict(self._x(sigma)), self.floor_)
        return Gaussian(mu, np.sqrt(var))


# =============================================================================================
# constant σ and k-means σ baselines (ACCRUE Table 1)
# =============================================================================================


class ConstantSigma(RegressionCalibrator):
    """Constant-σ baseline: σ' = sqrt(mean ε²) for every row (the NLL-optimal constant).

    Uses only the predictive means, so it works from point predictions.  Fitted: ``sigma_``.
    """

    def fit(self, dist, y, *, features=None) -> ConstantSigma:
        """σ = sqrt(mean ε²) over the calibration rows (ACCRUE Table 1's constant-σ baseline)."""
        d = as_distribution(dist)
        y = _targets(y, len(d))
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

    Fitted attributes: ``kmeans_``, ``sigma_`` (per cluster), ``center_``/``scale_`` (standardiser).
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
        y = _targets(y, len(d))
        X = _features(features, len(d), required=True, who="KMeansSigma")
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
        X = _features(features, len(d), required=True, who="KMeansSigma")
        with threadpool_limits(limits=1):
            labels = self.kmeans_.predict(self._scaled(X))
        return Gaussian(np.asarray(d.mean(), dtype=float), self.sigma_[labels])


# =============================================================================================
# ACCRUE
# =============================================================================================

#: erf(√(ln 2 / 2)): CRPS_min = this · mean|ε| (ACCRUE's √ln4/2 ≈ 0.5887 is its first-order value).
CRPS_MIN_FACTOR = float(special.erf(np.sqrt(np.log(2.0) / 2.0)))


def crps_min(eps: np.ndarray) -> float:
    """Minimum over σ of the mean Gaussian CRPS for fixed errors (ACCRUE §4).

    Per row, dCRPS/dσ = √(2/π) exp(−ε²/2σ²) − 1/√π = 0 at σ² = ε²/ln 2 (eq. 4), where
    CRPS = |ε|·erf(√(ln 2/2)); hence CRPS_min = erf(√(ln 2/2))·mean|ε|.
    """
    return CRPS_MIN_FACTOR * float(np.mean(np.abs(np.asarray(eps, dtype=float))))


def rs_min(n: int, constant: bool = True) -> float:
    """Minimum of the reliability score for n rows (ACCRUE eq. 13).

    RS_min = 1/(√π n) Σ_{i=1}^{n} exp(−[erf⁻¹((2i − 1)/n − 1)]²) − ½√(2/π), attained when
    erf(η_(i)) = (2i − 1)/n − 1 (eq. 10).  It tends to 0 as n → ∞.  ``constant=False`` drops the
    −½√(2/π) term, as the paper's own implementation does ("RS_min ≃ 0.4").
    """
    i = np.arange(1, int(n) + 1, dtype=float)
    eta = special.erfinv((2.0 * i - 1.0) / n - 1.0)
    val = float(np.sum(np.exp(-eta * eta)) / (SQRT_PI * n))
    return val - 0.5 * np.sqrt(2.0 / np.pi) if constant else val


def accrue_beta(eps: np.ndarray, constant: bool = True) -> float:
    """β = RS_min/(CRPS_min + RS_min) (ACCRUE eq. 12)."""
    r = rs_min(np.asarray(eps).size, constant)
    return r / (crps_min(eps) + r)


def accrue_objective(eps: np.ndarray, sigma: np.ndarray, beta: float) -> tuple[float, np.ndarray, float, float]:
    """ACCRUE cost β·mean CRPS + (1 − β)·RS (eq. 11) and its exact gradient with respect to σ.

    CRPS_i = σ_i[z_i erf(z_i/√2) + √(2/π) exp(−z_i²/2) − 1/√π] (eq. 3), dCRPS_i/dσ_i =
    √(2/π) exp(−z_i²/2) − 1/√π (eq. 4).  RS (eq. 8) with η_i = ε_i/(√2σ_i) sorted ascending:
    dRS/dη_(i) = (erf η_(i) + 1)/N − (2i − 1)/N² (the exp terms cancel), and dη_i/dσ_i = −η_i/σ_i
    (eq. 9).  The sort permutation is piecewise constant in σ, so this is the exact gradient
    wherever the η are distinct (RS is continuous across ties).

    Returns (cost, dcost/dσ, mean CRPS, RS).
    """
    eps = np.asarray(eps, dtype=float)
    sigma = np.asarray(sigma, dtype=float)
    n = eps.size
    z = eps / sigma
    crps_i = gaussian_crps(eps, 0.0, sigma)
    d_crps = (2.0 * norm_pdf(z) - 1.0 / SQRT_PI) / n
    eta = z / SQRT2
    order = np.argsort(eta, kind="stable")
    eta_s = eta[order]
    i = np.arange(1, n + 1, dtype=float)
    erf_s = special.erf(eta_s)
    rs = float(
        np.sum(eta_s / n * (erf_s + 1.0) - eta_s * (2.0 * i - 1.0) / n**2 + np.exp(-eta_s * eta_s) / (SQRT_PI * n))
        - 0.5 * np.sqrt(2.0 / np.pi)
    )
    d_eta = np.empty(n)
    d_eta[order] = (erf_s + 1.0) / n - (2.0 * i - 1.0) / n**2
    d_rs = d_eta * (-eta / sigma)
    crps_mean = float(np.mean(crps_i))
    cost = beta * crps_mean + (1.0 - beta) * rs
    return cost, beta * d_crps + (1.0 - beta) * d_rs, crps_mean, rs


def polynomial_sigma_cost(
    theta: np.ndarray, t: np.ndarray, eps: np.ndarray, beta: float, floor: float = 0.0
) -> tuple[float, np.ndarray]:
    """ACCRUE cost of σ_i = max(|p(t_i)|, floor), p = Σ_l θ_l T_l (Chebyshev), and its gradient in θ.

    dcost/dθ = Vᵀ(sign(p)·dcost/dσ) with V_il = T_l(t_i) (zero where the floor is active).
    """
    V = np.polynomial.chebyshev.chebvander(t, theta.size - 1)
    p = V @ theta
    sig = np.maximum(np.abs(p), floor)
    c, g, _, _ = accrue_objective(eps, sig, beta)
    sgn = np.where(np.abs(p) > floor, np.sign(p), 0.0)
    return c, V.T @ (g * sgn)


def _unpack_mlp(w: np.ndarray, d: int, h: int) -> dict[str, np.ndarray]:
    return {
        "W": w[: h * d].reshape(h, d),
        "c": w[h * d : h * d + h],
        "v": w[h * d + h : h * d + 2 * h],
        "b": np.asarray(w[h * d + 2 * h]),
    }


def _mlp_forward(P: dict[str, np.ndarray], Xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    A = np.tanh(Xs @ P["W"].T + P["c"])
    return A @ P["v"] + P["b"], A


def mlp_sigma_cost(
    w: np.ndarray,
    Xs: np.ndarray,
    eps: np.ndarray,
    beta: float,
    n_hidden: int,
    alpha: float = 0.0,
    norm: float = 1.0,
) -> tuple[float, np.ndarray]:
    """ACCRUE cost/norm + ½α(‖W‖² + ‖v‖²) of log σ = vᵀtanh(W x + c) + b and its gradient in w.

    w packs (W (h×d) row-major, c (h), v (h), b).  Backpropagation: with g_i = σ_i·dcost/dσ_i/norm
    (the gradient in log σ_i) and A = tanh(Wx + c): ∂/∂v = Aᵀg + αv, ∂/∂b = Σg,
    ∂/∂W = [(g vᵀ) ⊙ (1 − A²)]ᵀ X + αW, ∂/∂c = column sums of (g vᵀ) ⊙ (1 − A²).
    """
    d = Xs.shape[1]
    P = _unpack_mlp(w, d, n_hidden)
    logsig, A = _mlp_forward(P, Xs)
    sig = np.exp(logsig)
    c, g, _, _ = accrue_objective(eps, sig, beta)
    gl = g * sig / norm
    dZ = np.outer(gl, P["v"]) * (1.0 - A * A)
    grad = np.concatenate(
        [
            (dZ.T @ Xs + alpha * P["W"]).ravel(),
            dZ.sum(axis=0),
            A.T @ gl + alpha * P["v"],
            [gl.sum()],
        ]
    )
    pen = 0.5 * alpha * (np.sum(P["W"] ** 2) + np.sum(P["v"] ** 2))
    return c / norm + pen, grad


class ACCRUE(RegressionCalibrator):
    """ACCRUE (Camporeale & Carè): σ(x) minimising β·mean CRPS + (1 − β)·RS for fixed errors ε.

    β = RS_min/(CRPS_min + RS_min) (eq. 12) with CRPS_min = erf(√(ln 2/2))·mean|ε| (exact; the
    paper's √ln4/2 is its first-order value) and RS_min from eq. 13 (:func:`rs_min`):

    * ``rs_min="practical"`` (default): eq. 13 without its constant −½√(2/π), exactly as the
      paper's own implementation ("we neglect the last constant term … RS_min ≃ 0.4"), so β ≈ ½
      and accuracy and reliability are weighed comparably;
    * ``rs_min="eq13"``: eq. 13 as printed.  Then RS_min = O(1/N²) (1.1e-7 at N = 2000), β ≈ 3e-7
      and the cost is the reliability score alone in practice (slower, and less accurate on the
      toy sets: see the tests and the README).

    Works from point predictions plus features: only ε = y − dist.mean() and the ``features`` are used;
    ``transform`` returns ``Gaussian(μ, σ(x))``.

    Models of σ(x), fitted with L-BFGS on the analytic gradient of :func:`accrue_objective`
    (no finite differences):

    * ``model="polynomial"`` (Algorithm 1): σ(x) = |p(t)|, p a polynomial of degree ≤ ``max_degree``
      in one feature column (``feature``), t the feature mapped affinely onto [−1, 1] over the
      calibration range and p written in the Chebyshev basis (the same polynomial space as
      Σ θ_l x^l, better conditioned).  Start from the constant std(ε) (degree 0), then raise the
      degree p = 1, 2, … from the previous solution padded with a zero coefficient until the
      relative change of the cost is ≤ ``tol`` or the higher degree does not lower the cost (the
      previous solution is then kept).  Beyond the calibration range the feature is clipped.
    * ``model="mlp"``: log σ(x) = vᵀ tanh(W x̃ + c) + b, one hidden layer of ``n_hidden`` units on
      all standardised feature columns x̃ (backpropagated analytic gradient), with an L2 penalty
      ``alpha``·(‖W‖² + ‖v‖²)/2 on the cost normalised by its value at σ ≡ std(ε);
      ``n_restarts`` random initialisations, the one with the lowest cost is kept (the paper keeps
      the best of five networks).

    Fitted attributes: ``beta_``, ``crps_min_``, ``rs_min_``, ``cost_``, ``crps_``, ``rs_`` (at the
    solution, on the calibration rows); polynomial: ``coef_`` (Chebyshev coefficients in t),
    ``degree_``, ``history_`` ([(degree, cost)]), ``x_range_``; mlp: ``params_`` (W, c, v, b),
    ``center_``, ``scale_``, ``n_iter_``.
    """

    uses_features = True

    def __init__(
        self,
        *,
        model: Literal["polynomial", "mlp"] = "polynomial",
        feature: int | str = 0,
        max_degree: int = 10,
        tol: float = 1e-4,
        rs_min: Literal["eq13", "practical"] = "practical",
        n_hidden: int = 16,
        alpha: float = 1e-3,
        n_restarts: int = 3,
        max_iter: int = 500,
        random_state: int = 0,
    ):
        self.model = model
        self.feature = feature
        self.max_degree = max_degree
        self.tol = tol
        self.rs_min = rs_min
        self.n_hidden = n_hidden
        self.alpha = alpha
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.random_state = random_state

    # -- feature handling --------------------------------------------------------------------
    def _column(self, features: Any) -> np.ndarray:
        if isinstance(self.feature, str):
            if not hasattr(features, "columns"):
                raise ValueError(f"feature={self.feature!r} is a column name but the features have no columns")
            return np.asarray(features[self.feature], dtype=float)
        arr = _features(features, required=True, who="ACCRUE")
        return arr[:, int(self.feature)]

    def _t(self, x: np.ndarray) -> np.ndarray:
        lo, hi = self.x_range_
        span = hi - lo if hi > lo else 1.0
        return 2.0 * (np.clip(x, lo, hi) - lo) / span - 1.0

    # -- fitting -----------------------------------------------------------------------------
    def fit(self, dist, y, *, features=None) -> ACCRUE:
        """Minimise β·mean CRPS + (1 − β)·RS over the σ(x) model (ACCRUE eqs. 11–13; see the class docstring)."""
        if self.rs_min not in ("eq13", "practical"):
            raise ValueError(f"rs_min must be 'eq13' or 'practical', got {self.rs_min!r}")
        d = as_distribution(dist)
        y = _targets(y, len(d))
        if features is None:
            raise ValueError("ACCRUE needs the feature matrix (features=..., the x* columns)")
        eps = y - np.asarray(d.mean(), dtype=float)
        n = eps.size
        self.crps_min_ = crps_min(eps)
        self.rs_min_ = rs_min(n, constant=self.rs_min == "eq13")
        self.beta_ = self.rs_min_ / (self.crps_min_ + self.rs_min_)
        s0 = float(np.std(eps))
        if not s0 > 0:
            s0 = float(np.sqrt(np.mean(eps * eps))) or 1.0
        if self.model not in ("polynomial", "mlp"):
            raise ValueError(f"model must be 'polynomial' or 'mlp', got {self.model!r}")
        # L-BFGS-B's small dense updates are much slower with a multi-threaded BLAS (contention)
        with threadpool_limits(limits=1, user_api="blas"):
            if self.model == "polynomial":
                self._fit_polynomial(eps, self._column(features), s0)
            else:
                self._fit_mlp(eps, _features(features, n, required=True, who="ACCRUE"), s0)
        sig = self._sigma_train
        self.cost_, _, self.crps_, self.rs_ = accrue_objective(eps, sig, self.beta_)
        del self._sigma_train
        self.n_calibration_ = int(n)
        return self

    def _fit_polynomial(self, eps: np.ndarray, x: np.ndarray, s0: float) -> None:
        self.x_range_ = (float(np.min(x)), float(np.max(x)))
        t = self._t(x)
        beta = self.beta_
        floor = 1e-9 * s0

        def cost_of(theta: np.ndarray) -> tuple[float, np.ndarray]:
            """Cost and analytic gradient in θ (:func:`polynomial_sigma_cost`)."""
            return polynomial_sigma_cost(theta, t, eps, beta, floor)

        theta = np.array([s0])
        cost_old = cost_of(theta)[0]
        history = [(0, cost_old)]
        for p in range(1, int(self.max_degree) + 1):
            init = np.append(theta, 0.0)
            scale = abs(cost_old) if cost_old != 0 else 1.0
            res = optimize.minimize(
                lambda th, sc=scale: tuple(v / sc for v in cost_of(th)),
                init,
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": int(self.max_iter), "ftol": 1e-13, "gtol": 1e-9},
            )
            cost_new = float(res.fun) * scale
            if not cost_new < cost_old:  # the previous solution is a local minimum for this degree
                break
            theta = res.x
            history.append((p, cost_new))
            err = abs(cost_old - cost_new)
            cost_old = cost_new
            if err <= self.tol * abs(cost_new):
                break
        self.coef_ = theta
        self.degree_ = int(theta.size - 1)
        self.history_ = history
        self._sigma_train = np.maximum(np.abs(np.polynomial.chebyshev.chebvander(t, theta.size - 1) @ theta), floor)

    # one-hidden-layer network for log σ -----------------------------------------------------
    def _fit_mlp(self, eps: np.ndarray, X: np.ndarray, s0: float) -> None:
        self.center_ = X.mean(axis=0)
        sd = X.std(axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        Xs = (X - self.center_) / self.scale_
        n, d = Xs.shape
        h = int(self.n_hidden)
        beta = self.beta_
        norm = accrue_objective(eps, np.full(n, s0), beta)[0]
        norm = abs(norm) if norm != 0 else 1.0

        def fun(w: np.ndarray) -> tuple[float, np.ndarray]:
            """Normalised, penalised cost and its backpropagated gradient (:func:`mlp_sigma_cost`)."""
            return mlp_sigma_cost(w, Xs, eps, beta, h, float(self.alpha), norm)

        rng = np.random.default_rng(self.random_state)
        best = None
        for _ in range(max(1, int(self.n_restarts))):
            w0 = np.concatenate(
                [
                    rng.normal(0.0, 1.0 / np.sqrt(d), size=h * d),
                    rng.normal(0.0, 0.5, size=h),
                    rng.normal(0.0, 0.01, size=h),
                    [np.log(s0)],
                ]
            )
            res = optimize.minimize(fun, w0, jac=True, method="L-BFGS-B", options={"maxiter": int(self.max_iter)})
            if best is None or res.fun < best.fun:
                best = res
        self.params_ = _unpack_mlp(best.x, d, h)
        self.n_iter_ = int(best.nit)
        self._sigma_train = np.exp(_mlp_forward(self.params_, Xs)[0])

    # -- prediction --------------------------------------------------------------------------
    def predict_sigma(self, features: Any) -> np.ndarray:
        """σ(x) for the rows of ``features`` (ACCRUE, Camporeale & Carè): |p(t)| with p the fitted Chebyshev
        polynomial (``model="polynomial"``) or exp(vᵀtanh(W x̃ + c) + b) (``model="mlp"``)."""
        self._check_fitted("beta_")
        if self.model == "polynomial":
            t = self._t(self._column(features))
            floor = 1e-9 * abs(float(self.coef_[0])) if self.coef_[0] != 0 else 1e-300
            return np.maximum(np.abs(np.polynomial.chebyshev.chebvander(t, self.coef_.size - 1) @ self.coef_), floor)
        Xa = _features(features, required=True, who="ACCRUE")
        Xs = (Xa - self.center_) / self.scale_
        return np.exp(_mlp_forward(self.params_, Xs)[0])

    def transform(self, dist, *, features=None) -> Gaussian:
        """Gaussian(μ, σ(x)) with σ(x) from :meth:`predict_sigma` (Camporeale & Carè, ACCRUE)."""
        self._check_fitted("beta_")
        d = as_distribution(dist)
        if features is None:
            raise ValueError("ACCRUE needs the feature matrix (features=..., the x* columns)")
        return Gaussian(np.asarray(d.mean(), dtype=float), self.predict_sigma(features))
