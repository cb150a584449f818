"""Classification half of ``calib_core`` (SPEC §5–§7; Guo et al. 2017 and beyond).

The mirror of :mod:`calib_core.regression`, module for module::

    from calib_core.classification import metrics as cm        # cm.ece, cm.mce, cm.nll, cm.brier, cm.accuracy,
                                                               # cm.classwise_ece, …
    from calib_core.classification import diagrams as cd       # cd.reliability_table, cd.per_class_reliability
    from calib_core.classification import calibrators as ccal  # TemperatureScaling, VectorScaling, MatrixScaling,
                                                               # PlattScaling, HistogramBinning, IsotonicCalibration,
                                                               # BBQ
    from calib_core.classification.reading import parse_classification_frame   # used by cc.load_predictions
    from calib_core.classification.diagnose import diagnose_classification     # used by cc.diagnose
    from calib_core.classification.evaluate import evaluate_classification     # used by cc.evaluate
    from calib_core.classification import corp                 # CORP reliability, MCB − DSC + UNC, Murphy
"""

from . import calibrators, corp, diagnose, diagrams, metrics, reading
from .calibrators import (
    BBQ,
    HistogramBinning,
    IsotonicCalibration,
    MatrixScaling,
    PlattScaling,
    TemperatureScaling,
    VectorScaling,
)
from .diagnose import diagnose_classification
from .reading import parse_classification_frame

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
    "metrics",
    "parse_classification_frame",
    "reading",
]
