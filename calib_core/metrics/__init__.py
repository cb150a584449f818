"""Point metrics of calibration and proper scores, computed on arrays: ``regression.py`` (PIT, coverage, ENCE, NLL,
CRPS, …) mirrors ``classification.py`` (ECE, MCE, Brier, NLL, …); topics that would swell them live in
``<task>_<topic>.py``.
"""
