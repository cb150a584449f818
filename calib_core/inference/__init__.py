"""Intervals, perfect-calibration references, tests and verdicts for the metrics of each task (weighted bootstrap,
exact and Monte-Carlo nulls, multiplicity control).
"""
