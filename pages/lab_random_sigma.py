"""Lab 1 — random uncertainty looks calibrated (Levi et al. 2019, §4.1, Fig. 1–2).

Thin page: sliders → ``calib_core.labs.random_sigma.run_random_sigma`` (cached on the slider values) →
figures from ``calib_core.plots``.  Selecting σ-bins in the Levi diagram adds the Kuleshov curve of the rows
in those bins (conditional calibration).  The lab's numbers are left in ``st.session_state["lab_random_sigma"]``
(the metric table) for tests.
"""

from __future__ import annotations

import streamlit as st

import dashboard as ui
from calib_core import plots
from calib_core.labs.random_sigma import LEARNED, RANDOM, STAGES, random_sigma_findings, run_random_sigma
from views.selection import describe_selection, with_selected

INTRO = (
    "Two forecasters of the same targets (x ~ U[0.1, 1], y ~ N(x, x²), mean μ = x): one with a **random σ** drawn "
    "independently of everything, one with a **learned σ(x)**. **What to look at:** switch the forecasts between "
    "raw, STD scaling and Kuleshov's isotonic recalibration and compare the two quantile-calibration curves; then "
    "the Levi RMSE-vs-RMV diagram, where an uninformative σ gives a flat line and a calibrated one the diagonal, and "
    "ENCE, its one-number summary. Click a σ-bin of the random σ to see its conditional calibration curve. What "
    "the numbers say is listed at the end."
)
page = ui.LabPage(
    "random_sigma",
    {"lab1_n_test": 4000, "lab1_n_cal": 2000, "lab1_seed": 0, "lab1_sigma_range": (1.0, 10.0),
     "lab1_bins": 15, "lab1_stage": "isotonic"},
    intro=INTRO,
)
c1, c2, c3 = st.columns(3)
c1.slider("Test rows N", 1000, 20000, step=1000, key="lab1_n_test")
c1.slider("Calibration rows (and training rows of the learned σ)", 200, 10000, step=200, key="lab1_n_cal",
          help="Levi et al. recalibrate on 6,000 samples.")
c2.slider("Random σ range", 0.1, 20.0, step=0.1, key="lab1_sigma_range", help="Levi et al.: σ ~ U[1, 10].")
c2.slider("Seed", 0, 99, key="lab1_seed")
c3.slider("σ-bins (Levi diagram, ENCE)", 5, 30, key="lab1_bins")
c3.segmented_control("Forecasts shown", list(STAGES), key="lab1_stage",
                     help="raw; after STD scaling (Levi's method: σ → s·σ); after Kuleshov's isotonic recalibration")
stage = page.value("lab1_stage", "isotonic")
sigma_low, sigma_high = st.session_state["lab1_sigma_range"]
params = page.params({"n_test": "lab1_n_test", "n_cal": "lab1_n_cal", "seed": "lab1_seed", "n_bins": "lab1_bins"},
                     sigma_low=float(sigma_low), sigma_high=float(sigma_high))

result = page.run(run_random_sigma, params, suffix=f"|{stage}")
models = (RANDOM, LEARNED)
colors = plots.model_colors(models)

# ------------------------------------------------------------------ selection of σ-bins (linked views)
context = (page.key,)
selection = ui.LinkedSelection("lab1", context)
epoch = selection.epoch


def _levi():
    fig = plots.levi_figure({m: result.tables[(m, stage)]["levi_bins"] for m in models}, colors=colors,
                            title=f"RMSE vs RMV — {stage}")
    fig.update_layout(meta={"epoch": epoch})
    return fig


levi = page.figure(f"levi|{epoch}", _levi)
conditional: dict[str, object] = {}  # the calibration curve of the selected σ-bins, per model
n_selected = 0
for m in models:
    bins = selection.for_name(m)
    cond = result.conditional_curve(m, stage, bins) if bins else None
    if cond is not None:
        conditional[m] = cond
        n_selected += int(result.tables[(m, stage)]["levi_bins"].set_index("bin").loc[list(bins), "count"].sum())
curves, dashes, curve_colors = with_selected({m: result.tables[(m, stage)]["calibration_curve"] for m in models},
                                             conditional, colors, "selected σ-bins")

selection_text = (
    "**No σ-bins selected** — click a bin in the Levi diagram (shift-click adds)." if selection.empty
    else f"**{describe_selection(selection.bins, n_selected, 'σ-bins')}** The dashed curves are their conditional "
    "calibration."
)
selection.row(selection_text)

left, right = st.columns(2)
with left:
    ui.chart(page.figure(f"curve|{sorted(selection.bins.items())}",
                               lambda: plots.calibration_curve_figure(curves, colors=curve_colors, dashes=dashes,
                                                                      title=f"Quantile calibration — {stage}")),
                 "lab1_curve")
    st.caption("Kuleshov et al. (2018): share of test targets below each predicted quantile; the ribbon is where a "
               "perfectly calibrated forecaster's curve falls 95% of the time.")
with right:
    selection.chart(levi, "lab1_levi")
    st.caption("Levi et al. (2019): per σ-bin, root mean predicted variance against the observed RMSE (90% "
               "bootstrap intervals). Calibrated σ follows the diagonal; an uninformative σ gives a flat line.")

st.subheader("Numbers (test rows)")
page.table(result.metrics, {}, "%.3f", text=2)
st.caption(
    "Calibration RMSE over the levels 0, 0.01, …, 1 and the KS distance read the quantile curve; ENCE (Levi eq. 8) "
    "reads the σ-bins; Cv (Levi eq. 9) is the spread of σ. "
    f"Learned σ̂(x) = √(π/2)·({result.learned_coef[0]:.3f} + {result.learned_coef[1]:.3f}·x)."
)
page.findings(random_sigma_findings(result, stage))
for note in result.zero_density_notes():  # an ∞ NLL says which rows and why
    st.warning(ui.md_escape(note), icon=":material/all_inclusive:")
page.finish(result.metrics)
