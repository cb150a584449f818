"""``python -m calib_core evaluate`` (the Recalibrate page's comparison on the command line) and the registry
listings ``metrics`` / ``calibrators``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.calibrators import registry
from calib_core.calibrators import regression as rcal
from calib_core.cli import main


@pytest.fixture
def gaussian_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 600
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 2.0, n)
    y = mean + 1.5 * std * rng.standard_normal(n)  # over-confident: σ too small
    path = tmp_path / "preds.csv"
    pd.DataFrame({"y": y, "mean": mean, "std": std}).to_csv(path, index=False)
    return path


def test_evaluate_writes_the_comparison_of_cc_evaluate(gaussian_csv, tmp_path, capsys):
    html, summary = tmp_path / "cmp.html", tmp_path / "summary.csv"
    code = main(["evaluate", str(gaussian_csv), "-c", "std scaling", "CRUDE", "--repeats", "3", "--seed", "1",
                 "--out", str(html), "--summary-csv", str(summary)])
    assert code == 0
    out = capsys.readouterr().out
    assert "3 random splits (seed 1, 50% test)" in out and "better" in out and "calibration RMSE" in out
    assert "*" in out  # the best cell of a metric is marked
    pset = cc.load_predictions(gaussian_csv)
    ref = cc.evaluate(pset, {"uncalibrated": None, "std scaling": rcal.StdScaling(), "CRUDE": rcal.CRUDE()},
                      split="random", repeats=3, seed=1)
    got = pd.read_csv(summary)
    np.testing.assert_allclose(got["mean"], ref.summary["mean"], rtol=1e-12)
    text = html.read_text(encoding="utf-8")
    assert "Comparison on held-out rows" in text and text.count("Plotly.newPlot(") == 6


def test_evaluate_default_calibrators_and_bad_names(gaussian_csv, capsys):
    assert main(["evaluate", str(gaussian_csv), "--repeats", "1", "-q"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["evaluate", str(gaussian_csv), "-c", "no such calibrator"]) == 2
    assert "not a regression calibrator of the registry" in capsys.readouterr().err
    assert main(["evaluate", str(gaussian_csv), "-c", "ACCRUE"]) == 2  # needs feature columns
    assert "cannot run on this file" in capsys.readouterr().err


def test_registry_listings(capsys):
    assert main(["metrics", "--task", "classification"]) == 0
    out = capsys.readouterr().out
    assert all(m.key in out for m in registry.metrics("classification")) and "proper score" in out
    assert main(["calibrators"]) == 0
    out = capsys.readouterr().out
    assert all(e.name in out for e in registry.CALIBRATORS) and "n_bins=15" in out
