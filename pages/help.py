"""Help page: every metric's formula and paper (from the metric registry), every calibrator (from the calibrator
registry), and how to read each diagram."""

from __future__ import annotations

import streamlit as st

import dashboard  # noqa: F401  (every page imports it first: its address opened first shows app.py's navigation)
from calib_core.calibrators.registry import calibrator_help_table, decomposition_help_table, metric_help_table
from views.clinical import CLINICAL_HELP

DIAGRAMS: list[tuple[str, str, str]] = [
    (
        "Levi reliability diagram (RMSE vs RMV)",
        "Levi et al. 2019",
        "Rows are sorted by predicted σ and cut into equal-count bins. Each point is one bin: x = RMV = √(mean σ²), "
        "the spread the model promised; y = RMSE = √(mean ε²), the error it made (90% bootstrap interval as an error "
        "bar). Calibrated uncertainty lies on the diagonal **in every bin**. Points above the diagonal: σ too small "
        "there (over-confident); below: too large. A flat curve means σ does not track the error at all — the case "
        "the Kuleshov curve cannot see. Select bins (click, shift-click, box, lasso) to recompute the other views "
        "on their rows only (conditional calibration).",
    ),
    (
        "Quantile calibration curve (Kuleshov)",
        "Kuleshov et al. 2018; Utpala & Rai 2020",
        "For every level p the share of targets below the predicted p-quantile (p̂ = mean 1[F(y) ≤ p]). The diagonal "
        "is perfect calibration; the ribbon is a **simultaneous** 95% band: a perfectly calibrated forecaster's whole "
        "curve stays inside it 95% of the time at this N (Säilynoja, Bürkner & Vehtari 2022: binomial quantiles at a "
        "level γ adjusted by simulation for the 99 levels at once; a pointwise band would be left somewhere by about "
        "half of all calibrated data sets). The *ECDF difference* view draws the curve minus the diagonal. "
        "Below the diagonal at low p and above at high p = intervals too narrow "
        "(over-confident). Averaged over all inputs, so a random but well-scaled σ can look perfect here (Levi et al. "
        "§4.1 — try the synthetic example).",
    ),
    (
        "PIT histogram",
        "Dawid 1984; Gneiting et al. 2007",
        "Histogram of u = F(y) as a density; flat at 1 when calibrated. ∪-shape: targets fall in the tails too often "
        "(over-confident); ∩-shape: under-confident; a slope: biased mean. Ensembles use the randomised rank PIT.",
    ),
    (
        "z histogram and Q-Q plot",
        "standardised residuals",
        "z = (y − μ)/σ against N(0, 1). A wider histogram (std z > 1) = σ too small; an S-shaped Q-Q plot = heavier "
        "tails than Gaussian (CRUDE's motivation for an empirical z shape).",
    ),
    (
        "Central intervals",
        "Gneiting & Raftery 2007",
        "Observed coverage of the 50–99% central intervals against their nominal coverage; hover for mean width and "
        "interval score. Below the diagonal = too narrow.",
    ),
    (
        "ENCE against the number of σ-bins",
        "Pernot 2024 (arXiv 2402.10043, 2403.00423); Levi et al. 2019",
        "ENCE at 2–100 σ-bins (log axes) over the 95% band and mean (dotted) of a perfectly calibrated forecaster "
        "with the same σ: per bin Σσ²z² is drawn from a gamma law with the exact mean Σσ² and variance 2Σσ⁴ "
        "(Gaussian errors; 1,000 draws per bin count). Even when calibrated, ENCE grows with the number of bins — "
        "each bin's RMSE/RMV is estimated from N/B rows — so an ENCE is only large or small against the band at its "
        "own bin count. Above the band at every count: σ does not track the error. Inside: no evidence at any "
        "binning. The band assumes Gaussian errors; with heavier tails it sits higher (Pernot 2024, arXiv "
        "2403.00423).",
    ),
    (
        "Classification reliability diagram",
        "Guo et al. 2017, Fig. 1",
        "Predictions are binned by confidence (15 equal-width bins by default). Bars: accuracy in each bin with a 90% "
        "Wilson interval; hatched bars: the gap to the bin's mean confidence (red = over-confident, teal = "
        "under-confident). ECE is the count-weighted mean of the gaps, MCE the largest. For binary files, *positive "
        "class* semantics plots P(y = 1) against the frequency of y = 1 instead (scikit-learn / netcal). Click bars "
        "to list their rows and per-class breakdown.",
    ),
    (
        "Confidence histogram",
        "Guo et al. 2017, Fig. 1",
        "Share of predictions per confidence bin (same bins as the reliability diagram). The dashed line is the "
        "average confidence and the dotted line the accuracy; their distance is the overall over-confidence. Sparse "
        "bins make their reliability bars noisy — their Wilson intervals say how much.",
    ),
    (
        "Per-class reliability",
        "Kull et al. 2019 (class-wise calibration)",
        "One-vs-rest: for each class k, the frequency of y = k against the mean predicted p_k per bin; marker size "
        "grows with the bin count. The table lists each class's one-vs-rest ECE (their mean is the class-wise ECE).",
    ),
]


