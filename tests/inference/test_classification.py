"""Classification inference: tests as statistics.

Seeded simulations with binomial tolerances: the headline's false-alarm rate on perfectly calibrated data
(labels drawn from the predicted probabilities, K = 2, 10, 100) is at most 5 % plus two Monte-Carlo standard
errors, the p-values are uniform-ish under H0, temperature 1.5 and 1/1.5 are detected with the direction
named; known answers on the over-confident digits example and DenseNet-BC-100 on CIFAR-100.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import calib_core as cc
from calib_core.data.examples import digits_example
from calib_core.diagnosis.classification import classification_rows
from calib_core.inference.classification import PRIMARY_FAMILY, infer_classification
from calib_core.inference.result import RESULT_COLUMNS, InferenceResult
from calib_core.metrics.classification import ClassificationRows

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real"
DENSENET = REAL / "netcal_cifar_probs" / "densenet-bc-100-cifar-100.npz"
FAST = {"n_null": 1000, "n_boot": 200, "classwise": False}


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def draw(n, k, temperature, rng, scale=2.0):
    """Labels from softmax(z), reported probabilities softmax(z / T) (T = 1: perfectly calibrated)."""
    z = rng.normal(0.0, scale, size=(n, k))
    p = softmax(z)
    q = p if temperature == 1.0 else softmax(z / temperature)
    y = np.minimum((np.cumsum(p, axis=1) < rng.random(n)[:, None]).sum(axis=1), k - 1)
    return y, q


def binomial_bound(rate, n_sets, sigmas=2.0):
    return rate + sigmas * math.sqrt(rate * (1 - rate) / n_sets)


@pytest.fixture(scope="module")
def calibrated_runs():
    """60 perfectly calibrated data sets per K (N = 500), one inference each: {K: [results]}."""
    rng = np.random.default_rng(20260)
    out = {}
    for k in (2, 10, 100):
        out[k] = [infer_classification(labels=y, probs=q, seed=i, **FAST)
                  for i, (y, q) in enumerate(draw(500, k, 1.0, rng) for _ in range(60))]
    return out


@pytest.mark.slow  # a seeded simulation study (many data sets); runs with pytest -m slow
def test_false_alarm_rate_of_the_headline_on_calibrated_data(calibrated_runs):
    pooled = []
    for k, runs in calibrated_runs.items():
        alarms = [r.miscalibrated for r in runs]
        pooled += alarms
        rate = float(np.mean(alarms))
        print(f"K = {k}: headline false-alarm rate {rate:.3f} over {len(runs)} calibrated sets")
        assert rate <= binomial_bound(0.05, len(runs)), (k, rate)
    rate = float(np.mean(pooled))
    print(f"pooled: {rate:.3f} over {len(pooled)}")
    assert rate <= binomial_bound(0.05, len(pooled))


@pytest.mark.slow  # a seeded simulation study (many data sets); runs with pytest -m slow
def test_p_values_are_uniform_under_perfect_calibration(calibrated_runs):
    for metric in ("ece", "top_bin_gap", "confidence_gap"):
        p = np.array([r.p_value(metric) for runs in calibrated_runs.values() for r in runs])
        below = float(np.mean(p <= 0.1))
        ks = stats.kstest(p, "uniform")
        print(f"{metric}: share p ≤ 0.1 = {below:.3f}, KS p = {ks.pvalue:.3f}, mean p = {p.mean():.3f}")
        # discrete statistics give conservative p-values (mass at 1): only the lower tail must not be heavy
        assert below <= binomial_bound(0.1, p.size), metric
        assert float(np.mean(p <= 0.05)) <= binomial_bound(0.05, p.size), metric
    p = np.array([r.p_value("ece") for runs in calibrated_runs.values() for r in runs])
    assert stats.kstest(p, "uniform").pvalue > 1e-3  # ECE is nearly continuous: close to uniform


@pytest.mark.slow  # a seeded simulation study (many data sets); runs with pytest -m slow
def test_secondary_flags_and_expected_chance_flags(calibrated_runs):
    r = calibrated_runs[2][0]
    t = r.table
    secondary = list(t.index[t["family"] == "secondary"])
    assert secondary == ["mce", "confidence_gap", "ece_positive", "mce_positive", "smooth_ece", "smooth_ece_positive",
                         "calibration_ratio", "calibration_ratio_positive", "tce", "tce_positive",
                         # binary files: the clinical set's tests join the secondary family
                         "calibration_in_the_large", "calibration_slope", "spiegelhalter_z", "hosmer_lemeshow", "ici"]
    assert r.expected_chance_flags == pytest.approx(0.05 * len(secondary))
    # BH flags on calibrated data: any flag in at most ~alpha of the sets (FDR = FWER under the global null)
    flagged = [bool(x.table.loc[x.table["family"] == "secondary", "flag"].any())
               for runs in calibrated_runs.values() for x in runs]
    assert np.mean(flagged) <= binomial_bound(0.05, len(flagged), 3.0)


@pytest.mark.parametrize("temperature, direction", [(1 / 1.5, "over-confident"), (1.5, "under-confident")])
def test_power_against_temperature(temperature, direction):
    rng = np.random.default_rng(7)
    runs = [infer_classification(labels=y, probs=q, seed=i, **FAST)
            for i, (y, q) in enumerate(draw(1000, 10, temperature, rng) for _ in range(20))]
    hits = [r.miscalibrated and r.direction == direction for r in runs]
    print(f"T = {temperature:.3f}: {np.mean(hits):.2f} detected as {direction}; e.g. {runs[0].sentence}")
    assert np.mean(hits) >= 0.9


def test_table_shape_kinds_and_sentence():
    rng = np.random.default_rng(3)
    y, q = draw(800, 2, 1 / 1.5, rng)
    r = infer_classification(labels=y, probs=q, seed=1)
    assert isinstance(r, InferenceResult)
    assert list(r.table.columns) == RESULT_COLUMNS
    t = r.table
    assert list(t.index[t["family"] == "primary"]) == list(PRIMARY_FAMILY)
    assert set(t.loc[t["kind"] == "proper score"].index) == {"nll", "brier"}
    # binary: the clinical set's descriptive rows (Cox intercept, E50, E90) join accuracy and mean confidence
    assert set(t.loc[t["kind"] == "descriptive"].index) == {"accuracy", "mean_confidence", "cox_intercept", "e50",
                                                            "e90"}
    # only calibration statistics carry p-values; proper scores and descriptive ones do not
    assert t.loc[t["kind"] == "calibration statistic", "p_value"].notna().all()
    assert t.loc[t["kind"] != "calibration statistic", "p_value"].isna().all()
    assert (t.loc[t["kind"] == "calibration statistic", "p_mc_se"] >= 0).all()
    # by design no interval: TCE and the clinical test statistics (Spiegelhalter's Z, Hosmer–Lemeshow) have no
    # population value free of N
    no_interval = [m for m in ("tce", "tce_positive", "spiegelhalter_z", "hosmer_lemeshow") if m in t.index]
    assert t.loc[no_interval, ["ci_low", "ci_high"]].isna().all().all()
    t = t.drop(index=no_interval)
    assert (t["ci_low"] <= t["ci_high"]).all()
    assert r.verdict == "miscalibrated" and r.direction == "over-confident"
    assert r.sentence.startswith("Over-confident: accuracy ")
    assert "ECE" in r.sentence and "p " in r.sentence
    assert 0 <= t.loc["ece", "ci_low"] <= t.loc["ece", "debiased"] <= t.loc["ece", "ci_high"]


def test_no_evidence_sentence():
    rng = np.random.default_rng(11)
    y, q = draw(300, 10, 1.0, rng)
    r = infer_classification(labels=y, probs=q, seed=0)
    if not r.miscalibrated:
        assert r.sentence == "No evidence of miscalibration at this N (2 tests, family-wise 5%)."
        t = r.table
        assert t.loc["ece", "ci_low"] == 0.0  # perfect calibration is not excluded by the interval


def test_top_label_null_moments_are_the_poisson_binomial_ones():
    """Both null paths (exact rows, sub-bin binomials) have per-bin mean 0 and variance Σ c(1 − c)."""
    rng = np.random.default_rng(5)
    y, q = draw(3000, 10, 1.0, rng)
    rows = ClassificationRows(y, q)
    var = np.bincount(rows.bin_index, weights=rows.confidence * (1 - rows.confidence), minlength=15)
    from calib_core.inference.classification_nulls import BinnedBernoulli

    top = BinnedBernoulli(rows.confidence, rows.correct, rows.bin_index, rows.edges, 15, 16)
    for budget in (10**9, 0):  # exact, sub-bins
        d, exact = top.null_dev(4000, np.random.default_rng(1), budget)
        assert exact == (budget > 0)
        live = var > 1.0
        se_mean = np.sqrt(var[live] / 4000)
        assert np.all(np.abs(d[:, live].mean(axis=0)) <= 4.5 * se_mean)
        ratio = d[:, live].var(axis=0) / var[live]
        assert np.all(np.abs(ratio - 1) <= 4.5 * math.sqrt(2 / 4000)), ratio


def test_classwise_null_paths_agree():
    """Exact row-by-row class-wise null and the block bootstrap of one null draw: same null mean and spread."""
    rng = np.random.default_rng(8)
    y, q = draw(1500, 10, 1.0, rng)
    exact = infer_classification(labels=y, probs=q, n_boot=100, exact_budget=10**9, seed=2)
    block = infer_classification(labels=y, probs=q, n_boot=100, exact_budget=0, seed=2)
    te, tb = exact.table, block.table
    assert any("class-wise ECE null: exact" in note for note in exact.notes)
    assert any("class-wise ECE null: one label draw" in note for note in block.notes)
    m_e, m_b = te.loc["classwise_ece", "perfect"], tb.loc["classwise_ece", "perfect"]
    w_e = te.loc["classwise_ece", "perfect_high"] - te.loc["classwise_ece", "perfect_low"]
    w_b = tb.loc["classwise_ece", "perfect_high"] - tb.loc["classwise_ece", "perfect_low"]
    print(f"class-wise null mean exact {m_e:.5f} / blocks {m_b:.5f}; 95% width {w_e:.5f} / {w_b:.5f}")
    assert abs(m_b - m_e) <= 0.05 * m_e
    # the block bootstrap of one draw is a little wider at N = 1,500 (about 10 rows per merged block): width ratio
    # 1.20-1.36 over seeds 0-11 with one stream, 1.26-1.35 with the streams split per part (conservative side)
    assert 0.7 <= w_b / w_e <= 1.45


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_classwise_block_sums_are_the_direct_per_cell_sums(strategy):
    """The class-wise layout's per-block (count, Σp, Σp²) — sparse entries plus first bins by complement of the
    block totals (equal-width bins) — equal a direct bincount over all N·K (row, class) entries, and the label's
    cell is where the point estimates bin p_{i,y}."""
    from calib_core.inference.classification_nulls import ClasswiseLayout

    rng = np.random.default_rng(13)
    y, q = draw(3000, 7, 1.0, rng)
    rows = ClassificationRows(y, q, n_bins=10, strategy=strategy)
    lay = ClasswiseLayout(rows)
    n_b = 37
    block = rng.integers(0, n_b, size=rows.n)
    got = lay.block_sums(block, n_b)
    flat = []
    for c in range(rows.k):  # the direct way: every p_ik binned among its class's bins
        e = np.linspace(0.0, 1.0, 11) if strategy == "uniform" else np.quantile(q[:, c], np.linspace(0, 1, 11))
        flat.append(np.clip(np.searchsorted(e, q[:, c], side="left") - 1, 0, 9) + 10 * c)
    cells = np.column_stack(flat)
    key = (block[:, None] * rows.k * 10 + cells).ravel()
    size = n_b * rows.k * 10
    want = [np.bincount(key, weights=w, minlength=size).reshape(n_b, -1)
            for w in (np.ones(q.size), q.ravel(), q.ravel() ** 2)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(lay.label_cells(y), cells[np.arange(rows.n), y])
    y_star = rng.integers(0, rows.k, size=(3, rows.n))  # simulated labels (the exact null's (R, N) draws too)
    np.testing.assert_array_equal(lay.label_cells(y_star), rows.classwise_cells[np.arange(rows.n), y_star])
    if strategy == "uniform":  # equal-width: the label entries are binned alone, no (N, K) cell array is made
        assert lay.cells_full is None
    else:
        assert rows.classwise_cells is lay.cells_full  # binned once, shared with the point estimates


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_entry_layout_block_sums_equal_the_row_index_formula_bit_for_bit(dtype):
    """Equal-mass bins list every (row, class) entry: the per-block sums keyed by np.repeat(block, K) and the float
    view of p equal those keyed by block[ri] with ri = np.repeat(arange(N), K) and a float copy of p, bit for bit
    (float32 probabilities, one row, one block)."""
    from calib_core.inference.classification_nulls import ClasswiseLayout

    rng = np.random.default_rng(5)
    for n, n_b in ((2500, 41), (1, 1), (7, 3)):
        y, q = draw(n, 5, 1.0, rng)
        rows = ClassificationRows(y, q.astype(dtype), n_bins=6, strategy="quantile")
        lay = ClasswiseLayout(rows)
        block = rng.integers(0, n_b, size=n)
        got = lay.block_sums(block, n_b)
        ri = np.repeat(np.arange(n), rows.k)
        np.testing.assert_array_equal(lay.ri, ri)
        val = rows.probs.astype(float).ravel()
        key = block[ri] * lay.size + rows.classwise_cells.ravel()
        want = [np.bincount(key, weights=w, minlength=n_b * lay.size).reshape(n_b, lay.size)
                for w in (None, val, val * val)]
        want[0] = want[0].astype(float)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.view(np.uint64), w.view(np.uint64))


def test_proper_score_references_are_the_exact_expectations():
    rng = np.random.default_rng(4)
    y, q = draw(400, 5, 1.0, rng)
    r = infer_classification(labels=y, probs=q, n_null=1000, n_boot=100, seed=0)
    t = r.table
    rows = ClassificationRows(y, q)
    sims = [rows.with_labels(rows.sample_labels(np.random.default_rng(s))) for s in range(3000)]
    nll = np.array([np.mean(s.nll_rows) for s in sims])
    brier = np.array([np.mean(s.brier_rows) for s in sims])
    for name, draws in (("nll", nll), ("brier", brier)):
        assert t.loc[name, "perfect"] == pytest.approx(draws.mean(), abs=4 * draws.std() / math.sqrt(draws.size))
        half = (t.loc[name, "perfect_high"] - t.loc[name, "perfect_low"]) / 2
        assert half == pytest.approx(1.96 * draws.std(), rel=0.1)
    assert np.isnan(t.loc["nll", "p_value"]) and t.loc["nll", "family"] == ""


def test_top_label_only_rows():
    rng = np.random.default_rng(9)
    y, q = draw(2000, 10, 1 / 1.5, rng)
    full = ClassificationRows(y, q)
    rows = ClassificationRows.from_top_label(full.confidence, full.correct)
    r = infer_classification(rows, n_null=1000, n_boot=200)
    assert set(r.table.index) == {"ece", "top_bin_gap", "mce", "confidence_gap", "accuracy", "mean_confidence",
                                      "smooth_ece", "calibration_ratio", "tce"}
    assert r.direction == "over-confident"


def test_seeded_and_reproducible():
    rng = np.random.default_rng(12)
    y, q = draw(700, 3, 1.0, rng)
    a = infer_classification(labels=y, probs=q, seed=5, **FAST)
    b = infer_classification(labels=y, probs=q, seed=5, **FAST)
    assert a.table.equals(b.table) and a.sentence == b.sentence


def test_digits_example_is_over_confident():
    r = infer_classification(classification_rows(digits_example()))
    print(r.sentence)
    assert r.verdict == "miscalibrated" and r.direction == "over-confident"
    assert r.sentence.startswith("Over-confident: accuracy 0.93") and "p < 1e-6" in r.sentence


@pytest.mark.skipif(not DENSENET.is_file(), reason="real data folder missing")
def test_densenet_cifar100_is_over_confident():
    r = infer_classification(classification_rows(cc.load_predictions(DENSENET)))
    print(r.sentence)
    t = r.table
    assert r.verdict == "miscalibrated" and r.direction == "over-confident"
    assert t.loc["ece", "value"] == pytest.approx(0.14215, abs=1e-4)  # the metric module's ECE
    assert t.loc["ece", "ci_low"] <= t.loc["ece", "debiased"] <= t.loc["ece", "ci_high"]
    assert t.loc["ece", "p_value"] < 1e-6 and t.loc["top_bin_gap", "p_value"] < 1e-6


# -- intervals of MCE and class-wise ECE: coverage of the population value ----------------------------------------
def _population_gaps(k, temperature, n_pop=None, seed=99, n_bins=15):
    """Population per-bin mass × (acc − conf) of the top label and class-wise cells Σ(p_true − q)/N, with the
    correctness Rao–Blackwellised (E[1(ŷ = y)] = p_true,ŷ): no sampling noise beyond the design's."""
    rng = np.random.default_rng(seed)
    n_pop = n_pop or 4_000_000 // k
    z = rng.normal(0.0, 2.0, size=(n_pop, k))
    pt = softmax(z)
    q = pt if temperature == 1.0 else softmax(z / temperature)
    rows = ClassificationRows(np.zeros(n_pop, dtype=int), q, n_bins=n_bins)
    hit = pt[np.arange(n_pop), rows.pred]
    mass = np.bincount(rows.bin_index, minlength=n_bins) / n_pop
    dev = np.bincount(rows.bin_index, weights=hit - rows.confidence, minlength=n_bins) / n_pop
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    b = np.clip(np.searchsorted(edges, q.ravel(), side="left") - 1, 0, n_bins - 1)
    cells = (b.reshape(n_pop, k) + np.arange(k) * n_bins).ravel()
    cw = np.abs(np.bincount(cells, weights=(pt - q).ravel(), minlength=k * n_bins)).sum() / (n_pop * k)
    return mass, dev, float(cw)


