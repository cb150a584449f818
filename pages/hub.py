"""Forecast hub page: per model WIS and its parts, the coverage of every stated interval, bias and the PIT over the
stated levels — by horizon, over dates and on a location × date heatmap, all linked — and each model's verdict, whose
tests resample whole forecast dates by default ("Resample by", ``dashboard.clustering``).

Clicking heatmap cells, horizon points or dragging a box over dates restricts every other view (``dashboard.hub``:
``HubSelection``); the per-row scores are computed once per data set and only regrouped on a redraw.
"""

from __future__ import annotations

import time

import streamlit as st

import dashboard as ui
from calib_core.diagnosis.regression_hub import forecast_scores
from calib_core.plots import hub as hub_plots
from calib_core.plots import mark_selected, model_colors
from dashboard import clustering as clu
from dashboard import hub as hub_ui
from views import hub as hv
from views.clustering import with_verdict_column

_t0 = time.perf_counter()
st.title("Forecast hub")
data = ui.current_data()
if data is None or not hv.is_hub(data[0]):
    st.info(hv.empty_state(None if data is None else data[0]), icon=":material/hub:")
    st.page_link("pages/data.py", label="Go to the Data page", icon=":material/upload_file:")
    if st.button("Load the example hub (4 synthetic models: calibrated, too narrow, biased, too wide)",
                 key="hub_load_example", icon=":material/science:"):
        ui.set_example(ui.HUB_EXAMPLE)
        st.rerun()
    st.stop()
pset, token, name = data
st.markdown(ui.data_caption(pset, name))
rows = hub_ui.hub_rows(pset, token)
filters = hub_ui.hub_filters(rows)
intervals_all = hv.interval_choices(rows)
dims = hv.heatmap_columns(rows)
ui.init_state({"hub_intervals": [c for c in ("coverage_50", "coverage_90") if c in intervals_all] or intervals_all[:1],
               "hub_heat_value": next(iter(hv.HEATMAP_CHOICES)), "hub_heat_rows": next(iter(dims)),
               "hub_heat_columns": list(dims)[1 if len(dims) > 1 else 0]}, persist=True)
c1, c2, c3, c4 = st.columns([3, 3, 2, 2])
c1.multiselect("Central intervals", intervals_all, key="hub_intervals", format_func=lambda c: f"{c[9:]}%",
               help="Stated central intervals whose coverage the table and the horizon chart show.")
c2.selectbox("Heatmap value", list(hv.HEATMAP_CHOICES), key="hub_heat_value",
             help="PIT departure: the largest distance of a stated level's coverage from its level. WIS relative: "
                  "a cell's mean WIS over its row's mean WIS (locations on different scales become comparable).")
c3.selectbox("Heatmap rows", list(dims), key="hub_heat_rows")
c4.selectbox("Heatmap columns", [d for d in dims if d != st.session_state["hub_heat_rows"]], key="hub_heat_columns")
intervals = [c for c in st.session_state["hub_intervals"] if c in intervals_all]
value = hv.HEATMAP_CHOICES[st.session_state["hub_heat_value"]]
row_dim, col_dim = dims[st.session_state["hub_heat_rows"]], dims[st.session_state["hub_heat_columns"]]
cells = hv.cell_codes(rows, row_dim, col_dim)

selection = hub_ui.HubSelection("hub", (token, row_dim, col_dim), hv.NAMES)
chosen = dict(selection.bins)
masks = {skip: hv.row_mask(rows, filters, chosen, cells=cells, skip=skip) for skip in (None, *hv.NAMES)}
kept = masks[None]
heat = hv.heatmap_table(rows, value, row_dim, col_dim, masks["cell"])  # None: an interval the data do not state
text = hv.describe_hub_selection(chosen, heat, int(kept.sum()), row_dim, col_dim)
selection.row(ui.md_escape(text) if text else "**No selection** — click heatmap cells or horizon points, or drag a "
              "box over dates: every other view is restricted to those forecasts.", icon=":material/deselect:")
