"""Lab 10 — the reference value depends on the error law (Pernot 2024).

Thin page: sliders → ``calib_core.labs.error_law.run_error_law`` (cached on the slider values) → figures from
``calib_core.plots.heavy_tails``.  The lab's reference table is left in ``st.session_state["lab_error_law"]``.
"""

from __future__ import annotations

import streamlit as st

import dashboard as ui
from calib_core.labs.error_law import error_law_findings, references_display, run_error_law
from calib_core.plots.heavy_tails import error_law_ence_figure, error_law_references_figure

INTRO = (
    "N forecasts with heteroscedastic σ = exp(U(−1, 1)) and errors σ·t, t a Student-t with ν degrees of freedom "
    "scaled to variance 1: the σ are **right on average in variance**, the tails heavier than Gaussian for small ν. "
    "The same forecasts are then judged under three nulls — a perfectly calibrated forecaster with these σ whose "
    "standardised errors are **Gaussian**, **Student-t_ν** (the truth here) or **the data's own z** (resampled, "
    "rescaled to mean square 1). **What to look at:** left, the data's ENCE against the three bands as the number of "
    "σ-bins grows; right, where ENCE, ZMS and mean log z² fall against each law's reference. Move ν down to 3 and "
    "N up. What the numbers say is listed at the end."
)
page = ui.LabPage("error_law", {"lab10_n": 2000, "lab10_nu": 4.0, "lab10_bins": 15, "lab10_seed": 0},
                  intro=INTRO)
c1, c2, c3 = st.columns(3)
c1.slider("N", 200, 20000, step=200, key="lab10_n")
c1.slider("Seed", 0, 99, key="lab10_seed")
c2.slider("Degrees of freedom ν of the errors", 2.5, 50.0, step=0.5, key="lab10_nu",
          help="Student-t_ν scaled to variance 1; ν ≤ 4: infinite fourth moment; ν → ∞: Gaussian.")
c3.slider("σ-bins B (ENCE)", 5, 50, key="lab10_bins", help="The bin count of the right-hand panel (Levi et al.: 15).")
params = page.params({"n": "lab10_n", "nu": "lab10_nu", "n_bins": "lab10_bins", "seed": "lab10_seed"}, digits=2)

result = page.run(run_error_law, params)
left, right = st.columns(2)
with left:
    ui.chart(page.figure("ence", lambda: error_law_ence_figure(result.bands, result.observed,
                                                               current=result.n_bins)), "lab10_ence")
    st.caption(f"ENCE of the data (black) at 2–{int(result.observed['n_bins'].max())} equal-count σ-bins, over the "
               f"95% band of {result.draws} data sets simulated under each null with the same σ. The bands rise with "
               "the number of bins under every law, and sit higher the heavier the tails.")
with right:
    ui.chart(page.figure("references", lambda: error_law_references_figure(result.references,
                                                                           n_bins=result.n_bins)), "lab10_refs")
    st.caption("Reference value and 95% band under each error law: each law's reference (mean of the simulated "
               "values) with the band its draws fill; the dashed line is the "
               "data's value. ZMS's reference is 1 under every law; ENCE's and mean log z²'s move.")
page.table(references_display(result), {"null": "error law", "statistic": "statistic", "mean": "reference",
                               "low": "band low", "high": "band high", "observed": "observed",
                               "p_value": "p-value", "verdict": "observed vs band"}, "%.4g",
           text=("null", "statistic", "verdict"))
page.findings(error_law_findings(result))
page.finish(result.references)
