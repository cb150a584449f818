"""Tests of ``calib_core/slices/``, file for file."""
