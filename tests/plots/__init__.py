"""Tests of ``calib_core/plots/``, file for file."""
