"""Browser test of the Regression page drawn from a summary file (issue 13, point 5): the Data page opens a file
written by ``--save-summary``, the Regression page draws the Levi diagram, the quantile curve, the PIT and z
histograms from it, a σ-bin click redraws the linked views of the selected rows, and the metric tables say which
numbers are exact and which carry a bound."""

from __future__ import annotations

import re

import numpy as np
import pytest

import calib_core as cc
from calib_core import summary as S
from calib_core.predictions import PredictionSet

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from conftest import wait_for_app  # noqa: E402
from test_browser_pages import LONG, click_point, nav, screenshot  # noqa: E402


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
    page.get_by_test_id("stFileUploaderDropzoneInput").nth(1).set_input_files(str(path))
    expect(page.get_by_test_id("stSidebar").get_by_text("run.summary")).to_be_visible(timeout=LONG)
    expect(page.get_by_text("Diagnose it on the Regression page")).to_be_visible()
    wait_for_app(page)
    screenshot(page, artifacts_dir / "data_summary.png")

    nav(page, "Regression")
    charts = page.get_by_test_id("stPlotlyChart")
    levi = charts.nth(0)
    expect(levi.locator(".scatterlayer .trace").nth(1).locator(".points path")).to_have_count(15, timeout=LONG)
    info = page.get_by_text(re.compile(r"σ-bins selected|rows selected from σ-bin"))
    expect(info).to_have_text(re.compile("No σ-bins selected"))
    expect(page.get_by_text("from the summary").first).to_be_visible()
    wait_for_app(page)

    click_point(page, levi, 1, 1)  # the second σ-bin: over-confident rows below the diagonal's far end
    expect(info).to_have_text(re.compile(r"13,333 rows selected from σ-bin 2 of 15"), timeout=LONG)
    expect(charts.nth(1).locator(".legendtext", has_text="model · selected")).to_be_visible(timeout=LONG)
    expect(charts.nth(2).locator(".legendtext", has_text="model · selected")).to_be_visible()  # PIT
    expect(page.get_by_role("heading", name="Metrics of the selected rows")).to_be_visible()
    expect(page.get_by_text(re.compile("The rows themselves are not in a summary"))).to_be_visible()
    wait_for_app(page)
    screenshot(page, artifacts_dir / "regression_summary.png")
    expect(page.get_by_test_id("stException")).to_have_count(0)
