"""Tests of ``calib_core/metrics/``, file for file."""
