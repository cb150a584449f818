"""Regression half of ``calib_core`` (SPEC §1–§4; Kuleshov et al. 2018, Levi et al. 2019 and beyond).

The mirror of :mod:`calib_core.classification`, module for module::

    from calib_core.regression import metrics as rm        # rm.RegressionRows, rm.pit, rm.nll, rm.crps, rm.ence, …
    from calib_core.regression import diagrams as rd       # rd.calibration_curve_table, rd.levi_bins_table, …
    from calib_core.regression import calibrators as rcal  # StdScaling, IsotonicRecalibration, CRUDE, ACCRUE, …
    from calib_core.regression.reading import parse_regression_frame   # used by cc.load_predictions
    from calib_core.regression.diagnose import diagnose_regression     # used by cc.diagnose
    from calib_core.regression.evaluate import evaluate_regression     # used by cc.evaluate
"""

from . import calibrators, diagnose, diagrams, metrics, reading
from .calibrators import (
    ACCRUE,
    CRUDE,
    ConstantSigma,
    GaussianShiftScale,
    IsotonicRecalibration,
    KMeansSigma,
    SigmaBinning,
    SigmaIsotonic,
    SplitConformal,
    StdScaling,
)
from .diagnose import diagnose_regression
from .reading import parse_regression_frame

__all__ = [
    "ACCRUE",
    "CRUDE",
    "ConstantSigma",
    "GaussianShiftScale",
    "IsotonicRecalibration",
    "KMeansSigma",
    "SigmaBinning",
    "SigmaIsotonic",
    "SplitConformal",
    "StdScaling",
    "calibrators",
    "diagnose",
    "diagnose_regression",
    "diagrams",
    "metrics",
    "parse_regression_frame",
    "reading",
]
