"""calib_core.export: self-contained HTML, CSV formula neutralisation, Parquet round trips, calibrated tables."""

from __future__ import annotations

import csv
import html as html_lib
import io
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plotly.offline import get_plotlyjs

import calib_core as cc
from calib_core import export, plots
from calib_core.base.predictions import PredictionSet
from calib_core.calibrators import classification as ccal
from calib_core.calibrators import regression as rcal
from calib_core.data import writing

PLOTLYJS = get_plotlyjs()


# ---------------------------------------------------------------------------------------------------------------
# fixtures: small seeded data sets (fast diagnose: few resamples)
# ---------------------------------------------------------------------------------------------------------------
def _regression_csv(n: int = 300, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    sigma = rng.uniform(0.5, 2.0, size=n)
    y = mu + 1.5 * sigma * rng.normal(size=n)  # over-confident by 1.5
    df = pd.DataFrame({"y": y, "mean": mu, "std": sigma, "split": np.where(np.arange(n) % 2, "cal", "test")})
    text = df.to_csv(index=False)
    return (text + "1.0,2.0,-1.0,cal\nnan,1.0,1.0,test\n").encode()  # two bad rows: σ ≤ 0 and a missing target


@pytest.fixture(scope="module")
def regression_set() -> PredictionSet:
    return cc.load_predictions(_regression_csv(), source="preds<script>alert(1)</script>.csv")


@pytest.fixture(scope="module")
def regression_report(regression_set) -> cc.Report:
    return cc.diagnose(regression_set, n_resamples=200, n_simulations=200, seed=0)


@pytest.fixture(scope="module")
def regression_html(regression_report, regression_set) -> str:
    return export.report_html(regression_report, title="Report <b>title</b>", prediction_set=regression_set)


@pytest.fixture(scope="module")
def classification_set() -> PredictionSet:
    rng = np.random.default_rng(1)
    n, k = 800, 3
    z = 3.0 * rng.normal(size=(n, k))
    p_true = np.exp(z / 3.0)
    p_true /= p_true.sum(1, keepdims=True)
    labels = (p_true.cumsum(1) > rng.random(n)[:, None]).argmax(1)
    probs = np.exp(z - z.max(1, keepdims=True))
    probs /= probs.sum(1, keepdims=True)
    return PredictionSet(task="classification", source="cls.csv", labels=labels, probs=probs, logits=z, n_read=n)


# ---------------------------------------------------------------------------------------------------------------
# HTML report
# ---------------------------------------------------------------------------------------------------------------
def test_report_is_self_contained(regression_html):
    html = regression_html
    assert html.startswith("<!DOCTYPE html>")
    assert html.count(PLOTLYJS) == 1  # the plotly.js bundle, inlined exactly once
    ours = html.replace(PLOTLYJS, "")  # (the bundle itself holds link strings, e.g. its modebar logo)
    assert not re.search(r"<script[^>]*\ssrc\s*=", ours, re.I)  # no external script at all
    assert not re.search(r"<link[^>]*>", ours, re.I)  # no external stylesheet / font
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", ours, re.I)
    assert "@import" not in ours and "url(" not in ours
    assert ours.count("<script") == 7  # the bundle's tag + one per figure
    assert html.count("Plotly.newPlot(") == 6  # the six regression diagrams


def test_report_has_metric_tables_with_ci_and_perfect_values(regression_html, regression_report):
    html = regression_html
    for header in ("95% CI", "perfectly calibrated", "p-value", "verdict", "test", "note"):
        assert f"<th>{header}</th>" in html
    ence = regression_report.table().loc["ence"]
    assert f"[{ence['ci_low']:.4g}, {ence['ci_high']:.4g}]" in html
    assert f"{ence['perfect']:.4g}" in html
    # σ is 1.5× too small: the z spread is far beyond what a calibrated forecaster shows at N = 300 — rejected by
    # Holm in the primary family, and the headline says so in words (exports carry the verdict)
    assert 'class="beyond">rejected (Holm)' in html
    for _, v in regression_report.verdicts[regression_report.verdicts["group"] == cc.ALL].iterrows():
        assert html_lib.escape(v["sentence"]) in html
    assert "Over-confident" in html


def test_report_data_summary_counts_dropped_rows(regression_html, regression_set):
    assert regression_set.dropped.total == 2
    assert "<th>rows read</th><td>302</td>" in regression_html
    assert "<th>rows kept</th><td>300</td>" in regression_html
    assert "<th>rows dropped</th><td>2</td>" in regression_html
    assert "Dropped rows" in regression_html
    for reason in regression_set.dropped.reasons:
        assert reason.split()[0] in regression_html


def test_report_escapes_text_and_lists_options_and_versions(regression_html):
    assert "<script>alert(1)</script>" not in regression_html
    assert "preds&lt;script&gt;alert(1)&lt;/script&gt;.csv" in regression_html
    assert "<title>Report &lt;b&gt;title&lt;/b&gt;</title>" in regression_html
    assert "<th>n_bins</th><td>15</td>" in regression_html and "<th>binning</th><td>count</td>" in regression_html
    assert f"<th>calib_core</th><td>{cc.__version__}</td>" in regression_html


def test_report_figures_use_an_explicit_template_even_after_importing_streamlit(regression_report):
    import plotly.io as pio
    import streamlit  # noqa: F401 - sets Plotly's default template to Streamlit's placeholder one

    assert pio.templates.default == "streamlit"
    fig = go.Figure(go.Bar(x=[1, 2], y=[3, 4]))  # built under the placeholder template
    html = export.figure_html(fig)
    assert "#000001" not in html  # the placeholder colours would draw black bars outside Streamlit
    assert html.count(PLOTLYJS) == 1 and "<title>figure</title>" in html
    report = export.report_html(regression_report, title="t", figures={"custom": fig})
    assert "#000001" not in report and report.count("Plotly.newPlot(") == 1
    # a figure's own explicit template is kept
    kept = export.figure_html(plots.levi_figure(regression_report.diagrams[("model", cc.ALL)]["levi_bins"]))
    assert '"paper_bgcolor":"white"' in kept


def test_classification_report_has_reliability_figures(classification_set):
    report = cc.diagnose(classification_set, n_resamples=10, n_simulations=5)
    html = export.report_html(report, title="cls", prediction_set=classification_set)
    assert html.count(PLOTLYJS) == 1
    figs = export.default_figures(report)
    # the smoothed (loess) calibration curve with its band joins the reliability diagrams
    assert list(figs) == ["Reliability diagram", "Confidence histogram", "Smoothed calibration curve"]
    assert html.count("Plotly.newPlot(") == 3
    assert "<th>classes</th>" not in html  # no class names in this in-memory set
    assert "ECE" in html and "Brier" in html


def test_report_without_report_object_shows_tables_and_figures(regression_set):
    table = pd.DataFrame({"calibrator": ["none", "=cmd"], "ECE": [0.1, 0.02]})
    html = export.report_html(None, title="page", prediction_set=regression_set, tables={"Comparison": table},
                              figures=[go.Figure(go.Scatter(x=[0, 1], y=[0, 1]))], options={"seed": 3})
    assert "<h2>Comparison</h2>" in html and "=cmd" in html and "<th>seed</th><td>3</td>" in html
    assert html.count("Plotly.newPlot(") == 1


def test_default_figure_payload_is_independent_of_n():
    """Figures are built from diagram tables: the same size (±1%) at N = 2,000 and N = 20,000."""
    sizes = []
    for n in (2_000, 20_000):
        rng = np.random.default_rng(0)
        mu, sigma = rng.normal(size=n), rng.uniform(0.5, 2, size=n)
        ps = PredictionSet(task="regression", y=mu + sigma * rng.normal(size=n), dist=cc.Gaussian(mu, sigma))
        rep = cc.diagnose(ps, n_resamples=0, n_simulations=0)
        sizes.append(sum(len(f.to_json()) for f in export.default_figures(rep).values()))
    assert abs(sizes[1] - sizes[0]) < 0.01 * sizes[0]
    assert sizes[1] < 200_000


# ---------------------------------------------------------------------------------------------------------------
# CSV neutralisation
# ---------------------------------------------------------------------------------------------------------------
def _read(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"))))


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
        ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("=HYPERLINK(\"http://x\",\"y\")", "'=HYPERLINK(\"http://x\",\"y\")"),
        ("-x", "'-x"),
        ("-inf", "'-inf"),
        ("-1.5", "-1.5"),  # a number literal written as text: a spreadsheet reads a number, not a formula
        ("+3e-2", "+3e-2"),
        ("model a", "model a"),
        ("a=b", "a=b"),  # only the first character matters
        ("", ""),
    ],
)
def test_csv_neutralises_formula_cells(cell, written):
    data = export.to_csv_bytes(pd.DataFrame({"text": [cell], "x": [1.0]}))
    assert _read(data)[1][0] == written


