"""Calibration Lab core: diagnose and fix the calibration of predictive uncertainty, for regression and
classification.

The public API (``cc.__all__``)::

    import calib_core as cc
    ps = cc.load_predictions(path_or_buffer, task=None, columns=None)   # -> PredictionSet (either task)
    report = cc.diagnose(ps, **options)                                # -> Report (metrics + diagram tables)
    result = cc.evaluate(ps, {"T": cc.TemperatureScaling()}, split=None, repeats=1, seed=0)  # -> EvaluationResult
    cc.slice_comparison(ps, result, by="group")    # per-slice metrics before / after (evaluate with diagrams=True)
    cc.plots.reliability_figure(report.diagrams[("model", cc.ALL)]["reliability"])          # plotly figures

* **Entry points** — :func:`load_predictions` reads a CSV / TSV / Parquet / npz / Excel file of predictions (format,
  encoding and columns recognised, every problem an :class:`InputError` naming the file, columns and rows, every
  dropped row counted); :func:`diagnose` measures calibration with intervals, tests and a headline verdict;
  :func:`evaluate` fits calibrators on calibration rows and scores them on held-out rows.  Each dispatches on
  the task (:mod:`calib_core.api`).
* **Data and results** — :class:`PredictionSet`, :class:`DropReport`, :class:`InputError`, :class:`Report`
  (``ALL`` names the all-rows group), :class:`EvaluationResult`.
* **Predictive distributions** — :class:`Gaussian`, :class:`QuantileSet`, :class:`SampleSet` (and the
  :class:`PredictiveDistribution` they share), :class:`ShapeScale`, :class:`IsotonicRecalibrated`.
* **Regression calibrators** — :class:`StdScaling`, :class:`IsotonicRecalibration`, :class:`GaussianShiftScale`,
  :class:`SigmaBinning`, :class:`SigmaIsotonic`, :class:`KMeansSigma`, :class:`ConstantSigma`, :class:`CRUDE`,
  :class:`ACCRUE`, :class:`SplitConformal`.
* **Classification calibrators** — :class:`TemperatureScaling`, :class:`VectorScaling`, :class:`MatrixScaling`,
  :class:`PlattScaling`, :class:`IsotonicCalibration`, :class:`HistogramBinning`, :class:`BBQ`.
* **Numerics, figures and the two halves** — :func:`softmax`, :func:`log_softmax`; ``cc.plots`` (Plotly figure
  builders); ``cc.regression`` and ``cc.classification``, the regression and classification files of every layer
  under one name (``cc.regression.metrics``, ``cc.classification.calibrators`` …).

Outside ``cc.__all__``: ``calib_core.export`` (self-contained HTML reports, CSV / Parquet downloads) and the
command line ``python -m calib_core`` / ``calibration-report`` (:mod:`calib_core.cli`).  The package is built in
layer folders (``base`` → ``data`` → ``metrics`` → ``diagrams`` → ``calibrators`` → ``inference`` → ``diagnosis`` →
``evaluation`` → ``slices`` → ``scale`` → ``plots`` → ``labs``) and never imports Streamlit; the dashboard in
``pages/`` calls into it.
"""

__version__ = "0.1.0"  # before the imports: modules may read it while the package initialises

from . import classification, plots, regression
from .api import ModelComparison, compare_models, diagnose, evaluate, load_predictions, slice_comparison
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
    "compare_models",
    # data and results
    "ALL",
    "DropReport",
    "EvaluationResult",
    "ModelComparison",
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
