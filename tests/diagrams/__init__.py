"""Tests of ``calib_core/diagrams/``, file for file."""
