"""Where calibration fails: candidate slices and their sufficient statistics (``candidates.py``), slice statistics per
task, calibration over time windows (``time.py``).
"""
