"""Shape maps: regression recalibrators that change the shape of the predictive distribution, not only its spread.

* :class:`IsotonicRecalibration` — G = R∘F, R the isotonic fit of (u_i, rank/n) (Kuleshov et al. 2018; side effects
  from Utpala & Rai, QR §3);
* :class:`CRUDE` — μ + σ·Ẑ, Ẑ the empirical calibration z-scores (Zelikman et al., Algorithm 1);
* :class:`SplitConformal` — μ ± σ·q on the |z| score, or signed z bounds (Papadopoulos 2008; Linusson et al. 2014;
  CRUDE §3.3), with :func:`conformal_bounds` the finite-sample ranks.

Notation: μ and σ are ``dist.mean()`` and ``dist.std()``, z = (y − μ)/σ, u = F(y) the PIT.
"""

from __future__ import annotations

import numpy as np
from scipy import special
from sklearn.isotonic import IsotonicRegression

from ..base.regression import norm_pdf
from ..base.regression_recalibrated import IsotonicRecalibrated, ShapeScale, normalise_mapping
from ..metrics import regression as rm
from .regression_base import RegressionCalibrator, as_distribution, check_targets, mean_and_std

__all__ = ["IsotonicRecalibration", "CRUDE", "SplitConformal", "conformal_bounds"]


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
    random_state : int, default 0
        Seed of that randomisation.

    Attributes
    ----------
    isotonic_ : sklearn.isotonic.IsotonicRegression
        The isotonic fit of the targets on the PIT values.
    mapping_x_, mapping_y_ : ndarray
        Knots (a_k, b_k) of R, including (0, 0) and (1, 1).
    truncation_u_ : float
        Smallest u with R(u) = 1 (1.0 when there is no truncation).
    spike_ratio_ : float
        max_k of the slopes of R = max g/f, the largest density spike (QR eq. 10).
    delta_ : float
        QR claim 3's δ for a Gaussian base (recalibrated mean μ − δσ).
    n_calibration_ : int
        m, the number of calibration rows.

    References
    ----------
    .. [1] V. Kuleshov, N. Fenner and S. Ermon, "Accurate uncertainties for deep learning using calibrated
           regression", Proc. 35th International Conference on Machine Learning (ICML), PMLR 80, 2796–2804, 2018.
    .. [2] S. Utpala and P. Rai, "Quantile regularization: towards implicit calibration of regression models",
           arXiv:2002.12860, 2020.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> rng = np.random.default_rng(0)
    >>> mu, sigma = rng.normal(size=200), rng.uniform(0.5, 1.5, 200)
    >>> y = mu + 2 * sigma * rng.standard_normal(200)  # the errors are twice the predicted σ
    >>> cal = cc.IsotonicRecalibration().fit(cc.Gaussian(mu, sigma), y)
    >>> cal.recalibration_map(np.array([0.05, 0.5, 0.95])).round(3)  # R pulls the PIT towards the centre
    array([0.186, 0.499, 0.782])
    >>> bool(cal.truncation_u_ < 1)  # without the end point the support is truncated (QR B.2)
    True
    """

    def __init__(self, *, add_endpoint: bool = False, randomize_pit: bool | None = None, random_state: int = 0):
        self.add_endpoint = add_endpoint
        self.randomize_pit = randomize_pit
        self.random_state = random_state

    def fit(self, dist, y, *, features=None) -> IsotonicRecalibration:
        """Isotonic fit of (u_i, #{u_j ≤ u_i}/m) (or /(m + 1) with the (1, 1) end point), u = F(y)
        (Kuleshov et al. 2018; the end point from Utpala & Rai, QR §3)."""
        d = as_distribution(dist)
        y = check_targets(y, len(d))
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


class CRUDE(RegressionCalibrator):
    """CRUDE (Zelikman et al., Algorithm 1): the empirical distribution of calibration z-scores.

    Ẑ = sorted {(y − μ)/σ} on the calibration rows; the recalibrated distribution of a row is
    μ + σ·Ẑ (:class:`~calib_core.base.regression_recalibrated.ShapeScale`): quantile
    q_p = μ + σ·Ẑ[int(p·L)] (index clipped to L − 1), mean μ + σ·mean(Ẑ), variance σ²·var(Ẑ).

    Attributes
    ----------
    z_sorted_ : ndarray of shape (L,)
        Ẑ, the sorted calibration z-scores.
    n_calibration_ : int
        L, the number of calibration rows.

    References
    ----------
    .. [1] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> rng = np.random.default_rng(0)
    >>> mu, sigma = rng.normal(size=200), rng.uniform(0.5, 1.5, 200)
    >>> y = mu + 2 * sigma * rng.standard_normal(200)  # the errors are twice the predicted σ
    >>> cal = cc.CRUDE().fit(cc.Gaussian(mu, sigma), y)
    >>> lo, hi = cal.interval(cc.Gaussian(mu, sigma), 0.9)
    >>> hi[:3].round(3)
    array([2.342, 3.304, 4.155])
    """

    def fit(self, dist, y, *, features=None) -> CRUDE:
        """Ẑ = sorted (y − μ)/σ on the calibration rows (CRUDE Algorithm 1)."""
        d = as_distribution(dist)
        y = check_targets(y, len(d))
        mu, sigma = mean_and_std(d)
        self.z_sorted_ = np.sort((y - mu) / sigma)
        self.n_calibration_ = int(y.size)
        return self

    def transform(self, dist, *, features=None) -> ShapeScale:
        """ShapeScale(μ, σ, Ẑ): quantiles μ + σ·Ẑ[int(p·L)] (CRUDE Algorithm 1)."""
        self._check_fitted("z_sorted_")
        mu, sigma = mean_and_std(as_distribution(dist))
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

    Parameters
    ----------
    signed : bool, default False
        Signed scores z (asymmetric intervals) instead of |z|.

    Attributes
    ----------
    scores_ : ndarray of shape (L,)
        The sorted scores.
    z_sorted_ : ndarray
        Ẑ, the shape used by :meth:`transform` (L values signed, 2L symmetrised).
    n_calibration_ : int
        L, the number of calibration rows.

    References
    ----------
    .. [1] H. Papadopoulos, "Inductive conformal prediction: theory and application to neural networks", in
           *Tools in Artificial Intelligence*, P. Fritzsche (ed.), InTech, 315–330, 2008.
    .. [2] H. Linusson, U. Johansson and T. Löfström, "Signed-error conformal regression", Advances in Knowledge
           Discovery and Data Mining (PAKDD 2014), LNCS 8443, Springer, 224–236, 2014.
    .. [3] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020.
    .. [4] V. Vovk, A. Gammerman and G. Shafer, *Algorithmic Learning in a Random World*, Springer, 2005.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> rng = np.random.default_rng(0)
    >>> mu, sigma = rng.normal(size=200), rng.uniform(0.5, 1.5, 200)
    >>> y = mu + 2 * sigma * rng.standard_normal(200)  # the errors are twice the predicted σ
    >>> cal = cc.SplitConformal().fit(cc.Gaussian(mu, sigma), y)
    >>> np.round(cal.score_quantiles(0.9), 3)  # μ ± 3.154σ covers at least 90%
    array([-3.154,  3.154])
    """

    def __init__(self, *, signed: bool = False):
        self.signed = signed

    def fit(self, dist, y, *, features=None) -> SplitConformal:
        """Sorted scores z (signed; Linusson et al. 2014) or |z| (symmetric; Papadopoulos 2008) of the
        calibration rows."""
        d = as_distribution(dist)
        y = check_targets(y, len(d))
        mu, sigma = mean_and_std(d)
        self.scores_, self.z_sorted_ = conformal_scores((y - mu) / sigma, self.signed)
        self.n_calibration_ = int(y.size)
        return self

    def transform(self, dist, *, features=None) -> ShapeScale:
        """ShapeScale(μ, σ, Ẑ), Ẑ the sorted z (signed) or the symmetrised ±|z| (split conformal; class docstring)."""
        self._check_fitted("scores_")
        mu, sigma = mean_and_std(as_distribution(dist))
        return ShapeScale(mu, sigma, self.z_sorted_, assume_sorted=True)

    def score_quantiles(self, coverage: float) -> tuple[float, float]:
        """(lower, upper) standardised bounds of the conformal interval of coverage c (:func:`conformal_bounds`)."""
        self._check_fitted("scores_")
        return conformal_bounds(self.scores_, coverage, signed=self.signed)

    def interval(self, dist, coverage: float) -> tuple[np.ndarray, np.ndarray]:
        """Conformal interval [μ + σ·lower, μ + σ·upper] with the (L + 1) finite-sample ranks."""
        self._check_fitted("scores_")
        mu, sigma = mean_and_std(as_distribution(dist))
        lo, hi = self.score_quantiles(coverage)
        with np.errstate(invalid="ignore"):
            return mu + sigma * lo, mu + sigma * hi


def conformal_scores(z: np.ndarray, signed: bool) -> tuple[np.ndarray, np.ndarray]:
    """(sorted scores, the shape Ẑ of the predictive distribution): z and z (signed), or |z| and ±|z| symmetrised
    (split conformal: Papadopoulos 2008; signed: Linusson et al. 2014)."""
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

    Parameters
    ----------
    scores : ndarray of shape (L,)
        The sorted calibration scores: |z| (symmetric) or z (signed).
    coverage : float
        c, in (0, 1).
    signed : bool, default False
        The scores are signed z.

    Returns
    -------
    lower, upper : float
        The standardised bounds (−inf / +inf when a rank leaves 1..L).

    References
    ----------
    .. [1] H. Papadopoulos, "Inductive conformal prediction: theory and application to neural networks", in
           *Tools in Artificial Intelligence*, P. Fritzsche (ed.), InTech, 315–330, 2008.
    .. [2] H. Linusson, U. Johansson and T. Löfström, "Signed-error conformal regression", Advances in Knowledge
           Discovery and Data Mining (PAKDD 2014), LNCS 8443, Springer, 224–236, 2014.
    .. [3] V. Vovk, A. Gammerman and G. Shafer, *Algorithmic Learning in a Random World*, Springer, 2005.

    Examples
    --------
    >>> conformal_bounds(np.array([0.1, 0.5, 1.0, 1.5, 2.0, 3.0]), 0.8)  # the ⌈7·0.8⌉ = 6th smallest |z|
    (-3.0, 3.0)
    """
    L = scores.size
    alpha = 1.0 - float(coverage)
    if signed:
        lo = _order_stat(scores, int(np.floor((L + 1) * alpha / 2.0 + 1e-9)))
        hi = _order_stat(scores, int(np.ceil((L + 1) * (1.0 - alpha / 2.0) - 1e-9)))
        return lo, hi
    q = _order_stat(scores, int(np.ceil((L + 1) * (1.0 - alpha) - 1e-9)))
    return -q, q