#: The CORP lens: reliability without bins, the score decomposition, the Murphy diagram, the MCB–DSC plane.
CORP_HELP = r"""
#### CORP reliability diagram (Classification page, *Reliability diagram: CORP (PAV)*)
*Dimitriadis, Gneiting & Jordan 2021, "Stable reliability diagrams for probabilistic classifiers", PNAS 118*

The forecast x (top label: the confidence max_k p_k, event "the arg-max is right"; binary files with *positive
class*: P(y = 1), event y = 1) against **x̂ = PAV(y | x)**, the isotonic regression of the event on the forecast
(pool-adjacent-violators; equal forecasts are pooled first). PAV chooses the bins itself — the best non-decreasing
step function — so there is no bin count to get wrong, and the curve is the recalibrated forecast. On the
diagonal = calibrated. **Consistency band** (grey, 90%): labels redrawn as y* ~ Bernoulli(x), PAV refitted, the
5–95% range at each x — where a *calibrated* forecaster's curve falls at this N; the curve outside it is
miscalibration beyond chance. **Confidence band** (the model's colour): rows resampled with replacement, the 5–95%
range of the refitted curve. Both use 1,000 / 200 resamples, fitted together in one PAV pass. Above 1,000 distinct
forecasts the resampling runs on groups of forecasts less than 0.002 apart (the curve and the numbers stay exact;
the band is that of forecasts moved by less than 0.002).

#### Score decomposition S = MCB − DSC + UNC
*Dimitriadis et al. 2021, eq. 4; Murphy 1973*

With S̄_X the mean score of the forecasts, S̄_C that of the PAV-recalibrated forecasts and S̄_R that of the base
rate ȳ: **MCB = S̄_X − S̄_C** (miscalibration: what recalibration gains, ≥ 0), **DSC = S̄_R − S̄_C** (discrimination:
what the recalibrated forecast gains over the base rate, ≥ 0), **UNC = S̄_R** (the base rate's score: ȳ(1 − ȳ) for
Brier, its entropy for the log score). The identity S̄_X = MCB − DSC + UNC is exact. Brier here is (x − y)² of the
binary event (for two classes half the metric table's Σ_k Brier). Reading: of two models with the same score, the
one with the smaller MCB is fixed by recalibration, the other needs better features. Intervals (95%): basic
bootstrap for S, DSC and UNC. MCB is biased upward (PAV fits noise: a calibrated forecaster still gets MCB > 0 —
column *MCB if calibrated*, the mean over the null draws), so its interval is centred on MCB minus that null mean,
clipped at 0 (measured coverage of the population MCB 0.93–1.00 in seeded simulations; the plain bootstrap covered
0.53–0.77). **MCB test**: p = (1 + #{null MCB ≥ MCB})/(1 + 1,000) over the null draws; *floor* = MCB beat every
draw. It is a further test of calibration, not part of the headline's primary family. Cross-checked against
model-diagnostics' `decompose` and scikit-learn's isotonic regression to 1e-9.

#### Murphy diagram
*Ehm, Gneiting, Jordan & Krüger 2016, JRSS B 78, §3*

The mean elementary score S̄_θ = [θ·#{x > θ, y = 0} + (1 − θ)·#{x ≤ θ, y = 1}]/N against the threshold θ: the
loss of a user who acts when the forecast exceeds θ and whose cost–loss ratio is θ. Every proper score of a binary
forecast is a mixture of these, so a model whose curve lies below another's at every θ is better for every user
and every proper score; crossing curves mean the ranking depends on the use. The area under a curve is half its
Brier score.

#### MCB–DSC plane (Recalibrate page)
*Dimitriadis, Gneiting, Jordan & Vogel 2024, "Evaluating probabilistic classifiers: the triptych", IJF 40*

Every model and every calibrator of a comparison as a point (MCB, DSC) of the Brier decomposition on the test rows,
averaged over every trial of the comparison (bars: ± one standard deviation over trials; the terms are also rows
of the comparison table and the CSV downloads, and the plane is in the page report), with arrows from each
model's uncalibrated point to its calibrators. Dotted lines have equal score
(DSC = MCB + UNC − S); better is up and to the left. A good calibrator moves left without dropping: recalibration
removes MCB and should keep DSC. For top-label events UNC can differ between points (a calibrator that moves the
arg-max changes which predictions are right), so the lines are labelled with MCB − DSC. Click a point to select
its model and calibrator in the figures and downloads below.
"""


