"""Tests of ``calib_core/data/``, file for file."""
