"""Calibration Lab core: diagnose and fix the calibration of predictive uncertainty.

Public API (SPEC §8)::

    import calib_core as cc
    cc.load_predictions(path_or_buffer, task=None, columns=None)   # -> PredictionSet
    cc.Gaussian, cc.QuantileSet, cc.SampleSet                     # predictive distributions
    cc.diagnose(prediction_set, **options)                        # -> Report

The package never imports Streamlit; the dashboard in ``pages/`` calls into it.
"""

__version__ = "0.1.0"  # before the imports: modules may read it while the package initialises

from .api import diagnose, evaluate, load_predictions
from .distributions import Gaussian, PredictiveDistribution, QuantileSet, SampleSet
from .predictions import DropReport, InputError, PredictionSet
from .protocol import EvaluationResult
from .regression.recalibrated import IsotonicRecalibrated, ShapeScale
from .report import ALL, Report

__all__ = [
    "ALL",
    "diagnose",
    "DropReport",
    "evaluate",
    "EvaluationResult",
    "Gaussian",
    "InputError",
    "IsotonicRecalibrated",
    "load_predictions",
    "PredictionSet",
    "PredictiveDistribution",
    "QuantileSet",
    "Report",
    "SampleSet",
    "ShapeScale",
]