VERDICTS = r"""
#### What is tested
Every **calibration statistic** is a test of one null hypothesis, *perfect calibration*: **the targets are
independent draws from the predicted distributions themselves** (regression: y_i ~ F_i, so the PIT u = F(y) is
uniform and z = (y − μ)/σ has mean 0 and variance 1; ensembles: the target is exchangeable with the members;
classification: y_i ~ Categorical(p_i)). Nothing else is assumed — in particular not a Gaussian error law when
the forecast is not Gaussian. Each statistic gets a p-value:

| statistic | test (null law) |
| --- | --- |
| PIT uniformity (KS max deviation) | exact Kolmogorov law (`scipy.stats.kstwo`) |
| coverage c% | exact binomial (ensembles with unequal per-row probabilities: Poisson-binomial, simulated) |
| mean z | t-test (Gaussian) or CLT with the exact per-row null moments |
| std z | χ²ₙ₋₁ (Gaussian) or a moment-matched gamma law |
| ENCE | simulated: per σ-bin sums Σσ²z² drawn from their null law (gamma with exact mean and variance) |
| calibration RMSE, l2 QCE, miscalibration area, PIT entropy | simulated uniform PITs (they depend on N only) |
| ECE, MCE, top-bin gap, confidence − accuracy | simulated: correct per sub-bin ~ Binomial, or a Bernstein bound |
| class-wise ECE | simulated label vectors y* ~ Categorical(p_i) |

Simulated p-values use the *Null draws* (2,000 by default) and show their Monte-Carlo standard error
(± in the table: √(p(1 − p)/B)); they are computed from per-bin summaries, so thousands of draws cost
milliseconds. **Proper scores** (NLL, CRPS, Brier, interval score) get their expectation under the null as the
*perfectly calibrated* value — a reference, not a test: a forecaster can be calibrated and still score badly.
**Descriptive** numbers (sharpness, Cv, widths, RMSE, accuracy, Spearman) get no verdict at all.

#### One headline verdict: the primary family and Holm
About 25 statistics tested at 5% each would flag something on most perfectly calibrated models. So one small
family is declared in advance and only it decides the headline:

* **regression, Gaussian forecasts**: PIT uniformity (KS), mean z, std z, coverage of the 90% interval, ENCE;
* **regression, quantile sets** — judged only at what they state: the PIT histogram over the cells between the
  stated levels (χ², `pit_chi2`), the share of targets below each stated quantile against its level (exact
  binomial, one p-value for all levels, `max_level_deviation`), the coverage of the widest central interval whose
  two ends are stated (e.g. 80% for nine levels 0.1 … 0.9) and the share of targets below the stated median
  (`below_median`). Targets equal to a stated quantile (integer forecasts) are bracketed: P(y < q_τ) ≤ τ ≤
  P(y ≤ q_τ), so the tests stay valid with ties (conservative). Everything that needs the law the tool
  interpolates between the quantiles (KS on the continuous PIT, z, ENCE, non-stated coverages) is shown but not
  tested: at large N it would judge the interpolation, not the forecast;
* **regression, ensembles** — judged as ensembles: the rank (Talagrand) histogram (χ² against flat, ties broken
  at random, `rank_chi2`), the coverage of the member range against its exact expectation (M − 1)/(M + 1)
  (`range_coverage`; 77.8% for 8 members, not 90%), the share below the median, and std z and ENCE unless the
  spread is degenerate (a few rows with near-zero spread carry the null, e.g. dry days of a rain ensemble: then
  they get a note instead of a test);
* **classification**: ECE and the gap between confidence and accuracy in the **top confidence bin** (the
  highest-confidence bins merged until they hold ≥ N/bins rows: where a classifier's confident decisions — and the
  over-confidence of modern networks — live).

**Holm's** step-down correction keeps the chance that a perfectly calibrated model is called *miscalibrated* at
most 5% (family-wise, whatever the dependence between the tests): sort the p-values, compare the smallest with
5%/m, the next with 5%/(m − 1), …; the table's *rejected (Holm)* marks the tests that fall. The headline's
p-value is the smallest Holm-adjusted p-value. Its **direction** is named only by a test that carries one and
passes its own Bonferroni bound 5%/max(m, 5) (not just Holm's step-down), so a named direction is wrong in at most 1% of
detections: std z above 1 or coverage below its expectation = *over-confident* (σ too small), the reverse =
*under-confident*; mean z > 0 or fewer than half the targets below the median = *biased low* (the share below the
median is valid whatever σ: a wrong σ cannot pass for a bias); for classification accuracy below confidence =
*over-confident*. When no test passes its bound the headline says *miscalibrated* without a direction.

#### The other statistics: Benjamini–Hochberg
The secondary calibration statistics show their own p-values and a *flagged (BH)* mark from the
**Benjamini–Hochberg** procedure at a 5% false-discovery rate (among the flags, at most 5% are expected to be
false on average). **Flags expected by chance**: a perfectly calibrated forecaster tested on m secondary
statistics at 5% each shows 0.05 × m unadjusted flags on average (about 1 of 20 — with ~20 regression statistics,
one); BH flags fewer, and none of them changes the headline.

#### "Perfectly calibrated" is the predicted law itself
The perfectly calibrated value is what the same predictions would score if the targets were drawn from them.
ENCE shows why this matters (Pernot 2024, arXiv 2402.10043 and 2403.00423): ENCE is positive under perfect
calibration and grows with the number of bins (≈ √((κ − 1)/(2π n_b)) with n_b rows per bin and κ = E z⁴ the
kurtosis of the standardised errors: ≈ 0.022 for N = 10,000 in 15 bins with Gaussian errors). Its reference
therefore depends on the assumed error law: with the same σ, Student-t errors with 6 degrees of freedom give a
reference about 1.5× larger (5 d.o.f.: ≈ 1.7×, simulated), a uniform error law about 0.6×. Calibration Lab takes
the law the forecast states (Gaussian for mean/std files, the quantiles or members otherwise); if you believe the
errors are heavier-tailed than the forecast says, that belief is itself a miscalibration the PIT and z tests see.

#### Why a value can sit outside its interval
The interval is for the **population value** of the statistic (what it would be with infinitely many rows), not
a range around the observed number. Statistics built from absolute or squared deviations (ENCE, ECE, calibration
RMSE, KS) are **biased upward** by noise: even a perfectly calibrated model scores above 0. Their intervals
are built around a **debiased** estimate (shown in the *debiased* column) or by the basic bootstrap, which
corrects the bias — so the plug-in value can lie above its interval, and the *note* says so. Where the test does
not reject, the interval extends down to 0 (perfect calibration is not excluded). Coverage uses the exact
Clopper–Pearson interval, KS-type statistics the distribution-free KS band, smooth statistics (NLL, CRPS, …)
the BCa block bootstrap (rows in random blocks, blocks re-weighted: thousands of replicates cost one matrix
product).

#### Intervals chosen for what they must cover
Each interval was checked in a simulation study for how often it covers the population value (README, *Regression
verdicts* and *Classification verdicts*); where a simple choice fell short it was replaced:

* **std z, skewness, kurtosis of z**: *bootstrap-t* — every bootstrap replicate is divided by its own standard
  error (the delta method, from the moments of z up to the 8th), std z on the log scale, skewness symmetric. The
  BCa interval covered 92% instead of 95% at N = 1,000; bootstrap-t covers 95% for std z, 92–95% for skewness.
  **Kurtosis** is a fourth moment and needs many rows: its interval covers less than 95% (about 91% at N = 200
  and 92–93% at N = 500–1,500 with Gaussian errors, less with heavy tails) — below N = 10,000 its note says so.
* **MCE**: a maximum over bins cannot be bootstrapped (the bootstrap never sees the noise of a bin of one or two
  rows; it covered 24–95%). Instead each non-empty bin's accuracy gets an exact Clopper–Pearson interval, all of
  them at once (Šidák: each at 95%^(1/bins)), and the interval of the largest |accuracy − confidence| follows.
  It is for the bins this data set fills — a bin no row falls in says nothing — and it is wide when a bin holds
  a few rows: that is how little MCE then says.
* **class-wise ECE**: its K × bins one-vs-rest cells mostly hold a few rows, where no debiased estimate is
  reliable (the debiased interval covered 0–59% under miscalibration for 10 and 100 classes). The interval is
  the plug-in ± the 95% quantile of the summed absolute cell error (the larger of its bootstrap and its
  perfect-calibration law): by the triangle inequality it covers whenever that error bound holds, so it is
  conservative — wide rather than wrong — and the plug-in is always inside.
"""

