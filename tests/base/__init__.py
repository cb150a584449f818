"""Tests of ``calib_core/base/``, file for file."""
