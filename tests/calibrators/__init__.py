"""Tests of ``calib_core/calibrators/``, file for file."""
