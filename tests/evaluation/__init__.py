"""Tests of ``calib_core/evaluation/``, file for file."""
