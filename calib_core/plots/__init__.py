"""Plotly figure builders (no Streamlit): they take diagram tables and return ``go.Figure``."""

from ..diagnosis.tables import metric_display_table, metric_label, p_value_cell
from ..evaluation.tables import comparison_table
from .background import with_background
from .classification import (
    confidence_histogram_figure,
    per_class_reliability_figure,
    per_class_summary,
    reliability_figure,
    wilson_interval,
    worst_classes,
)
from .comparison import comparison_figures
from .corp import quantile_reliability_figure, quantile_reliability_figure_dict
from .heavy_tails import ence_bins_figure
from .pit_ecdf import pit_ecdf_difference_figure
from .regression import (
    PALETTE,
    TEMPLATE,
    calibration_curve_figure,
    figure_token,
    intervals_figure,
    mark_selected,
    model_colors,
    pit_histogram_figure,
    qq_figure,
    rank_histogram_figure,
    z_histogram_figure,
)
from .regression_levi import levi_figure
from .slices import funnel_figure
from .smooth import smooth_reliability_figure

__all__ = [
    "PALETTE",
    "TEMPLATE",
    "calibration_curve_figure",
    "comparison_figures",
    "comparison_table",
    "confidence_histogram_figure",
    "ence_bins_figure",
    "funnel_figure",
    "figure_token",
    "intervals_figure",
    "levi_figure",
    "mark_selected",
    "metric_display_table",
    "p_value_cell",
    "metric_label",
    "model_colors",
    "per_class_reliability_figure",
    "pit_ecdf_difference_figure",
    "per_class_summary",
    "worst_classes",
    "pit_histogram_figure",
    "rank_histogram_figure",
    "qq_figure",
    "quantile_reliability_figure",
    "quantile_reliability_figure_dict",
    "reliability_figure",
    "smooth_reliability_figure",
    "wilson_interval",
    "with_background",
    "z_histogram_figure",
]
