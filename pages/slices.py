"""Slice explorer: where are the loaded predictions miscalibrated?  Every slice of the data (group, model and the
file's other columns, their values, numeric quantile bins and pairwise intersections) ranked by the evidence of
miscalibration, adjusted for the number of slices searched, with a funnel plot.  Choosing a slice (a row of the
list or a point of the funnel) restricts the Regression / Classification page to it (``dashboard.slices``).
"""

from __future__ import annotations

import time

import numpy as np
import streamlit as st

import dashboard as ui
from calib_core import export, plots
from calib_core.slices.candidates import available_slice_columns, slice_mask
from dashboard import slice_summary_page
from dashboard import summary as summ
from dashboard.cache import RESULTS, memoized
from views import pages as views
from views import slices as slice_views

_t0 = time.perf_counter()

st.title("Slice explorer")
st.caption(
    "Where is the model miscalibrated? Each slice of the rows — a value of the group, model or any other column "
    "of the file, a quantile bin of a numeric column, and every intersection of two — is tested against perfect "
    "calibration at its own size, so a small noisy slice does not top the list; the p-value is adjusted for the "
    "number of slices searched (Holm). Choose a slice to see every diagram of the diagnosis page on its rows."
)
data = ui.current_data()
# --- summary / Parquet path (no rows held): owned by dashboard.slice_summary_page -------------------------------
if data is None and summ.current_summary() is not None:
    slice_summary_page.render(*summ.current_summary())
    ui.record_run_time(_t0, "slices")
    st.stop()
# --- end of the summary path -------------------------------------------------------------------------------------
if data is None:
    st.info("No data loaded yet. Upload a file with feature columns on the Data page, or load an example there.")
    st.page_link("pages/data.py", label="Go to the Data page", icon=":material/upload_file:")
    st.stop()
pset, token, name = data
st.markdown(ui.data_caption(pset, name))
task = pset.task
if task == "regression" and pset.dist is None:
    st.warning("This file has point predictions only: the slice statistics need a predictive distribution.")
    st.stop()
avail = available_slice_columns(pset)
if not avail:
    st.warning("This file has no column to slice by: add a group or model column or feature columns (any column "
               "that is not a prediction or the target is kept), and load it again on the Data page.")
    st.stop()

ui.init_state({"slc_min_size": 100, "slc_bins": 5, "slc_pairs": True, "slc_target": "positive class"},
              persist=True)
if st.session_state.get("slc_columns_token") != token or "slc_columns" not in st.session_state:  # new data: all
    st.session_state["slc_columns"] = list(avail)
    st.session_state["slc_columns_token"] = token
ui.persist("slc_columns")  # kept across page switches (e.g. to Recalibrate and back)
c1, c2, c3, c4 = st.columns([2, 2, 2, 2], vertical_alignment="bottom")
c1.number_input("Minimum slice size", min_value=20, max_value=max(20, pset.n_rows), step=50, key="slc_min_size",
                help="Slices with fewer rows are not searched. Every test is exact or simulated at the slice's own "
                "size, so a small slice is judged fairly, but it rarely holds enough evidence to pass the adjustment "
                "for the search; a lower minimum searches more slices and makes that adjustment stricter.")
c2.slider("Bins of numeric columns", 2, 10, key="slc_bins",
          help="Numeric columns are cut at their quantiles into this many equal-count bins.")
c3.toggle("Pairwise intersections", key="slc_pairs",
          help="Also search every intersection of two slices of different columns (e.g. region = north & age ∈ "
          "[40, 55)).")
binary = task == "classification" and pset.probs is not None and pset.probs.shape[1] == 2
c4.segmented_control("Binary semantics", ["positive class", "top label"], key="slc_target", disabled=not binary,
                     help="Positive class: P(y = 1) against the frequency of y = 1; top label: confidence against "
                     "accuracy (multi-class files always use the top label).")
st.multiselect("Columns", list(avail), key="slc_columns",
               format_func=lambda c: f"{c} ({avail[c]})",
               help="Slice columns: group, model and every column of the file that no role took.")
columns = [c for c in st.session_state["slc_columns"] if c in avail]
if not columns:
    st.warning("Choose at least one column.")
    st.stop()
for no_bin in slice_views.no_bin_notes(pset, columns):  # empty / NaN / ±inf cells of a numeric column: no bin
    st.caption(ui.md_escape(no_bin))
