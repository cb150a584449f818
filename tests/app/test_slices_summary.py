"""AppTest of the slice explorer on a Parquet data set opened through the Data page's large-data path (
point 7): no rows are held, the slices come from the data set's slice summary, and the list is the in-memory
explorer's list of the same rows; a summary file (calibration summary only) gets a message instead."""

from __future__ import annotations

import uuid

import numpy as np
import pandas as pd
import pytest

from calib_core.data.regression import parse_regression_frame
from calib_core.scale import summary as S
from calib_core.slices import regression as reg_slices
from tests.app.test_pages import new_app, specs, table
from tests.scale.test_summary import gaussian_set


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    allowed = tmp_path / "allowed"
    (allowed / "runs").mkdir(parents=True)
    rng = np.random.default_rng(21)
    frames = []
    for i in range(3):
        n = 3000
        mu = rng.standard_normal(n)
        sd = np.exp(0.3 * rng.standard_normal(n))
        site = rng.choice(["north", "south", "east", "west"], n)
        err = rng.standard_normal(n) * np.where(site == "east", 1.6, 1.0)  # planted: east under-states σ
        frames.append(pd.DataFrame({"y": mu + sd * err, "mean": mu, "std": sd, "site": site,
                                    "x1": rng.gamma(2.0, size=n)}))
        frames[-1].to_parquet(allowed / "runs" / f"part-{i}.parquet", row_group_size=1000)
    monkeypatch.setenv("CALIB_LAB_DATA_DIR", str(allowed))
    monkeypatch.delenv("CALIB_LAB_DASK_SCHEDULER", raising=False)
    return allowed, pd.concat(frames, ignore_index=True)


def test_explorer_searches_the_slices_of_a_parquet_data_set(data_dir):
    _, frame = data_dir
    at = new_app()
    at.switch_page("pages/data.py").run()
    at.text_input(key="data_server_path").input("runs/*.parquet").run()
    at.button(key="data_server_open").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "pset" not in at.session_state and at.session_state["summary"].n_rows == len(frame)
    at.switch_page("pages/slices.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    shown = table(at, "rank", "slice", "n", "verdict")
    mem, _ = reg_slices.slice_ranking(parse_regression_frame(frame, "all"))
    k = min(len(shown), 20)
    assert shown["slice"].tolist()[:k] == mem["slice"].tolist()[:k]  # the in-memory list of the same rows
    assert shown["n"].tolist()[:k] == mem["n"].tolist()[:k]
    assert shown["slice"].iloc[0] == "site = east" and "miscalibrated" in shown["verdict"].iloc[0]
    assert any("slices of 9,000 rows searched from the data set's slice summary" in m.value for m in at.markdown)
    assert any("cannot restrict the diagnosis pages" in c.value for c in at.caption)
    assert "slcs_funnel" in specs(at)
    at.toggle(key="slcs_pairs").set_value(False).run()  # options apply to the cached summary
    assert not at.exception
    assert len(table(at, "rank", "slice", "n", "verdict")) == len(reg_slices.slice_ranking(
        parse_regression_frame(frame, "all"), pairs=False)[0])


def test_a_summary_file_gets_a_message_not_a_ranking():
    at = new_app()
    pset = gaussian_set(2000, seed=3)
    at.session_state["summary"] = S.summarize(pset, spec=S.spec_for(pset))
    at.session_state["summary_token"] = f"summary:test:{uuid.uuid4().hex}"
    at.session_state["summary_name"] = "run.summary"
    at.switch_page("pages/slices.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("open the Parquet data set itself" in i.value for i in at.info)
