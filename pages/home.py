"""Home page: a real regression example, diagnosed (metric table + Kuleshov and Levi diagrams).

Thin by design: the example comes from ``calib_core.examples``, the numbers and diagram tables
from ``cc.diagnose`` and the figures from ``calib_core.plots``; this file only lays them out.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import calib_core as cc
from calib_core import examples, plots

DIABETES = "Diabetes — gradient-boosting ensemble (real data)"
LEVI = "Levi et al. §4.1 synthetic — true σ vs random σ"
EXAMPLES = (DIABETES, LEVI)
LAYOUTS = {"Gaussian (mean, std)": "gaussian", "Quantiles (9 levels)": "quantile", "Samples (50 draws)": "sample"}
ROWS = ("all", "test", "cal")
N_RESAMPLES = 200


@st.cache_data(max_entries=16, show_spinner="Training the example model and diagnosing it…")
def diagnosed(example: str, layout: str, rows: str, n_resamples: int) -> tuple[cc.Report, list[str]]:
    """Report of a built-in example; cached on the small explicit tokens in the signature."""
    pset = examples.diabetes_example(layout) if example == DIABETES else examples.levi_synthetic()
    if rows != "all":
        pset = pset.take(pset.split == rows)
    report = cc.diagnose(pset, n_resamples=n_resamples, seed=0)
    return report, list(pset.messages)


def _fmt(x: float) -> str:
    return "–" if pd.isna(x) else f"{x:.4g}"


def display_table(report: cc.Report) -> pd.DataFrame:
    """Value, 95% bootstrap CI and perfect-calibration value (with its 95% range) per metric."""
    t = plots.metric_display_table(report.metrics)
    level = report.options.get("level", 0.95)
    pct = f"{level:.0%}"
    out = pd.DataFrame(
        {
            "model": t["model"],
            "metric": t["label"],
            "value": t["value"],
            f"{pct} CI": [f"[{_fmt(a)}, {_fmt(b)}]" for a, b in zip(t["ci_low"], t["ci_high"])],
            "perfectly calibrated": t["perfect"],
            f"perfect {pct} range": [f"[{_fmt(a)}, {_fmt(b)}]" for a, b in zip(t["perfect_low"], t["perfect_high"])],
            "verdict": t["verdict"],
        }
    )
    if out["model"].nunique() == 1:
        out = out.drop(columns="model")
    return out


def chart(fig, key: str) -> None:
    st.plotly_chart(fig, key=key, theme=None, width="stretch", config={"displaylogo": False})


st.title("Calibration Lab")
st.markdown(
    "Is a model's predicted uncertainty **right**? This page diagnoses a built-in example; every number "
    "comes with a bootstrap interval and with the value a **perfectly calibrated** forecaster with the same "
    "predicted distributions would get at this sample size, so real miscalibration stands out from noise."
)
with st.container(horizontal=True):
    st.page_link("pages/data.py", label="Diagnose your own predictions: upload a file or pick an example",
                 icon=":material/upload_file:")
    st.page_link("pages/help.py", label="How to read the diagrams", icon=":material/help:")

c_example, c_layout, c_rows = st.columns([3, 2, 2])
example = c_example.selectbox("Example", EXAMPLES, key="home_example")
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
    report, messages = diagnosed(example, layout, rows, N_RESAMPLES)
except (cc.InputError, ValueError) as err:  # a clear message instead of a traceback
    st.error(f"Could not diagnose the example: {err}")
    st.stop()

for message in messages:
    st.caption(message)
n_models = len(report.models)
st.caption(f"{report.n_rows:,} rows" + (f" · {n_models} models: {', '.join(report.models)}" if n_models > 1 else ""))

# the same example, loaded as this session's data, on the Regression page (linked views, every option)
SESSION_EXAMPLE = {  # (home example, layout) → title in pages.common.EXAMPLES
    (DIABETES, "gaussian"): "Diabetes — Gaussian (mean, std) of a boosting ensemble",
    (DIABETES, "quantile"): "Diabetes — 9 quantiles of the same ensemble",
    (DIABETES, "sample"): "Diabetes — 50 ensemble samples",
    (LEVI, "gaussian"): "Levi et al. §4.1 synthetic — true σ vs random σ",
}


def _explore() -> None:
    from pages import common

    title = SESSION_EXAMPLE[(example, layout)]
    common.set_data(common.load_example(title), f"example:{title}", title, "example")
    st.session_state["reg_rows"] = rows


if st.button("Explore this example on the Regression page (select σ-bins, change bins, export)",
             key="home_explore", on_click=_explore, icon=":material/arrow_forward:"):
    st.switch_page("pages/regression.py")

colors = plots.model_colors(report.models)


def tables_of(name: str) -> dict[str, pd.DataFrame]:
    return {m: report.diagrams[(m, cc.ALL)][name] for m in report.models if (m, cc.ALL) in report.diagrams}


left, right = st.columns(2)
with left:
    chart(plots.calibration_curve_figure(tables_of("calibration_curve"), colors=colors), "home_kuleshov")
    st.caption(
        "Quantile calibration (Kuleshov et al. 2018): the share of targets below each predicted quantile. "
        "The ribbon is where a perfectly calibrated forecaster's curve falls 95% of the time."
    )
with right:
    chart(plots.levi_figure(tables_of("levi_bins"), colors=colors), "home_levi")
    st.caption(
        "RMSE vs RMV per σ-bin (Levi et al. 2019) with 90% bootstrap intervals: calibrated uncertainty lies on "
        "the diagonal; a flat line means σ does not track the error."
    )

st.subheader("Metrics")
st.dataframe(
    display_table(report),
    hide_index=True,
    width="stretch",
    height=740,  # about 20 rows; the rest scroll
    column_config={
        "value": st.column_config.NumberColumn(format="%.4g"),
        "perfectly calibrated": st.column_config.NumberColumn(
            format="%.4g", help="Mean over targets simulated from the predicted distributions themselves"
        ),
        "verdict": st.column_config.TextColumn(help="Is the value outside the perfect-calibration range?"),
    },
)

st.subheader("More diagrams")
tab_pit, tab_z, tab_qq, tab_int = st.tabs(["PIT histogram", "z histogram", "Q-Q plot", "Intervals"])
with tab_pit:
    chart(plots.pit_histogram_figure(tables_of("pit_histogram"), colors=colors), "home_pit")
with tab_z:
    chart(plots.z_histogram_figure(tables_of("z_histogram"), colors=colors), "home_z")
with tab_qq:
    chart(plots.qq_figure(tables_of("qq"), colors=colors), "home_qq")
with tab_int:
    chart(plots.intervals_figure(tables_of("intervals"), colors=colors), "home_intervals")
