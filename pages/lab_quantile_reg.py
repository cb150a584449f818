"""Lab 8 — quantile regularisation: a heteroscedastic network trained with and without λ·H(PIT), side by side.

Thin page: sliders, a cached call to ``calib_core.labs.quantile_reg.run_quantile_reg`` and its figures.  The
numbers the lab claims are stored in ``st.session_state["lab_quantile_reg"]`` (read by the AppTest).
"""

from __future__ import annotations

import streamlit as st

import dashboard as ui
from calib_core.calibrators import registry
from calib_core.labs.quantile_reg import quantile_reg_findings, run_quantile_reg

LOOK = (
    "**What to look at.** Both networks are the same (same data, same initialisation); only the loss differs: "
    "λ·H(PIT) rewards a uniform training PIT. A network that explains its training patients with tiny σ's is too "
    "sure of itself on new ones: its test calibration curve runs flat through the middle, its test PIT piles up "
    "at 0 and 1 and its test NLL is large. Compare the two curves, the two PIT histograms and the numbers below; "
    "raise λ, or regularise the weights (α) instead, and see which of them move."
)
page = ui.LabPage(
    "quantile_reg",
    {"labqr_lam": 2.0, "labqr_n": 300, "labqr_seed": 0, "labqr_hidden": 16, "labqr_alpha": 1.0},
    look=LOOK,
)
c1, c2, c3, c4, c5 = st.columns(5)
c1.slider("λ (quantile regulariser)", 0.1, 10.0, key="labqr_lam", step=0.1)
c2.slider("Training patients", 100, 400, key="labqr_n", step=10,
          help="The other patients of the 442 are the test rows.")
c3.number_input("Seed (split and initialisation)", 0, 10_000, key="labqr_seed", step=1)
c4.select_slider("Hidden units", [0, 4, 8, 16, 32], key="labqr_hidden", help="0 = linear heteroscedastic model.")
c5.select_slider("L2 weight penalty α", [0.1, 1.0, 10.0, 100.0], key="labqr_alpha")

params = page.params({"lam": "labqr_lam", "n_train": "labqr_n", "seed": "labqr_seed", "hidden": "labqr_hidden",
                      "alpha": "labqr_alpha"}, digits=4)

result = page.run(run_quantile_reg, params, spinner="Training two networks…", max_entries=32)
figs = page.figures(result, ("curve", "pit"))
plain, regularised = result.names

SHOWN = (("nll", "{:.4g}"), ("calibration_rmse", "{:.3f}"), ("rmse", "{:.1f}"))  # labels: the registry's
for col, (metric, fmt) in zip(st.columns(3), SHOWN):
    before, after = result.value(plain, "test", metric), result.value(regularised, "test", metric)
    label = f"test {registry.metric_label(metric, 'regression')}"
    col.metric(f"{label} ({plain} → {regularised})", fmt.format(after), delta=fmt.format(after - before),
               delta_color="inverse")

left, right = st.columns(2)
with left:
    ui.chart(figs["curve"], "labqr_curve")
with right:
    ui.chart(figs["pit"], "labqr_pit")

page.table(result.metrics, {"calibration_error_qr": "QR calibration error ×100 (eq. 8)"}, "%.4g",
           text=("model", "rows"))
st.caption(
    f"Diabetes data (scikit-learn, 442 patients): {result.n_train} training and {result.n_test} test patients. "
    "The λ = 0 model is plain Gaussian maximum likelihood."
)
page.findings(quantile_reg_findings(result))

page.finish({
    "params": params,
    "names": list(result.names),
    "metrics": result.metrics.to_dict("list"),
})