HEAVY_TAILS = r"""
#### Heavy tails: ZMS and mean log z² (Pernot 2023–24)
**ZMS** = mean z² (z = (y − μ)/σ). E z² = 1 for any calibrated error law, so ZMS ≈ 1 is average calibration of the
variances; > 1 means σ too small. It is a mean of *ratios*: a few huge σ or errors move it far less than the
calibration error MSE − mean σ² (Pernot 2024, arXiv 2402.10043). Test: N·ZMS ~ χ²_N exactly for Gaussian
predictions (a gamma law with the exact per-row null moments for quantile sets and ensembles; a finite ensemble's
reference is above 1). Interval: bootstrap-t on log ZMS (delta-method s.e. from z² and z⁴).

**mean log z²** is the log-based variant: log z² has every moment even when z has heavy tails, so its interval
keeps its level where ZMS's does not. Measured (300 data sets, N = 1,000, calibrated variance): with Gaussian
errors both intervals cover 94–95%; with Student-t₃ errors (infinite fourth moment) ZMS's 95% interval covers
**86%** of the true value 1, mean log z²'s covers **93%** of its own. Its price: the reference depends on the
error law — for calibrated **Gaussian** z it is E log χ²₁ = ψ(½) + log 2 = −(γ + log 2) ≈ **−1.2704**
(variance π²/2, normal test on the mean); for unit-variance **Student-t_ν** errors it is
ψ(½) − ψ(ν/2) + log(ν − 2) (ν = 5: −1.57; ν = 3: −2.00); the lab *The reference value depends on the error law*
shows ENCE's, ZMS's and mean log z²'s references under Gaussian, Student-t and empirical-z errors side by side.
So *mean log z² below −1.27 with ZMS ≈ 1 reads as
"variance right, tails heavier than Gaussian"*, not as under-confidence. σ → cσ shifts it by exactly −2 log c.
Quantile sets and ensembles get a reference simulated from the calibrated forecaster (20,000 random rows, one
draw each; its Monte-Carlo error is kept with the reference and added to the test's variance). Rows with z = 0
exactly (rounded data) are left out of the log variant and counted in its note. Both are *secondary* statistics
(Benjamini–Hochberg).
"""

