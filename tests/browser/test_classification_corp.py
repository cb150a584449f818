"""Browser test of the CORP lens: the Classification page's CORP option draws the PAV curve with its
consistency band, the decomposition table and the Murphy diagram (screenshot in tests/artifacts/corp.png)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.browser.test_pages import DIGITS, LONG, load_example, nav, screenshot  # noqa: E402
from tests.conftest import wait_for_app  # noqa: E402


def test_classification_corp_option(app_page, artifacts_dir):
    page = app_page
    load_example(page, DIGITS)
    nav(page, "Classification")
    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="CORP (PAV)").click()
    expect(page.get_by_role("heading", name="Score decomposition (CORP)")).to_be_visible(timeout=LONG)
    wait_for_app(page)
    chart = page.get_by_test_id("stPlotlyChart").nth(0)
    expect(chart.locator(".legendtext", has_text=re.compile("consistency band"))).to_have_count(1, timeout=LONG)
    expect(chart.locator(".scatterlayer .trace")).to_have_count(3)  # diagonal, band, curve
    expect(page.get_by_text("Murphy diagram (Ehm et al. 2016)")).to_be_visible()
    screenshot(page, artifacts_dir / "corp_classification.png")
    expect(page.get_by_test_id("stException")).to_have_count(0)
