"""Recalibration maps with the scikit-learn estimator contract (``fit`` / ``transform``): ``regression.py`` and
``classification.py``; ``registry.py`` says what every metric and calibrator is; ``training.py`` holds quantile-
regularised training.
"""
