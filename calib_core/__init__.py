"""Calibration Lab core: diagnose and fix the calibration of predictive uncertainty.

Public API::

    import calib_core as cc
    ps = cc.load_predictions(path_or_buffer, task=None, columns=None)   # -> PredictionSet (either task)
    report = cc.diagnose(ps, **options)                                # -> Report (metrics + diagram tables)
    result = cc.evaluate(ps, {"T": cc.TemperatureScaling()}, split=None, repeats=1, seed=0)  # -> EvaluationResult
    cc.plots.reliability_figure(report.diagrams[("model", cc.ALL)]["reliability"])          # plotly figures

    cc.Gaussian, cc.QuantileSet, cc.SampleSet                         # predictive distributions
    cc.StdScaling, cc.IsotonicRecalibration, …                        # regression calibrators
    cc.TemperatureScaling, cc.PlattScaling, …                         # classification calibrators
    cc.regression, cc.classification                                  # the two halves (metrics, diagrams, …)

The three entry points dispatch on the task (:mod:`calib_core.api`).  The package never imports Streamlit; the
dashboard in ``pages/`` calls into it.
"""

__version__ = "0.1.0"  # before the imports: modules may read it while the package initialises

from . import classification, plots, regression
from .api import diagnose, evaluate, load_predictions, slice_comparison
from .base.classification import log_softmax, softmax
from .base.predictions import DropReport, InputError, PredictionSet
from .base.protocol import EvaluationResult
from .base.regression import Gaussian, PredictiveDistribution, QuantileSet, SampleSet
from .base.regression_recalibrated import IsotonicRecalibrated, ShapeScale
from .base.report import ALL, Report
from .calibrators.classification import (
    BBQ,
    HistogramBinning,
    IsotonicCalibration,
    MatrixScaling,
    PlattScaling,
    TemperatureScaling,
    VectorScaling,
)
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

__all__ = [
    # entry points
    "load_predictions",
    "diagnose",
    "evaluate",
    "slice_comparison",
    # data and results
    "ALL",
    "DropReport",
    "EvaluationResult",
    "InputError",
    "PredictionSet",
    "Report",
    # predictive distributions
    "Gaussian",
    "IsotonicRecalibrated",
    "PredictiveDistribution",
    "QuantileSet",
    "SampleSet",
    "ShapeScale",
    # regression calibrators
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
    # classification calibrators
    "BBQ",
    "HistogramBinning",
    "IsotonicCalibration",
    "MatrixScaling",
    "PlattScaling",
    "TemperatureScaling",
    "VectorScaling",
    # numerics, figures and the two halves
    "log_softmax",
    "softmax",
    "plots",
    "classification",
    "regression",
]
