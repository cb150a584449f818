"""Regression page: every calibration lens of the loaded regression predictions, linked through σ-bins.

Selecting σ-bins in the Levi diagram (click, shift-click, box or lasso) recomputes the Kuleshov curve, the
PIT histogram and the metric table on the rows of those bins — conditional calibration, the point of Levi et
al. (2019).  The selection is copied by an ``on_select`` callback into ``st.session_state["reg_sel"]`` (a
``calib_core.selection.BinSelection`` tied to the data and the binning), so it survives reruns caused by other
controls and is dropped when the data or the bins change.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import streamlit as st

import calib_core as cc
from calib_core import plots
from calib_core.selection import (
    BinSelection,
    describe_selection,
    note_event,
    note_reset,
    rows_in_bins,
    sigma_bins,
    sync_chart,
)
from pages import common

_t0 = time.perf_counter()

st.title("Regression diagnostics")
pset, token, name = common.require_data("regression", common.DEFAULT_REGRESSION_EXAMPLE)
st.markdown(common.data_caption(pset, name))

rows, models, group, (n_resamples, n_sims) = common.filter_controls(pset, "reg")
common.init_state({"reg_n_bins": 15, "reg_binning": "equal count"})
if pset.dist is not None:  # σ-bins mean nothing for point predictions
    c1, c2, _ = st.columns([3, 2, 4])
    c1.slider("σ-bins (Levi diagram, ENCE)", 5, 50, key="reg_n_bins", help="Levi et al. use 15 bins by default.")
    c2.segmented_control(
        "Binning", ["equal count", "equal width"], key="reg_binning",
        help="Equal-count bins of sorted σ (Levi et al.); equal-width between min and max σ (netcal's convention).",
    )
n_bins = st.session_state["reg_n_bins"]
binning = "width" if st.session_state["reg_binning"] == "equal width" else "count"
options = {"n_bins": int(n_bins), "binning": binning, "n_resamples": int(n_resamples), "n_simulations": int(n_sims),
           "seed": 0}

sub = common.subset(pset, rows, models, group)
base_key = f"{token}|rows={rows}|models={','.join(models)}|group={group}"
try:
    report = common.diagnose_cached(base_key, sub, **options)
except (cc.InputError, ValueError) as err:
    st.error(f"Could not diagnose these rows: {common.md_escape(err)}")
    st.stop()
level = float(report.options.get("level", 0.95))
for note in report.options.get("notes", []):
    st.caption(note)
if report.metrics.empty:
    st.warning("Too few rows to diagnose with these filters.")
    st.stop()
colors = plots.model_colors(pset.models())  # colours follow the file's model order whatever is filtered

if sub.dist is None:  # point predictions only
    st.warning(
        "This file has point predictions only (no σ, quantiles or samples): only accuracy can be measured. "
        "Estimate an uncertainty first (e.g. ACCRUE or a constant σ on the Recalibrate page)."
    )
    common.show_metric_table(common.metric_table(report.metrics, level))
    st.stop()

shown = [m for m in report.models if (m, cc.ALL) in report.diagrams]


charts_drawn: dict[str, object] = {}  # figures shown on the page (also offered as downloads)


def chart(fig, key: str, **kwargs) -> None:
    charts_drawn[key] = fig
    common.chart(fig, key, **kwargs)


def tables(name_: str, rep: cc.Report = report, suffix: str = "") -> dict[str, pd.DataFrame]:
    return {f"{m}{suffix}": rep.diagrams[(m, cc.ALL)][name_] for m in shown if (m, cc.ALL) in rep.diagrams}


# ------------------------------------------------------------------------------------- selection state
context = (token, rows, group, int(n_bins), binning)
stored = st.session_state.get("reg_sel")
selection = stored.valid_for(context) if isinstance(stored, BinSelection) else BinSelection(context, {})
selection = BinSelection(context, {m: b for m, b in selection.bins.items() if m in shown and b})
st.session_state["reg_sel"] = selection

sync = st.session_state.setdefault("reg_sync", {})  # which selection is drawn into the chart (selection.sync_chart)
levi_tables = tables("levi_bins")
fig_key = f"{base_key}|{sorted(options.items())}"  # determines every figure of the page (with what is drawn)
levi_base = f"{fig_key}|levi|epoch={sync.get('epoch', 0)}"
levi_drawn = sync_chart(sync, "reg_levi_chart", levi_base, selection.bins)


def _levi_figure():
    fig = plots.levi_figure(levi_tables, colors=colors)
    fig.update_layout(meta={"selection_epoch": sync.get("epoch", 0)})  # "Clear" gives every chart a new identity
    return plots.mark_selected(fig, levi_drawn)


levi = common.figure(f"{levi_base}|drawn={sorted(levi_drawn.items())}", _levi_figure)
levi_meta = [dict(d.meta) if d.meta else None for d in levi.data]


def _on_levi_select() -> None:
    """Copy the Plotly selection of the Levi chart into our own key (shift-click/box/lasso arrive as points)."""
    note_event(st.session_state["reg_sync"], "reg_levi_chart")
    event = st.session_state.get("reg_levi_chart")
    st.session_state["reg_sel"] = BinSelection.from_event(event, levi_meta, context)


def _clear() -> None:
    note_reset(st.session_state["reg_sync"])
    st.session_state["reg_sel"] = BinSelection(context, {})


selected_report = None
sel_mask = None
if not selection.empty:
    row_bins = sigma_bins(sub.dist.std(), int(n_bins), binning, group=sub.model)
    sel_mask = rows_in_bins(row_bins, selection.bins, group=sub.model)
    if sel_mask.sum() >= 2:
        sel_key = f"{base_key}|sel={sorted(selection.bins.items())}"
        selected_report = common.diagnose_cached(sel_key, sub.take(sel_mask), **options)

# ------------------------------------------------------------------------------------- linked views
st.subheader("σ-bins and conditional calibration")
st.caption(
    "Click a σ-bin in the Levi diagram (shift-click adds more; or drag a box / lasso) to recompute the quantile "
    "calibration curve, the PIT histogram and the metric table on the rows of those bins only."
)
info, clear_col = st.columns([5, 1], vertical_alignment="center")
if selection.empty:
    info.markdown("**No σ-bins selected** — the views below use all rows.")
else:
    n_sel = int(sel_mask.sum()) if sel_mask is not None else 0
    ranges = []
    for m, bins in selection.bins.items():
        t = levi_tables[m]
        in_sel = t[t["bin"].isin(bins)]
        if len(in_sel):
            ranges.append(f"σ ∈ [{in_sel['sigma_low'].min():.4g}, {in_sel['sigma_high'].max():.4g}]"
                          + (f" ({m})" if len(selection.bins) > 1 else ""))
    info.markdown(f"**{describe_selection(selection.bins, n_sel, 'σ-bins')}** " + "; ".join(ranges))
clear_col.button(
    "Clear selection", key="reg_clear", on_click=_clear, disabled=selection.empty, icon=":material/deselect:",
    width="stretch",
)

left, right = st.columns(2)
with left:
    common.chart(levi, "reg_levi_chart", on_select=_on_levi_select, selection_mode=("points", "box", "lasso"))
    st.caption(
        "RMSE vs RMV per σ-bin (Levi et al. 2019), 90% bootstrap intervals; hover for the bin's σ range and count. "
        "Calibrated σ lies on the diagonal; a flat curve means σ does not track the error."
    )
curve_tables = tables("calibration_curve")
pit_tables = tables("pit_histogram")
z_tables = tables("z_histogram")
dashes: dict[str, str] = {}
bands = None
if selected_report is not None:
    sel_curves = tables("calibration_curve", selected_report, " · selected")
    curve_tables.update(sel_curves)
    pit_tables.update(tables("pit_histogram", selected_report, " · selected"))
    z_tables.update(tables("z_histogram", selected_report, " · selected"))
    dashes = {k: "dash" for k in sel_curves}
    bands = set(sel_curves)  # the band that matters is the selection's (smaller N, wider band)
curve_colors = {**colors, **{f"{m} · selected": colors[m] for m in shown}}
with right:
    sel_part = f"sel={sorted(selection.bins.items())}" if selected_report is not None else "sel=none"
    chart(
        common.figure(
            f"{fig_key}|kuleshov|{sel_part}",
            lambda: plots.calibration_curve_figure(curve_tables, colors=curve_colors, dashes=dashes, bands=bands),
        ),
        "reg_kuleshov",
    )
    st.caption(
        "Quantile calibration (Kuleshov et al. 2018): share of targets below each predicted quantile. The ribbon is "
        "where a perfectly calibrated forecaster's curve falls 95% of the time"
        + (" (for the selected rows)." if selected_report is not None else ".")
    )

left2, right2 = st.columns(2)
with left2:
    chart(
        common.figure(f"{fig_key}|pit|{sel_part}",
                      lambda: plots.pit_histogram_figure(pit_tables, colors=curve_colors, dashes=dashes)),
        "reg_pit",
    )
    st.caption("PIT histogram: flat when calibrated; ∪ = over-confident, ∩ = under-confident, slope = bias.")
with right2:
    chart(
        common.figure(f"{fig_key}|z|{sel_part}",
                      lambda: plots.z_histogram_figure(z_tables, colors=curve_colors, dashes=dashes)),
        "reg_z",
    )
    st.caption("Standardised residuals z = (y − μ)/σ against N(0, 1): wider than N(0, 1) = σ too small.")

# ------------------------------------------------------------------------------------- metrics
if selected_report is not None:
    st.subheader("Metrics of the selected rows")
    st.caption(
        f"Each metric on the selected rows, next to its value on all rows; the {level:.0%} CI and the "
        "perfect-calibration value are those of the selection (its N). Formulas and papers: see the Help page."
    )
    several = len(shown) > 1
    sel_table = common.metric_table(selected_report.metrics, level, keep_model=several)
    overall = common.metric_table(report.metrics, level, keep_model=several)
    join = ["model", "metric"] if several else ["metric"]
    sel_table = sel_table.rename(columns={"value": "selection"}).merge(
        overall[join + ["value"]].rename(columns={"value": "all rows"}), on=join, how="left"
    )
    front = join + ["selection", "all rows"]
    common.show_metric_table(sel_table[front + [c for c in sel_table.columns if c not in front]], height=560)
else:
    if not selection.empty:
        st.warning("Fewer than 2 rows in the selected bins: nothing to recompute.")
    st.subheader("Metrics")
    st.caption(
        f"Value with its {level:.0%} bootstrap CI and the value a perfectly calibrated forecaster with the same "
        "predictions gets at this N (mean and range over the simulations). “beyond noise” = outside that range. "
        "Formulas and papers: see the Help page."
    )
    common.show_metric_table(common.metric_table(report.metrics, level), height=560)

st.subheader("More diagrams")
tab_int, tab_qq = st.tabs(["Intervals", "Q-Q plot"])
with tab_int:
    fig_int = common.figure(f"{fig_key}|intervals", lambda: plots.intervals_figure(tables("intervals"), colors=colors))
    chart(fig_int, "reg_intervals")
    st.caption("Observed coverage of the central 50–99% intervals: below the diagonal = intervals too narrow.")
with tab_qq:
    chart(common.figure(f"{fig_key}|qq", lambda: plots.qq_figure(tables("qq"), colors=colors)), "reg_qq")
    st.caption("Quantiles of z against N(0, 1) quantiles: an S-shape means heavier tails than Gaussian.")

export_figures = {"RMSE vs RMV (Levi)": levi}
for _name, _key in (("Quantile calibration", "reg_kuleshov"), ("PIT histogram", "reg_pit"),
                    ("Standardised residuals", "reg_z"), ("Central intervals", "reg_intervals"),
                    ("Q-Q plot", "reg_qq")):
    _fig = charts_drawn.get(_key)
    if _fig is not None:
        export_figures[_name] = _fig
export_metrics = report.metrics.assign(rows="all")
export_tables = None
if selected_report is not None:
    export_metrics = pd.concat([export_metrics, selected_report.metrics.assign(rows="selected σ-bins")],
                               ignore_index=True)
    export_tables = {"Metrics of the selected σ-bins": common.metric_table(selected_report.metrics, level)}
common.export_row(
    "regression", title=f"Regression diagnostics — {name}", report=report, figures=export_figures,
    metrics=export_metrics, pset=sub, tables=export_tables,
    notes=[f"Filters: rows = {rows}, models = {', '.join(models)}, group = {group}."]
    + ([describe_selection(selection.bins, int(sel_mask.sum()), "σ-bins")] if sel_mask is not None else []),
)

if sel_mask is not None and sel_mask.any():
    with st.expander(f"Selected rows (first {common.MAX_TABLE_ROWS})", icon=":material/table_rows:"):
        idx = np.flatnonzero(sel_mask)[: common.MAX_TABLE_ROWS]
        part = sub.take(idx)
        frame = pd.DataFrame({"row": part.row_number, "y": part.y, "mean": part.dist.mean(), "σ": part.dist.std()})
        if part.model is not None:
            frame.insert(1, "model", part.model)
        frame["z"] = (frame["y"] - frame["mean"]) / frame["σ"]
        st.dataframe(frame, hide_index=True, width="stretch")

common.record_run_time(_t0, "regression")