QUANTILE_CORP = r"""
#### Quantile-score decomposition (CORP for regression quantiles)
For each level τ (0.05, 0.25, 0.5, 0.75, 0.95) the predicted τ-quantile x_i = F_i⁻¹(τ) is scored by the quantile
(pinball) score QS_τ(x, y) = (1{y ≤ x} − τ)(x − y) (Koenker & Bassett 1978; scoringrules' convention, checked to
1e-9). Following CORP (Dimitriadis, Gneiting & Jordan 2021, PNAS) for quantiles (Gneiting et al. 2023, *Model
diagnostics and forecast evaluation for quantiles*, Annu. Rev. Stat. Appl.):

* **x̂** = the isotonic τ-quantile regression of y on x — the best *increasing* recalibration of the forecast under
  the quantile score, computed exactly (threshold partitioning, checked against linear programming);
* **r** = the marginal τ-quantile of y (a constant);
* **MCB** = QS(x) − QS(x̂) ≥ 0: what recalibration would save (miscalibration); **DSC** = QS(r) − QS(x̂) ≥ 0: what
  the forecast's ordering is worth (discrimination); **UNC** = QS(r): the difficulty of the targets; and
  **QS = MCB − DSC + UNC** exactly.

Read MCB against the score (*MCB share*): a calibrated forecaster's MCB is PAV's overfit alone (measured 0.5–1.1% of
the score at N = 20,000 with Gaussian forecasts), an over-confident one's is large in the tails (σ halved: above 10%
at τ = 0.05 and 0.95) and small at the median. Intervals: 95% block bootstrap of the three means with x̂ held fixed
(they leave out the refit's variability, and MCB's plug-in keeps PAV's upward bias). This is the decomposition we
chose for regression: per quantile level (so a user sees *which* quantiles are off), not the CRPS one via isotonic
distributional regression, which needs a distributional fit.

#### CORP quantile reliability diagram (Regression page, below the decomposition table)
For the level τ chosen above the diagram, the recalibrated quantile x̂ (the isotonic τ-quantile regression of the
targets on the predicted τ-quantile x, the same fit as MCB's) is drawn against x (Gneiting, Wolffram, Resin, Kraus,
Bracher, Dimitriadis, Hagenmeyer, Jordan, Lerch, Phipps & Schienle 2023, Annu. Rev. Stat. Appl. 10, §3–4; CORP:
Dimitriadis, Gneiting & Jordan 2021). A forecast whose τ-quantile is calibrated (P(y ≤ x | x) = τ) lies on the
diagonal; **above** it the predicted quantile is too low there (more than a share τ of the targets fall below it),
**below** it too high. No bins to choose: the isotonic fit picks its own blocks (hover for their rows).

The grey ribbon is the pointwise 90% **consistency band** under calibration: targets redrawn from the forecasts,
y* ~ F_i, and the fit recomputed. It is computed without redrawing N rows: the fit is held constant on 200 groups of
consecutive forecasts and to a grid of 256 values, and by threshold decomposition P(x̂*(g) > c) is the chance that
the walk Σ_{g′ < b} (#{y* ≤ c in g′} − τ n_g′) peaks at a group boundary b ≤ g, with binomial counts per group
(200 draws per grid value). The band ends are the grid values just outside its quantiles (it errs wide by at most
one grid cell). Measured: calibrated Gaussian forecasts stay inside it at 89–93% of the groups (N = 300–30,000).
Where the curve leaves the band, the forecast's τ-quantile is off there beyond what chance gives at this N. With
σ-bins selected in the Levi diagram, the table and the diagram use those bins' rows.
"""

