"""Uploaded text never renders as Markdown, in the running app.

A file whose name carries ``:red-background[…]``, ``:material/verified:`` and a remote image, with model and
group names and class labels that are Markdown images / directives / LaTeX, is uploaded and walked through the
Data, Regression, Classification and Recalibrate pages (AppTest).  Every Markdown surface of every page (bodies
of markdown / caption / alert / heading / toast elements, widget, tab and expander labels, help tooltips) must
hold no live construct of those names — while the escaped names are shown (the check is not vacuous).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
from google.protobuf.json_format import MessageToDict
from streamlit.testing.v1 import AppTest

from views.pages import md_escape

APP = str(Path(__file__).resolve().parents[2] / "app.py")
IMAGE = "![m](http://127.0.0.1:9/x.png)"
FILE_NAME = ":red-background[styled] :material/verified: ![f](http://127.0.0.1:9/f.png).csv"
#: Live forms of the hostile names: an image, a link target, a directive, an icon / emoji shortcode, LaTeX.
LIVE = re.compile(r"(?<!\\)!(?<!\\)\[|(?<!\\)\]\(|(?<!\\):red-background(?<!\\)\[|:material/|:blue(?<!\\)\[|"
                  r"(?<!\\)\$x")
MARKDOWN_KEYS = {"body", "label", "help", "caption", "placeholder"}


def _strings(value, key=None):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)
    elif isinstance(value, str) and key in MARKDOWN_KEYS:
        yield value


def markdown_surfaces(at: AppTest) -> list[str]:
    """Every Markdown string of the rendered page (main area and sidebar)."""
    out: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "DESCRIPTOR"):
            out.extend(_strings(MessageToDict(proto)))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return out


def check(at: AppTest, must_show: list[str]) -> None:
    assert not at.exception, [e.value for e in at.exception]
    surfaces = markdown_surfaces(at)
    live = [s for s in surfaces if LIVE.search(s)]
    assert not live, live
    text = "\n".join(surfaces)
    for name in must_show:
        assert md_escape(name) in text, (name, text[:2000])


def regression_file() -> bytes:
    rng = np.random.default_rng(0)
    n = 240
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 2.0, size=n)
    return pd.DataFrame({
        "y": mean + std * rng.normal(size=n), "mean": mean, "std": std,
        "model": np.where(np.arange(n) % 2, IMAGE, ":blue[m2]"),
        "group": np.where(np.arange(n) % 3, "$x^2$", "plain"),
        "split": np.where(np.arange(n) < n // 2, "cal", "test"),
    }).to_csv(index=False).encode()


def classification_file() -> bytes:
    rng = np.random.default_rng(1)
    n = 300
    p = rng.uniform(0.05, 0.95, size=n)
    labels = np.where(rng.uniform(size=n) < p, "![p](http://127.0.0.1:9/p.png)", ":material/verified:")
    return pd.DataFrame({"label": labels, "prob": p}).to_csv(index=False).encode()


def new_app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    return at


def fast_filters(at: AppTest, prefix: str) -> None:
    at.session_state[f"{prefix}_resamples"] = 0
    at.session_state[f"{prefix}_sims"] = 0


def test_hostile_names_stay_text_on_every_page():
    at = new_app()
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="data_upload").upload(FILE_NAME, regression_file(), "text/csv").run()
    assert at.session_state["pset_name"] == FILE_NAME
    check(at, [FILE_NAME])  # Data page and the sidebar's "Loaded:"

    fast_filters(at, "reg")
    at.switch_page("pages/regression.py").run()
    check(at, [FILE_NAME])

    at.switch_page("pages/classification.py").run()  # the wrong-task warning quotes the file name
    check(at, [FILE_NAME])

    at.switch_page("pages/recalibrate.py").run()
    check(at, [FILE_NAME])
    run = next((b for b in at.button if "Run comparison" in str(b.label)), None)
    if run is not None:
        run.click().run()
        check(at, [FILE_NAME])


def test_hostile_class_labels_stay_text_on_the_classification_page():
    at = new_app()
    at.switch_page("pages/data.py").run()
    # the file loads with the positive class stated (the second of the sorted labels); the loader's message quotes
    # both label values and the Positive class control offers them: all shown escaped
    at.file_uploader(key="data_upload").upload("labels.csv", classification_file(), "text/csv").run()
    assert at.session_state["pset"].classes == ["![p](http://127.0.0.1:9/p.png)", ":material/verified:"]
    check(at, ["![p](http://127.0.0.1:9/p.png)", ":material/verified:"])
    # loaded with the positive class named: the positive-class reliability text names it
    positive = "![p](http://127.0.0.1:9/p.png)"
    import calib_core as cc

    pset = cc.load_predictions(classification_file(), columns={"positive": positive}, source="labels.csv")
    at.session_state["pset"] = pset
    at.session_state["pset_token"] = "upload:hostile-labels"
    at.session_state["pset_name"] = "labels.csv"
    at.session_state["pset_origin"] = "upload"
    fast_filters(at, "cls")
    at.session_state["cls_target"] = "positive class"
    at.switch_page("pages/classification.py").run()
    assert pset.classes[1] == positive
    check(at, [positive])
