"""Core claims of teaching labs 6–9 (calib_core.labs.three_names, accrue, quantile_reg, temperature).

Every lab's result is checked against an independent computation (order statistics written out, the toy sets'
true σ(x), scikit-learn/NumPy references) and against the claim the lab page makes.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import stats

import calib_core as cc
from calib_core.calibrators import registry as reg
from calib_core.data import examples
from calib_core.data.toy import make_toy, toy_sigma
from calib_core.labs.accrue import CRPSOnlySigma, accrue_findings, run_accrue
from calib_core.labs.quantile_reg import quantile_reg_findings, run_quantile_reg
from calib_core.labs.temperature import DATASETS, run_temperature
from calib_core.labs.three_names import NOISE_SHAPES, run_three_names, three_names_findings
from calib_core.metrics import classification as cm
from calib_core.metrics import regression as rm

HYP = settings(max_examples=15, deadline=None, derandomize=True)


# ------------------------------------------------------------------------------------------------ lab 6
@HYP
@given(
    L=st.integers(60, 800),
    coverage=st.floats(0.5, 0.95),
    noise=st.sampled_from(NOISE_SHAPES),
    seed=st.integers(0, 50),
)
def test_three_names_endpoints_within_one_rank(L, coverage, noise, seed):
    r = run_three_names(L, 400, coverage=coverage, noise=noise, seed=seed, spread=1.7, shift=0.3)
    z = r.z_sorted
    b = r.bounds.set_index("method")
    alpha = 1.0 - coverage
    # CRUDE's bounds are the order statistics z_(⌊pL⌋+1) at p = (1 ∓ c)/2 (CRUDE Algorithm 1)
    p_lo, p_hi = 0.5 - coverage / 2.0, 0.5 + coverage / 2.0  # (the same floating-point p as the interval)
    assert b.loc["CRUDE", "lower_z"] == pytest.approx(z[int(p_lo * L)], abs=1e-12)
    assert b.loc["CRUDE", "upper_z"] == pytest.approx(z[min(int(p_hi * L), L - 1)], abs=1e-12)
    # signed conformal: the (L + 1) finite-sample ranks
    lo_rank = int(np.floor((L + 1) * alpha / 2 + 1e-9))
    hi_rank = int(np.ceil((L + 1) * (1 - alpha / 2) - 1e-9))
    assert b.loc["split conformal (signed)", "lower_z"] == pytest.approx(z[lo_rank - 1], abs=1e-12)
    assert b.loc["split conformal (signed)", "upper_z"] == pytest.approx(z[hi_rank - 1], abs=1e-12)
    for m in ("split conformal (signed)", "Kuleshov isotonic"):
        assert abs(b.loc[m, "lower_rank"] - b.loc["CRUDE", "lower_rank"]) <= 1
        assert abs(b.loc[m, "upper_rank"] - b.loc["CRUDE", "upper_rank"]) <= 1
        assert r.max_abs_difference[m] <= r.max_neighbour_gap * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("L, coverage", [(999, 0.9), (199, 0.8), (399, 0.5)])
def test_three_names_crude_equals_conformal_when_ranks_are_integers(L, coverage):
    """CRUDE §3.3: with (L + 1)α/2 an integer the two give identical intervals (difference exactly 0)."""
    r = run_three_names(L, 2000, coverage=coverage, seed=3)
    assert r.max_abs_difference["split conformal (signed)"] == 0.0
    b = r.bounds.set_index("method")
    assert b.loc["CRUDE", "coverage_test"] == b.loc["split conformal (signed)", "coverage_test"]


def test_three_names_coverage_is_nominal_and_uncalibrated_is_not():
    """Default lab: over-confident forecaster (spread 1.5); measured coverage 0.902 for all three, 0.73 before."""
    r = run_three_names()
    b = r.bounds.set_index("method")
    for m in ("CRUDE", "split conformal (signed)", "Kuleshov isotonic"):
        assert abs(b.loc[m, "coverage_test"] - 0.9) < 0.015
    assert b.loc["uncalibrated Gaussian", "coverage_test"] < 0.78
    # the uncalibrated bounds are the Gaussian ±1.645
    assert b.loc["uncalibrated Gaussian", "upper_z"] == pytest.approx(1.6448536, rel=1e-6)
    figs = r.figures()
    assert set(figs) == {"quantiles", "intervals", "coverage"}
    assert all(len(f.to_json()) < 100_000 for f in figs.values())


@pytest.mark.parametrize("kw", [dict(), dict(n_calibration=500, coverage=0.8, spread=1.0, noise="skewed"),
                                dict(n_calibration=50, seed=3), dict(spread=1.0)])
def test_three_names_findings_are_computed_from_the_numbers(kw):
    """Defaults: CRUDE = conformal exactly, all three inside the grey band, the uncalibrated Gaussian below it;
    L = 50, seed 3: conformal covers 0.978 (outside the band, the fixed text said 'the three agree'); spread 1:
    the uncalibrated Gaussian is inside the band."""
    r = run_three_names(**kw)
    b = r.bounds.set_index("method")
    text = " ".join(three_names_findings(r))
    c, n, L = r.coverage, r.n_test, r.n_calibration
    lo, hi = stats.binom.ppf([0.025, 0.975], n, c) / n
    for m in b.index:
        assert f"{b.loc[m, 'coverage_test']:.4f}" in text
    inside = [lo <= b.loc[m, "coverage_test"] <= hi for m in ("CRUDE", "split conformal (signed)", "Kuleshov isotonic")]
    assert ("all three inside it" in text) == all(inside)
    assert ("calibration rows add their own spread" in text) == (not all(inside))
    u = b.loc["uncalibrated Gaussian", "coverage_test"]
    assert ("too narrow (over-confident)" in text) == (u < lo) and ("too wide (under-confident)" in text) == (u > hi)
    assert ("needs no recalibration" in text) == (lo <= u <= hi)
    assert ("coincide exactly" in text) == (r.max_abs_difference["split conformal (signed)"] == 0.0)
    half = (L + 1) * (1 - c) / 2
    assert ("is an integer" in text) == (abs(half - round(half)) < 1e-9 and "coincide exactly" in text)
    assert f"largest neighbouring z-gap = {r.max_neighbour_gap:.4g}" in text and "within the bound" in text
    apart = max(abs(b.loc[m, s] - b.loc["CRUDE", s]) for m in ("split conformal (signed)", "Kuleshov isotonic")
                for s in ("lower_rank", "upper_rank"))
    assert f"at most {apart:g} apart" in text and apart <= 1
    if kw == dict(n_calibration=50, seed=3):
        assert not all(inside)
    if kw == dict(spread=1.0):
        assert lo <= u <= hi


# ------------------------------------------------------------------------------------------------ lab 7
@pytest.mark.parametrize("toy", ["G", "Y", "W", "5D"])
def test_accrue_lab_beats_kmeans_and_constant_sigma(toy):
    """Measured (seed 0, N = 2000): median relative σ error ACCRUE / k-means (k = 5) / constant:
    G 1.4 / 4.2 / 16%, Y 5.6 / 16.5 / 50%, W 8.1 / 54 / 207%, 5D 12.4 / 38 / 37%."""
    r = run_accrue(toy, 2000, seed=0)
    e = r.median_errors()
    assert e["ACCRUE"] < 0.6 * e["k-means σ"]
    assert e["ACCRUE"] < 0.6 * e["constant σ"]
    assert e["ACCRUE"] < 0.15
    # the headline number is the median of the stored per-row errors against the toy set's true σ(x)
    assert e["ACCRUE"] == pytest.approx(float(np.median(np.abs(r.errors["ACCRUE"]))), rel=1e-12)
    if r.one_dimensional:
        assert_allclose(r.curves["true"], toy_sigma(toy, r.curves["x"].to_numpy()[:, None]))
        assert r.degree is not None and r.degree >= 1
    else:
        assert r.degree is None and len(r.curves) == 500


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_accrue_lab_reliability_term_helps_on_y(seed):
    """On Y the CRPS-only degree path stops early; ACCRUE's σ is closer (measured seeds 0–4: 4.5% vs 8.5% mean)."""
    e = run_accrue("Y", 2000, seed=seed).median_errors()
    assert e["ACCRUE"] < e["CRPS only"]