SMOOTH_ECE = """
#### Smooth ECE (Błasiok & Nakkiran 2023)
The binned ECE depends on the bins; **smooth ECE** replaces them with a kernel. With K_σ the Gaussian of width σ
reflected at 0 and 1, the smoothed residual is h_σ(t) = (1/N) Σ_i K_σ(t, f_i)(y_i − f_i) and smECE_σ = ∫₀¹ |h_σ(t)| dt
(f = confidence and y = 1[correct] for the top label; f = P(y = 1) and y = 1[y = 1] for the positive class). The
bandwidth is chosen by the data: smECE_σ falls as σ grows, so there is one σ* with smECE_σ* = σ*, and **smooth
ECE = σ*** — a consistent calibration measure (it cannot be made small or large by picking bins). The smooth
reliability diagram draws Σ K_σ*(t, f_i) y_i / Σ K_σ*(t, f_i) with the density of the predictions.

*Computation*: rows are rounded onto a grid of spacing Δ and smoothed in the cosine basis (the reflected kernel is
diagonal there); the grid's error is at most φ(1)(Δ/σ)²·mean|y − f| (≤ 1e-6 by default; tested against the
definition). *Cross-check*: the `relplot` package's `smECE` is reproduced to 1e-9 by `convention="relplot"`; it
differs from the paper's fixed point by design: its bandwidth is a 10-step bisection (up to 2⁻¹⁰ above σ*) and
it counts a prediction of exactly 0 or 1 with half its kernel.

*Test* (secondary, Benjamini–Hochberg): because smECE_σ − σ falls in σ, a perfectly calibrated data set has
smECE* ≥ s exactly when its smECE at the fixed bandwidth s exceeds s, so the p-value compares smECE at s = σ̂ with
1,000 null data sets (labels drawn from the predicted probabilities). The *perfectly calibrated* column is the mean
smooth ECE of such data sets (their own σ*). *Interval*: basic block bootstrap of smECE at the chosen σ̂ (the
bandwidth is conditioned on, as the bins of ECE are), clipped at 0 and extended to 0 when the test does not reject.

#### Calibration ratio Σp/Σy and TCE (Matsubara et al. 2023)
The **calibration ratio** R = Σ predicted / Σ observed events (top label: Σ confidence / number correct; positive
class: Σ P(y = 1) / number of positives) is the summary click-through models are judged by: 1 is right on average,
1.25 predicts 25% more events than occur. It cannot see errors that cancel across probabilities (read it with
ECE). *Interval*: delta method on the log scale, log R ± z·se with se² = var(p/p̄ − y/ȳ)/N (both sums vary with
the rows); its coverage was measured by simulation (94–96% for balanced classes at N = 300 and for 2% prevalence at
N = 5,000; README). *Test*: R is a monotone function of the overall gap Σ(p − y), tested with the same null draws.

**TCE** (test-based calibration error, an option on the Classification page) cuts the rows into 10 equal-mass bins
and tests each row's prediction with the exact binomial test of its bin's events: TCE = percent of rows rejected
at 5%. With the equal-tailed test (twice the smaller tail) a row is rejected exactly when its prediction lies
outside the bin's Clopper–Pearson interval, which makes it one comparison per row; the paper's code uses SciPy's
`binomtest` (outcomes no more likely than the observed one), `test="minlike"` in `calib_core`, which rejects more
often in small bins. TCE grows with N even for a perfectly calibrated model (the intervals shrink), so read it
against its *perfectly calibrated* value; it has no interval (no population value that does not depend on N).
"""

