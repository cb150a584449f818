"""Real browser: calibration over time.  A file with a ``timestamp`` column is uploaded on the
Data page (prediction-file uploader, by key); the Regression page draws coverage per week with intervals and the
perfect-calibration band (chart found by its key), one marker per week; dragging a box over the last weeks restricts
every view to that time range; Clear returns.  Under the windows, the anytime-valid monitor: its e-value path on a log
axis crosses the alarm line 1/α = 20 after the drift, with its sentence, and stays the same when a range is picked.
Screenshots in tests/artifacts/."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.conftest import full_height_screenshot, upload_file, wait_for_app  # noqa: E402

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
    upload_file(page, str(path))
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

    # the monitor under the windows: the path, the alarm line, an alarm after the drift (σ × 1.6 from 2026-03-02), the
    # rows' time stamps (to the second) grouped into daily steps
    monitor = page.locator(".st-key-reg_monitor")
    monitor.scroll_into_view_if_needed()
    expect(monitor.get_by_test_id("stPlotlyChart")).to_be_visible(timeout=LONG)
    expect(monitor.get_by_text("alarm line: 1/α = 20").first).to_be_attached()
    alarm = re.compile(r"^Alarm on day 2026-03-\d\d \(e = [\d.]+ ≥ 20\); the change most likely began around "
                       r"2026-03-0\d")
    expect(monitor.get_by_text(alarm)).to_be_visible()
    expect(monitor.get_by_text("the rows of each day are one step")).to_be_visible()
    expect(monitor.get_by_text("the monitor's alarm line holds 5% however often you look")).to_be_visible()
    expect(monitor.get_by_text("it always watches the whole season")).to_be_visible()
    page.mouse.move(5, 5)
    page.wait_for_timeout(400)
    monitor.screenshot(path=str(artifacts_dir / "over_time_monitor.png"))
    monitor_path = monitor.locator(".scatterlayer .trace").nth(2).locator("path.js-line").get_attribute("d")
    chart.scroll_into_view_if_needed()  # back to the windows for the drag
    page.wait_for_timeout(300)

    # drag a box over the last three weeks (the drifted ones): every view below uses those rows
    first, last = points.nth(9).bounding_box(), points.nth(11).bounding_box()
    area = chart.locator(".nsewdrag").first.bounding_box()
    page.mouse.move(first["x"] - 8, area["y"] + 5)
    page.mouse.down()
    page.mouse.move(last["x"] + last["width"] + 8, area["y"] + area["height"] - 5, steps=10)
    page.mouse.up()
    info = page.get_by_text(re.compile(r"Time range 2026-03-09 00:00 to 2026-03-30 00:00 \(3 windows, [\d,]+ rows\)"))
    expect(info).to_be_visible(timeout=LONG)
    wait_for_app(page, LONG)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    chart = page.locator(".st-key-reg_time_chart").get_by_test_id("stPlotlyChart")
    chart.scroll_into_view_if_needed()
    page.mouse.move(5, 5)
    page.wait_for_timeout(400)
    chart.screenshot(path=str(artifacts_dir / "regression_over_time_brushed.png"))
    # the monitor ignores the picked range: the same path
    monitor = page.locator(".st-key-reg_monitor")
    assert monitor.locator(".scatterlayer .trace").nth(2).locator("path.js-line").get_attribute("d") == monitor_path
    full_height_screenshot(page, artifacts_dir / "regression_over_time_page.png")
    page.get_by_role("button", name="Clear time range").click()
    expect(page.get_by_text("No time range picked")).to_be_visible(timeout=LONG)