target = "positive" if (binary and st.session_state["slc_target"] == "positive class") else "top_label"
options = {"columns": tuple(columns), "n_bins": int(st.session_state["slc_bins"]),
           "min_size": int(st.session_state["slc_min_size"]), "pairs": bool(st.session_state["slc_pairs"]),
           "target": target}
key = ("slices", token, tuple(sorted(options.items())))
ranking, sset = memoized(RESULTS, key, lambda: slice_views.explore_slices(pset, **options), copied=False,
                         spinner="Testing every slice…")
if sset.n_slices == 0:
    st.warning("No slice has the minimum size: lower it, or use fewer bins.")
    st.stop()
st.markdown(ui.md_escape(slice_views.search_sentence(ranking, sset, pset)))


def _focus(index: int) -> None:
    label = ranking.loc[ranking["index"] == index, "slice"].iloc[0]
    ui.set_slice_focus(token, label, slice_mask(sset, index))


def _on_table() -> None:
    event = st.session_state.get("slc_table")
    rows = list(getattr(getattr(event, "selection", None), "rows", []) or [])
    if rows:
        _focus(int(ranking["index"].iloc[rows[0]]))


def _on_funnel() -> None:
    event = st.session_state.get("slc_funnel")
    points = list(getattr(getattr(event, "selection", None), "points", []) or [])
    picked = [p.get("customdata") for p in points if p.get("customdata") is not None]
    if picked:
        value = picked[0]
        _focus(int(value[0] if isinstance(value, list | tuple) else value))


focus = ui.slice_focus(token)
page = "pages/classification.py" if task == "classification" else "pages/regression.py"
f1, f2, f3 = st.columns([3.6, 1.9, 1.2], vertical_alignment="center")
if focus is None:
    f1.markdown("**No slice chosen** — click a row of the list or a point of the funnel plot.")
else:
    f1.markdown(f"**Chosen: {ui.md_escape(focus['label'])}** ({focus['n']:,} rows) — the "
                f"{task.capitalize()} page now shows this slice only.")
f2.page_link(page, label=f"Open the {task.capitalize()} page", icon=":material/arrow_forward:",
             disabled=focus is None)
f3.button("Show all rows", key="slc_clear", on_click=ui.clear_slice_focus, disabled=focus is None,
          icon=":material/filter_alt_off:", width="stretch")

st.subheader("Worst slices first")
table = slice_views.slice_display_table(ranking, task)
fmt = ui.slice_list_columns(table)
ui.dataframe(table, hide_index=True, width="stretch", height=min(420, 38 + 35 * len(table)), column_config=fmt,
             key="slc_table", on_select=_on_table, selection_mode="single-row")
st.caption(
    f"The {min(len(ranking), slice_views.DISPLAY_ROWS):,} worst of {len(ranking):,} slices. Evidence = −log₁₀ of "
    "the slice's p-value (its tests combined by Bonferroni; each test against its exact or simulated law under "
    "perfect calibration at the slice's n, computed in log space so it stays finite far below 10⁻³⁰⁸); ties are "
    "broken by the effect (the deciding test's deviation in per-row standard deviations); adjusted p: Holm over "
    "every slice searched. Verdict 'miscalibrated' "
    "when the adjusted p ≤ 0.05. Select a row to restrict the diagnosis page to that slice."
)

st.subheader("Funnel plot")
stats_choices = list(slice_views.funnel_statistics(task))
ui.init_state({"slc_funnel_stat": stats_choices[0]}, persist=True)
if st.session_state["slc_funnel_stat"] not in stats_choices:
    st.session_state["slc_funnel_stat"] = stats_choices[0]
statistic = st.segmented_control("Statistic", stats_choices, key="slc_funnel_stat") or stats_choices[0]
points, limits = slice_views.funnel_tables(pset, ranking, statistic, target=target)
shown = ranking.loc[ranking["slice"] == focus["label"], "index"] if focus is not None else ranking["index"].iloc[:0]
highlight = int(shown.iloc[0]) if len(shown) else None
fig = ui.figure(f"{key}|funnel|{statistic}|highlight={highlight}",
                lambda: plots.funnel_figure(points, limits, statistic=statistic, highlight=highlight))
ui.chart(fig, "slc_funnel", on_select=_on_funnel, selection_mode=("points",))
st.caption(
    f"Each slice's {statistic} against its size. Dashed: the 95% limits of a perfectly calibrated forecaster; "
    "solid: the limits adjusted for the number of slices searched — outside them this statistic alone flags the "
    "slice. Red: flagged slices (any of their tests). Click a point to restrict the diagnosis page to it."
)
if np.isinf(points["value"].to_numpy(dtype=float)).any():
    st.caption("Slices without any positive event have no calibration ratio and are not drawn.")

