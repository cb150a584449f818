"""Tests of ``calib_core/diagnosis/``, file for file."""
