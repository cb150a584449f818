"""AppTest of the regression lab pages (labs 1–5): each page runs with its default sliders and with changed
sliders without an exception, and the lab's claim is checked numerically on what the page computed
(the result it leaves in ``st.session_state["lab_<key>"]`` and the figures it drew)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 180


def open_lab(key: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page(f"pages/lab_{key}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def specs(at: AppTest) -> dict[str, dict]:
    """Figure JSON of every plotly chart, by widget key."""
    return {c.key: json.loads(c.proto.spec) for c in at.get("plotly_chart")}


def decode(value) -> np.ndarray:
    """Plotly 7 encodes numpy arrays as base64 typed arrays ({"dtype", "bdata"})."""
    if isinstance(value, dict) and "bdata" in value:
        import base64

        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
    return np.asarray(value)


def trace(spec: dict, name: str, role: str | None = None) -> dict:
    for d in spec["data"]:
        meta = d.get("meta") or {}
        if d.get("name") == name or meta.get("name") == name:
            if role is None or meta.get("role") == role:
                return d
    raise AssertionError(f"no trace {name!r} ({role}) in {[d.get('name') for d in spec['data']]}")


def plotly_select(at: AppTest, chart_key: str, points: list[dict]) -> AppTest:
    """Run the app as if the user selected ``points`` in chart ``chart_key`` (fires its on_select callback);
    see ../shared/recipes/streamlit-testing/NOTES.md §4.1 and tests/app/test_pages.py."""
    chart = next(c for c in at.get("plotly_chart") if c.key == chart_key)
    states = at._tree.get_widget_states()
    event = {"selection": {"points": points, "point_indices": [p.get("point_index", 0) for p in points],
                           "box": [], "lasso": []}}
    states.widgets.append(WidgetState(id=chart.proto.id, string_value=json.dumps(event)))
    at._run(states)
    return ok(at)


def select_bins(at: AppTest, chart_key: str, name: str, bins: list[int]) -> AppTest:
    """Select the markers of ``bins`` of trace ``name`` (role "bins") in chart ``chart_key``."""
    spec = specs(at)[chart_key]
    curve = next(i for i, d in enumerate(spec["data"])
                 if (d.get("meta") or {}).get("name") == name and d["meta"].get("role") == "bins")
    cd = decode(spec["data"][curve]["customdata"])
    points = [{"curve_number": curve, "point_index": int(i), "point_number": int(i), "customdata": int(cd[i])}
              for i in range(len(cd)) if int(cd[i]) in bins]
    return plotly_select(at, chart_key, points)


# ============================================================================================ lab 1
def test_lab_random_sigma_page():
    at = open_lab("random_sigma")
    m = at.session_state["lab_random_sigma"].set_index(["model", "stage"])
    # the claim, from what the page computed: both calibrated after isotonic, ENCE separates them
    assert m.loc[("random σ", "isotonic"), "calibration_rmse"] < 0.03
    assert m.loc[("learned σ", "isotonic"), "calibration_rmse"] < 0.03
    assert m.loc[("random σ", "raw"), "calibration_rmse"] > 0.15
    assert m.loc[("random σ", "isotonic"), "ence"] > 0.35 > 0.15 > m.loc[("learned σ", "isotonic"), "ence"]
    figs = specs(at)
    curve = decode(trace(figs["lab1_curve"], "random σ", "curve")["y"])
    assert np.max(np.abs(curve - np.linspace(0, 1, 101))) < 0.05  # the drawn curve is on the diagonal
    assert at.session_state["page_run_ms"]["lab_random_sigma"] < 5000

    # select the three smallest-σ bins of the random σ: the conditional curve is drawn and is off the diagonal
    levi = figs["lab1_levi"]
    curve_number = next(i for i, d in enumerate(levi["data"]) if (d.get("meta") or {}).get("name") == "random σ")
    points = [{"curve_number": curve_number, "point_index": b, "point_number": b, "customdata": b} for b in (0, 1, 2)]
    plotly_select(at, "lab1_levi", points)
    assert at.session_state["lab1_sel"].bins == {"random σ": (0, 1, 2)}
    cond = decode(trace(specs(at)["lab1_curve"], "random σ · selected σ-bins", "curve")["y"])
    assert cond[10] > 0.2  # P(u ≤ 0.1) within the low-σ bins: over-confident
    at.button(key="lab1_clear").click().run()
    assert ok(at).session_state["lab1_sel"].empty

    # changed sliders: another seed, a narrower random σ range, fewer bins, the raw forecasts
    at.slider(key="lab1_seed").set_value(7).run()
    at.slider(key="lab1_sigma_range").set_value((2.0, 4.0)).run()
    at.slider(key="lab1_bins").set_value(10).run()
    ok(at)
    m = at.session_state["lab_random_sigma"].set_index(["model", "stage"])
    assert m.loc[("random σ", "isotonic"), "calibration_rmse"] < 0.03
    assert m.loc[("random σ", "isotonic"), "ence"] > 0.15  # U[2, 4]: RMV spans 2×, ENCE ≈ 0.2
    assert decode(trace(specs(at)["lab1_levi"], "random σ", "bins")["x"]).size == 10
    at.segmented_control(key="lab1_stage").set_value("raw").run()
    ok(at)
    assert "raw" in specs(at)["lab1_levi"]["layout"]["title"]["text"]


# ============================================================================================ lab 2
def test_lab_cauchy_page():
    at = open_lab("cauchy")
    m = at.session_state["lab_cauchy"].set_index("model")
    dkw = np.sqrt(np.log(200) / (2 * 5000))
    assert (m["max_calibration_deviation"] < dkw).all()  # both quantile calibrated
    assert m.loc["Cauchy(0, |z|)", "min_bin_coverage"] < 0.15 and m.loc["Cauchy(0, |z|)", "max_bin_coverage"] > 0.9
    assert m.loc["N(0, 1)", "max_bin_coverage"] - m.loc["N(0, 1)", "min_bin_coverage"] < 0.2
    cov = decode(trace(specs(at)["lab2_coverage_chart"], "Cauchy(0, |z|)", "bins")["y"])
    assert cov.size == 10 and cov[0] < 0.15 and cov[-1] > 0.9  # the drawn coverage line runs from ~0 to ~1

    # select the two smallest-γ bins: the PIT histograms of those rows are drawn; the Cauchy's is U-shaped there
    select_bins(at, "lab2_coverage_chart", "Cauchy(0, |z|)", [0, 1])
    assert at.session_state["lab2_sel"].bins == {"Cauchy(0, |z|)": (0, 1)}
    pit = specs(at)["lab2_pit"]
    u_shape = decode(trace(pit, "Cauchy(0, |z|) · selected γ-bins", "steps")["y"])
    flat = decode(trace(pit, "N(0, 1) · selected γ-bins", "steps")["y"])
    assert u_shape[0] > 3 and u_shape[-1] > 3 and np.median(u_shape) < 0.6
    assert np.all(np.abs(flat[:-1] - 1) < 0.6)  # 1,000 rows, 20 bins: s.e. of a bar's density ≈ 0.14
    at.button(key="lab2_clear").click().run()
    assert ok(at).session_state["lab2_sel"].empty

    at.slider(key="lab2_coverage").set_value(0.8).run()
    at.slider(key="lab2_bins").set_value(6).run()
    at.slider(key="lab2_seed").set_value(11).run()
    ok(at)
    m = at.session_state["lab_cauchy"].set_index("model")
    assert (m["coverage"] - 0.8).abs().max() < 0.03
    assert m.loc["Cauchy(0, |z|)", "max_bin_coverage"] - m.loc["Cauchy(0, |z|)", "min_bin_coverage"] > 0.5
    assert decode(trace(specs(at)["lab2_coverage_chart"], "Cauchy(0, |z|)", "bins")["y"]).size == 6


# ============================================================================================ lab 3
def test_lab_marginal_page():
    at = open_lab("marginal")
    m = at.session_state["lab_marginal"].set_index("model")
    dkw = np.sqrt(np.log(200) / (2 * 5000))
    assert (m["max_calibration_deviation"] < dkw).all()
    ideal, marginal = m.loc["ideal N(a·x, σ²)"], m.loc["marginal N(0, a²s²+σ²)"]
    assert marginal["sharpness"] / ideal["sharpness"] == pytest.approx(np.sqrt(401.0))
    assert marginal["min_bin_coverage"] < 0.5 and marginal["max_bin_coverage"] > 0.99
    levi = specs(at)["lab3_levi"]
    assert np.allclose(decode(trace(levi, "marginal N(0, a²s²+σ²)", "bins")["x"]), np.sqrt(401.0))
    # the Numbers table: one row per quantity, one column per forecaster (it fits; 11 columns scrolled sideways)
    numbers = next(d.value for d in at.dataframe if "quantity" in d.value.columns)
    assert list(numbers.columns) == ["quantity", "ideal N(a·x, σ²)", "marginal N(0, a²s²+σ²)"]
    assert len(numbers) == len(m.columns) and "max deviation (KS)" in set(numbers["quantity"])
    assert numbers.set_index("quantity").loc["sharpness √mean σ²", "ideal N(a·x, σ²)"] == ideal["sharpness"]

    # select the lowest x-bin: the marginal's PIT of those rows piles up at 0, the ideal's stays spread out
    select_bins(at, "lab3_coverage_chart", "marginal N(0, a²s²+σ²)", [0])
    pit = specs(at)["lab3_pit"]
    marg = decode(trace(pit, "marginal N(0, a²s²+σ²) · selected x-bins", "steps")["y"])
    ideal_sel = decode(trace(pit, "ideal N(a·x, σ²) · selected x-bins", "steps")["y"])
    assert marg[0] > 10 and np.all(marg[3:] == 0)
    assert ideal_sel.max() < 3

    at.slider(key="lab3_slope").set_value(2.0).run()
    at.slider(key="lab3_x_std").set_value(1.5).run()
    at.slider(key="lab3_seed").set_value(4).run()
    ok(at)
    m = at.session_state["lab_marginal"].set_index("model")
    assert (m["max_calibration_deviation"] < dkw).all()
    assert m.loc["marginal N(0, a²s²+σ²)", "sharpness"] == pytest.approx(np.sqrt(2.0**2 * 1.5**2 + 1.0))


# ============================================================================================ lab 4
def test_lab_isotonic_page():
    at = open_lab("isotonic")
    n = at.session_state["lab_isotonic"]
    assert n["truncation_u"] < 1.0 and n["zero_density_share"] > 0 and n["nll_after"] == np.inf
    assert n["spike_ratio"] > 5 and abs(n["mean_shift"]) > 0.01
    dens = specs(at)["lab4_density"]
    after = decode(trace(dens, "after isotonic recalibration", "density")["y"])
    y = decode(trace(dens, "after isotonic recalibration", "density")["x"])
    assert np.all(after[y > n["truncation_point"] + 1e-9] == 0)  # the drawn density is cut at the truncation point
    shapes = dens["layout"].get("shapes", [])
    assert any(abs(s["x0"] - n["truncation_point"]) < 1e-9 for s in shapes)  # and the point is marked

    at.toggle(key="lab4_endpoint").set_value(True).run()
    ok(at)
    n = at.session_state["lab_isotonic"]
    assert n["truncation_u"] == 1.0 and n["zero_density_share"] == 0.0 and np.isfinite(n["nll_after"])
    at.slider(key="lab4_n_cal").set_value(128).run()
    at.slider(key="lab4_x_star").set_value(-2.5).run()
    at.slider(key="lab4_assumed_noise").set_value(0.5).run()
    ok(at)
    n = at.session_state["lab_isotonic"]
    assert n["mean_before"] == pytest.approx(-7.5, abs=0.5)  # μ(x*) ≈ 3·x*
    # an over-confident model (assumed σ = 0.5 for σ = 1): the map has something to fix on 128 points
    assert n["calibration_rmse_after"] < n["calibration_rmse_before"]
    findings = " ".join(at.session_state["lab_isotonic_findings"])
    assert "makes it better" in findings and "no truncation" in findings
    assert any("makes it better" in m.value for m in at.markdown)


def test_lab_isotonic_findings_follow_the_sliders():
    at = open_lab("isotonic")
    findings = " ".join(at.session_state["lab_isotonic_findings"])
    n = at.session_state["lab_isotonic"]
    assert "makes it worse" in findings and "NLL is ∞" in findings  # well specified, m = 32, no end point
    assert f"{n['calibration_rmse_after']:.4f}" in findings
    at.slider(key="lab4_n_cal").set_value(512).run()
    ok(at)
    n512 = at.session_state["lab_isotonic"]
    assert n512["mean_before"] == n["mean_before"]  # the base model does not move with m
    findings = " ".join(at.session_state["lab_isotonic_findings"])
    assert f"{n512['spike_ratio']:,.0f}×" in findings


# ============================================================================================ lab 5
def test_lab_nlpd_page():
    at = open_lab("nlpd")
    m = at.session_state["lab_nlpd"].set_index("model")
    cal, twin = m.loc["calibrated σ(x)"], m.loc["equal-NLPD σ̃"]
    assert twin["nlpd"] == pytest.approx(cal["nlpd"], abs=1e-8)
    assert twin["reliability"] > 20 * cal["reliability"]
    seq = m[m["t"].notna()].sort_values("t")
    assert len(seq) == 6 and np.all(np.diff(seq["nlpd"]) < 0) and np.all(np.diff(seq["reliability"]) > 0)
    path = specs(at)["lab5_path"]
    xs = [d["x"][0] for d in path["data"] if (d.get("meta") or {}).get("role") == "points"]
    assert len(xs) == 6 and np.all(np.diff(xs) < 0)  # the drawn NLPD falls along the sequence

    at.slider(key="lab5_steps").set_value(4).run()
    at.slider(key="lab5_t_max").set_value(0.5).run()
    at.slider(key="lab5_n").set_value(3000).run()
    ok(at)
    m = at.session_state["lab_nlpd"].set_index("model")
    seq = m[m["t"].notna()].sort_values("t")
    assert len(seq) == 4 and seq["t"].max() == pytest.approx(0.5)
    assert np.all(np.diff(seq["nlpd"]) < 0) and np.all(np.diff(seq["reliability"]) > 0)
    assert m.loc["equal-NLPD σ̃", "nlpd"] == pytest.approx(m.loc["calibrated σ(x)", "nlpd"], abs=1e-8)


@pytest.mark.parametrize("key, slider, value, before, after", [
    ("random_sigma", "lab1_stage", "raw", "both below it", "random σ above it"),
    ("cauchy", "lab2_n", 500, "N = 5,000", "N = 500"),
    ("marginal", "lab3_slope", 0.0, "both prefer the ideal forecaster", "a tie"),
    ("nlpd", "lab5_steps", 2, "(6 models)", "(2 models)"),
])
def test_lab_findings_follow_the_sliders(key, slider, value, before, after):
    at = open_lab(key)
    findings = " ".join(at.session_state[f"lab_{key}_findings"])
    assert before in findings and after not in findings
    assert any(findings.split(":")[0] in m.value for m in at.markdown)  # shown on the page
    widget = at.segmented_control(key=slider) if slider == "lab1_stage" else at.slider(key=slider)
    widget.set_value(value).run()
    ok(at)
    findings = " ".join(at.session_state[f"lab_{key}_findings"])
    assert after in findings and before not in findings
