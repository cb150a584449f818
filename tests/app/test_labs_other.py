"""AppTest of teaching labs 6–9 (pages/lab_three_names.py, lab_accrue.py, lab_quantile_reg.py, lab_temperature.py).

Each page is run with its default sliders and with at least one slider changed; it must run without an
exception or error, and the claim of the lab is checked numerically on the values the page computed (stored in
``st.session_state["lab_<key>"]``) and, where it shows them, on its metrics.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 240


def page(key: str) -> AppTest:
    at = AppTest.from_file(str(REPO / "pages" / f"lab_{key}.py"), default_timeout=TIMEOUT)
    at.run()
    ok(at)
    return at


def ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def specs(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def metric_value(at: AppTest, label_start: str) -> float:
    return float(next(m for m in at.metric if m.label.startswith(label_start)).value)


# ------------------------------------------------------------------------------------------------ lab 6
def _check_three_names(state: dict) -> None:
    bounds = state["bounds"]
    names = bounds["method"]
    diff, gap = state["max_abs_difference"], state["max_neighbour_gap"]
    # the claim: endpoints differ by at most one gap between neighbouring calibration z-scores
    assert max(diff.values()) <= gap * (1 + 1e-9) + 1e-12
    # … because the ranks among the sorted calibration scores differ by at most one
    crude = names.index("CRUDE")
    for other in ("split conformal (signed)", "Kuleshov isotonic"):
        j = names.index(other)
        assert abs(bounds["lower_rank"][j] - bounds["lower_rank"][crude]) <= 1
        assert abs(bounds["upper_rank"][j] - bounds["upper_rank"][crude]) <= 1
    # held-out coverage of the three agrees with the nominal one within binomial noise (99.9%)
    c, n = state["params"]["coverage"], state["n_test"]
    lo, hi = stats.binom.ppf([0.0005, 0.9995], n, c) / n
    covs = [bounds["coverage_test"][names.index(m)] for m in ("CRUDE", "split conformal (signed)", "Kuleshov isotonic")]
    # finite-sample randomness of the calibration set adds spread: allow 0.02 beyond the binomial range
    assert all(lo - 0.02 <= v <= hi + 0.02 for v in covs), covs
    assert max(covs) - min(covs) < 0.02


def test_lab_three_names_defaults_and_changed_sliders():
    at = page("three_names")
    state = at.session_state["lab_three_names"]
    _check_three_names(state)
    # defaults: L = 999, c = 0.9 → (L + 1)α/2 = 50: CRUDE and conformal give identical intervals
    assert state["max_abs_difference"]["split conformal (signed)"] == 0.0
    assert metric_value(at, "max |CRUDE − conformal|") == 0.0
    # the uncalibrated over-confident Gaussian misses the nominal coverage by far (spread 1.5)
    names = state["bounds"]["method"]
    assert state["bounds"]["coverage_test"][names.index("uncalibrated Gaussian")] < 0.8
    assert len(specs(at)) == 3
    at.slider(key="lab3n_cal").set_value(400)
    at.slider(key="lab3n_coverage").set_value(0.8)
    at.segmented_control(key="lab3n_noise").set_value("skewed")
    at.run()
    ok(at)
    state = at.session_state["lab_three_names"]
    assert state["params"]["n_calibration"] == 400 and state["params"]["noise"] == "skewed"
    _check_three_names(state)


# ------------------------------------------------------------------------------------------------ lab 7
def test_lab_three_names_findings_follow_the_sliders():
    at = page("three_names")
    findings = " ".join(at.session_state["lab_three_names_findings"])
    assert "all three inside it" in findings and "too narrow (over-confident)" in findings
    assert "coincide exactly ((L + 1)α/2 = 50 is an integer)" in findings
    assert any("What the numbers say" in m.value for m in at.markdown)
    at.slider(key="lab3n_spread").set_value(1.0)  # an honest Gaussian forecaster: nothing to recalibrate
    at.slider(key="lab3n_cal").set_value(500)
    at.run()
    ok(at)
    findings = " ".join(at.session_state["lab_three_names_findings"])
    state = at.session_state["lab_three_names"]
    u = state["bounds"]["coverage_test"][state["bounds"]["method"].index("uncalibrated Gaussian")]
    lo, hi = stats.binom.ppf([0.025, 0.975], state["n_test"], 0.9) / state["n_test"]
    assert f"covers {u:.4f}" in findings and ("needs no recalibration" in findings) == (lo <= u <= hi)
    assert "coincide exactly" not in findings and "25.05 is not an integer" in findings


def test_lab_accrue_defaults_and_changed_sliders():
    at = page("accrue")
    state = at.session_state["lab_accrue"]
    assert state["params"] == {"toy": "Y", "n": 2000, "seed": 0, "n_clusters": 5}
    e = state["median_errors"]
    # the claim at the defaults (Y): ACCRUE recovers σ(x) better than CRPS alone, k-means and a constant σ
    assert e["ACCRUE"] < e["CRPS only"] < e["k-means σ"] < e["constant σ"]
    # the metrics shown are the stored numbers (percent, one decimal)
    shown = next(m for m in at.metric if m.label.startswith("ACCRUE"))
    assert shown.value == f"{100 * e['ACCRUE']:.1f}%"
    assert len(specs(at)) == 2
    # 5D with fewer rows and other k: the network model; ACCRUE still far better than k-means
    at.segmented_control(key="labac_toy").set_value("5D")
    at.slider(key="labac_n").set_value(1500)
    at.slider(key="labac_k").set_value(8)
    at.run()
    ok(at)
    state = at.session_state["lab_accrue"]
    assert state["params"]["toy"] == "5D" and state["degree"] is None
    e = state["median_errors"]
    assert e["ACCRUE"] < 0.6 * e["k-means σ"]
    spec = specs(at)[0]
    assert {d["meta"]["name"] for d in spec["data"] if d.get("meta", {}).get("role") == "estimate"} == set(e)
    findings = " ".join(at.session_state["lab_accrue_findings"])
    assert f"ACCRUE {100 * e['ACCRUE']:.1f}%" in findings and "k = 8" in findings
    assert ("no real improvement on a constant σ" in findings) == (e["k-means σ"] >= 0.9 * e["constant σ"])
    assert "Algorithm 1" not in findings  # the network on 5D has no polynomial degree


def test_lab_accrue_findings_follow_the_sliders():
    at = page("accrue")
    findings = " ".join(at.session_state["lab_accrue_findings"])
    assert "the reliability term helps" in findings and "ACCRUE recovers σ(x) best" in findings
    assert any("What the numbers say" in m.value for m in at.markdown)
    at.segmented_control(key="labac_toy").set_value("G")
    at.slider(key="labac_n").set_value(100)
    at.run()
    ok(at)
    e = at.session_state["lab_accrue"]["median_errors"]
    findings = " ".join(at.session_state["lab_accrue_findings"])
    assert f"{min(e, key=e.get)} recovers σ(x) best" in findings
    assert ("the CRPS alone does better" in findings) == (round(1000 * e["ACCRUE"]) > round(1000 * e["CRPS only"]))


# ------------------------------------------------------------------------------------------------ lab 8
def _qr_value(state: dict, model: str, rows: str, metric: str) -> float:
    m = state["metrics"]
    i = next(i for i in range(len(m["model"])) if m["model"][i] == model and m["rows"][i] == rows)
    return float(m[metric][i])


def test_lab_quantile_reg_defaults_and_changed_sliders():
    at = page("quantile_reg")
    state = at.session_state["lab_quantile_reg"]
    plain, reg = state["names"]
    assert (plain, reg) == ("λ = 0", "λ = 2")
    # the claim: the regulariser lowers the held-out NLL (by orders of magnitude here) and straightens the curve
    assert _qr_value(state, reg, "test", "nll") < 0.1 * _qr_value(state, plain, "test", "nll")
    assert _qr_value(state, reg, "test", "calibration_rmse") < _qr_value(state, plain, "test", "calibration_rmse")
    assert _qr_value(state, reg, "train", "pit_entropy") > _qr_value(state, plain, "train", "pit_entropy")
    shown = next(m for m in at.metric if m.label.startswith("test calibration RMSE"))
    assert float(shown.value) == pytest.approx(_qr_value(state, reg, "test", "calibration_rmse"), abs=6e-4)
    assert len(specs(at)) == 2
    at.slider(key="labqr_lam").set_value(5.0)
    at.number_input(key="labqr_seed").set_value(1)
    at.run()
    ok(at)
    state = at.session_state["lab_quantile_reg"]
    plain, reg = state["names"]
    assert reg == "λ = 5" and state["params"]["seed"] == 1
    assert _qr_value(state, reg, "test", "nll") < _qr_value(state, plain, "test", "nll")
    assert _qr_value(state, reg, "test", "calibration_rmse") < _qr_value(state, plain, "test", "calibration_rmse")


def test_lab_quantile_reg_findings_follow_the_sliders():
    at = page("quantile_reg")
    findings = " ".join(at.session_state["lab_quantile_reg_findings"])
    state = at.session_state["lab_quantile_reg"]
    assert "towards the diagonal" in findings and "−inf for λ = 0" in findings
    assert f"{_qr_value(state, 'λ = 0', 'test', 'calibration_rmse'):.3f}" in findings
    assert any("What the numbers say" in m.value for m in at.markdown)
    at.select_slider(key="labqr_hidden").set_value(0)  # linear model: the regulariser does not help here
    at.run()
    ok(at)
    findings = " ".join(at.session_state["lab_quantile_reg_findings"])
    state = at.session_state["lab_quantile_reg"]
    plain, reg = state["names"]
    before, after = (_qr_value(state, m, "test", "calibration_rmse") for m in (plain, reg))
    assert f"{before:.3f} → {after:.3f}" in findings
    assert ("away from the diagonal" in findings) == (after > before) and "−inf" not in findings


# ------------------------------------------------------------------------------------------------ lab 9
def _ts_value(state: dict, method: str, metric: str) -> float:
    m = state["metrics"]
    return float(m[metric][m["method"].index(method)])


def test_lab_temperature_defaults_and_changed_sliders():
    at = page("temperature")
    state = at.session_state["lab_temperature"]
    assert state["params"]["dataset"].startswith("digits") and state["params"]["target"] == "top_label"
    # the claims: over-confident (T > 1), temperature scaling cuts the ECE, accuracy unchanged to the last bit
    assert state["temperature"] > 2
    assert _ts_value(state, "temperature scaling", "ece") < 0.5 * _ts_value(state, "uncalibrated", "ece")
    assert _ts_value(state, "temperature scaling", "accuracy") == _ts_value(state, "uncalibrated", "accuracy")
    assert _ts_value(state, "temperature scaling", "changed_predictions") == 0
    acc = next(m for m in at.metric if m.label.startswith("accuracy after"))
    assert float(acc.value) == pytest.approx(_ts_value(state, "uncalibrated", "accuracy"), abs=6e-5)
    assert acc.proto.delta == "+0.0000 vs before"
    # ECE moves with the number of bins
    by_bins = state["ece_by_bins"]["temperature scaling"]
    assert max(by_bins) - min(by_bins) > 0.02
    assert len(specs(at)) == 4
    # more bins in the table: the ECE shown is the one of the ECE-vs-M curve at that M
    at.slider(key="labts_bins").set_value(20).run()
    ok(at)
    state = at.session_state["lab_temperature"]
    i = state["ece_by_bins"]["n_bins"].index(20)
    assert _ts_value(state, "uncalibrated", "ece") == pytest.approx(state["ece_by_bins"]["uncalibrated"][i], abs=1e-15)
    # binary data set, positive-class semantics
    at.segmented_control(key="labts_data").set_value("breast cancer (binary)").run()
    at.segmented_control(key="labts_target").set_value("positive class").run()
    ok(at)
    state = at.session_state["lab_temperature"]
    assert state["params"]["target"] == "positive"
    for method in ("uncalibrated", "temperature scaling"):
        assert _ts_value(state, method, "ece") == _ts_value(state, method, "ece_positive")
    assert _ts_value(state, "temperature scaling", "accuracy") == _ts_value(state, "uncalibrated", "accuracy")
    assert _ts_value(state, "temperature scaling", "ece") < _ts_value(state, "uncalibrated", "ece")
    # an under-confident classifier (strong L2): T < 1
    findings = " ".join(at.session_state["lab_temperature_findings"])
    assert "positive-class ECE" in findings and "over-confident" in findings
    assert any(findings.split(" — ")[0][:40] in m.value for m in at.markdown)  # shown on the page
    at.select_slider(key="labts_c").set_value(0.01).run()
    ok(at)
    assert at.session_state["lab_temperature"]["temperature"] < 1
    findings = " ".join(at.session_state["lab_temperature_findings"])
    assert "under-confident" in findings and "T < 1" in findings and "over-confident" not in findings


# ------------------------------------------------------------------------------------------------ navigation
def test_labs_6_to_9_are_registered_and_run_inside_the_app():
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    at.run()
    ok(at)
    for key in ("three_names", "accrue", "quantile_reg", "temperature"):
        at.switch_page(f"pages/lab_{key}.py").run()
        ok(at)
        assert at.title[0].value.startswith("Lab ")
        assert f"lab_{key}" in at.session_state
    at.switch_page("pages/labs.py").run()
    ok(at)
    links = {el.proto.page for el in at.get("page_link")}
    assert {f"lab_{key}" for key in ("three_names", "accrue", "quantile_reg", "temperature")} <= links
