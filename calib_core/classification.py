"""Classification, layer by layer: the classification file of every layer folder under one name.

The mirror of :mod:`calib_core.regression`: each layer folder of ``calib_core`` holds a ``classification.py``
beside its ``regression.py``, and this module gathers the classification files so that a reader can reach them
by task (Guo et al. 2017; Dimitriadis, Gneiting & Jordan 2021; Błasiok & Nakkiran 2023)::

    from calib_core import classification as clf
    clf.metrics.ece, clf.metrics.brier                      # calib_core.metrics.classification
    clf.diagrams.reliability_table                          # calib_core.diagrams.classification
    clf.calibrators.TemperatureScaling                      # calib_core.calibrators.classification
    clf.diagnose_classification, clf.parse_classification_frame

Examples
--------
>>> from calib_core import classification as clf
>>> clf.metrics.__name__
'calib_core.metrics.classification'
"""

from .base import classification as probabilities
from .calibrators import classification as calibrators
from .calibrators.classification import (
    BBQ,
    HistogramBinning,
    IsotonicCalibration,
    MatrixScaling,
    PlattScaling,
    TemperatureScaling,
    VectorScaling,
)
from .data import classification as reading
from .data.classification import parse_classification_frame
from .diagnosis import classification as diagnose
from .diagnosis.classification import diagnose_classification
from .diagrams import classification as diagrams
from .diagrams import classification_corp as corp
from .evaluation import classification as evaluate
from .evaluation.classification import evaluate_classification
from .inference import classification as inference
from .metrics import classification as metrics
from .metrics import classification_ratio as ratio
from .metrics import classification_smooth as smooth
from .scale import classification as summary
from .slices import classification as slices

__all__ = [
    "BBQ",
    "HistogramBinning",
    "IsotonicCalibration",
    "MatrixScaling",
    "PlattScaling",
    "TemperatureScaling",
    "VectorScaling",
    "calibrators",
    "corp",
    "diagnose",
    "diagnose_classification",
    "diagrams",
    "evaluate",
    "evaluate_classification",
    "inference",
    "metrics",
    "parse_classification_frame",
    "probabilities",
    "ratio",
    "reading",
    "slices",
    "smooth",
    "summary",
]