SLICE_EXPLORER = r"""
#### Slice explorer: where is it miscalibrated?
**Slices.** Every value of the `group` and `model` columns and of every other column of the file that no role took
(the loader keeps them and counts them, numeric or categorical: a number column with more than 12 distinct values
is numeric), numeric columns cut into equal-count quantile bins (the number of bins is yours), and every
intersection of two slices of different columns; slices below the minimum size are not searched, and an
intersection as large as one of its parents is that parent.

**Statistics and tests at each slice's size.** Regression: PIT uniformity (the table shows Pearson's χ² of the 10
PIT deciles; the test is exact: the most extreme decile count against Binomial(n, 1/10), Bonferroni over the 10
deciles, because χ²₉ is too optimistic at the search's thresholds near p = 10⁻⁶), coverage of the
central 90% interval (exact binomial), mean z and std z with z = Φ⁻¹(PIT) (exactly N(0, 1) under perfect
calibration for any continuous forecast, and (y − μ)/σ for a Gaussian one: exact normal and χ²ₙ₋₁ tests), ENCE on
five σ-bins fixed on all rows (simulated null, per bin MSE/MV ~ χ²_ν/ν with Satterthwaite's ν; not tested for
ensembles, whose own spread is noisy). Classification: ECE over 10 equal-width bins (each bin's count of events
tested by an exact binomial at the bin's mean probability, Bonferroni over the bins) and the calibration ratio
Σp/Σy (exact binomial at the slice's mean probability). Every slice's statistics come from
sums per slice computed for all slices at once (one pass over the rows per column and pair).

**Ranked by evidence, adjusted for the search.** A slice's tests are combined by Bonferroni (p = m·min p); the
*evidence* is −log₁₀ of that p, so a small slice needs a larger deviation to rank high. Every p-value is computed
in log space from its exact tail (asymptotic expansions where the library's tail underflows), so the evidence stays
a finite number at any n (5,321 means p ≈ 10⁻⁵³²¹) and large slices are never tied at infinity; equal evidence is
broken by the *effect*, the deciding test's deviation in per-row null standard deviations. Across all slices
searched the p-values are adjusted by Holm's step-down method, valid whatever the overlap of slices: a slice is
flagged *miscalibrated* when its adjusted p ≤ 0.05, so a perfectly calibrated model gets a flagged slice in at most
5% of data sets (measured: README, `bench/slices.py`). The multicalibration error of Guy et al. (2025, *Measuring
multi-calibration*) is the related summary: the largest standardised deviation over subpopulations.

**Funnel plot.** One statistic of every slice against its size (log scale), with the 95% limits of a perfectly
calibrated forecaster (dashed) and the limits adjusted for the number of slices searched (solid); flagged slices
are red. **Linked**: choosing a slice (a row of the list or a funnel point) restricts every diagram and table of
the Regression / Classification page to its rows, until *Show all rows*; the whole data (same filters) is drawn
faintly behind each diagram in grey (*all rows (faint)*; histogram bars as grey outlines) and the metric tables get
an *all rows* column, so the slice is read against the rest.

**Before and after a recalibration.** After a comparison on the Recalibrate page, the explorer ranks the slices of
its **held-out** rows (the test rows of its first trial; no calibrator saw them) for the uncalibrated predictions
and for each calibrator, with the same slices, tests and Holm adjustment: the worst slices side by side (rank,
statistic, evidence and adjusted p as *before → after*; *no longer flagged* when the calibrator fixed a flagged
slice) and a funnel plot of both. A calibrator fitted on all rows can fix the average and leave a slice flagged; a
slice-wise one (std scaling per slice, Mondrian conformal, temperature scaling per slice, by the slice's column)
fits each slice on its own calibration rows.
"""

