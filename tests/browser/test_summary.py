"""Browser test of the Regression page drawn from a summary file: the Data page opens a file
written by ``--save-summary``, the Regression page draws the Levi diagram, the quantile curve, the PIT and z
histograms from it, a σ-bin click redraws the linked views of the selected rows, and the metric tables say which
numbers are exact and which carry a bound."""

from __future__ import annotations

import re

import numpy as np
import pytest

import calib_core as cc
from calib_core.base.predictions import PredictionSet
from calib_core.scale import summary as S

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.browser.test_pages import LONG, click_bar, click_point, nav, screenshot  # noqa: E402
from tests.conftest import upload_file, wait_for_app  # noqa: E402


def _summary_file(path, n: int = 200_000) -> None:
    rng = np.random.default_rng(8)
    mu = rng.standard_normal(n)
    sd = np.exp(0.5 * rng.standard_normal(n))
    y = mu + sd ** 1.25 * rng.standard_normal(n)  # the error grows faster than σ: small σ over-, large under-stated
    pset = PredictionSet(task="regression", y=y, dist=cc.Gaussian(mu, sd), layout="gaussian",
                         row_number=np.arange(1, n + 1, dtype=np.int64))
    path.write_bytes(S.summarize(pset, spec=S.spec_for(pset)).to_bytes())


def test_regression_page_from_a_summary_file_with_a_sigma_bin_selection(app_page, artifacts_dir, tmp_path):
    page = app_page
    path = tmp_path / "run.summary"
    _summary_file(path)
    nav(page, "Data")
    upload_file(page, path, key="data_summary_upload")
    expect(page.get_by_test_id("stSidebar").get_by_text("run.summary")).to_be_visible(timeout=LONG)
    expect(page.get_by_text("Diagnose it on the Regression page")).to_be_visible()
    wait_for_app(page)
    screenshot(page, artifacts_dir / "data_summary.png")

    nav(page, "Regression")
    levi = page.locator(".st-key-regsum_levi_chart").get_by_test_id("stPlotlyChart")
    expect(levi.locator(".scatterlayer .trace").nth(1).locator(".points path")).to_have_count(15, timeout=LONG)
    info = page.get_by_text(re.compile(r"σ-bins selected|rows selected from σ-bin"))
    expect(info).to_have_text(re.compile("No σ-bins selected"))
    expect(page.get_by_text("from the summary").first).to_be_visible()
    wait_for_app(page)

    click_point(page, levi, 1, 1)  # the second σ-bin: over-confident rows below the diagonal's far end
    expect(info).to_have_text(re.compile(r"13,333 rows selected from σ-bin 2 of 15"), timeout=LONG)
    for key in ("regsum_kuleshov", "regsum_pit"):  # the quantile curve and the PIT histogram
        chart = page.locator(f".st-key-{key}").get_by_test_id("stPlotlyChart")
        expect(chart.locator(".legendtext", has_text="model · selected")).to_be_visible(timeout=LONG)
    expect(page.get_by_role("heading", name="Metrics of the selected rows")).to_be_visible()
    expect(page.get_by_text(re.compile("The rows themselves are not in a summary"))).to_be_visible()
    wait_for_app(page)
    screenshot(page, artifacts_dir / "regression_summary.png")
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_classification_summary_group_positive_class_and_export(app_page, artifacts_dir, tmp_path):
    """A binary summary with two groups: choose group b, the positive-class view, click a reliability bar; the
    selected-bin table gives that bin of group b's rows; the metric CSV says which numbers are exact."""
    import pandas as pd

    page = app_page
    rng = np.random.default_rng(9)
    n = 60_000
    p1 = rng.uniform(0.02, 0.98, n)
    group = np.where(rng.random(n) < 0.5, "a", "b")
    labels = (rng.random(n) < np.where(group == "b", p1 ** 1.4, p1)).astype(np.int64)  # b over-predicts
    pset = PredictionSet(task="classification", labels=labels, probs=np.column_stack([1 - p1, p1]),
                         layout="probs", group=group, row_number=np.arange(1, n + 1, dtype=np.int64))
    path = tmp_path / "binary.summary"
    path.write_bytes(S.summarize(pset, spec=S.spec_for(pset)).to_bytes())
    nav(page, "Data")
    upload_file(page, path, key="data_summary_upload")
    expect(page.get_by_test_id("stSidebar").get_by_text("binary.summary")).to_be_visible(timeout=LONG)
    wait_for_app(page)

    nav(page, "Classification")
    page.locator(".st-key-clssum_group").get_by_test_id("stSelectbox").click()
    page.get_by_role("option", name="b", exact=True).click()
    wait_for_app(page)
    page.locator(".st-key-clssum_target").get_by_role("radio", name="positive class").click()
    wait_for_app(page)
    expect(page.get_by_text(re.compile("Positive-class semantics"))).to_be_visible(timeout=LONG)
    rel = page.locator(".st-key-clssum_rel_chart").get_by_test_id("stPlotlyChart")
    expect(rel.locator(".barlayer .trace").first.locator(".point path")).to_have_count(15, timeout=LONG)
    click_bar(page, rel, 0, 11)  # P(y = 1) in (11/15, 12/15]
    rows_b = pset.take(group == "b")
    ref = cc.diagnose(rows_b, n_resamples=0, n_simulations=0).diagrams[("model", cc.ALL)]["reliability_positive"]
    count = int(ref["count"].iloc[11])
    expect(page.get_by_text(re.compile(rf"{count:,} rows selected from P\(y = 1\) bin 12 of 15"))).to_be_visible(
        timeout=LONG)
    table = page.get_by_test_id("stDataFrame").filter(has_text="frequency of y = 1")
    expect(table).to_be_visible()
    wait_for_app(page)
    screenshot(page, artifacts_dir / "classification_summary_positive.png")
    with page.expect_download(timeout=LONG) as csv_download:
        page.get_by_role("button", name="Metric table (CSV)").click()
    metrics = pd.read_csv(csv_download.value.path())
    kinds = dict(zip(metrics["metric"], metrics["from_summary"]))
    assert kinds["calibration_ratio_positive"] == "exact" and kinds["smooth_ece"] == "needs the rows"
    assert set(metrics["group"].dropna()) <= {cc.ALL}  # the group's summary, rekeyed as its all rows
    got = float(metrics.loc[metrics["metric"] == "calibration_ratio_positive", "value"].iloc[0])
    assert got == pytest.approx(float(rows_b.probs[:, 1].sum() / rows_b.labels.sum()), rel=1e-12)
    expect(page.get_by_test_id("stException")).to_have_count(0)
