"""The slice explorer when the loaded data is a Parquet data set opened on the Data page ("Large data"): no rows are
held, so the slices are searched from the data set's slice summary (``views.summary.slices_of_data_set``
on the operator's engine: a first pass for the bins, a second for every slice's sums; cached per data set and
number of bins), ranked by ``calib_core.scale.slices.summary_ranking`` — the in-memory explorer's statistics,
tests and order — with the same list and funnel plot.  Choosing a slice cannot restrict the diagnosis pages (there
are no rows to restrict); the page says so.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from calib_core import plots
from calib_core.scale import slices_ranking as slsum
from views import slices as slice_views
from views import summary as sv

from .cache import RESULTS, figure, memoized
from .display import chart, dataframe, md_escape
from .slices import slice_list_columns
from .state import init_state
from .summary import allowed_data_dirs, engine, summary_caption


def render(summary: Any, token: str, name: str) -> None:
    """The explorer of the loaded summary ``(summary, token, name)`` of ``dashboard.summary.current_summary``."""
    st.markdown(summary_caption(summary, name))
    if not token.startswith("parquet:"):
        st.info("A summary file holds the calibration summary only, not the statistics of every slice. To search "
                "the slices of a data set too large to load, open the Parquet data set itself on the Data page "
                "(Large data): its slices are then summarised on the server.")
        st.page_link("pages/data.py", label="Go to the Data page", icon=":material/upload_file:")
        return
    task = summary.spec.task
    init_state({"slcs_min_size": 100, "slcs_bins": 5, "slcs_pairs": True}, persist=True)
    c1, c2, c3 = st.columns([2, 2, 2], vertical_alignment="bottom")
    c1.number_input("Minimum slice size", min_value=20, step=50, key="slcs_min_size",
                    help="Slices with fewer rows are not searched.")
    c2.slider("Bins of numeric columns", 2, 10, key="slcs_bins",
              help="Numeric columns are cut at their quantiles into this many equal-count bins (a new number of "
              "bins reads the data set again).")
    c3.toggle("Pairwise intersections", key="slcs_pairs", help="Also search every intersection of two slices.")
    n_bins = int(st.session_state["slcs_bins"])
    scheduler, where = engine()
    result = memoized(RESULTS, ("slice-summary", token, n_bins),
                      lambda: sv.slices_of_data_set(name, allowed_data_dirs(), scheduler=scheduler, n_bins=n_bins,
                                                    task=task),
                      copied=False, spinner=f"Summarising every slice of the data set ({where})…")
    spec = result.summary.spec
    if st.session_state.get("slcs_columns_token") != (token, n_bins):
        st.session_state["slcs_columns"] = list(spec.columns)
        st.session_state["slcs_columns_token"] = (token, n_bins)
    st.multiselect("Columns", list(spec.columns), key="slcs_columns",
                   format_func=lambda c: f"{c} ({spec.kinds[spec.columns.index(c)]})",
                   help="Slice columns: group, model and every column of the data set that no role took.")
    columns = [c for c in st.session_state["slcs_columns"] if c in spec.columns]
    if not columns:
        st.warning("Choose at least one column.")
        return
    options = {"columns": tuple(columns), "min_size": int(st.session_state["slcs_min_size"]),
               "pairs": bool(st.session_state["slcs_pairs"])}
    key = ("slice-summary-ranking", token, n_bins, tuple(sorted(options.items())))
    ranking = memoized(RESULTS, key, lambda: slsum.summary_ranking(result.summary, **options), copied=False,
                       spinner="Testing every slice…")
    if len(ranking) == 0:
        st.warning("No slice has the minimum size: lower it, or use fewer bins.")
        return
    st.markdown(md_escape(slsum.search_sentence(result.summary, ranking)))
    st.caption(md_escape(f"Summarised {where}: {len(result.files):,} file(s), {len(result.partitions):,} "
                         f"partition(s), {result.n_read:,} rows read in {result.seconds['total']:.1f} s. A summary "
                         "holds no rows: choosing a slice here cannot restrict the diagnosis pages."))
    st.subheader("Worst slices first")
    table = slice_views.slice_display_table(ranking, task)
    fmt = slice_list_columns(table)
    dataframe(table, hide_index=True, width="stretch", height=min(420, 38 + 35 * len(table)), column_config=fmt,
              key="slcs_table")
    st.subheader("Funnel plot")
    stats_choices = list(slice_views.funnel_statistics(task))
    init_state({"slcs_funnel_stat": stats_choices[0]}, persist=True)
    if st.session_state["slcs_funnel_stat"] not in stats_choices:
        st.session_state["slcs_funnel_stat"] = stats_choices[0]
    statistic = st.segmented_control("Statistic", stats_choices, key="slcs_funnel_stat") or stats_choices[0]
    points, limits = slsum.summary_funnel(result.summary, ranking, statistic)
    fig = figure(f"{key}|funnel|{statistic}", lambda: plots.funnel_figure(points, limits, statistic=statistic))
    chart(fig, "slcs_funnel")
    st.caption(f"Each slice's {statistic} against its size; dashed: 95% limits of a perfectly calibrated "
               "forecaster; solid: limits adjusted for the number of slices searched. Red: flagged slices.")
