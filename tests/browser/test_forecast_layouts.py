"""Real browser: the diabetes example as quantiles and as an ensemble — the verdict of what each layout states.

Quantile sets are tested at their stated levels (the stated-level table, no test of the interpolated law); an
ensemble by its rank histogram and member range (a "Rank histogram" tab on the Regression page).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.conftest import full_height_screenshot, wait_for_app  # noqa: E402


def _pick_layout(page, label: str) -> None:
    page.get_by_test_id("stSelectbox").nth(1).click()
    page.get_by_role("option", name=label).click()
    wait_for_app(page, timeout=180_000)


def test_quantile_and_ensemble_layouts_get_their_own_verdicts(app_page, artifacts_dir):
    page = app_page
    expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible(timeout=120_000)

    _pick_layout(page, "Quantiles (9 levels)")
    expect(page.get_by_test_id("stException")).to_have_count(0)
    # the headline counts the quantile family's four tests: the PIT histogram between the stated levels, the
    # coverage of every stated level, the share below the median and the widest stated interval (80%)
    expect(page.get_by_text("(4 tests", exact=False).first).to_be_attached(timeout=60_000)
    full_height_screenshot(page, artifacts_dir / "home_quantiles.png")

    _pick_layout(page, "Samples (50 draws)")
    expect(page.get_by_test_id("stException")).to_have_count(0)
    full_height_screenshot(page, artifacts_dir / "home_ensemble.png")

    # the same ensemble on the Regression page: its rank histogram tab draws counts against N/(M + 1)
    page.get_by_role("button", name="Explore this example on the Regression page", exact=False).click()
    wait_for_app(page, timeout=180_000)
    tab = page.get_by_role("tab", name="Rank histogram")
    expect(tab).to_be_visible(timeout=120_000)
    tab.click()
    wait_for_app(page, timeout=120_000)
    expect(page.locator(".gtitle", has_text="Rank histogram").first).to_be_visible(timeout=60_000)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    full_height_screenshot(page, artifacts_dir / "regression_rank_histogram.png")
