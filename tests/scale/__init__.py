"""Tests of ``calib_core/scale/``, file for file."""
