"""Browser test of a linked selection as the user sees it: clicking a reliability bar lights the
whole bin — accuracy bar, interval and gap — and veils the others; shift-click adds a bin; a box selection is drawn
the same way; the caption numbers bins from 1 as the charts' hover labels do."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.browser.test_pages import DIGITS, LONG, click_bar, load_example, nav, screenshot  # noqa: E402
from tests.conftest import wait_for_app  # noqa: E402


def _style(chart, trace: int, prop: str) -> list[float]:
    """A computed style number of every bar of trace ``trace`` (bar traces in drawing order)."""
    paths = chart.locator(".barlayer .trace").nth(trace).locator(".point path")
    return [float(paths.nth(i).evaluate(f"e => getComputedStyle(e).{prop}")) for i in range(paths.count())]


def _veiled(chart) -> list[bool]:
    """Per bin: is its column veiled (a visible white veil over the bar and the gap)?"""
    return [v > 0.5 for v in _style(chart, 2, "fillOpacity")]


def test_clicking_a_reliability_bar_highlights_the_whole_bin(app_page, artifacts_dir):
    page = app_page
    load_example(page, DIGITS)
    nav(page, "Classification")
    rel = page.get_by_test_id("stPlotlyChart").nth(0)
    expect(rel.locator(".barlayer .trace").first.locator(".point path")).to_have_count(9, timeout=LONG)
    info = page.get_by_text(re.compile(r"No bins selected|rows selected from confidence bin"))
    wait_for_app(page)
    assert not any(_veiled(rel))

    click_bar(page, rel, 0, 7)  # the accuracy bar of the 8th non-empty bin: confidence (13/15, 14/15]
    expect(info).to_have_text(re.compile(r"14 rows selected from confidence bin 14 of 15\."), timeout=LONG)
    wait_for_app(page)
    rel = page.get_by_test_id("stPlotlyChart").nth(0)
    veiled = _veiled(rel)
    assert veiled == [True] * 7 + [False, True], veiled  # the clicked bin is clear, the others veiled
    assert set(_style(rel, 0, "opacity")) == set(_style(rel, 1, "opacity")) == {1.0}  # bars and gaps never dim alone
    screenshot(page, artifacts_dir / "classification_bin_selected.png")

    click_bar(page, rel, 1, 8, shift=True)  # shift-click on the top bin's (red) gap adds that bin
    expect(info).to_have_text(re.compile(r"rows selected from confidence bins 14–15 of 15\."), timeout=LONG)
    wait_for_app(page)
    rel = page.get_by_test_id("stPlotlyChart").nth(0)
    assert _veiled(rel) == [True] * 7 + [False, False]

    # a box around the tops of the 6th and 7th bars: both bins, drawn clear, the others veiled
    bars = rel.locator(".barlayer .trace").first.locator(".point path")
    rel.hover()
    rel.locator('[data-title="Box Select"]').click()
    # the boxes after the hover: it may scroll the (now taller) page, and page coordinates move with it
    first, last = bars.nth(5).bounding_box(), bars.nth(6).bounding_box()
    page.mouse.move(first["x"] + 3, min(first["y"], last["y"]) - 15)
    page.mouse.down()
    page.mouse.move(last["x"] + last["width"] - 3, max(first["y"], last["y"]) + 15, steps=8)
    page.mouse.up()
    expect(info).to_have_text(re.compile(r"rows selected from confidence bins 12–13 of 15\."), timeout=LONG)
    wait_for_app(page)
    rel = page.get_by_test_id("stPlotlyChart").nth(0)
    expect(rel.locator(".barlayer .trace").nth(2).locator(".point path").nth(5)).to_have_css(
        "fill-opacity", "0", timeout=LONG)
    assert _veiled(rel) == [True] * 5 + [False, False, True, True]
    expect(page.get_by_test_id("stException")).to_have_count(0)