@pytest.mark.parametrize("kw", [dict(toy="Y"), dict(toy="G", n=100), dict(toy="5D", n=1500, n_clusters=8)])
def test_accrue_findings_are_computed_from_the_numbers(kw):
    """Y: the reliability term helps (5.6% vs 7.5%); G at N = 100: CRPS only is better (3.9% vs 4.7%) and every
    KS distance is below the DKW bound; 5D: k-means is no better than a constant σ (38.3% vs 38.0%)."""
    r = run_accrue(**kw)
    e = r.median_errors()
    text = " ".join(accrue_findings(r))
    for name, v in e.items():
        assert f"{name} {100 * v:.1f}%" in text
    assert f"{min(e, key=e.get)} recovers σ(x) best" in text
    a, c = round(1000 * e["ACCRUE"]), round(1000 * e["CRPS only"])
    assert ("the reliability term helps" in text) == (a < c)
    assert ("the CRPS alone does better" in text) == (a > c)
    assert ("Both miss σ(x) by more than 10%" in text) == (min(e["ACCRUE"], e["CRPS only"]) > 0.10)
    assert ("no real improvement on a constant σ" in text) == (e["k-means σ"] >= 0.9 * e["constant σ"])
    if r.one_dimensional:
        assert f"degree {r.degree} for ACCRUE and {r.crps_degree} for CRPS only" in text
    else:
        assert r.crps_degree is None and "Algorithm 1" not in text
    bound = np.sqrt(np.log(2.0 / 0.01) / (2.0 * 5000))
    ks = dict(zip(r.metrics["method"], r.metrics["calibration_error"]))
    above = [m for m, v in ks.items() if v > bound]
    assert f"DKW bound {bound:.4f}" in text
    assert ("all below it" in text) == (not above)
    if above and len(above) < len(ks):
        assert f"{' and '.join(above)} above it, the other{'s' if len(ks) - len(above) > 1 else ''} below" in text
    if kw["toy"] == "G":  # the settings where the old fixed text ("ACCRUE follows it closely") did not say why
        assert a > c and not above


