"""Regression, layer by layer: the regression file of every layer folder under one name.

``calib_core`` is built in layers (``base`` → ``data`` → ``metrics`` → ``diagrams`` → ``calibrators`` →
``inference`` → ``diagnosis`` → ``evaluation`` → ``slices`` → ``scale``), and each layer folder holds a
``regression.py`` that mirrors its ``classification.py``.  This module gathers the regression files so that a
reader can reach them by task (Kuleshov et al. 2018; Levi et al. 2019; Camporeale & Carè 2021)::

    from calib_core import regression as reg
    reg.metrics.ence, reg.metrics.RegressionRows            # calib_core.metrics.regression
    reg.diagrams.calibration_curve_table                     # calib_core.diagrams.regression
    reg.calibrators.StdScaling                               # calib_core.calibrators.regression
    reg.diagnose_regression, reg.parse_regression_frame      # what cc.diagnose / cc.load_predictions call

Examples
--------
>>> from calib_core import regression as reg
>>> reg.metrics.__name__
'calib_core.metrics.regression'
"""

from .base import regression as distributions
from .base import regression_recalibrated as recalibrated
from .calibrators import regression as calibrators
from .calibrators.regression import (
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
from .data import regression as reading
from .data import toy
from .data.regression import parse_regression_frame
from .diagnosis import regression as diagnose
from .diagnosis.regression import diagnose_regression
from .diagrams import regression as diagrams
from .evaluation import regression as evaluate
from .evaluation.regression import evaluate_regression
from .inference import regression as inference
from .metrics import regression as metrics
from .metrics import regression_decomposition as decomposition
from .metrics import regression_tails as heavy_tails
from .scale import regression as summary
from .slices import regression as slices

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
    "decomposition",
    "diagnose",
    "diagnose_regression",
    "diagrams",
    "distributions",
    "evaluate",
    "evaluate_regression",
    "heavy_tails",
    "inference",
    "metrics",
    "parse_regression_frame",
    "reading",
    "recalibrated",
    "slices",
    "summary",
    "toy",
]