def test_mce_interval_is_the_simultaneous_clopper_pearson_one():
    from calib_core.inference.classification_cells import mce_interval

    count = np.array([0.0, 1.0, 7.0, 40.0, 300.0])
    hits = np.array([0.0, 1.0, 2.0, 30.0, 280.0])
    conf = np.array([0.0, 0.30, 0.5, 0.8, 0.9]) * count
    lo, hi, how = mce_interval(count, conf, hits, 0.95)
    lev = 0.95 ** (1 / 4)
    near, far = [], []
    for n, h, c in zip(count[1:], hits[1:], conf[1:]):
        ci = stats.binomtest(int(h), int(n)).proportion_ci(lev, method="exact")
        a, b = ci.low - c / n, ci.high - c / n
        near.append(0.0 if a <= 0 <= b else min(abs(a), abs(b)))
        far.append(max(abs(a), abs(b)))
    assert (lo, hi) == pytest.approx((max(near), max(far)), rel=1e-9)
    assert "Šidák over 4 bins" in how
    mce = np.max(np.abs(hits[1:] - conf[1:]) / count[1:])
    assert lo <= mce <= hi  # the plug-in is always inside


@pytest.mark.parametrize("k, temperature", [(10, 1 / 1.5), pytest.param(10, 1.5, marks=pytest.mark.slow),
                                            pytest.param(100, 1 / 1.5, marks=pytest.mark.slow)])