st.title("Help")
st.markdown(
    "Calibration Lab asks whether predicted uncertainty is **right**. Above each metric table, one sentence per "
    "model says whether the predictions are **miscalibrated** (and how) or whether there is **no evidence of "
    "miscalibration** at this N. Every number comes with an **interval** for its population value and the value a "
    "**perfectly calibrated** forecaster with the same predictions would get at the same N; every calibration "
    "statistic with the **p-value** of a test and a Holm or Benjamini–Hochberg flag (tab *Tests and verdicts*).\n\n"
    "Each metric has a **kind**: a *calibration statistic* measures a departure from \"the targets are draws "
    "from the predicted distributions\"; a *proper score* rewards calibration and sharpness together (its value "
    "under perfect calibration is a reference, not a test); a *descriptive* number (sharpness, widths, accuracy, "
    "…) says something about the predictions but nothing about calibration. **better** says which direction wins "
    "(≈ a target value, e.g. coverage c% ≈ c)."
)
FORECAST_HUBS = r"""
#### Forecast hubs

**Files.** A hubverse hub's model output (task-ID columns such as `reference_date`, `horizon`, `location`,
`target`, then `output_type`, `output_type_id`, `value`; the model from `model_id` or the file name
`<round>-<model>.csv`) or a legacy COVID-19 / FluSight file (`forecast_date, target, target_end_date, location, type,
quantile, value`), plus one **truth** file (hubverse time series or oracle output, or `date, location, value`). The
format is recognised from the columns; load them under *Forecast hub* on the Data page (or
`python -m calib_core report HUB_FOLDER --truth FILE`).

**The join.** Each forecast unit (model × round × task IDs) takes the truth value of the columns both files share
(legacy: `target_end_date` ↔ `date`, `location`). Units without truth are counted by reason, never silently lost.
Task IDs are read as text (`01` stays `01`).

**Weighted interval score** (Bracher, Ray, Gneiting & Reich 2021). For a median m and K central intervals
[l_k, u_k] of nominal coverage 1 − α_k, with IS_α = (u − l) + (2/α)(l − y)₊ + (2/α)(y − u)₊:
WIS = (½|y − m| + Σ_k (α_k/2) IS_{α_k}) / (K + ½). Lower is better, in the data's units. Its parts add up to it:
**dispersion** Σ_k (α_k/2)(u_k − l_k)/(K + ½) (the width paid whatever happens), **overprediction**
[½(m − y)₊ + Σ_k (l_k − y)₊]/(K + ½) (forecast too high) and **underprediction** [½(y − m)₊ + Σ_k (y − u_k)₊]/(K + ½)
(too low).

**Coverage** of every stated central interval (levels τ and 1 − τ, nominal 100(1 − 2τ) %): the share of y with
q_τ ≤ y ≤ q_{1−τ}, inclusive ends — hub data are often integers and quantiles tie, so y on an end counts as covered.
Above nominal: intervals too wide; below: too narrow. **Bias** (Funk et al. 2019): in [−1, 1], positive when the
forecasts were too high. The Forecast hub page shows them per model, by horizon, by date and per location × date,
linked; the Regression page gives the verdicts at the stated levels.
"""
tab_v, tab_r, tab_c, tab_cal, tab_d, tab_data = st.tabs(
    ["Tests and verdicts", "Regression metrics", "Classification metrics", "Calibrators", "Diagrams", "Data & layouts"]
)
with tab_v:
    st.markdown(VERDICTS)
    st.markdown(SLICE_EXPLORER)
with tab_r:
    st.caption("Notation: ε = y − μ, z = ε/σ, u = F(y) (PIT); N rows, B σ-bins.")
    st.table(metric_help_table("regression"), hide_index=True, border="horizontal")
    st.markdown(HEAVY_TAILS)
    st.markdown(QUANTILE_CORP)
with tab_c:
    st.caption("Notation: p_i the predicted probability vector, ŷ_i = argmax_k p_ik, confidence = max_k p_ik.")
    st.table(metric_help_table("classification"), hide_index=True, border="horizontal")
    st.markdown(SMOOTH_ECE)
    st.markdown(CLINICAL_HELP)  # the clinical set, Hosmer–Lemeshow's groups, the loess curve, prevalence
with tab_cal:
    st.caption(
        "Every calibrator is fitted on calibration rows only and judged on held-out test rows (Recalibrate page). "
        "Parameters are shown with their defaults."
    )
    st.table(calibrator_help_table(), hide_index=True, border="horizontal")
with tab_d:
    for title, source, text in DIAGRAMS:
        st.markdown(f"#### {title}\n*{source}*\n\n{text}")
    st.markdown(CORP_HELP)
    st.markdown("#### The terms of the score decompositions")
    st.caption("MCB, DSC and UNC of the Brier and log scores (CORP, Classification page; the MCB–DSC plane, "
               "Recalibrate page) and of the quantile score (Regression page).")
    st.table(decomposition_help_table(), hide_index=True, border="horizontal")
with tab_data:
    st.markdown(
        """
**Regression** — one row per example, a target column `y` plus one of: `mean` and `std` (or `var`, `log_var`);
quantile columns `q0.05`, `q0.5`, `q0.95`, … (any levels, at least 2); samples `sample_0 … sample_{M−1}` (M ≥ 2);
or `mean` only (point predictions). **Classification** — `label` (0..K−1 or class names) plus `prob_0 … prob_{K−1}`
or `logit_0 … logit_{K−1}` (binary: one `prob` / `logit` column for the positive class; top-label files:
`label, pred_label, confidence`). Optional everywhere: `split` (`cal`/`test`), `group`, `model`, features `x*`.

Names are matched case-insensitively with common aliases (`y_true`, `target`, `mu`, `sigma`, …). When guessing
fails, the Data page shows the loader's message and a column-mapping form. Rows with missing or invalid values are
dropped and counted per reason; nothing is silently lost. Templates for every layout are on the Data page.

**Papers**: Levi et al. 2019 (ENCE, RMSE-vs-RMV, STD scaling); Kuleshov et al. 2018 (quantile calibration);
Utpala & Rai 2020 (quantile regularization, PIT entropy); Zelikman et al. 2020 (CRUDE); Camporeale & Carè 2021
(ACCRUE, CRPS, reliability score); Guo et al. 2017 (ECE, MCE, temperature scaling).
"""
    )
    st.markdown(FORECAST_HUBS)
