"""Browser test of a σ-bin click on the Regression page: the selection's overlays appear in the quantile-calibration
curve, the PIT histogram and the z histogram, each chart updated in place (``dashboard.live_chart``: the chart
drawn before the click is the one that changes), and go away with Clear selection."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.browser.test_pages import LONG, click_point, load_example, nav  # noqa: E402
from tests.conftest import wait_for_app  # noqa: E402

LEVI = "Levi et al. §4.1 synthetic — true σ vs random σ"
LIVE = ("reg_kuleshov", "reg_pit", "reg_z")  # the charts a selection overlays


def _plot(page, key: str):
    return page.locator(f".st-key-{key} .calab-live-chart")


def _dashed_selected(page, key: str) -> list[str]:
    """Names of the chart's traces drawn by plotly.js (its own ``data``) that are a selection's, dashed."""
    return _plot(page, key).evaluate(
        "gd => gd.data.filter(t => (t.name || '').endsWith('· selected') && t.line && t.line.dash === 'dash')"
        ".map(t => t.name)")


#: The chart's line paths and those of a new chart of the same figure (the spec it was last sent) drawn beside it:
#: what an update of the changed traces drew is what drawing the figure anew draws.
SAME_AS_NEW_JS = """async gd => {
  const fig = JSON.parse(gd.__calabSpec);
  const div = document.createElement('div');
  div.style.width = gd.getBoundingClientRect().width + 'px';
  div.style.height = gd.style.height;
  document.body.appendChild(div);
  const layout = Object.assign({}, fig.layout || {}, {autosize: true});
  delete layout.width;
  await window.Plotly.newPlot(div, fig.data, layout, {displaylogo: false});
  const paths = el => [...el.querySelectorAll('.scatterlayer .trace path.js-line, .scatterlayer .trace path.js-fill')]
    .map(p => p.getAttribute('d'));
  const out = [paths(gd), paths(div)];
  window.Plotly.purge(div);
  div.remove();
  return out;
}"""


#: The z histogram's notes as drawn (text of its text traces) and as sent (the notes traces of the figure's JSON).
NOTES_JS = """gd => {
  const sent = JSON.parse(gd.__calabSpec).data.filter(t => (t.meta || {}).role === 'notes')
    .map(t => t.text[0].replace(/<br>/g, ''));
  const shown = [...gd.querySelectorAll('.scatterlayer .trace .textpoint text')].map(t => t.textContent);
  return [shown, sent];
}"""


def _shot(page, artifacts_dir, stem: str) -> None:
    for key in ("reg_levi_chart", *LIVE):
        box = page.locator(f".st-key-{key}")
        box.scroll_into_view_if_needed()
        box.screenshot(path=str(artifacts_dir / f"{stem}_{key.removeprefix('reg_')}.png"))


def test_sigma_bin_click_draws_the_overlays_in_place(app_page, artifacts_dir):
    page = app_page
    load_example(page, LEVI)  # two models, 10⁴ rows each
    nav(page, "Regression")
    levi = page.locator(".st-key-reg_levi_chart")
    expect(levi.locator(".scatterlayer .trace").nth(2).locator(".points path")).to_have_count(15, timeout=LONG)
    for key in LIVE:
        expect(_plot(page, key).locator(".main-svg").first).to_be_visible(timeout=LONG)
        assert _dashed_selected(page, key) == []
        _plot(page, key).evaluate("gd => { gd.__kept = true; }")  # gone if the chart were drawn anew
    wait_for_app(page)
    _shot(page, artifacts_dir, "click_overlays_before")

    info = page.get_by_text(re.compile(r"σ-bins selected|rows selected from σ-bin"))
    for nth in (13, 12):
        click_point(page, levi, 2, nth)  # trace 2 = 'random sigma' (trace 0 is the identity line)
        expect(info).to_have_text(re.compile(rf"rows selected from σ-bin {nth + 1} of 15 \(random sigma\)"),
                                  timeout=LONG)
        wait_for_app(page)
        for key in LIVE:
            expect(_plot(page, key).locator(".legendtext", has_text="random sigma · selected")).to_be_visible(
                timeout=LONG)
            assert _dashed_selected(page, key) == ["random sigma · selected"], key
            assert _plot(page, key).evaluate("gd => gd.__kept === true"), key  # updated in place
            drawn, anew = _plot(page, key).evaluate(SAME_AS_NEW_JS)
            assert drawn == anew and len(drawn) >= 2, key  # nothing stale: the lines of the figure sent
        shown_notes, sent_notes = _plot(page, "reg_z").evaluate(NOTES_JS)
        assert shown_notes == sent_notes  # the z histogram's notes (text traces) are those of the figure sent
        if nth == 12:  # the curve's axes are fixed ([0, 1]): the selection's lines are updated, nothing else
            assert _plot(page, "reg_kuleshov").get_attribute("data-update") == "traces"
        if nth == 13:
            _shot(page, artifacts_dir, "click_overlays_after")
    expect(page.get_by_role("heading", name="Metrics of the selected rows")).to_be_visible()

    page.get_by_role("button", name="Clear selection").click()
    expect(info).to_have_text(re.compile("No σ-bins selected"), timeout=LONG)
    wait_for_app(page)
    for key in LIVE:
        expect(_plot(page, key).locator(".legendtext", has_text="selected")).to_have_count(0, timeout=LONG)
    expect(page.get_by_test_id("stException")).to_have_count(0)
