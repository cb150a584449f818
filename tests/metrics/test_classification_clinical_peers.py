"""The clinical set against calzone (calzone-tool 0.1.0, the FDA's calibration package) and statsmodels, to 1e-6, on
simulated data and on a real file (Niamey 2016 probability-of-precipitation forecasts, read in place)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special

from calib_core.metrics import classification_clinical as cl
from tests.peers import require_peer

REAL = Path("/work/shared/data/real/weather_niamey_pop_binary/precip_Niamey_2016.csv")


def _simulated(n, seed, slope, shift):
    rng = np.random.default_rng(seed)
    x = rng.normal(-0.5, 1.3, n)
    p = special.expit(x)
    y = (rng.random(n) < special.expit(shift + slope * x)).astype(int)
    return p, y


def _real_sets():
    if not REAL.exists():
        return []
    frame = pd.read_csv(REAL)
    y = frame["obs"].to_numpy(dtype=int)
    return [(col, frame[col].to_numpy(dtype=float), y) for col in ("Logistic", "EMOS", "ENS", "EPC")]


SIMULATED = [_simulated(600, 1, 1.0, 0.0), _simulated(3000, 2, 0.7, 0.3), _simulated(10_000, 3, 1.2, -0.5)]


def _sets():
    out = [(f"sim{i}", p, y) for i, (p, y) in enumerate(SIMULATED)]
    real = _real_sets()
    if not real:
        pytest.skip(f"{REAL} is not here")
    return out + real


@pytest.fixture(scope="module")
def calzone_metrics():
    return require_peer("calzone.metrics")


@pytest.mark.parametrize("which", range(3 + 4))
def test_cox_regression_matches_calzone(calzone_metrics, which):
    sets = _sets()
    if which >= len(sets):
        pytest.skip("no such set")
    name, p, y = sets[which]
    probs = np.column_stack([1 - p, p])
    slope, intercept, *_ = calzone_metrics.cox_regression_analysis(y.copy(), probs)
    fit = cl.logistic_recalibration(p, y)
    assert abs(fit.slope - slope) < 1e-6 and abs(fit.intercept - intercept) < 1e-6, name
    _, citl, *_ = calzone_metrics.cox_regression_analysis(y.copy(), probs, fix_slope=True)
    assert abs(cl.logistic_recalibration(p, y, fix_slope=True).intercept - citl) < 1e-6, name


@pytest.mark.parametrize("which", range(3 + 4))
def test_spiegelhalter_hosmer_lemeshow_and_ici_match_calzone(calzone_metrics, which):
    sets = _sets()
    if which >= len(sets):
        pytest.skip("no such set")
    name, p, y = sets[which]
    probs = np.column_stack([1 - p, p])
    z, pz = calzone_metrics.spiegelhalter_z_test(y.copy(), probs)
    assert abs(cl.spiegelhalter_z_of(p, y) - z) < 1e-6, name
    # calzone's HL takes binned summaries: give it our deciles of risk (p clipped as in both)
    q = np.clip(p, 1e-7, 1 - 1e-7)
    g = cl.hosmer_lemeshow_groups(p)
    n_g = np.bincount(g, minlength=10)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.bincount(g, weights=y, minlength=10) / n_g
        conf = np.bincount(g, weights=q, minlength=10) / n_g
    ours, groups = cl.hosmer_lemeshow_of(p, y)
    if np.all((rel[n_g > 0] > 1e-7) & (rel[n_g > 0] < 1 - 1e-7)):  # calzone clips observed shares of 0 or 1
        stat, _, df = calzone_metrics.hosmer_lemeshow_test(rel, conf, n_g)
        assert abs(ours - stat) < 1e-6 * max(1.0, stat) and df == groups - 2, name
    ici_cz, _, _ = calzone_metrics.lowess_regression_analysis(y.copy(), probs, span=0.5, delta=0.001, it=0)
    assert abs(cl.calibration_errors_of(p, y, span=0.5, delta=0.001)["ici"] - ici_cz) < 1e-6, name


@pytest.mark.parametrize("prevalence", [0.05, 0.3, 0.7])
def test_prevalence_adjustment_is_calzones_by_design(prevalence):
    utils = require_peer("calzone.utils")
    p, y = SIMULATED[1]
    probs = np.column_stack([1 - p, p])
    theirs = utils.apply_prevalence_adjustment(prevalence, y, probs)
    ours = cl.adjust_prevalence(probs, from_prevalence=prevalence, to_prevalence=float(np.mean(y)))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


def test_real_file_values_are_finite_and_the_ensemble_zeros_are_counted():
    sets = _real_sets()
    if not sets:
        pytest.skip(f"{REAL} is not here")
    for name, p, y in sets:
        fit = cl.logistic_recalibration(p, y)
        assert np.isfinite(fit.slope) and np.isfinite(fit.intercept), name
        assert fit.n_clipped == int(np.sum((p < 1e-7) | (p > 1 - 1e-7))), name
