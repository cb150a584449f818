"""Browser test of the Compare models page as a forecaster uses it: the empty page loads the built-in example hub
(4 models: calibrated, too narrow, biased, too wide), the page shows the sentences, the skill plot, the pairwise
matrix and the table, and a click on a model's point in the skill plot opens that model on the Regression page."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.browser.test_pages import LONG, hover_click, screenshot  # noqa: E402
from tests.conftest import wait_for_app  # noqa: E402

MODELS = ("team1-calibrated", "team2-narrow", "team3-biased", "team4-wide")


def _best_model() -> str:
    """The example hub's best model by relative WIS, computed as the page does (the top point of its skill plot)."""
    import calib_core as cc
    from calib_core.data.hub_example import example_hub_frames
    from views.compare import model_order

    hub = example_hub_frames(n_models=4, n_locations=8, n_rounds=12,
                             miscalibration=["calibrated", "narrow", "biased", "wide"])
    return model_order(cc.compare_models(cc.load_predictions(hub.forecasts, truth=hub.truth)))[0]


def _nav(page, name: str, title: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=name, exact=True).click()
    expect(page.get_by_role("heading", level=1, name=title, exact=True)).to_be_visible(timeout=LONG)
    wait_for_app(page)


def test_compare_the_example_hub_and_open_a_model(app_page, artifacts_dir):
    page = app_page
    _nav(page, "Compare models", "Compare models")
    expect(page.get_by_text(re.compile("two or more models"))).to_be_visible()
    expect(page.get_by_role("link", name="Go to the Data page")).to_be_visible()
    page.get_by_role("button", name=re.compile("Load the example hub")).click()
    charts = page.get_by_test_id("stPlotlyChart")
    expect(charts).to_have_count(2, timeout=LONG)
    wait_for_app(page)
    grid = page.get_by_test_id("stDataFrame").first  # its text arrives after the canvas: wait for it
    for text in (*MODELS, "baseline"):
        expect(grid).to_contain_text(text, timeout=LONG)
    expect(page.get_by_text(re.compile(r"model team2-narrow's WIS is"))).to_be_visible()
    expect(page.get_by_text(re.compile(r"whole reference_date clusters resampled \(12 clusters\)"))).to_be_visible()
    skill = charts.nth(0)
    expect(skill.locator(".scatterlayer .trace .points path")).to_have_count(4)
    expect(charts.nth(1).locator(".heatmaplayer")).to_have_count(1)
    screenshot(page, artifacts_dir / "compare_page.png")

    # the point drawn at the top of the skill plot is the best model
    points = skill.locator(".scatterlayer .trace .points path")
    boxes = [points.nth(i).bounding_box() for i in range(4)]
    top = min(boxes, key=lambda b: b["y"])
    hover_click(page, top["x"] + top["width"] / 2, top["y"] + top["height"] / 2)
    expect(page.get_by_role("heading", level=1, name="Regression diagnostics", exact=True)).to_be_visible(
        timeout=LONG)
    wait_for_app(page)
    models = page.get_by_test_id("stMultiSelect").first
    chosen = [m for m in MODELS if m in models.inner_text()]
    assert chosen == [_best_model()], models.inner_text()
    screenshot(page, artifacts_dir / "compare_opened_on_regression.png")
