"""Real-browser layout checks at 1440×900: metric tables shown whole and inside the page,
the Levi diagram's log axes, titles clear of the Plotly toolbar.

Fixtures from ``tests/conftest.py``; skipped when Chromium or Playwright is missing (an error under CI=true).
"""

from __future__ import annotations

import pytest

from tests.conftest import wait_for_app

pytestmark = pytest.mark.browser

#: Glide's data grid keeps its scroller 10 px larger than its viewport (room for the overlay scrollbars) even for a
#: two-row table; a table that really scrolls overflows by at least a row (35 px) or part of a column.
GRID_SLACK = 12
TABLES = """() => [...document.querySelectorAll('[data-testid=stDataFrame]')].map(t => {
    let x = 0, y = 0;
    for (const e of t.querySelectorAll('*')) {
        x = Math.max(x, e.scrollWidth - e.clientWidth); y = Math.max(y, e.scrollHeight - e.clientHeight); }
    const b = t.getBoundingClientRect();
    return {x, y, right: b.right, width: b.width}; })"""
MAIN_RIGHT = "() => document.querySelector('[data-testid=stMainBlockContainer]').getBoundingClientRect().right"


@pytest.fixture
def page_1440(open_page, streamlit_url):
    """The home page at 1440×900, idle (the conftest factory)."""
    return open_page(streamlit_url, width=1440, height=900, timeout=180_000)


def _open(page, link: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=link).click()
    wait_for_app(page)
    example = page.get_by_role("button", name="Load the example")
    try:  # without data the page offers its example (the button may appear a moment after the run settles)
        example.first.wait_for(state="visible", timeout=15_000)
    except Exception:
        return
    example.first.click()
    wait_for_app(page)


def _tables_whole_and_inside(page) -> list[dict]:
    right = page.evaluate(MAIN_RIGHT)
    tables = [t for t in page.evaluate(TABLES) if t["width"]]
    assert tables
    for t in tables:
        assert t["x"] <= GRID_SLACK and t["y"] <= GRID_SLACK, t  # no inner scroll either way
        assert t["right"] <= min(right, 1440) + 1, t
    return tables


def test_regression_metric_tables_whole_and_levi_log_axes(page_1440, artifacts_dir):
    from playwright.sync_api import expect

    page = page_1440
    _open(page, "Regression")
    heading = page.get_by_text("Calibration statistics (tested against perfect calibration)")
    expect(heading).to_be_visible(timeout=180_000)
    wait_for_app(page)
    for family in ("Proper scores", "Descriptive (no verdict)"):
        expect(page.get_by_text(family, exact=False).first).to_be_visible()
    tables = _tables_whole_and_inside(page)
    # two models × 16 calibration statistics (std z among them): 33 rows tall with the header, not a 560 px box
    assert tables[0]["width"] and max(t["y"] for t in tables) <= GRID_SLACK
    assert page.get_by_test_id("stDataFrame").first.bounding_box()["height"] >= 35 * 33
    heading.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    page.screenshot(path=str(artifacts_dir / "regression_metric_tables.png"))

    levi = page.locator(".st-key-reg_levi_chart[data-stale='false']")
    axis = "(el) => el.querySelector('.js-plotly-plot')._fullLayout.xaxis.type"
    assert levi.evaluate(axis) == "linear"
    page.locator(".st-key-reg_levi_log").get_by_text("Log axes").click()  # beside the Levi diagram
    wait_for_app(page)
    page.wait_for_function(
        "() => { const e = document.querySelector('.st-key-reg_levi_chart[data-stale=false] .js-plotly-plot'); "
        "return !!(e && e._fullLayout && e._fullLayout.xaxis.type === 'log'); }")
    levi.scroll_into_view_if_needed()
    levi.hover()  # the toolbar shows; it must not cover the title
    page.wait_for_timeout(500)
    bar = levi.locator(".modebar").bounding_box()
    title = levi.locator(".gtitle").bounding_box()
    assert bar and title and bar["y"] + bar["height"] <= title["y"] + 1, (bar, title)
    page.screenshot(path=str(artifacts_dir / "regression_levi_log.png"))


def test_classification_and_lab3_tables_fit(page_1440, artifacts_dir):
    from playwright.sync_api import expect

    page = page_1440
    _open(page, "Classification")
    expect(page.get_by_text("Calibration statistics (tested against perfect calibration)")).to_be_visible(
        timeout=180_000)
    wait_for_app(page)
    _tables_whole_and_inside(page)
    page.get_by_text("Calibration statistics (tested against perfect calibration)").scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    page.screenshot(path=str(artifacts_dir / "classification_metric_tables.png"))

    page.get_by_test_id("stSidebarNav").get_by_role("link", name="The degenerate marginal forecaster").click()
    expect(page.get_by_role("heading", name="Numbers")).to_be_visible(timeout=180_000)
    wait_for_app(page)
    _tables_whole_and_inside(page)
    page.get_by_role("heading", name="Numbers").scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    page.screenshot(path=str(artifacts_dir / "lab3_numbers.png"))


def test_home_metric_tables_whole(page_1440, artifacts_dir):
    """Home's diagnosed example shows its metric tables by family and whole, like the Regression page (no fixed
    box with an inner scroll, no cut column)."""
    from playwright.sync_api import expect

    page = page_1440
    heading = page.get_by_text("Calibration statistics (tested against perfect calibration)")
    expect(heading).to_be_visible(timeout=180_000)
    wait_for_app(page)
    heading.scroll_into_view_if_needed()  # the grids size themselves once on screen
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    page.wait_for_timeout(500)
    _tables_whole_and_inside(page)
    page.screenshot(path=str(artifacts_dir / "home_metric_tables.png"))
