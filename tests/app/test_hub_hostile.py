"""AppTests: the hostile forecast hubs of ``tests/hub_hostile_cases.py`` (1-3 forecast units, one model, a quantile
or a truth value at ±1e300, ±inf or NaN, a pmf of 0 / 1 only) uploaded on the Data page's hub mode and shown on the
Forecast hub and Compare models pages: a diagnosis or a clear message on each, never an exception; a kept hostile
value that makes a score inf is named by its forecast unit.

The default run takes a few representative hubs; the whole matrix is ``slow``.
"""

from __future__ import annotations

import pytest

from tests.app.test_pages import new_app
from tests.hub_hostile_cases import CASES

PAGES = ("pages/hub.py", "pages/compare.py")
DEFAULT = ["units=1", "quantile=+1e300", "observation=nan", "pmf-0-1"]
OVERFLOWING = ("quantile=+1e300", "quantile=-1e300", "observation=+1e300", "observation=-1e300")


def _texts(at) -> str:
    parts = [e.value for kind in ("caption", "markdown", "warning", "info", "error") for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def _no_exception(at, where: str) -> None:
    assert not at.exception, (where, [e.value for e in at.exception])


def visit(name: str):
    files, truth = CASES[name]()
    at = new_app()
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="data_hub_truth").set_value((truth[0], truth[1], "text/csv")).run()
    at.file_uploader(key="data_hub_forecasts").set_value([(n, d, "text/csv") for n, d in files]).run()
    _no_exception(at, "data")
    pset = at.session_state["pset"] if "pset" in at.session_state else None
    if pset is None:
        assert at.error, _texts(at)  # the loader's message
        if name == "units=1":
            assert any("1 forecast unit(s) with truth" in e.value for e in at.error), _texts(at)
        return at, {}
    seen = {}
    for page in PAGES:
        at.switch_page(page).run()
        _no_exception(at, page)
        seen[page] = _texts(at)
        assert at.dataframe or at.info or at.warning, (page, seen[page])  # a table or a message
    if name in OVERFLOWING:  # the verdict notes name the unit behind the inf / NaN metrics by its task IDs
        assert "because of forecast unit 1 \\[reference\\_date 2024-01-06" in seen["pages/hub.py"], seen
    return at, seen


@pytest.mark.parametrize("name", DEFAULT)
def test_representative_hubs_on_the_hub_pages(name):
    visit(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(CASES) - set(DEFAULT)))
def test_every_hostile_hub_on_the_hub_pages(name):
    visit(name)
