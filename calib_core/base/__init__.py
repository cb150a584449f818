"""Foundations every layer stands on: the predictive distributions of regression (``regression.py``) and the
probability vectors of classification (``classification.py``), the PredictionSet and its structured InputError, the
Report and EvaluationResult containers, binning, the weighted bootstrap, significance (p-values, Holm /
Benjamini–Hochberg), ECDF bands, slice-wise bookkeeping and exact mergeable sums.
"""
