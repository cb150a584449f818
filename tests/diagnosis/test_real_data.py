"""Diagnose every regression set in ../shared/data/real end to end (loader → diagnose → Report).

Each case prints one line with the headline numbers.  Besides "no crash, finite numbers, counts add
up", a few facts about the data are asserted (e.g. the isotonic-recalibrated QM9 predictions of
Busk et al. 2022 are better calibrated on the test set than the uncalibrated ones).
Skipped when the data folder is absent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import calib_core as cc

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real"
pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason=f"real data folder {REAL} not found")

BOSTON = "torchuq_boston_gaussian_quantile/boston_val_predictions.csv"
BOSTON_Q = {f"{q:.2f}": f"q{q:.2f}" for q in np.round(np.arange(0.05, 1.0, 0.1), 2)}
CASES = [
    ("busk2022_qm9_painn_ensemble/qm9_E_test_uncalibrated.csv", None),
    ("busk2022_qm9_painn_ensemble/qm9_E_test_isotonic_calibrated.csv", None),
    ("busk2022_qm9_painn_ensemble/qm9_E_validation_uncalibrated.csv", None),
    ("rasmussen2023_logp_gcn_uq/logP_10k_a_LS-GCN_test.csv", None),
    ("rasmussen2023_logp_gcn_uq/logP_10k_a_LS-NN_test.csv", None),
    ("rasmussen2023_logp_gcn_uq/logP_150k_LS-GCN_test.csv", None),
    ("palmer2022_materials_error_uncertainty/Diffusion_RF_Test_uncal.csv", None),
    ("palmer2022_materials_error_uncertainty/Diffusion_RF_Test_cal.csv", None),
    ("palmer2022_materials_error_uncertainty/Perovskite_GPR_Bayesian_Test_uncal.csv", None),
    ("palmer2022_materials_error_uncertainty/Perovskite_GPR_Bayesian_Test_cal.csv", None),
    (BOSTON, {"y": "y_true", "mean": "mean", "std": "std"}),
    (BOSTON, {"y": "y_true", "quantiles": BOSTON_Q}),
    ("uncval_chem_error_uncertainty/ZHE2022_AIQM1.csv", None),
    ("uncval_chem_error_uncertainty/ZHE2022_ANI-1ccx.csv", None),
    ("weather_srft_uwme_temp_ensemble/srft_temperature_kelvin.csv", None),
    ("weather_ecmwf_ens_precip_frankfurt/rain_frankfurt_mm.csv", None),
    ("weather_gefs_reforecast_precip_innsbruck/rain_innsbruck_mm.csv", None),
]
HEADLINE = ["nll", "crps", "ence", "cv", "calibration_rmse", "max_calibration_deviation", "coverage_90"]


def diagnose(rel: str, columns=None) -> cc.Report:
    pset = cc.load_predictions(REAL / rel, columns=columns)
    report = cc.diagnose(pset, n_resamples=20, n_simulations=5, seed=0)
    t = report.table()
    print(f"{rel} [{pset.layout}, {pset.n_rows}/{pset.n_read} rows, {pset.dropped.total} dropped]: "
          + ", ".join(f"{m}={t.loc[m, 'value']:.4g}" for m in HEADLINE))
    return report


@pytest.mark.parametrize("rel, columns", CASES, ids=[c[0].split("/")[-1] + ("+map" if c[1] else "") for c in CASES])
def test_real_set_diagnoses(rel, columns):
    report = diagnose(rel, columns)
    t = report.table()
    for m in HEADLINE:
        assert np.isfinite(t.loc[m, "value"]), m
    ok = t["ci_low"].notna()  # a few statistics have no interval (PIT entropy, reliability score), said in `note`
    assert (t.loc[ok, "ci_low"] <= t.loc[ok, "ci_high"]).all()
    assert report.verdict()["verdict"] in ("calibrated", "miscalibrated")
    tables = report.diagrams[(report.models[0], cc.ALL)]
    assert tables["pit_histogram"]["count"].sum() == report.n_rows
    assert tables["levi_bins"]["count"].sum() == report.n_rows
    assert 0 <= t.loc["max_calibration_deviation", "value"] <= 1


def test_busk_isotonic_recalibration_improves_test_calibration():
    before = diagnose("busk2022_qm9_painn_ensemble/qm9_E_test_uncalibrated.csv")
    after = diagnose("busk2022_qm9_painn_ensemble/qm9_E_test_isotonic_calibrated.csv")
    for m in ("calibration_rmse", "nll"):
        assert after.value(m) < before.value(m), m
    # the uncalibrated ensemble is under-confident on QM9 (Busk et al. 2022): its 90% intervals over-cover
    assert before.value("coverage_90") > 0.9


def test_zero_inflated_ensemble_pit_is_randomised():
    """GEFS precipitation: dry days with every member at 0 tie with all members; the randomised rank
    PIT spreads those ties uniformly instead of piling them on one value (no atom in the histogram)."""
    from calib_core.metrics import regression as rm

    pset = cc.load_predictions(REAL / "weather_gefs_reforecast_precip_innsbruck/rain_innsbruck_mm.csv")
    u = rm.pit(pset.y, pset.dist, seed=0)
    all_tied = (pset.y == 0) & (pset.dist.samples == 0).all(axis=1)
    assert all_tied.sum() >= 5
    assert u[all_tied].min() < 0.3 and u[all_tied].max() > 0.7
    assert np.unique(u).size == u.size  # no atoms left
    report = diagnose("weather_gefs_reforecast_precip_innsbruck/rain_innsbruck_mm.csv")
    assert np.isfinite(report.value("nll")) and report.value("nll") < 100  # bandwidth floor on degenerate rows