def test_crps_only_sigma_is_accrue_with_beta_one():
    data = make_toy("G", 1000, 4)
    est = CRPSOnlySigma().fit(data.f, data.y, features=data.x)
    assert est.beta_ == 1.0
    assert est.cost_ == pytest.approx(est.crps_, rel=1e-12)
    g = cc.Gaussian(data.f, est.predict_sigma(data.x))
    assert est.crps_ == pytest.approx(rm.crps(data.y, g), rel=1e-9)
    # it minimises the CRPS: lower than the constant start std(ε) and than the true σ on these rows
    const = cc.Gaussian(data.f, np.full(1000, np.std(data.eps)))
    assert est.crps_ < rm.crps(data.y, const)
    assert est.crps_ <= rm.crps(data.y, cc.Gaussian(data.f, data.sigma)) + 1e-9


# ------------------------------------------------------------------------------------------------ lab 8
def test_quantile_reg_lab_defaults_reproduce_the_claim():
    """Defaults (λ = 2, 300 patients, 16 hidden units, α = 1, seed 0). Measured: test NLL 2372 → 7.3, test calibration
    RMSE 0.153 → 0.119, test RMSE 85.8 → 72.0, training PIT entropy −0.062 → 0.036."""
    r = run_quantile_reg()
    plain, reg = r.names
    assert (plain, reg) == ("λ = 0", "λ = 2")
    assert r.value(reg, "test", "nll") < 0.1 * r.value(plain, "test", "nll")
    assert r.value(reg, "test", "calibration_rmse") < r.value(plain, "test", "calibration_rmse") - 0.01
    assert r.value(reg, "train", "pit_entropy") > r.value(plain, "train", "pit_entropy")
    assert r.value(reg, "train", "calibration_rmse") < r.value(plain, "train", "calibration_rmse")
    assert r.n_train + r.n_test == 442
    # the table's numbers are the metrics of the curves shown: calibration RMSE from the Kuleshov curve table
    for name in r.names:
        t = r.curves[name]
        assert r.value(name, "test", "calibration_rmse") == pytest.approx(
            float(np.sqrt(np.mean((t["observed"] - t["level"]) ** 2))), rel=1e-9
        )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_quantile_reg_lab_lowers_test_nll_on_every_split(seed):
    r = run_quantile_reg(2.0, 300, seed=seed)
    plain, reg = r.names
    assert r.value(reg, "test", "nll") < r.value(plain, "test", "nll")
    assert r.value(reg, "test", "rmse") < r.value(plain, "test", "rmse")


