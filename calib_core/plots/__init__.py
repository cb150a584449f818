"""Plotly figure builders (no Streamlit): they take diagram tables and return ``go.Figure``."""

from .regression import (
    PALETTE,
    TEMPLATE,
    calibration_curve_figure,
    intervals_figure,
    levi_figure,
    model_colors,
    pit_histogram_figure,
    qq_figure,
    z_histogram_figure,
)
from .tables import METRIC_LABELS, metric_display_table, metric_label

__all__ = [
    "METRIC_LABELS",
    "PALETTE",
    "TEMPLATE",
    "calibration_curve_figure",
    "intervals_figure",
    "levi_figure",
    "metric_display_table",
    "metric_label",
    "model_colors",
    "pit_histogram_figure",
    "qq_figure",
    "z_histogram_figure",
]
