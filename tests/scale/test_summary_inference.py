"""A summary's report loses nothing the page shows: every interval and p-value ``cc.diagnose`` gives is in the
summary's report (or its row says why a summary cannot give it), the intervals and p-values agree with the in-memory
ones on the same rows, and the headline sentence is the in-memory sentence (the same function)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import calib_core as cc
from calib_core.calibrators.registry_clinical import CLINICAL_ENTRIES
from calib_core.inference.regression_nulls import skew_test
from calib_core.scale import summary as S
from calib_core.scale.summary_intervals import SUMMARY_GAPS
from tests.scale.test_summary import classification_set, ensemble_set, gaussian_set, quantile_set, rel_err

N = 20_000
CLINICAL = {entry[0] for entry in CLINICAL_ENTRIES}

LAYOUTS = {
    "gaussian": lambda: gaussian_set(N, seed=5, scale=1.05),
    "quantile": lambda: quantile_set(N),
    "ensemble": lambda: ensemble_set(N),
    "k10": lambda: classification_set(N // 2, 10),
    "binary": lambda: classification_set(N // 2, 2),
}

# The checklist: (metric, column) the rows' report gives and a summary cannot, per layout, with the reason its row's
# note states.  Everything else the rows' report gives (interval or p-value), the summary gives too.
_WIS = {(k, "ci_low") for k in ("wis", "wis_dispersion", "wis_overprediction", "wis_underprediction")}
_REGRESSION = {
    ("spearman_sigma_abs_error", "ci_low"),  # needs every row's ranks of σ and |ε| together
    ("z_skewness", "ci_low"), ("z_excess_kurtosis", "ci_low"),  # bootstrap-t: Σz³…Σz⁸ per block not kept
    ("mean_log_z2", "ci_low"), ("mean_log_z2", "p_value"),  # Σ log z² not kept
    ("below_median", "ci_low"), ("below_median", "p_value"),  # each row against its median not kept
    ("pit_entropy", "p_value"),  # the estimate's error exceeds its null spread; its bracket's end has no power
    *_WIS,  # per-block sums of the WIS parts not kept
}
_ENSEMBLE = {  # the exchangeability null needs each row's members; the ranks are not kept by the fine PIT bins
    ("ence", "p_value"), ("z_mean", "p_value"), ("z_std", "p_value"), ("zms", "p_value"),
    *{(f"coverage_{c}", "p_value") for c in ("50", "80", "90", "95", "99")},
    ("rank_chi2", "p_value"), ("range_coverage", "ci_low"), ("range_coverage", "p_value"),
}
_CLASSIFICATION = {  # smooth ECE and TCE need the rows; classwise ECE every class's per-block bins
    ("classwise_ece", "ci_low"), ("classwise_ece", "p_value"), ("smooth_ece", "ci_low"), ("smooth_ece", "p_value"),
    ("tce", "p_value"),
}
_BINARY = {  # the positive class's bins per bootstrap block are not kept; the clinical set needs the rows
    ("ece_positive", "ci_low"), ("mce_positive", "ci_low"), ("calibration_ratio_positive", "ci_low"),
    ("smooth_ece_positive", "ci_low"), ("smooth_ece_positive", "p_value"), ("tce_positive", "p_value"),
}
CHECKLIST = {
    "gaussian": _REGRESSION,
    "quantile": _REGRESSION - {("mean_log_z2", "p_value")},  # tested in memory only for Gaussians and ensembles
    "ensemble": _REGRESSION | _ENSEMBLE,
    "k10": _CLASSIFICATION,
    "binary": _CLASSIFICATION | _BINARY,
}


def _reports(pset, n_resamples=100, n_simulations=300):
    rep = S.report(S.summarize(pset, spec=S.spec_for(pset)), n_resamples=n_resamples, n_simulations=n_simulations,
                   diagrams=False)
    ref = cc.diagnose(pset, n_resamples=n_resamples, n_simulations=n_simulations, diagrams=False)
    return rep, ref


def _gaps(summary_table, memory_table) -> set[tuple[str, str]]:
    out = set()
    for m in memory_table.index:
        for col in ("ci_low", "p_value"):
            if np.isfinite(memory_table.loc[m, col]) and not (
                    m in summary_table.index and np.isfinite(summary_table.loc[m, col])):
                out.add((m, col))
    return out


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_summary_gives_every_interval_and_p_value_the_rows_report_gives(layout):
    rep, ref = _reports(LAYOUTS[layout]())
    t, r = rep.table(), ref.table()
    gaps = _gaps(t, r)
    clinical = {g for g in gaps if g[0] in CLINICAL}  # a summary has no clinical set (said in Large data)
    assert all(m not in t.index for m, _ in clinical)
    assert gaps - clinical <= CHECKLIST[layout], sorted(gaps - clinical - CHECKLIST[layout])
    for m, _ in gaps - clinical:  # each gap's row says why a summary cannot give it
        assert "summary" in str(t.loc[m, "note"]) or "needs the rows" in str(t.loc[m, "note"]), (m, t.loc[m, "note"])
    if layout in ("gaussian", "quantile", "ensemble"):  # the four the summary lacked: an interval now (and a p-value
        for m in ("calibration_rmse", "quantile_calibration_error", "max_calibration_deviation",  # where the rows'
                  "miscalibration_area"):  # report has one: quantile sets are judged at their stated levels only)
            assert np.isfinite(t.loc[m, ["ci_low", "ci_high"]].to_numpy(float)).all(), m
            assert np.isfinite(t.loc[m, "p_value"]) == np.isfinite(r.loc[m, "p_value"]), m


def test_the_gap_notes_name_a_summary():
    assert all("summary" in reason for _, reason in SUMMARY_GAPS.values())


@pytest.mark.parametrize("make", [lambda: gaussian_set(N, seed=11, scale=1.0),
                                  lambda: gaussian_set(N, seed=12, scale=1.06),
                                  lambda: classification_set(N // 2, 10, seed=13, temperature=1.0),
                                  lambda: classification_set(N // 2, 10, seed=14),
                                  lambda: classification_set(N // 2, 2, seed=15)])
def test_the_headline_sentence_is_the_in_memory_sentence(make):
    rep, ref = _reports(make(), n_resamples=0, n_simulations=300)
    got, want = rep.verdict(), ref.verdict()
    # (the lead may differ where two primary p-values are both below 1e-6: the summary tests the top-bin gap with
    # the normal law of its Poisson-binomial sum, the rows' report with null draws or a Bernstein bound)
    for key in ("verdict", "direction", "sentence", "n_tests"):
        assert got[key] == want[key], (key, got[key], want[key])


@pytest.mark.parametrize("n", [3_000, N])
def test_pit_band_intervals_and_n_only_tests_agree_with_diagnose(n):
    """Calibration RMSE and QCE: exact values, the same KS band → the same interval and debiased value (1e-12: two
    roundings of the same formula).  KS and the area: the summary's interval holds the in-memory one (widened by the
    bracket, a few fine-bin widths) and its p-value, at the bracket's conservative end with the same null law, is at
    least the in-memory one and within 0.05 of it (the bracket, about one fine-bin width of 1/2,000, is a tenth of
    the null's spread at 3,000 rows: measured 0.025 there).  Kurtosis: Anscombe–Glynn of the same exact value
    (1e-9); skewness: D'Agostino alone, at most the in-memory p-value (the larger of it and the bootstrap-t
    test)."""
    pset = gaussian_set(n, seed=21, scale=1.03)
    rep, ref = _reports(pset, n_resamples=200, n_simulations=500)
    t, r = rep.table(), ref.table()
    for m in ("calibration_rmse", "quantile_calibration_error"):
        for col in ("ci_low", "ci_high", "debiased", "p_value", "perfect"):
            assert rel_err(t.loc[m, col], r.loc[m, col]) <= 1e-12 or t.loc[m, col] == r.loc[m, col] == 0, (m, col)
    for m in ("max_calibration_deviation", "miscalibration_area"):
        assert t.loc[m, "ci_low"] <= r.loc[m, "ci_low"] + 1e-15 and t.loc[m, "ci_high"] >= r.loc[m, "ci_high"] - 1e-15
        assert t.loc[m, "ci_high"] - t.loc[m, "ci_low"] <= r.loc[m, "ci_high"] - r.loc[m, "ci_low"] + 0.01, m
        assert r.loc[m, "p_value"] - 1e-12 <= t.loc[m, "p_value"] <= r.loc[m, "p_value"] + 0.05, m
    for m in ("miscalibration_area", "reliability_score", "max_calibration_deviation"):
        assert rel_err(t.loc[m, "perfect"], r.loc[m, "perfect"]) <= 1e-12, m
    assert r.loc["reliability_score", "p_value"] - 1e-12 <= t.loc["reliability_score", "p_value"] \
        <= r.loc["reliability_score", "p_value"] + 0.05
    assert rel_err(t.loc["z_excess_kurtosis", "p_value"], r.loc["z_excess_kurtosis", "p_value"]) <= 1e-9
    nz = n
    assert rel_err(t.loc["z_skewness", "p_value"], skew_test(t.loc["z_skewness", "value"], nz)) <= 1e-12
    assert t.loc["z_skewness", "p_value"] <= r.loc["z_skewness", "p_value"] + 1e-12


def test_classification_gap_intervals_and_tests_agree_with_diagnose():
    """Top-bin gap: the same Clopper–Pearson interval of the same integers (1e-12).  Overall gap (percentile
    bootstrap) and calibration ratio (BCa from blocks vs the delta method): independent resampling designs, so the
    ends agree within 25% of the in-memory width.  MCE and the positive class's ECE/MCE: the same Bernstein bound,
    or Monte-Carlo p-values from independent draws of the same null law (within 5 Monte-Carlo s.e. + 1e-3)."""
    pset = classification_set(N, 2, seed=31, temperature=1.1)
    rep, ref = _reports(pset, n_resamples=400, n_simulations=1_000)
    t, r = rep.table(), ref.table()
    for col in ("ci_low", "ci_high"):  # the top confidence: an exact sum rounded once vs a float sum (1e-13 abs.)
        assert abs(t.loc["top_bin_gap", col] - r.loc["top_bin_gap", col]) <= 1e-13
    for m in ("confidence_gap", "calibration_ratio"):
        width = r.loc[m, "ci_high"] - r.loc[m, "ci_low"]
        for col in ("ci_low", "ci_high"):
            assert abs(t.loc[m, col] - r.loc[m, col]) <= 0.25 * width, (m, col, t.loc[m, col], r.loc[m, col])
    for m in ("mce", "ece_positive", "mce_positive", "ece"):
        p1, p2 = t.loc[m, "p_value"], r.loc[m, "p_value"]
        se = np.sqrt(max(p2 * (1 - p2), 1e-3) / 1_000)
        assert abs(p1 - p2) <= 5 * np.sqrt(2) * se + 1e-3, (m, p1, p2)


def _population_pit_statistics(spec, s: float) -> dict[str, float]:
    """Population values of the PIT statistics when y ~ N(μ, (sσ)²) and the forecast is N(μ, σ²): the PIT
    u = Φ(sZ) has CDF G(p) = Φ(Φ⁻¹(p)/s)."""
    def g(p):
        return stats.norm.cdf(stats.norm.ppf(p) / s)
    grid = np.linspace(0.0, 1.0, 200_001)[1:-1]
    lev, qlev = np.asarray(spec.levels, float), np.asarray(spec.qce_levels, float)
    with np.errstate(all="ignore"):
        lev_g = np.where(lev <= 0, 0.0, np.where(lev >= 1, 1.0, g(np.clip(lev, 1e-300, 1 - 1e-16))))
    return {"max_calibration_deviation": float(np.max(np.abs(g(grid) - grid))),
            "calibration_rmse": float(np.sqrt(np.mean((lev_g - lev) ** 2))),
            "quantile_calibration_error": float(np.mean((g(qlev) - qlev) ** 2)),
            "miscalibration_area": float(np.mean(np.abs(g(grid) - grid)))}


def _gaussian_rows(n: int, s: float, rng: np.random.Generator):
    mu = rng.standard_normal(n)
    sd = np.exp(0.4 * rng.standard_normal(n))
    y = mu + s * sd * rng.standard_normal(n)  # targets from the TRUE law N(μ, (sσ)²)
    return cc.PredictionSet(task="regression", y=y, dist=cc.Gaussian(mu, sd), layout="gaussian",
                            row_number=np.arange(1, n + 1, dtype=np.int64))


@pytest.mark.slow
@pytest.mark.parametrize("s", [1.0, 1.2])
def test_summary_pit_intervals_cover_and_new_tests_hold_their_size(s):
    """200 data sets × 2,000 rows, targets from the true Gaussian law: each KS-band interval covers the population
    value in at least 95% of the sets (binomial tolerance: 3 s.e. of 200 draws); calibrated (s = 1), the new tests
    (area, reliability score, skewness, kurtosis) reject at 5% in at most 5% + 3 s.e. of the sets."""
    rng = np.random.default_rng(np.random.SeedSequence([2026, int(100 * s)]))
    reps, level = 200, 0.95
    hits: dict[str, int] = {}
    alarms: dict[str, int] = {}
    spec = None
    truth = None
    for _ in range(reps):
        pset = _gaussian_rows(2_000, s, rng)
        spec = S.spec_for(pset, by_group=False)
        if truth is None:
            truth = _population_pit_statistics(spec, s)
        t = S.report(S.summarize(pset, spec=spec), n_resamples=1, n_simulations=200, level=level,
                     diagrams=False).table()
        for m, v in truth.items():
            hits[m] = hits.get(m, 0) + int(t.loc[m, "ci_low"] <= v <= t.loc[m, "ci_high"])
        for m in ("miscalibration_area", "reliability_score", "z_skewness", "z_excess_kurtosis"):
            alarms[m] = alarms.get(m, 0) + int(t.loc[m, "p_value"] <= 0.05)
    tol = 3 * np.sqrt(level * (1 - level) / reps)
    for m, k in hits.items():
        assert k / reps >= level - tol, (m, k / reps)
    if s == 1.0:
        tol_a = 3 * np.sqrt(0.05 * 0.95 / reps)
        for m, k in alarms.items():
            assert k / reps <= 0.05 + tol_a, (m, k / reps)