@pytest.mark.parametrize("kw", [dict(), dict(hidden=0), dict(lam=5.0, seed=1)])
def test_quantile_reg_findings_are_computed_from_the_numbers(kw):
    """Defaults: the regulariser helps everywhere; 0 hidden units (linear model): it worsens the test calibration
    RMSE (0.041 -> 0.049) and the test RMSE, and the plain model's test PIT is within the binomial range."""
    r = run_quantile_reg(**kw)
    plain, reg = r.names
    text = " ".join(quantile_reg_findings(r))

    def moved(metric: str, rows: str, fmt: str) -> int:
        a, b = fmt.format(r.value(plain, rows, metric)), fmt.format(r.value(reg, rows, metric))
        assert f"{a} → {b}" in text
        return 0 if a == b else (-1 if r.value(reg, rows, metric) < r.value(plain, rows, metric) else 1)

    nll = moved("nll", "test", "{:.4g}")
    assert ("lowers it" in text) == (nll < 0) and ("raises it" in text) == (nll > 0)
    cal = moved("calibration_rmse", "test", "{:.3f}")
    assert ("towards the diagonal" in text) == (cal < 0) and ("away from the diagonal" in text) == (cal > 0)
    rmse = moved("rmse", "test", "{:.1f}")
    assert ("means get better" in text) == (rmse < 0) and ("means get worse" in text) == (rmse > 0)
    ent = moved("pit_entropy", "train", "{:.3f}")
    assert ("pushed the training PIT towards uniform" in text) == (ent > 0)
    assert ("did not push" in text) == (ent < 0)
    lo, hi = stats.binom.ppf([0.005, 0.995], r.n_test, 0.2) / r.n_test
    for name in r.names:
        counts = r.pit[name]["count"].to_numpy()
        outer = (counts[0] + counts[-1]) / counts.sum()
        assert f"{outer:.0%} for {name}" in text
        if outer > hi:
            assert "over-confident" in text
        elif outer < lo:
            assert "under-confident" in text
        else:
            assert "within the range of a calibrated forecaster" in text
        assert (f"−inf for {name}" in text or f"and {name}:" in text) == bool(np.isneginf(
            r.value(name, "test", "pit_entropy")))
    if kw == dict(hidden=0):  # the case the old fixed text got wrong
        assert cal > 0 and "within the range" in text


# ------------------------------------------------------------------------------------------------ lab 9
def _reference_ece(conf: np.ndarray, hit: np.ndarray, m: int) -> float:
    """Guo eq. 3 written out with bins ((j−1)/M, j/M], the first closed (loop over bins, not rows)."""
    total = 0.0
    for j in range(m):
        lo, hi = j / m, (j + 1) / m
        inside = (conf > lo) & (conf <= hi) if j else (conf >= lo) & (conf <= hi)
        if inside.any():
            total += inside.sum() / conf.size * abs(hit[inside].mean() - conf[inside].mean())
    return total


def test_temperature_lab_digits_defaults():
    """Measured: T = 4.26, test ECE (M = 15) 0.061 → 0.020, accuracy 0.9291 before and after (the README's numbers);
    histogram binning and isotonic change 10 and 17 of 649 predictions."""
    r = run_temperature()
    assert r.temperature > 2.0
    assert r.value("uncalibrated", "mean_confidence") > r.value("uncalibrated", "accuracy") + 0.03  # over-confident
    assert r.value("temperature scaling", "ece") < 0.5 * r.value("uncalibrated", "ece")
    # one temperature changes no prediction: accuracy identical to the last bit
    assert r.value("temperature scaling", "accuracy") == r.value("uncalibrated", "accuracy")
    assert r.value("temperature scaling", "changed_predictions") == 0
    assert r.value("isotonic", "changed_predictions") > 0
    # ECE depends on M; the table's values are Guo's eq. 3 written out
    pset = examples.digits_example()
    test = pset.split == "test"
    p = cm.softmax(pset.logits[test])
    y = pset.labels[test]
    conf, hit = p.max(axis=1), (p.argmax(axis=1) == y).astype(float)
    for m, value in zip(r.ece_by_bins["n_bins"], r.ece_by_bins["uncalibrated"]):
        assert value == pytest.approx(_reference_ece(conf, hit, m), abs=1e-12)
    ts = r.ece_by_bins["temperature scaling"]
    assert ts.max() - ts.min() > 0.02  # measured 0.003 (M = 2) … 0.037 (M = 50)
    assert r.value("uncalibrated", "ece") == pytest.approx(
        float(r.ece_by_bins.set_index("n_bins").loc[15, "uncalibrated"]), abs=1e-15)


