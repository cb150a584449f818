"""Tests of ``calib_core/labs/``, file for file."""
