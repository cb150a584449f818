"""An evaluation whose metric is inf or NaN says why beside that metric: the summary's ``note`` (and so the CLI's
summary CSV), the Recalibrate page's comparison columns and the CLI's comparison table name the file row whose
values overflow when squared; ordinary evaluations keep their columns."""

from __future__ import annotations

import numpy as np
import pandas as pd

import calib_core as cc
from calib_core import cli
from calib_core.evaluation.tables import comparison_columns, comparison_summary, comparison_table


def _set(hostile: float | None, n: int = 60) -> cc.PredictionSet:
    rng = np.random.default_rng(0)
    mu = rng.normal(size=n)
    sd = np.exp(0.3 * rng.normal(size=n))
    y = mu + sd * rng.normal(size=n)
    if hostile is not None:
        y[7] = hostile
    return cc.PredictionSet(task="regression", y=y, dist=cc.Gaussian(mu, sd), layout="gaussian",
                            row_number=np.arange(2, n + 2))  # file rows after a header line


def test_an_overflowing_row_is_named_beside_each_nonfinite_metric():
    res = cc.evaluate(_set(1e300), [None, cc.StdScaling()], metrics=["rmse", "mae", "coverage_90"], repeats=6,
                      test_fraction=0.5)
    s = res.summary
    bad = s[~np.isfinite(s["mean"].astype(float))]
    assert not bad.empty and (bad["metric"] == "rmse").all()
    for note in bad["note"]:
        assert "because of row 9 (y = 1e+300)" in note and "trials" in note, note
    assert (s.loc[np.isfinite(s["mean"].astype(float)), "note"] == "").all()
    table, best = comparison_columns(comparison_summary(res), ["rmse", "mae"])
    assert "note" in table.columns and table["note"].str.contains("RMSE: inf in ").all()
    body, _ = comparison_table(res)
    row = body.set_index("metric").loc[body["metric"][body["note"] != ""].iloc[0]]
    assert "row 9 (y = 1e+300)" in row["note"]


def test_ordinary_evaluations_keep_their_columns():
    res = cc.evaluate(_set(None), [None, cc.StdScaling()], metrics=["rmse", "coverage_90"], repeats=3)
    assert "note" not in res.summary.columns
    assert "note" not in comparison_columns(comparison_summary(res))[0].columns
    assert "note" not in comparison_table(res)[0].columns


def test_the_cli_summary_csv_carries_the_note(tmp_path, capsys):
    p = _set(-1e300)
    frame = pd.DataFrame({"y": p.y, "mean": p.dist.mean(), "std": p.dist.std()})
    data = tmp_path / "hostile.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "summary.csv"
    code = cli.main(["evaluate", str(data), "--summary-csv", str(out), "--repeats", "6", "--test-fraction", "0.5"])
    assert code == 0, capsys.readouterr().err
    s = pd.read_csv(out, keep_default_na=False)
    notes = s.loc[s["metric"] == "rmse", "note"]
    assert notes.str.contains(r"because of row 8 \(y = -1e\+300\)").all(), notes.tolist()  # data row 8 of the file
    assert "row 8 (y = -1e+300)" in capsys.readouterr().out
