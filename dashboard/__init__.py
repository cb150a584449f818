"""Streamlit plumbing of the Calibration Lab dashboard (``app.py`` and ``pages/``); ``calib_core`` never imports it.

* :mod:`dashboard.state` — the loaded-data contract in session state, built-in examples, uploads, widget defaults
  and the one widget-persistence mechanism (:func:`init_state` with ``persist=True``, :func:`persistent`,
  :func:`keep_widget_values` in ``app.py``);
* :mod:`dashboard.cache` — cached diagnoses, shared figures, cached lab runs;
* :mod:`dashboard.display` — Markdown escaping, charts, verdict sentences, metric / number tables, filter controls,
  export row;
* :mod:`dashboard.selection` — the one linked-selection mechanism (:class:`LinkedSelection`);
* :mod:`dashboard.slices` — the slice focus set on the Slice explorer that restricts the diagnosis pages
  (:func:`apply_slice_focus`);
* :mod:`dashboard.labs` — the one lab-page scaffold (:class:`LabPage`) and the lab index;
* :mod:`dashboard.frame` — the page icon and the guard that makes ``app.py``'s navigation frame every page, even a
  page address opened first on a fresh server (:func:`take_over_navigation`, run on the first import of this
  package, before anything else).

Pages use it as ``import dashboard as ui``.  Pure tables, decisions and texts are in ``views.pages``.
"""

from __future__ import annotations

from .frame import PAGE_ICON, take_over_navigation

take_over_navigation()  # first: a page run without app.py's navigation reruns here, before drawing anything

from .cache import cached, content_key, corp_cached, diagnose_cached, figure, result_cached, warm_up_core
from .display import (
    METRIC_COLUMN_CONFIG,
    SELECT_MODES,
    LazyFigures,
    chart,
    csv_safe,
    data_caption,
    dataframe,
    diagnose_rows,
    export_row,
    filter_controls,
    lazy_tabs,
    md_escape,
    number_table,
    show_decomposition_table,
    show_metric_groups,
    show_metric_table,
    show_verdicts,
    steady_ranges,
    table_height,
)
from .labs import LabPage, column_labels, is_registry_metric, lab_index, pit_of_selected_bins
from .selection import LinkedSelection
from .slices import (
    apply_slice_focus,
    clear_slice_focus,
    set_slice_focus,
    slice_background,
    slice_focus,
    slice_list_columns,
)
from .state import (
    DEFAULT_CLASSIFICATION_EXAMPLE,
    DEFAULT_REGRESSION_EXAMPLE,
    EXAMPLES,
    HUB_EXAMPLE,
    MAX_TABLE_ROWS,
    UPLOAD_TYPES,
    content_token,
    current_data,
    data_status,
    data_store,
    init_state,
    keep_data,
    keep_widget_values,
    load_example,
    loaded_data_link,
    parse_upload,
    persist,
    persistent,
    record_run_time,
    require_data,
    set_data,
    set_example,
    upload_columns,
    upload_limit_bytes,
    upload_limit_mb,
)
from .timeview import over_time

__all__ = [
    "over_time", "LazyFigures", "lazy_tabs",
    "DEFAULT_CLASSIFICATION_EXAMPLE", "DEFAULT_REGRESSION_EXAMPLE", "EXAMPLES", "HUB_EXAMPLE", "MAX_TABLE_ROWS",
    "METRIC_COLUMN_CONFIG", "PAGE_ICON", "SELECT_MODES", "UPLOAD_TYPES", "LabPage", "LinkedSelection", "cached",
    "chart", "column_labels", "content_key", "content_token", "csv_safe", "current_data", "data_caption", "data_status",
    "data_store", "dataframe", "corp_cached", "diagnose_cached", "diagnose_rows", "export_row", "figure",
    "filter_controls",
    "init_state", "is_registry_metric", "keep_data", "keep_widget_values", "lab_index", "load_example",
    "loaded_data_link", "md_escape", "number_table", "parse_upload", "persist", "persistent", "pit_of_selected_bins",
    "record_run_time", "require_data", "result_cached", "set_data", "set_example", "show_decomposition_table",
    "show_metric_groups", "show_metric_table", "steady_ranges",
    "show_verdicts", "table_height", "upload_columns", "upload_limit_bytes", "upload_limit_mb", "warm_up_core",
    "apply_slice_focus", "clear_slice_focus", "set_slice_focus", "slice_background", "slice_focus",
    "slice_list_columns",
]