def test_csv_keeps_numbers_and_neutralises_headers():
    df = pd.DataFrame(
        {
            "=evil()": ["ok", "=1"],
            "value": [-1.5, 2.25],
            "count": [-3, 4],
            "flag": [True, False],
            "cat": pd.Categorical(["@a", "b"]),
            "mixed": [-7, "-x"],
        }
    )
    rows = _read(export.to_csv_bytes(df))
    assert rows[0] == ["'=evil()", "value", "count", "flag", "cat", "mixed"]
    assert rows[1] == ["ok", "-1.5", "-3", "True", "'@a", "-7"]  # negative numbers stay numbers
    assert rows[2] == ["'=1", "2.25", "4", "False", "b", "'-x"]
    back = pd.read_csv(io.BytesIO(export.to_csv_bytes(df)))
    assert back["value"].tolist() == [-1.5, 2.25] and back["count"].dtype.kind == "i"
    assert df.columns[0] == "=evil()" and df.iloc[1, 0] == "=1"  # the input frame is not modified


def test_csv_keeps_full_float_precision_and_missing_values():
    x = np.array([np.pi, -1e-300, np.nan, 1e300])
    back = pd.read_csv(io.BytesIO(export.to_csv_bytes(pd.DataFrame({"x": x, "s": ["a", None, "=b", "c"]}))))
    np.testing.assert_array_equal(back["x"].to_numpy(), x)
    assert back["s"].isna().tolist() == [False, True, False, False]


