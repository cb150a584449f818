"""Tests of ``calib_core/inference/``, file for file."""