def test_temperature_lab_under_confident_classifier_gets_t_below_one():
    r = run_temperature(c=0.01)
    assert r.value("uncalibrated", "mean_confidence") < r.value("uncalibrated", "accuracy")
    assert r.temperature < 1.0
    assert r.value("temperature scaling", "ece") < r.value("uncalibrated", "ece")


@pytest.mark.parametrize("seed", [0, 1])
def test_temperature_lab_binary_semantics(seed):
    """Binary: top-label and positive-class ECE are different statistics. With an even M the bins are symmetric
    about ½ and a top-label bin pools a positive-class bin with its mirror image, so ECE_top ≤ ECE_pos
    (triangle inequality); equality when every bin holds one side only."""
    r = run_temperature(DATASETS[1], seed=seed, target="positive")
    assert r.target == "positive"
    for method in ("uncalibrated", "temperature scaling"):
        assert r.value(method, "ece") == r.value(method, "ece_positive")
    pset = examples.breast_cancer_example(seed=seed)
    test = pset.split == "test"
    p1 = cm.softmax(pset.logits[test])[:, 1]
    y = pset.labels[test].astype(float)
    assert r.value("uncalibrated", "ece_positive") == pytest.approx(_reference_ece(p1, y, 15), abs=1e-12)
    for m in (4, 10, 20):
        p = cm.softmax(pset.logits[test])
        assert cm.ece(y.astype(int), p, n_bins=m) <= cm.ece(y.astype(int), p, n_bins=m, target="positive") + 1e-12
    with pytest.raises(ValueError, match="binary"):
        run_temperature(DATASETS[0], target="positive")


@pytest.mark.parametrize("dataset, target", [(DATASETS[0], "top_label"), (DATASETS[1], "top_label"),
                                             (DATASETS[1], "positive")])
def test_temperature_lab_metric_table_uses_registry_keys(dataset, target):
    """The lab's table (metric_table) names every metric by its registry key with the registry's semantics —
    ``ece``/``mce`` top-label, ``ece_positive``/``mce_positive`` positive-class — and shows no ECE twice."""
    r = run_temperature(dataset, target=target)
    table = r.metric_table().set_index("method")
    metric_columns = [c for c in table.columns if c != "changed_predictions"]
    assert set(metric_columns) <= set(reg.metric_keys("classification"))
    assert len(set(table.columns)) == len(table.columns)
    for method in table.index:
        assert table.loc[method, "ece"] == r.value(method, "ece_top_label")
        if target == "positive":
            assert table.loc[method, "ece_positive"] == r.value(method, "ece")
            assert table.loc[method, "mce_positive"] == r.value(method, "mce")
        else:
            assert table.loc[method, "mce"] == r.value(method, "mce")
    assert ("ece_positive" in table.columns) == (dataset == DATASETS[1])


@pytest.mark.parametrize("kw", [dict(), dict(dataset=DATASETS[1], target="positive"), dict(c=0.01),
                                dict(dataset=DATASETS[1], seed=3, cal_fraction=0.3)])
def test_temperature_lab_findings_are_computed_from_the_numbers(kw):
    r = run_temperature(**kw)
    text = " ".join(r.findings())
    before, scaled = r.value("uncalibrated", "ece"), r.value("temperature scaling", "ece")
    gap = r.value("uncalibrated", "mean_confidence") - r.value("uncalibrated", "accuracy")
    assert ("over-confident" in text) == (gap > 0) and ("under-confident" in text) == (gap < 0)
    assert ("T > 1" in text) == (r.temperature > 1)
    assert ("the gaps close" in text) == (scaled <= 0.5 * before)
    assert ("the gaps narrow" in text) == (0.5 * before < scaled < before)
    assert ("does not improve" in text) == (scaled >= before)
    assert f"{before:.4f} → {scaled:.4f}" in text
    for method in ("histogram binning", "isotonic"):
        assert f"{method} reaches {r.value(method, 'ece'):.4f}" in text
    eces = {m: r.value(m, "ece") for m in ("uncalibrated", "temperature scaling", "histogram binning", "isotonic")}
    assert f"ECE at M = {r.n_bins}: {min(eces, key=eces.get)}" in text