_FORMULA = tuple("=+-@\t\r\n")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=12), min_size=1, max_size=8))
def test_csv_no_text_cell_can_start_a_formula(cells):
    df = pd.DataFrame({"t": cells, "v": np.arange(len(cells), dtype=float)})
    rows = _read(export.to_csv_bytes(df))[1:]
    number = re.compile(writing._NUMBER_LITERAL)
    for original, (written, _) in zip(cells, rows):
        if written.startswith(_FORMULA):
            assert number.fullmatch(written), written  # only plain numbers may start with + or -
            assert written == original
        elif written != original:
            assert written == "'" + original and original.startswith(_FORMULA)


# ---------------------------------------------------------------------------------------------------------------
# Parquet
# ---------------------------------------------------------------------------------------------------------------
def test_parquet_round_trip():
    df = pd.DataFrame(
        {
            "model": ["a", "=b", "c"],
            "value": [-1.5, np.nan, 1e-300],
            "count": np.array([1, 2, 3], dtype=np.int64),
            "flag": [True, False, True],
        }
    )
    back = pd.read_parquet(io.BytesIO(export.to_parquet_bytes(df)))
    pd.testing.assert_frame_equal(back, df, check_dtype=False)
    assert back["count"].dtype.kind == "i" and back["value"].dtype.kind == "f"
    assert back.loc[1, "model"] == "=b"  # Parquet is typed: nothing to neutralise


def test_parquet_of_metric_table_and_mixed_object_columns(regression_report):
    m = regression_report.metrics
    back = pd.read_parquet(io.BytesIO(export.to_parquet_bytes(m)))
    pd.testing.assert_frame_equal(back, m.reset_index(drop=True), check_dtype=False)
    mixed = pd.DataFrame({"x": [1, "a", 2.5]})
    assert pd.read_parquet(io.BytesIO(export.to_parquet_bytes(mixed)))["x"].tolist() == ["1", "a", "2.5"]