if not kept.any():
    st.warning("No forecasts left with these filters and this selection.")
    st.stop()
colors = model_colors(list(rows.vocab["model"]))
per_model = forecast_scores(rows, ("model",), kept)

st.subheader("Per model")
cluster_options = clu.resample_control(pset, "hub")  # which forecasts the tests resample together
verdicts, verdict_report, verdict_error = clu.hub_verdicts(pset, token, kept, cluster_options)
clu.show_hub_verdicts(verdicts, verdict_report)  # the diagnosis's notes (e.g. too few clusters) first
if verdict_error:
    st.caption(f"No verdicts for these forecasts: {ui.md_escape(verdict_error)}")
table, helps = hv.model_table(per_model, intervals)
helps["verdict"] = ("The headline test of calibration of the model's kept forecasts (Holm at family-wise 5%), "
                    "resampling as stated below the table; how a model is miscalibrated: its sentence above")
hub_ui.show_model_table(with_verdict_column(table, verdicts), helps)
if verdict_report is not None:
    clu.show_statement(verdict_report)
st.caption("Mean WIS (Bracher et al. 2021) and its parts; the observed coverage of each chosen central interval; "
           "the share of targets below the stated median; the quantile bias (Funk et al. 2019; > 0: forecasts too "
           "high); the PIT departure (largest miss of a stated level's coverage). Hover a column's name for what a "
           "calibrated forecaster shows. The verdicts test the forecasts kept by the filters and the selection; every "
           "test and interval: open the rows on the Regression page (below).")
left, right = st.columns(2)
with left:
    ui.chart(ui.figure(f"hub_wis|{ui.content_key(per_model)}", lambda: hub_plots.wis_parts_figure(per_model)),
             "hub_wis_parts")
with right:
    by_h = forecast_scores(rows, ("model", "horizon"), masks["horizon"]) if "horizon" in rows.codes else None
    if by_h is not None and intervals:
        base = f"hub_h|{ui.content_key(by_h[['model', 'horizon', 'n', *intervals]])}|e={selection.epoch}"
        drawn = {"horizon": selection.drawn("hub_horizon_chart", base).get("horizon", ())}  # its own part only
        fig = ui.figure(f"{base}|{sorted(drawn.items())}", lambda: mark_selected(
            hub_plots.coverage_by_horizon_figure(by_h, intervals, colors=colors), drawn))
        selection.chart(fig, "hub_horizon_chart")
by_d = forecast_scores(rows, ("model", "target_end_date"), masks["date"]) if "target_end_date" in rows.codes else None
if by_d is not None:
    base = f"hub_d|{ui.content_key(by_d[['model', 'target_end_date', 'n', 'wis']])}|e={selection.epoch}"
    drawn = {"date": selection.drawn("hub_date_chart", base).get("date", ())}  # the other charts' parts: not dimmed
    fig = ui.figure(f"{base}|{sorted(drawn.items())}", lambda: mark_selected(
        hub_plots.score_over_dates_figure(by_d, "wis", colors=colors), drawn))
    selection.chart(fig, "hub_date_chart")
    st.caption("Mean WIS per target end date: drag a box (or lasso) over dates to restrict the page to them.")
if heat is not None:
    base = f"hub_heat|{ui.content_key(heat)}|{value}|{row_dim}|{col_dim}|e={selection.epoch}"
    drawn = selection.drawn("hub_heatmap", base)
    fig = ui.figure(f"{base}|{sorted(drawn.items())}", lambda: hub_plots.hub_heatmap_figure(
        heat, value, rows=row_dim, columns=col_dim, center=hv.heatmap_center(value), selected=drawn.get("cell", ())))
    selection.chart(fig, "hub_heatmap")
    st.caption("Click a cell (shift-click adds more, or drag a box) to restrict the other views to its forecasts; "
               "all kept models pooled. Diverging colours centre on the calibrated value.")
hub_ui.open_on_regression(token, kept, hv.selection_label(text, hv.describe_filters(filters, hv.filter_choices(rows))))
ui.record_run_time(_t0, "hub")
