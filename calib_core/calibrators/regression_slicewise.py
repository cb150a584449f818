"""Slice-wise (group-conditional) regression recalibrators: one fit per slice of a group or feature column.

:class:`GroupStdScaling` (STD scaling per slice) and :class:`MondrianConformal` (Mondrian split conformal, Vovk et
al. 2003): one fit per slice g on the calibration rows of g, the global fit for a slice unseen at fit time or with
fewer than ``min_rows`` calibration rows.  They take the slice of every row as ``groups=`` in ``fit``/``transform``
(``uses_groups = True``; ``by`` names the column ``cc.evaluate`` reads it from: ``"group"`` or a feature column,
:func:`calib_core.base.groupwise.slice_labels`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base.groupwise import GROUP, SliceFit, as_labels
from ..base.regression import Gaussian, PredictiveDistribution
from ..base.regression_recalibrated import ShapeScale, SlicedDistribution
from .regression_base import RegressionCalibrator, as_distribution, check_targets, mean_and_std
from .regression_quantile import conformal_bounds, conformal_scores

__all__ = ["SliceWiseCalibrator", "GroupStdScaling", "MondrianConformal"]


class SliceWiseCalibrator(RegressionCalibrator):
    """Base class of the slice-wise calibrators: ``fit(dist, y, *, features=None, groups=...)`` and
    ``transform(dist, *, features=None, groups=...)`` with ``groups`` the slice label of every row.

    The slices form a Mondrian taxonomy (Vovk et al. 2005): the category of a row is known before its target, and
    each category is calibrated on its own calibration rows.  :meth:`note` counts the rows of a transform that use
    the global fit.

    Parameters
    ----------
    by : str
        The column the slices come from when ``cc.evaluate`` supplies ``groups`` (``"group"`` or a feature column,
        :func:`calib_core.base.groupwise.slice_labels`).
    min_rows : int
        A slice with fewer calibration rows, or one unseen at fit time, uses the global fit (fitted on every
        calibration row).

    Attributes
    ----------
    uses_groups : bool
        True: ``fit`` and ``transform`` take ``groups=`` (class attribute).
    slices_ : calib_core.base.groupwise.SliceFit
        The slices, their calibration rows, which are fitted on their own.
    n_calibration_ : int
        Number of calibration rows.

    References
    ----------
    .. [1] V. Vovk, A. Gammerman and G. Shafer, *Algorithmic Learning in a Random World*, Springer, 2005, §4.5.
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

    ``transform`` returns ``Gaussian(μ, s_g·σ)``.

    Parameters
    ----------
    by : str, default "group"
        The slice column ``cc.evaluate`` reads ``groups`` from.
    min_rows : int, default 30
        Fewest calibration rows of a slice fitted on its own.

    Attributes
    ----------
    scale_ : ndarray of shape (n_slices,)
        s_g per slice of ``slices_.levels`` (the global s where a slice is not fitted on its own).
    global_scale_ : float
        The global s.
    slices_ : calib_core.base.groupwise.SliceFit
        The slices seen at fit time.
    n_calibration_ : int
        Number of calibration rows.

    References
    ----------
    .. [1] D. Levi, L. Gispan, N. Giladi and E. Fetaya, "Evaluating and calibrating uncertainty prediction in
           regression tasks", arXiv:1905.11659, 2019.
    .. [2] V. Kuleshov, N. Fenner and S. Ermon, "Accurate uncertainties for deep learning using calibrated
           regression", Proc. 35th ICML, PMLR 80, 2796–2804, 2018.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> from calib_core.calibrators.regression import GroupStdScaling
    >>> rng = np.random.default_rng(0)
    >>> mu, sigma = rng.normal(size=200), rng.uniform(0.5, 1.5, 200)
    >>> g = np.where(np.arange(200) < 100, "a", "b")
    >>> y = mu + np.where(g == "a", 1.0, 3.0) * sigma * rng.standard_normal(200)  # slice b: σ three times too small
    >>> cal = GroupStdScaling().fit(cc.Gaussian(mu, sigma), y, groups=g)
    >>> cal.scale_.round(3), round(cal.global_scale_, 3)
    (array([1.075, 2.726]), 2.072)
    """

    def __init__(self, *, by: str = GROUP, min_rows: int = 30):
        self.by = by
        self.min_rows = min_rows

    def fit(self, dist, y, *, features=None, groups=None) -> GroupStdScaling:
        """s_g = sqrt(mean_{i∈g} z_i²) per slice (one ``bincount``), s = sqrt(mean z²) globally (Levi eq. 12)."""
        d = as_distribution(dist)
        y = check_targets(y, len(d))
        codes = self._fit_slices(len(d), groups)
        mu, sigma = mean_and_std(d)
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
        mu, sigma = mean_and_std(as_distribution(dist))
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

    Parameters
    ----------
    by : str, default "group"
        The slice column ``cc.evaluate`` reads ``groups`` from.
    min_rows : int, default 30
        Fewest calibration rows of a slice fitted on its own.
    signed : bool, default False
        Signed scores z instead of |z|.

    Attributes
    ----------
    scores_ : list of ndarray
        Sorted scores per slice of ``slices_.levels`` (the pooled scores where a slice is not fitted on its own).
    global_scores_ : ndarray
        The pooled sorted scores.
    slices_ : calib_core.base.groupwise.SliceFit
        The slices seen at fit time.
    n_calibration_ : int
        Number of calibration rows.

    References
    ----------
    .. [1] V. Vovk, D. Lindsay, I. Nouretdinov and A. Gammerman, "Mondrian confidence machine", Technical
           Report, Royal Holloway, University of London, 2003.
    .. [2] V. Vovk, A. Gammerman and G. Shafer, *Algorithmic Learning in a Random World*, Springer, 2005, §4.5.

    Examples
    --------
    >>> import numpy as np
    >>> import calib_core as cc
    >>> from calib_core.calibrators.regression import MondrianConformal
    >>> rng = np.random.default_rng(0)
    >>> mu, sigma = rng.normal(size=200), rng.uniform(0.5, 1.5, 200)
    >>> g = np.where(np.arange(200) < 100, "a", "b")
    >>> y = mu + np.where(g == "a", 1.0, 3.0) * sigma * rng.standard_normal(200)  # slice b: σ three times too small
    >>> cal = MondrianConformal().fit(cc.Gaussian(mu, sigma), y, groups=g)
    >>> lo, hi = cal.interval(cc.Gaussian(mu, sigma), 0.9, groups=g)
    >>> ((hi - mu) / sigma)[[0, 150]].round(3)  # q_g of slice a, of slice b
    array([1.594, 4.732])
    """

    def __init__(self, *, by: str = GROUP, min_rows: int = 30, signed: bool = False):
        self.by = by
        self.min_rows = min_rows
        self.signed = signed

    def fit(self, dist, y, *, features=None, groups=None) -> MondrianConformal:
        """Sorted scores |z| (or z) of the calibration rows of every slice, and pooled (Vovk et al. 2003)."""
        d = as_distribution(dist)
        y = check_targets(y, len(d))
        codes = self._fit_slices(len(d), groups)
        mu, sigma = mean_and_std(d)
        z = (y - mu) / sigma
        self.global_scores_, self.global_shape_ = conformal_scores(z, self.signed)
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
        mu, sigma = mean_and_std(as_distribution(dist))
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
        mu, sigma = mean_and_std(as_distribution(dist))
        c = self._own_codes(mu.size, groups)
        b = np.array([conformal_bounds(s, coverage, signed=self.signed) for s in self.scores_] or np.empty((0, 2)))
        g_lo, g_hi = conformal_bounds(self.global_scores_, coverage, signed=self.signed)
        lo = np.where(c >= 0, b[np.maximum(c, 0), 0] if b.size else g_lo, g_lo)
        hi = np.where(c >= 0, b[np.maximum(c, 0), 1] if b.size else g_hi, g_hi)
        with np.errstate(invalid="ignore"):
            return mu + sigma * lo, mu + sigma * hi