# ---------------------------------------------------------------------------------------------------------------
# calibrated predictions
# ---------------------------------------------------------------------------------------------------------------
def test_calibrated_predictions_frame_and_loader_round_trip(regression_set):
    ps = regression_set
    cal = ps.take(ps.split == "cal")
    dist = rcal.CRUDE().fit(cal.dist, cal.y).transform(ps.dist)
    frame = export.calibrated_predictions_frame(ps, dist, calibrator="CRUDE")
    levels = [f"q{p:g}" for p in export.EXPORT_LEVELS]
    assert list(frame.columns) == ["row", "y", "mean", "std", *levels, "split", "calibrator"]
    q = frame[levels].to_numpy()
    assert np.all(np.diff(q, axis=1) >= 0)
    np.testing.assert_allclose(q, dist.ppf(np.asarray(export.EXPORT_LEVELS)[None, :]))
    np.testing.assert_allclose(frame["mean"], dist.mean())
    np.testing.assert_allclose(frame["std"], dist.std())
    np.testing.assert_array_equal(frame["row"], ps.row_number)
    # the CSV download can be uploaded again: the same quantiles, targets and split
    again = cc.load_predictions(export.to_csv_bytes(frame), source="calibrated.csv")
    assert again.layout == "quantile" and again.n_rows == ps.n_rows
    np.testing.assert_array_equal(again.y, ps.y)
    np.testing.assert_array_equal(again.split, ps.split)
    np.testing.assert_allclose(again.dist.ppf(np.array([[0.05, 0.5, 0.95]])),
                               dist.ppf(np.array([[0.05, 0.5, 0.95]])), rtol=0, atol=0)
    back = pd.read_parquet(io.BytesIO(export.to_parquet_bytes(frame)))
    pd.testing.assert_frame_equal(back, frame, check_dtype=False)


def test_calibrated_predictions_frame_checks_rows(regression_set):
    with pytest.raises(ValueError, match="rows"):
        export.calibrated_predictions_frame(regression_set, regression_set.dist.take(np.arange(10)))
    with pytest.raises(ValueError, match="between 0 and 1"):
        export.calibrated_predictions_frame(regression_set, regression_set.dist, levels=(0.0, 0.5))


def test_calibrated_probabilities_frame_round_trip(classification_set):
    ps = classification_set
    probs = ccal.TemperatureScaling().fit(ps.logits, ps.labels).predict_proba(ps.logits)
    frame = export.calibrated_probabilities_frame(ps, probs, calibrator="temperature")
    assert list(frame.columns) == ["label", "prob_0", "prob_1", "prob_2", "confidence", "prediction", "calibrator"]
    np.testing.assert_allclose(frame["confidence"], probs.max(1))
    again = cc.load_predictions(export.to_csv_bytes(frame), source="p.csv")
    assert again.task == "classification"
    np.testing.assert_array_equal(again.labels, ps.labels)
    np.testing.assert_allclose(again.probs, probs, rtol=1e-12)


def test_report_with_models_and_groups_has_one_table_per_group_and_overlaid_figures():
    rng = np.random.default_rng(4)
    n = 400
    mu, sigma = rng.normal(size=n), rng.uniform(0.5, 2, size=n)
    frame = pd.DataFrame({
        "y": mu + sigma * rng.normal(size=n), "mean": mu, "std": sigma,
        "model": np.where(np.arange(n) % 2, "first", "second"), "group": np.where(np.arange(n) % 4 < 2, "g1", "g2"),
    })
    ps = cc.load_predictions(export.to_csv_bytes(frame), source="mg.csv")
    report = cc.diagnose(ps, n_resamples=0, n_simulations=0)
    html = export.report_html(report, title="mg", prediction_set=ps)
    assert "<h3>All rows</h3>" in html and "<h3>Group g1</h3>" in html and "<h3>Group g2</h3>" in html
    assert "<th>model</th>" in html  # several models: a model column
    levi = export.default_figures(report)["RMSE vs RMV (Levi et al.)"]
    named = [t.name for t in levi.data if (t.meta or {}).get("role") == "bins"]
    assert named == ["second", "first"]  # order of first appearance in the file
    assert len({t.marker.color for t in levi.data if (t.meta or {}).get("role") == "bins"}) == 2
