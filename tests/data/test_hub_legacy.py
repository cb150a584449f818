"""The legacy COVID-19 / FluSight Forecast Hub format (data-processed/<model>/<date>-<model>.csv: forecast_date,
target, target_end_date, location, type, quantile, value; README of reichlab/covid19-forecast-hub data-processed)
and its truth (date, location, location_name, value)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.data.hub import read_hub

from .hub_fixtures import LEVELS, legacy_rows, legacy_truth


def write_legacy(root, models=("COVIDhub-ensemble", "UMass-MechBayes"), dates=("2020-05-04", "2020-05-11")):
    truth = legacy_truth()
    for m in models:
        folder = root / "data-processed" / m
        folder.mkdir(parents=True)
        (folder / f"metadata-{m}.txt").write_text("team_name: x\n")
        for d in dates:
            legacy_rows(m, d, truth=truth).to_csv(folder / f"{d}-{m}.csv", index=False)
    (root / "data-truth").mkdir()
    truth.to_csv(root / "data-truth" / "truth-Incident Deaths.csv", index=False)
    return root, root / "data-truth" / "truth-Incident Deaths.csv"


def test_a_legacy_hub_reads_with_horizons_from_the_target_text(tmp_path):
    root, truth_path = write_legacy(tmp_path)
    ps = cc.load_predictions(root, truth=truth_path)
    assert (ps.task, ps.layout) == ("regression", "quantile")
    assert ps.dist.levels.tolist() == pytest.approx(LEVELS)
    assert ps.n_read == ps.n_rows == 2 * 2 * 2 * 4 and ps.dropped.total == 0  # models × dates × locations × horizons
    u = ps.units
    assert sorted(u["horizon"].unique().tolist()) == [1, 2, 3, 4] and set(u["target"]) == {"inc death"}
    assert set(u["location"]) == {"01", "US"}
    assert np.array_equal(u["reference_date"], u["forecast_date"])
    assert ((u["target_end_date"] - u["forecast_date"]).dt.days == 5 + 7 * (u["horizon"] - 1)).all()  # the file's
    text = "\n".join(map(str, ps.messages))
    assert "forecast hub (legacy)" in text and "metadata-COVIDhub-ensemble.txt" in text
    assert "truth-Incident Deaths.csv (legacy truth, 40 rows; target 'inc death' from its name)" in text
    assert "joined on target, target_end_date, location" in text
    # the point row equals the 0.5 quantile here: nothing said about differing medians
    assert "differs from their 0.5 quantile" not in text
    obs = legacy_truth().set_index(["location", "date"])["value"]
    expected = [obs[(loc, d.strftime("%Y-%m-%d"))] for loc, d in zip(u["location"], u["target_end_date"])]
    assert ps.y.tolist() == expected


def test_a_legacy_point_row_that_differs_loses_to_the_median_quantile_and_point_only_reads_as_point():
    truth = legacy_truth()
    frame = legacy_rows("m", "2020-05-04", truth=truth)
    frame.loc[frame["type"] == "point", "value"] += 2.0
    ps = read_hub(frame, truth)
    assert "8 unit(s) give a median that differs from their 0.5 quantile: the quantile is used" in \
        "\n".join(map(str, ps.messages))
    point = read_hub(frame.loc[frame["type"] == "point"], truth)
    assert point.layout == "point" and point.n_rows == 8


def test_legacy_targets_without_a_horizon_are_refused_or_left_out():
    truth = legacy_truth()
    frame = legacy_rows("m", "2020-05-04", truth=truth)
    odd = frame.iloc[:3].assign(target="peak week inc death")
    ps = read_hub(pd.concat([frame, odd], ignore_index=True), truth)
    assert "rows of targets without a horizon were not read (peak week inc death)" in "\n".join(map(str, ps.messages))
    with pytest.raises(cc.InputError, match="column 'target': no target names a horizon"):
        read_hub(odd, truth)
    bad_type = frame.assign(type=np.where(frame.index == 4, "sample", frame["type"]))
    with pytest.raises(cc.InputError, match=r"column 'type': values other than point and quantile \(sample\) in "
                                            r"rows 5"):
        read_hub(bad_type, truth)


def test_a_legacy_file_without_truth_asks_for_it():
    frame = legacy_rows("m", "2020-05-04")
    with pytest.raises(cc.InputError, match="forecast-hub file, legacy COVID-19 hub file .*give its truth"):
        cc.load_predictions(frame.to_csv(index=False).encode(), source="2020-05-04-m.csv")


def test_a_legacy_file_of_two_targets_keeps_the_target_its_truth_file_names(tmp_path):
    truth = legacy_truth()
    inc = legacy_rows("m", "2020-05-04", truth=truth)
    cum = inc.assign(target=inc["target"].str.replace("inc death", "cum death"), value=inc["value"] * 10)
    both = pd.concat([inc, cum], ignore_index=True)
    path = tmp_path / "truth-Incident Deaths.csv"
    truth.to_csv(path, index=False)
    ps = read_hub(both, path)
    assert ps.n_read == 16 and ps.n_rows == 8 and set(ps.units["target"]) == {"inc death"}
    assert ps.dropped.reasons["no truth in truth-Incident Deaths.csv"].size == 8
    with pytest.raises(cc.InputError, match=r"the truth has no target column but the forecasts have 2 targets "
                                            r"\(cum death, inc death\)"):
        read_hub(both, truth)