# ------------------------------------------------------------------------------------- before / after recalibration
st.subheader("Before and after recalibration")
stored = st.session_state.get("recal_result")  # the Recalibrate page's comparison (its data token, its result)
result = stored.get("result") if isinstance(stored, dict) and stored.get("token") == token else None
if result is None or not result.calibrated:
    st.caption("Run a comparison on the Recalibrate page (e.g. std scaling per slice, Mondrian conformal or "
               "temperature scaling per slice, by the column of a flagged slice): its held-out rows' worst slices "
               "are then ranked here before and after each calibrator.")
    st.page_link("pages/recalibrate.py", label="Go to the Recalibrate page", icon=":material/tune:")
else:
    views_of = stored.setdefault("view", {})  # kept with the comparison, dropped with it
    ba_key = ("slices_before_after", tuple(sorted(options.items())))
    if ba_key not in views_of:
        try:
            views_of[ba_key] = slice_views.slices_before_after(pset, result, slices=sset,
                                                               min_size=options["min_size"], target=target)
        except ValueError as exc:
            views_of[ba_key] = exc
    ba = views_of[ba_key]
    if isinstance(ba, Exception):
        st.warning(f"No before/after ranking: {ui.md_escape(ba)}")
    elif not ba.after or ba.slices.n_slices == 0:
        st.caption("No calibrator to compare, or no slice with the minimum size among the held-out rows.")
    else:
        b1, b2 = st.columns([3, 2], vertical_alignment="bottom")
        grouped = [c for c in ba.after if any(getattr(f.get(c), "uses_groups", False)
                                              for f in result.fitted.values())]
        if st.session_state.get("slc_after") not in ba.after:
            st.session_state["slc_after"] = (grouped or ba.after)[0]
        after = b1.selectbox("Calibrator (after)", ba.after, key="slc_after",
                             help="Each calibrator of the Recalibrate comparison; slice-wise ones are chosen first.")
        order = b2.segmented_control("Worst first", ["before", "after"], key="slc_ba_order",
                                     default="before") or "before"
        st.markdown(ui.md_escape(slice_views.before_after_sentence(ba, after, min_size=options["min_size"])))
        for name, why in ba.skipped.items():
            st.caption(ui.md_escape(f"{name}: left out ({why})."))
        ba_table = slice_views.before_after_table(ba, after, order=order)
        ba_fmt = {"slice": st.column_config.TextColumn(width=190),
                  "n": st.column_config.NumberColumn(format="localized", help="held-out rows of the slice"),
                  "rank": st.column_config.TextColumn(help="rank before → after (1 = worst)"),
                  "statistic": st.column_config.TextColumn(help="the test's statistic before → after"),
                  "evidence": st.column_config.TextColumn(help="−log₁₀ of the slice's combined p, before → after"),
                  "adjusted p": st.column_config.TextColumn(help="Holm-adjusted p, before → after")}
        with st.container(key="slc_ba_table"):
            ui.dataframe(slice_views.before_after_display(ba_table), hide_index=True, width="stretch",
                         height=min(420, 38 + 35 * len(ba_table)), column_config=ba_fmt)
        after_text = ui.md_escape(f"after {after}")
        st.download_button("Before/after table (CSV)", data=lambda: export.to_csv_bytes(ba_table),
                           file_name=views.download_name(name, "slices", "before_after", after, ext="csv"),
                           mime="text/csv", on_click="ignore", icon=":material/download:", key="slc_ba_download")
        lead = after_text if order == "after" else "before (uncalibrated)"
        st.caption(f"Held-out rows only. Worst first by the ranking {lead}; the test is the one with the smallest "
                   "p-value in that ranking, its statistic shown before → after. 'no longer flagged': miscalibrated "
                   "before, no evidence after.")
        pts_before, pts_after, ba_limits = slice_views.before_after_funnel(ba, after, statistic)
        ba_fig = ui.figure(f"{key}|ba|{id(result)}|{after}|{statistic}",
                           lambda: plots.funnel_figure(pts_after, ba_limits, statistic=statistic, before=pts_before,
                                                       labels=("before", f"after {after}")))
        ui.chart(ba_fig, "slc_ba_funnel")
        st.caption(f"The held-out slices' {statistic} before (open markers) and {after_text} "
                   "(filled) against their held-out size, with the limits of the held-out search; grey segments join "
                   "a slice's two points when it is flagged before or after.")

ui.record_run_time(_t0, "slices")
