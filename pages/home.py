"""Home page: a real regression example, diagnosed (metric table + Kuleshov and Levi diagrams).

Thin by design: the example and its report come from ``views.pages.diagnose_example`` (cached here), the
tables from ``views.pages`` and the figures from ``calib_core.plots``; this file only lays them out with the
shared ``dashboard`` helpers.
"""

from __future__ import annotations

import streamlit as st

import calib_core as cc
import dashboard as ui
from calib_core import plots
from views import pages as views

DIABETES = "Diabetes — gradient-boosting ensemble (real data)"
LEVI = "Levi et al. §4.1 synthetic — true σ vs random σ"
EXAMPLES = {DIABETES: "diabetes", LEVI: "levi"}
LAYOUTS = {"Gaussian (mean, std)": "gaussian", "Quantiles (9 levels)": "quantile", "Samples (50 draws)": "sample"}
ROWS = ("all", "test", "cal")
N_RESAMPLES = views.DEFAULT_RESAMPLES
# the same example, loaded as this session's data, on the Regression page (linked views, every option)
SESSION_EXAMPLE = {  # (home example, layout) → title in dashboard.EXAMPLES
    (DIABETES, "gaussian"): "Diabetes — Gaussian (mean, std) of a boosting ensemble",
    (DIABETES, "quantile"): "Diabetes — 9 quantiles of the same ensemble",
    (DIABETES, "sample"): "Diabetes — 50 ensemble samples",
    (LEVI, "gaussian"): "Levi et al. §4.1 synthetic — true σ vs random σ",
}

st.title("Calibration Lab")
st.markdown(
    "Is a model's predicted uncertainty **right**? This page diagnoses a built-in example; every number "
    "comes with an interval and with the value a **perfectly calibrated** forecaster with the same "
    "predicted distributions would get at this sample size, and every calibration statistic with the p-value of "
    "a test — one verdict per model says in words whether the miscalibration is real or could be noise."
)
with st.container(horizontal=True):
    st.page_link("pages/data.py", label="Diagnose your own predictions: upload a file or pick an example",
                 icon=":material/upload_file:")
    st.page_link("pages/help.py", label="How to read the diagrams", icon=":material/help:")
ui.loaded_data_link()  # the sidebar names the loaded data: where it is diagnosed, and that this is not it

c_example, c_layout, c_rows = st.columns([3, 2, 2])
example = c_example.selectbox("Example", list(EXAMPLES), key="home_example")
layout_label = c_layout.selectbox(
    "Predictive distribution",
    list(LAYOUTS),
    key="home_layout",
    disabled=example != DIABETES,
    help="The diabetes ensemble can be exported as a Gaussian, as quantiles or as samples.",
)
rows = c_rows.segmented_control("Rows", ROWS, key="home_rows", default="all", help="Rows of the `split` column")
rows = rows or "all"

layout = LAYOUTS[layout_label] if example == DIABETES else "gaussian"
try:
    report, messages = ui.cached(views.diagnose_example, spinner="Training the example model and diagnosing it…")(
        EXAMPLES[example], layout, rows, N_RESAMPLES
    )
except (cc.InputError, ValueError) as err:  # a clear message instead of a traceback
    st.error(f"Could not diagnose the example: {err}")
    st.stop()

for message in messages:
    st.caption(message)
n_models = len(report.models)
st.caption(f"{report.n_rows:,} rows" + (f" · {n_models} models: {', '.join(report.models)}" if n_models > 1 else ""))


def _explore() -> None:
    ui.set_example(SESSION_EXAMPLE[(example, layout)])
    st.session_state["reg_rows"] = rows


if st.button("Explore this example on the Regression page (select σ-bins, change bins, export)",
             key="home_explore", on_click=_explore, icon=":material/arrow_forward:"):
    st.switch_page("pages/regression.py")

colors = plots.model_colors(report.models)
tables = {name: views.diagram_tables(report, name) for name in
          ("calibration_curve", "levi_bins", "pit_histogram", "z_histogram", "qq", "intervals")}

left, right = st.columns(2)
with left:
    ui.chart(plots.calibration_curve_figure(tables["calibration_curve"], colors=colors), "home_kuleshov")
    st.caption(
        "Quantile calibration (Kuleshov et al. 2018): the share of targets below each predicted quantile. "
        "The ribbon is where a perfectly calibrated forecaster's curve falls 95% of the time."
    )
with right:
    ui.chart(plots.levi_figure(tables["levi_bins"], colors=colors), "home_levi")
    st.caption(
        "RMSE vs RMV per σ-bin (Levi et al. 2019) with 90% bootstrap intervals: calibrated uncertainty lies on "
        "the diagonal; a flat line means σ does not track the error."
    )

st.subheader("Metrics")
ui.show_verdicts(report)
ui.show_metric_groups(views.metric_table(report.metrics, report.options.get("level", 0.95), compact=True),
                      report.metrics)

st.subheader("More diagrams")
tab_pit, tab_z, tab_qq, tab_int = st.tabs(["PIT histogram", "z histogram", "Q-Q plot", "Intervals"])
for tab, figure, key in (
    (tab_pit, plots.pit_histogram_figure(tables["pit_histogram"], colors=colors), "home_pit"),
    (tab_z, plots.z_histogram_figure(tables["z_histogram"], colors=colors), "home_z"),
    (tab_qq, plots.qq_figure(tables["qq"], colors=colors), "home_qq"),
    (tab_int, plots.intervals_figure(tables["intervals"], colors=colors), "home_intervals"),
):
    with tab:
        ui.chart(figure, key)
