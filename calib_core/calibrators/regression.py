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

The classes live in topic modules and are all importable from here: ``regression_base`` (the base class and its
input checks), ``regression_sigma`` (σ maps), ``regression_quantile`` (shape maps: isotonic, CRUDE, split
conformal), ``regression_slicewise`` (one fit per slice) and ``regression_accrue`` (ACCRUE and its cost).

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

from .regression_accrue import (
    ACCRUE,
    CRPS_MIN_FACTOR,
    accrue_beta,
    accrue_objective,
    crps_min,
    mlp_sigma_cost,
    polynomial_sigma_cost,
    rs_min,
)
from .regression_base import RegressionCalibrator, as_distribution
from .regression_quantile import CRUDE, IsotonicRecalibration, SplitConformal, conformal_bounds
from .regression_sigma import ConstantSigma, GaussianShiftScale, KMeansSigma, SigmaBinning, SigmaIsotonic, StdScaling
from .regression_slicewise import GroupStdScaling, MondrianConformal, SliceWiseCalibrator

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
    "CRPS_MIN_FACTOR",
]
