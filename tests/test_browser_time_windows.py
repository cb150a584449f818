"""Real browser: calibration over time (issue 17, point 4).  A file with a ``timestamp`` column is uploaded on the
Data page (prediction-file uploader, by key); the Regression page draws coverage per week with intervals and the
perfect-calibration band (chart found by its key), one marker per week, and the coverage drop of the drifted weeks
below the band.  Screenshots in tests/artifacts/."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from conftest import full_height_screenshot, wait_for_app  # noqa: E402

LONG = 120_000


def _drift_csv(path, n: int = 12000, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    secs = rng.integers(0, 84 * 86400, n)
    t = np.datetime64("2026-01-05", "s") + secs.astype("timedelta64[s]")  # a Monday: 12 whole weeks
    mean = rng.normal(size=n)
    y = mean + np.where(secs >= 56 * 86400, 1.6, 1.0) * rng.standard_normal(n)
    pd.DataFrame({"timestamp": pd.to_datetime(t).strftime("%Y-%m-%d %H:%M:%S"), "y": y, "mean": mean,
                  "std": np.ones(n)}).to_csv(path, index=False)


def test_over_time_chart_and_brushing(app_page, artifacts_dir, tmp_path):
    page = app_page
    path = tmp_path / "drift.csv"
    _drift_csv(path)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Data", exact=True).click()
    page.locator(".st-key-data_upload").get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(path))
    expect(page.get_by_text("Diagnose it on the Regression page")).to_be_visible(timeout=LONG)
    wait_for_app(page)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Regression", exact=True).click()
    expect(page.get_by_role("heading", name="Over time")).to_be_visible(timeout=LONG)
    wait_for_app(page, LONG)
    chart = page.locator(".st-key-reg_time_chart").get_by_test_id("stPlotlyChart")
    chart.scroll_into_view_if_needed()
    # 12 weekly windows: one marker each on the window trace (the last trace drawn)
    points = chart.locator(".scatterlayer .trace").last.locator(".points path")
    expect(points).to_have_count(12, timeout=LONG)
    expect(page.get_by_text("No time range picked")).to_be_visible()
    page.mouse.move(5, 5)
    page.wait_for_timeout(400)
    chart.screenshot(path=str(artifacts_dir / "regression_over_time.png"))

    # the page's restriction by a picked time range is tested through the chart's on_select event in
    # tests/test_time_windows.py (test_a_box_over_the_chart_picks_the_windows_through_on_select)
    expect(page.get_by_role("button", name="Clear time range")).to_be_disabled()
    full_height_screenshot(page, artifacts_dir / "regression_over_time_page.png")
