"""Lab 10 — the reference value depends on the error law: the core's claims by seeded
simulation, the findings computed from the numbers, and the page (AppTest)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from calib_core.base.regression import Gaussian
from calib_core.labs.error_law import EMPIRICAL, GAUSSIAN, NULLS, STUDENT, error_law_findings, run_error_law
from calib_core.metrics import regression as rm
from calib_core.metrics.regression_tails import log_z2_moments_student

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(scope="module")
def heavy():
    return run_error_law(4000, nu=3.0, n_bins=15, seed=1, draws=300)


@pytest.fixture(scope="module")
def light():
    return run_error_law(2000, nu=50.0, n_bins=15, seed=2, draws=300)


def test_observed_ence_matches_the_core(heavy):
    """The lab's fast ENCE (cumulative sums over bins) is the core's ENCE of the same data."""
    rng = np.random.default_rng(np.random.SeedSequence([1, 1610]))
    sigma = np.exp(rng.uniform(-1.0, 1.0, 4000))
    z = rng.standard_t(3.0, 4000) * np.sqrt(1 / 3)
    d = Gaussian(np.zeros(4000), sigma)
    y = sigma * z
    for b, v in zip(heavy.observed["n_bins"], heavy.observed["ence"]):
        assert v == pytest.approx(rm.ence(y, d, n_bins=int(b)), rel=1e-9)
    assert heavy.observed_values["zms"] == pytest.approx(rm.zms(y, d), rel=1e-12)
    assert heavy.observed_values["mean_log_z2"] == pytest.approx(rm.mean_log_z2(y, d), rel=1e-12)


def test_references_move_with_the_law(heavy, light):
    se = lambda r, k: (r.reference(k, "zms")["high"] - r.reference(k, "zms")["low"]) / 4 / np.sqrt(r.draws)  # noqa: E731
    for r in (heavy, light):
        for null in NULLS:  # ZMS: reference 1 under every law (Monte-Carlo error of the mean of 300 draws)
            assert abs(r.reference(null, "zms")["mean"] - 1.0) < 6 * se(r, null) + 1e-3, (null, r.nu)
        g, t = r.reference(GAUSSIAN, "mean_log_z2")["mean"], r.reference(STUDENT, "mean_log_z2")["mean"]
        assert g == pytest.approx(rm.LOG_CHI2_1_MEAN, abs=0.01)
        assert t == pytest.approx(log_z2_moments_student(r.nu)[0], abs=0.01)
    # heavy tails: ENCE's reference more than doubles, the Gaussian null rejects these calibrated forecasts
    assert heavy.reference(STUDENT, "ence")["mean"] > 2 * heavy.reference(GAUSSIAN, "ence")["mean"]
    assert heavy.reference(GAUSSIAN, "ence")["verdict"] == "above"
    assert heavy.reference(STUDENT, "ence")["verdict"] == "inside"
    assert heavy.reference(EMPIRICAL, "ence")["verdict"] == "inside"
    assert heavy.reference(STUDENT, "zms")["high"] > 2 * heavy.reference(GAUSSIAN, "zms")["high"] - 1
    # nearly Gaussian tails: the three laws give nearly the same ENCE reference
    g, t = light.reference(GAUSSIAN, "ence")["mean"], light.reference(STUDENT, "ence")["mean"]
    assert abs(t / g - 1) < 0.1
    # every band rises with the number of bins
    for null in NULLS:
        means = light.bands[light.bands["null"] == null]["mean"].to_numpy()
        assert np.all(np.diff(means) > 0)


def test_findings_are_computed_from_the_numbers(heavy, light):
    h, lt = error_law_findings(heavy), error_law_findings(light)
    e = heavy.reference(GAUSSIAN, "ence")
    assert f"{e['mean']:.3g} [{e['low']:.3g}, {e['high']:.3g}] (above)" in h[0]
    assert any("calls them miscalibrated" in s for s in h)
    assert not any("calls them miscalibrated" in s for s in lt)
    assert any("agree on ENCE" in s for s in lt)
    assert f"exactly {log_z2_moments_student(3.0)[0]:.4f} at ν = 3" in h[-1]
    with pytest.raises(ValueError, match="ν > 2"):
        run_error_law(100, nu=2.0)


def test_lab_page_runs_and_reacts_to_its_sliders():
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("pages/lab_error_law.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Lab 10 · The reference value depends on the error law"
    first = list(at.session_state["lab_error_law_findings"])
    assert {c.key for c in at.get("plotly_chart")} >= {"lab10_ence", "lab10_refs"}
    at.slider(key="lab10_nu").set_value(3.0).run()
    assert not at.exception
    second = list(at.session_state["lab_error_law_findings"])
    assert second != first and "ν = 3" in second[1]
    refs = at.session_state["lab_error_law"]
    assert set(refs["null"]) == set(NULLS) and len(refs) == 9
