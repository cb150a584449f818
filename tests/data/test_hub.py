"""The forecast-hub reader (calib_core.data.hub): hubverse folders and files, the truth join, output types, and every
bad input refused with a message naming the file, the column and the rows."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.data.hub import read_hub
from calib_core.data.hub_formats import is_hub_frame

from .hub_fixtures import LEVELS, quantile_rows, simple_hub, tasks_json, truth_series, write_hub


def csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def named(frame: pd.DataFrame, name: str) -> io.BytesIO:
    buf = io.BytesIO(csv(frame))
    buf.name = name
    return buf


def text(ps: cc.PredictionSet) -> str:
    return "\n".join(map(str, ps.messages))


def test_a_hub_folder_reads_as_one_row_per_model_and_forecast_unit(tmp_path):
    hub = simple_hub(tmp_path)
    ps = cc.load_predictions(hub)
    assert (ps.task, ps.layout, ps.n_read, ps.n_rows, ps.dropped.total) == ("regression", "quantile", 24, 24, 0)
    assert ps.dist.levels.tolist() == pytest.approx(LEVELS)
    assert sorted(set(ps.model)) == ["alpha", "beta"] and ps.source == tmp_path.name
    u = ps.units
    assert u["location"].tolist()[:6] == ["01", "01", "02", "02", "US", "US"]  # text ids, reading order
    assert u["horizon"].dtype == np.int64 and str(u["target_end_date"].dtype) == "datetime64[ns]"
    # tasks.json says weeks: target_end_date = reference_date + 7 × horizon
    assert ((u["target_end_date"] - u["reference_date"]).dt.days == 7 * u["horizon"]).all()
    assert np.array_equal(ps.time, u["target_end_date"].to_numpy())
    assert ps.row_number.tolist() == list(range(1, 25))
    truth = truth_series().set_index(["location", "target_end_date"])["observation"]
    expected = [truth[(loc, d.strftime("%Y-%m-%d"))] for loc, d in zip(u["location"], u["target_end_date"])]
    assert ps.y.tolist() == expected
    # the quantile values are the file's values, exactly (alpha: spread 5 around the truth)
    first = quantile_rows("alpha", "2022-12-03", truth=truth_series())
    q = first.loc[(first["output_type"] == "quantile") & (first["location"] == "01") & (first["horizon"] == 1)]
    assert ps.dist.values[0].tolist() == q["value"].tolist()
    messages = text(ps)
    assert "model-metadata.json, alpha/README.md, beta/README.md" in messages  # unrelated files are listed
    assert "24 of 24 forecast units matched" in messages and "every model in every round" in messages
    assert set(ps.slice_columns.columns) >= {"location", "horizon", "target", "target_end_date"}
    assert ps.slice_columns["location"].tolist()[:2] == ["01", "01"]


def test_parquet_files_and_model_folders_give_the_same_set(tmp_path):
    a = read_hub(simple_hub(tmp_path / "csv"))
    b = read_hub(simple_hub(tmp_path / "pq", fmt="parquet"))
    assert np.array_equal(a.dist.values, b.dist.values) and a.units.equals(b.units)
    one = read_hub(tmp_path / "csv" / "model-output" / "beta", truth=tmp_path / "csv" / "target-data" /
                   "time-series.csv")
    assert set(one.model) == {"beta"} and one.n_rows == 12


def test_a_list_of_files_and_a_model_id_column(tmp_path):
    truth = truth_series()
    f1 = quantile_rows("m1", "2022-12-03", truth=truth).assign(model_id="m1")
    f2 = quantile_rows("m2", "2022-12-03", truth=truth, spread=9).assign(model_id="m2")
    both = pd.concat([f1, f2], ignore_index=True)
    ps = cc.load_predictions(named(both, "all-models.csv"), truth=named(truth, "truth.csv"))
    assert pd.Series(ps.model).value_counts().to_dict() == {"m1": 6, "m2": 6}
    ps2 = cc.load_predictions([named(f1.drop(columns="model_id"), "2022-12-03-m1.csv"),
                               named(f2.drop(columns="model_id"), "2022-12-03-m2.csv")], truth=csv(truth))
    assert np.array_equal(ps.dist.values, ps2.dist.values) and list(ps.model) == list(ps2.model)


def test_a_hub_file_without_truth_asks_for_it_and_never_for_deleting_cells(tmp_path):
    frame = quantile_rows("m", "2022-12-03")
    for given in (csv(frame), frame):
        with pytest.raises(cc.InputError) as err:
            cc.load_predictions(given, source="2022-12-03-m.csv")
        message = str(err.value)
        assert "forecast-hub file (output_type / value columns): give its truth (target data) file too" in message
        assert "truth=" in message and "--truth" in message and "non-numeric" not in message
        assert "leave them empty" not in message
    assert is_hub_frame(frame) and not is_hub_frame(pd.DataFrame(columns=["y", "mean", "std"]))


def test_median_becomes_level_half_and_a_differing_median_loses_to_the_quantile():
    truth = truth_series()
    no_half = quantile_rows("m", "2022-12-03", levels=[0.1, 0.9], truth=truth)
    ps = read_hub(no_half, truth)
    assert ps.dist.levels.tolist() == [0.1, 0.5, 0.9]
    assert "the median is level 0.5 in 6 unit(s)" in text(ps)
    both = quantile_rows("m", "2022-12-03", levels=[0.1, 0.5, 0.9], truth=truth)
    both.loc[both["output_type"] == "median", "value"] += 1.0
    ps = read_hub(both, truth)
    assert "6 unit(s) give a median that differs from their 0.5 quantile: the quantile is used" in text(ps)
    q = both.loc[both["output_type_id"] == "0.5", "value"].to_numpy()
    assert ps.dist.values[:, 1].tolist() == q.tolist()


def test_levels_not_stated_by_every_unit_are_left_out_and_said(tmp_path):
    truth = truth_series()
    files = {"wide": {"2022-12-03": quantile_rows("wide", "2022-12-03", truth=truth)},
             "narrow": {"2022-12-03": quantile_rows("narrow", "2022-12-03", truth=truth, median=False,
                                                     levels=[0.05, 0.25, 0.5, 0.75, 0.95])}}
    ps = read_hub(write_hub(tmp_path, files, truth))
    assert ps.dist.levels.tolist() == [0.05, 0.25, 0.5, 0.75, 0.95]
    message = text(ps)
    assert "quantile levels not stated by every forecast unit are left out" in message
    assert "0.01 (stated by 6 of 12 units: wide 2022-12-03" in message and "Used: the 5 levels" in message


def test_crossing_quantiles_are_rearranged_and_counted():
    truth = truth_series()
    frame = quantile_rows("m", "2022-12-03", levels=[0.1, 0.5, 0.9], truth=truth, median=False)
    swap = (frame["location"] == "02") & (frame["horizon"] == 1)
    frame.loc[swap & (frame["output_type_id"] == "0.9"), "value"] = -1e6
    ps = read_hub(frame, truth)
    assert ps.n_rows == 6 and np.all(np.diff(ps.dist.values, axis=1) >= 0)
    assert "rearrang" in text(ps).lower() or "sorted" in text(ps).lower()
    dropped = read_hub(frame, truth, crossing="drop")
    assert dropped.n_rows == 5 and dropped.n_read == 6 and dropped.row_number.tolist() == [1, 2, 4, 5, 6]


def test_text_in_value_names_the_file_rows_and_cells():
    frame = quantile_rows("m", "2022-12-03", levels=[0.1, 0.9], median=False).astype({"value": object})
    frame.loc[[2, 5], "value"] = "n/a?"
    with pytest.raises(cc.InputError) as err:
        read_hub([named(frame, "2022-12-03-m.csv")], csv(truth_series()))
    message = str(err.value)
    assert message.startswith("2022-12-03-m.csv: column 'value' holds text in 2 row(s) (rows 3, 6: 'n/a?')")
    assert "leave them empty" not in message and err.value.rows == [3, 6]


def test_truth_rows_repeated_with_different_values_are_refused():
    truth = truth_series()
    clash = pd.concat([truth, truth.iloc[[4]].assign(observation=-1.0)], ignore_index=True)
    with pytest.raises(cc.InputError) as err:
        read_hub(quantile_rows("m", "2022-12-03", truth=truth), named(clash, "truth.csv"))
    message = str(err.value)
    assert message.startswith("truth.csv: the truth has 2 rows with the same target_end_date, location, target and "
                              "different values, e.g. rows 5, 271")
    assert err.value.rows == [5, 271]
    same = pd.concat([truth, truth.iloc[[4]]], ignore_index=True)  # the same value twice is fine
    assert read_hub(quantile_rows("m", "2022-12-03", truth=truth), same).n_rows == 6


def test_truth_without_matching_task_ids_says_what_was_compared():
    fc = quantile_rows("m", "2022-12-03", locations=["AL", "MA", "US"])  # abbreviations vs FIPS codes
    truth = truth_series(locations=[f"{i:02d}" for i in range(1, 57)])
    with pytest.raises(cc.InputError) as err:
        read_hub(fc, named(truth, "covid-hospitalizations.csv"))
    message = str(err.value)
    assert message.startswith("covid-hospitalizations.csv: no forecast unit has a truth value; compared")
    assert "forecast location AL, MA, US vs truth location 01 … 56 (56 values) (none shared)" in message
    assert "What to do" in message


def test_units_without_truth_are_dropped_counted_and_said():
    truth = truth_series()
    short = truth.loc[truth["target_end_date"] < "2022-12-15"]
    ps = read_hub(quantile_rows("m", "2022-12-03", truth=truth, with_end=True).assign(model_id="m"),
                  named(short, "truth.csv"))
    assert (ps.n_read, ps.n_rows, ps.dropped.total) == (6, 3, 3)
    assert ps.dropped.reasons["no truth in truth.csv"].tolist() == [2, 4, 6]
    assert ps.row_number.tolist() == [1, 3, 5]
    assert "3 unit(s) have no truth in truth.csv and are dropped, e.g. model m, target_end_date 2022-12-17" \
        in text(ps)


def test_a_model_missing_a_round_is_said(tmp_path):
    truth = truth_series()
    files = {"full": {r: quantile_rows("full", r, truth=truth) for r in ("2022-12-03", "2022-12-10")},
             "late": {"2022-12-10": quantile_rows("late", "2022-12-10", truth=truth)}}
    ps = read_hub(write_hub(tmp_path, files, truth))
    assert "late has no forecasts for round 2022-12-03" in text(ps) and ps.n_rows == 18
    assert "Units per model and round: full: 2022-12-03 6, 2022-12-10 6; late: 2022-12-10 6." in text(ps)


def test_unreadable_files_in_a_hub_folder_are_named(tmp_path):
    hub = simple_hub(tmp_path)
    (hub / "model-output" / "beta" / "2022-12-17-beta.csv").write_bytes(b"\x00\x01\x02 binary")
    ps = read_hub(hub)
    assert "1 file(s) could not be read, left out: beta/2022-12-17-beta.csv" in text(ps)


def test_repeated_forecast_rows_are_refused_with_their_rows():
    frame = quantile_rows("m", "2022-12-03", levels=[0.1, 0.9], median=False)
    frame = pd.concat([frame, frame.iloc[[3]]], ignore_index=True)
    with pytest.raises(cc.InputError, match=r"a quantile level is stated 2 times for one forecast unit \(rows 4, 13"):
        read_hub([named(frame, "2022-12-03-m.csv")], truth_series())


def test_output_types_sample_point_and_the_choice_between_them():
    truth = truth_series()
    rng = np.random.default_rng(3)
    base = quantile_rows("m", "2022-12-03", levels=[0.25, 0.75], truth=truth, median=False)
    units = base.drop_duplicates(["location", "horizon"])[["reference_date", "target", "horizon", "location"]]
    samples = units.loc[units.index.repeat(40)].assign(output_type="sample",
                                                       output_type_id=[str(i) for i in range(40)] * len(units),
                                                       value=rng.normal(100, 5, 40 * len(units)))
    means = units.assign(output_type="mean", output_type_id="NA", value=100.0)
    hub = pd.concat([base, samples, means], ignore_index=True)
    ps = read_hub(hub, truth)
    assert ps.layout == "quantile"
    assert "not read: sample, mean (choose with output_type=" in text(ps)
    ens = read_hub(hub, truth, output_type="sample")
    assert ens.layout == "sample" and ens.dist.samples.shape == (6, 40)
    point = cc.load_predictions(hub, truth=truth, output_type="mean")
    assert point.layout == "point" and point.point.tolist() == [100.0] * 6
    uneven = pd.concat([samples.iloc[:-3], means], ignore_index=True)
    ps = read_hub(uneven, truth)  # sample preferred over mean
    assert ps.layout == "sample" and ps.dist.samples.shape == (6, 37)
    assert "different numbers of samples (37 to 40): the first 37 of every unit are used" in text(ps)
    with pytest.raises(cc.InputError, match="has no output_type 'pmf' rows"):
        read_hub(hub, truth, output_type="pmf")


def test_pmf_is_ordinal_classification_in_the_hub_config_order(tmp_path):
    cats = ["low", "moderate", "high", "very high"]
    rows = []
    for loc in ("01", "02", "US"):
        for h, p in ((1, [0.1, 0.2, 0.3, 0.4]), (2, [0.4, 0.3, 0.2, 0.1])):
            for c, v in zip(reversed(cats), reversed(p)):  # stated in the reverse order in the file
                rows.append(("2022-12-03", "wk flu hosp rate category", h, loc, "pmf", c, v))
    fc = pd.DataFrame(rows, columns=["reference_date", "target", "horizon", "location", "output_type",
                                     "output_type_id", "value"])
    oracle = fc.assign(oracle_value=0.0).drop(columns="value")
    observed = {"01": "high", "02": "low", "US": "very high"}
    oracle.loc[oracle["output_type_id"] == oracle["location"].map(observed), "oracle_value"] = 1.0
    write_hub(tmp_path, {"m": {"2022-12-03": fc}}, config=tasks_json(categories=cats))
    ps = read_hub(tmp_path, named(oracle, "oracle-output.csv"))
    assert (ps.task, ps.ordinal, ps.classes) == ("classification", True, cats)
    assert ps.probs[0].tolist() == pytest.approx([0.1, 0.2, 0.3, 0.4])
    assert [ps.classes[k] for k in ps.labels] == [observed[loc] for loc in ps.units["location"]]
    no_config = read_hub([named(fc, "2022-12-03-m.csv")], oracle)
    assert no_config.classes == list(reversed(cats))  # first appearance
    # a time series whose observation is the category gives the same labels
    series = oracle.loc[oracle["oracle_value"] == 1.0, ["location", "output_type_id"]].rename(
        columns={"output_type_id": "observation"}).assign(target="wk flu hosp rate category")
    assert read_hub(tmp_path, series).labels.tolist() == ps.labels.tolist()


def test_cdf_gives_k_plus_one_ordered_intervals():
    truth = truth_series()
    thresholds = [100.0, 120.0, 140.0]
    base = quantile_rows("m", "2022-12-03", levels=[0.5], truth=truth, median=False)
    rows = []
    for _, r in base.iterrows():
        for t, f in zip(thresholds, (0.2, 0.5, 0.9)):
            rows.append((r["reference_date"], r["target"], r["horizon"], r["location"], "cdf", f"{t:g}", f))
    fc = pd.DataFrame(rows, columns=list(base.columns))
    ps = read_hub(fc, truth)
    assert ps.classes == ["≤ 100", "(100, 120]", "(120, 140]", "> 140"] and ps.ordinal
    assert ps.probs[0].tolist() == pytest.approx([0.2, 0.3, 0.4, 0.1])
    y = np.array(truth.set_index(["location", "target_end_date"])["observation"].loc[
        list(zip(ps.units["location"], ps.units["target_end_date"].dt.strftime("%Y-%m-%d")))])
    assert ps.labels.tolist() == np.searchsorted(thresholds, y, side="left").tolist()
    # oracle output of a cdf: 1 where y ≤ threshold; the same observed intervals
    ends = ps.units["target_end_date"].dt.strftime("%Y-%m-%d").to_numpy()
    oracle = pd.DataFrame([(loc, end, tgt, "cdf", f"{t:g}", float(v <= t)) for loc, end, tgt, v in
                           zip(ps.units["location"], ends, ps.units["target"], y) for t in thresholds],
                          columns=["location", "target_end_date", "target", "output_type", "output_type_id",
                                   "oracle_value"])
    assert read_hub(fc, oracle).labels.tolist() == ps.labels.tolist()


def test_oracle_output_as_truth_for_quantiles():
    truth = truth_series()
    fc = quantile_rows("m", "2022-12-03", levels=[0.1, 0.9], truth=truth, median=False, with_end=True)
    units = fc.drop_duplicates(["location", "horizon"])
    obs = truth.set_index(["location", "target_end_date"])["observation"]
    oracle = pd.DataFrame({"location": units["location"], "target_end_date": units["target_end_date"],
                           "target": units["target"], "output_type": "quantile", "output_type_id": "NA"})
    oracle["oracle_value"] = [obs[(loc, d)] for loc, d in zip(oracle["location"], oracle["target_end_date"])]
    a, b = read_hub(fc, oracle), read_hub(fc, truth)
    assert a.y.tolist() == b.y.tolist() and "oracle output" in text(a)


def test_location_codes_and_na_ids_stay_text_in_csv(tmp_path):
    truth = truth_series(locations=["01", "1", "NA"])
    fc = quantile_rows("m", "2022-12-03", locations=["01", "1", "NA"], levels=[0.1, 0.9], truth=truth, median=False)
    ps = read_hub([named(fc, "2022-12-03-m.csv")], named(truth, "t.csv"))
    assert ps.units["location"].tolist() == ["01", "01", "1", "1", "NA", "NA"] and ps.n_rows == 6


def test_size_limits_hold_for_hub_files_and_the_whole_hub(tmp_path):
    hub = simple_hub(tmp_path)
    with pytest.raises(cc.InputError, match="more than the size limit"):
        read_hub(hub, max_bytes=20_000)
    with pytest.raises(cc.InputError, match="2022-12-03-alpha.csv: .* more than the size limit of 100 bytes"):
        read_hub([hub / "model-output" / "alpha" / "2022-12-03-alpha.csv"], truth_series(), max_bytes=100)


def test_forecasts_without_a_target_date_against_dated_truth_are_refused():
    frame = quantile_rows("m", "2022-12-03", levels=[0.1, 0.9], median=False).drop(columns=["horizon"])
    frame = frame.drop_duplicates(["location", "output_type_id"])
    with pytest.raises(cc.InputError, match="the truth is dated but the forecasts have no target date"):
        read_hub(frame, truth_series())
    undated = truth_series().drop_duplicates("location").drop(columns="target_end_date")
    ps = read_hub(frame, undated)  # an undated truth joins on location and target alone
    assert ps.n_rows == 3 and ps.units["location"].tolist() == ["01", "02", "US"]


def test_a_hub_folder_without_target_data_asks_for_the_truth(tmp_path):
    files = {"m": {"2022-12-03": quantile_rows("m", "2022-12-03")}}
    hub = write_hub(tmp_path / "hub", files, truth=None)
    with pytest.raises(cc.InputError, match=r"^hub: this is a forecast-hub file .* give its truth \(target data\)"):
        cc.load_predictions(hub)


def test_unit_codes_of_many_high_cardinality_task_ids_never_overflow():
    from calib_core.data.hub_pivot import unit_codes

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"id{i}": rng.integers(0, 5000, 20_000).astype(str) for i in range(7)})
    frame = pd.concat([frame, frame.iloc[:100]], ignore_index=True)  # 100 repeated units
    codes, first = unit_codes(frame, list(frame.columns))
    assert first.size == len(frame.drop_duplicates()) == 20_000
    assert np.array_equal(codes[20_000:], codes[:100])


def test_target_data_with_a_time_series_and_oracle_output_uses_the_time_series(tmp_path):
    hub = simple_hub(tmp_path)
    pd.DataFrame({"location": ["01"], "oracle_value": [1.0]}).to_csv(hub / "target-data" / "oracle-output.csv",
                                                                       index=False)
    ps = read_hub(hub)
    assert ps.n_rows == 24 and "truth: target-data/time-series.csv of the hub" in text(ps)