def test_mce_and_classwise_intervals_cover_the_population_value(k, temperature):
    mass, dev, cw_pop = _population_gaps(k, temperature)
    rng = np.random.default_rng(100 + k)
    reps, n = (40, 500) if k < 100 else (30, 300)
    hit_mce = hit_cw = 0
    lows = []
    for i in range(reps):
        y, q = draw(n, k, temperature, rng)
        r = infer_classification(labels=y, probs=q, n_null=500, n_boot=200, seed=i)
        t = r.table
        filled = np.bincount(ClassificationRows(y, q).bin_index, minlength=15) > 0
        use = filled & (mass > 0)
        mce_pop = float(np.max(np.abs(dev[use]) / mass[use]))
        hit_mce += t.loc["mce", "ci_low"] <= mce_pop <= t.loc["mce", "ci_high"]
        hit_cw += t.loc["classwise_ece", "ci_low"] <= cw_pop <= t.loc["classwise_ece", "ci_high"]
        lows.append(t.loc["classwise_ece", "ci_low"])
        assert t.loc["mce", "ci_low"] <= t.loc["mce", "value"] <= t.loc["mce", "ci_high"]
        assert t.loc["classwise_ece", "ci_low"] <= t.loc["classwise_ece", "value"] <= t.loc["classwise_ece", "ci_high"]
    print(f"K = {k}, T = {temperature:.3f}: MCE {hit_mce / reps:.3f}, class-wise ECE {hit_cw / reps:.3f} "
          f"(population {cw_pop:.4f}, mean lower end {np.mean(lows):.4f})")
    for h in (hit_mce, hit_cw):  # binomial tolerance: as few hits has probability > 0.1% at coverage 0.95
        assert stats.binom.cdf(h, reps, 0.95) > 1e-3


@pytest.mark.slow  # a seeded simulation study (many data sets); runs with pytest -m slow
def test_mce_and_classwise_intervals_contain_zero_under_perfect_calibration(calibrated_runs):
    """At the population value 0 the intervals cover 0 at least as often as their level says."""
    for name in ("mce", "classwise_ece"):
        runs = [r for k in (10, 100) for r in calibrated_runs[k]]
        if name == "classwise_ece":  # the fixture skips class-wise ECE: run a few with it
            rng = np.random.default_rng(77)
            runs = [infer_classification(labels=y, probs=q, n_null=500, n_boot=200, seed=i)
                    for i, (y, q) in enumerate(draw(400, 10, 1.0, rng) for _ in range(40))]
        t = [r.table.loc[name] for r in runs]
        hits = sum(row["ci_low"] <= 0.0 for row in t)
        assert stats.binom.cdf(hits, len(runs), 0.95) > 1e-3, (name, hits, len(runs))
