"""AppTests: a file with a degenerate group on the Regression and Classification pages — the page
names the group and why in a note, shows every other group, and draws the group itself without an error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 240
N, N_DRY = 120, 37


def _app_with(name: str, frame: pd.DataFrame, page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="data_upload").upload(name, frame.to_csv(index=False).encode(), "text/csv").run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page(page).run()
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _captions(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption)


def _rain() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    centre = rng.gamma(2.0, 2.0, N)
    members = centre[:, None] + rng.normal(size=(N, 5))
    y = centre + rng.normal(size=N)
    members[:N_DRY] = 0.0
    y[:N_DRY] = 0.0
    group = np.where(np.arange(N) < N_DRY, "dry *days*", "wet")  # Markdown in a name stays text
    return pd.DataFrame({"y": y, "group": group, **{f"member_{i}": members[:, i] for i in range(5)}})


def test_regression_page_with_a_zero_spread_group():
    at = _app_with("rain.csv", _rain(), "pages/regression.py")
    _ok(at)  # Streamlit's redacted ZeroDivisionError before
    at.selectbox(key="reg_resamples").select(0).run()
    _ok(at)
    text = _captions(at)
    assert r"model 'model', all rows: 37 of 120 ensembles have zero spread (every member equal)" in text
    assert at.get("plotly_chart")
    assert "Rank of each target among its ensemble's members" in text  # ensembles: the rank histogram tab, first
    at.selectbox(key="reg_group").select("dry *days*").run()
    _ok(at)
    text = _captions(at)
    assert (r"model 'model', group 'dry \*days\*': all 37 ensembles have zero spread (every member equal), so z = "
            "(y − mean)/σ is undefined on every row") in text
    assert at.get("plotly_chart")  # the PIT and Kuleshov curve of an ensemble need no σ
    at.selectbox(key="reg_group").select("wet").run()
    _ok(at)
    assert "zero spread" not in _captions(at)


def test_classification_page_with_a_one_row_and_a_one_class_group():
    rng = np.random.default_rng(1)
    probs = rng.dirichlet(np.ones(3), N)
    labels = np.array([rng.choice(3, p=p) for p in probs])
    group = np.where(np.arange(N) < 30, "one class", "rest").astype(object)
    labels[:30] = 2
    probs[30:60] = 1 / 3
    group[N - 1] = "single"
    frame = pd.DataFrame({"y": labels, "group": group, **{f"p_{k}": probs[:, k] for k in range(3)}})
    at = _app_with("cls.csv", frame, "pages/classification.py")
    _ok(at)
    at.selectbox(key="cls_resamples").select(0).run()
    for g in ("one class", "rest"):
        at.selectbox(key="cls_group").select(g).run()
        _ok(at)
        assert at.get("plotly_chart")
    at.selectbox(key="cls_group").select("single").run()
    _ok(at)
    assert "model 'model', group 'single': 1 row(s), too few to diagnose" in _captions(at)
    assert [w.value for w in at.warning] == ["Too few rows to diagnose with these filters."]
