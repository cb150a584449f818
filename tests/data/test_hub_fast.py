"""The hub reader's fast path (task IDs kept as codes: Parquet dictionaries, delimited text as plain strings, one
factorisation per file) reads exactly what the plain path reads: the same long table as ``read_table``'s default
reading with every cell written as text, and the same PredictionSet from frames in memory, CSV and Parquet —
location ``01`` / ``1`` / ``NA``, median rows next to quantile rows, a model missing a round, a task ID some files lack
or leave empty, and text in ``value`` refused with the same message."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import calib_core as cc
from calib_core.data.bytes import read_table
from calib_core.data.hub import read_hub
from calib_core.data.hub_formats import NUMERIC_COLUMNS, find_hub_files, read_hub_files

from .hub_fixtures import quantile_rows, truth_series, write_hub

LOCATIONS = ["01", "1", "NA"]


def plain_text(v) -> str:
    """The reader's text of one cell, written out cell by cell (the reference, not the reader's code)."""
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "NA"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def hub_files(truth: pd.DataFrame) -> dict[str, dict[str, pd.DataFrame]]:
    files = {m: {r: quantile_rows(m, r, locations=LOCATIONS, truth=truth, levels=[0.1, 0.25, 0.5, 0.75, 0.9],
                                  spread=4.0 + i)
                 for r in ("2022-12-03", "2022-12-10")} for i, m in enumerate(["alpha", "beta"])}
    del files["beta"]["2022-12-03"]  # a missing round
    a = files["alpha"]["2022-12-03"]
    a.loc[(a["output_type"] == "median") & (a["location"] == "1"), "value"] += 1.0  # medians differing from 0.5
    files["alpha"]["2022-12-10"] = files["alpha"]["2022-12-10"].assign(age_group="65+")  # a task ID one file has
    b = files["beta"]["2022-12-10"].assign(age_group="65+")
    b["age_group"] = b["age_group"].astype(object)
    files["beta"]["2022-12-10"] = b
    return files


def reference_long(root) -> pd.DataFrame:
    """read_table's default reading of every file, concatenated, every task-ID cell written as text."""
    parts = []
    files = find_hub_files(root)[0]
    for i, f in enumerate(files):
        frame = read_table(f.obj, source=f.name, text_except=NUMERIC_COLUMNS)
        if "model_id" not in frame.columns:
            frame.insert(0, "model_id", f.model)
        parts.append(frame.assign(file=i, row=np.arange(1, len(frame) + 1)))
    long = pd.concat(parts, ignore_index=True, sort=False)
    for c in long.columns:
        if c not in ("value", "file", "row"):
            long[c] = [plain_text(v) for v in long[c].astype(object)]
    return long


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_the_long_table_is_the_plain_reading_as_text(tmp_path, fmt):
    truth = truth_series(locations=LOCATIONS)
    root = write_hub(tmp_path, hub_files(truth), truth, fmt=fmt)
    files = find_hub_files(root)[0]
    long = read_hub_files(files, "hub").long
    ref = reference_long(root)
    assert list(long.columns[:len(ref.columns)]) == list(ref.columns)
    for c in ["model_id", "reference_date", "target", "location", "output_type", "output_type_id", "age_group"]:
        assert isinstance(long[c].dtype, pd.CategoricalDtype) or c == "reference_date"
        got = long[c].astype(object) if c != "reference_date" else long[c].dt.strftime("%Y-%m-%d")
        assert got.tolist() == ref[c].tolist(), c
    assert long["horizon"].tolist() == [int(h) for h in ref["horizon"]]
    assert np.array_equal(long["value"].to_numpy(), ref["value"].to_numpy(dtype=float))
    assert long["row"].tolist() == ref["row"].tolist() and long["file"].tolist() == ref["file"].tolist()
    assert set(long["location"]) == set(LOCATIONS) and "NA" in set(long["output_type_id"])
    assert (long["age_group"] == "NA").sum() == 36  # the file without it (6 units × 6 rows): NA there


def test_frames_csv_and_parquet_give_the_same_set(tmp_path):
    truth = truth_series(locations=LOCATIONS)
    files = hub_files(truth)
    sets = {fmt: read_hub(write_hub(tmp_path / fmt, files, truth, fmt=fmt)) for fmt in ("csv", "parquet")}
    frames = [f.assign(model_id=m) for m, by in files.items() for f in by.values()]
    sets["frames"] = read_hub(frames, truth)
    a = sets["csv"]
    assert a.units["location"].tolist()[:6] == ["01", "01", "1", "1", "NA", "NA"]
    assert a.units["age_group"].tolist()[:6] == ["NA"] * 6 and "65+" in set(a.units["age_group"])
    messages = "\n".join(map(str, a.messages))
    assert "beta has no forecasts for round 2022-12-03" in messages
    assert "2 unit(s) give a median that differs from their 0.5 quantile" in messages
    paths = sorted((tmp_path / "csv" / "model-output").glob("*/*.csv"))
    sets["list"] = read_hub(paths, truth)  # no hub-config: days, as for the frames in memory
    for one, other in (("csv", "parquet"), ("list", "frames")):
        a, b = sets[one], sets[other]
        assert np.array_equal(a.dist.values, b.dist.values) and np.array_equal(a.y, b.y)
        assert a.units.equals(b.units) and a.slice_columns.equals(b.slice_columns)
        assert a.model.tolist() == b.model.tolist() and a.row_number.tolist() == b.row_number.tolist()
        assert np.array_equal(a.time, b.time)
    a = sets["csv"]
    parquet = [str(m).replace(".parquet", ".csv") for m in sets["parquet"].messages]
    assert list(map(str, a.messages)) == parquet


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_text_in_value_is_refused_with_the_same_message(tmp_path, fmt):
    frame = quantile_rows("m", "2022-12-03", levels=[0.1, 0.9], median=False).astype({"value": object})
    frame.loc[[2, 5], "value"] = "n/a?"
    path = tmp_path / f"2022-12-03-m.{fmt}"
    frame.to_csv(path, index=False) if fmt == "csv" else frame.astype({"value": str}).to_parquet(path, index=False)
    with pytest.raises(cc.InputError) as err:
        read_hub([path], truth_series())
    assert str(err.value).startswith(f"2022-12-03-m.{fmt}: column 'value' holds text in 2 row(s) (rows 3, 6: "
                                     "'n/a?')")
    assert err.value.rows == [3, 6]


def test_parquet_categories_equal_the_plain_columns(tmp_path):
    frame = pd.DataFrame({"location": ["01", None, "NA", "01", "2"] * 4, "horizon": [1, 2, 3, 4, 5] * 4,
                          "value": np.arange(20.0)})
    several = tmp_path / "groups.parquet"  # row groups with different dictionaries
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), several, row_group_size=3)
    indexed = tmp_path / "indexed.parquet"  # an index stored by pandas: the whole-table conversion
    frame.set_index(pd.Index([f"r{i}" for i in range(20)], name="key")).to_parquet(indexed)
    for path in (several, indexed):
        plain = read_table(path, text_except=NUMERIC_COLUMNS)
        coded = read_table(path, text_except=NUMERIC_COLUMNS, text_categories=True)
        assert list(coded.columns) == list(plain.columns)
        assert isinstance(coded["location"].dtype, pd.CategoricalDtype)
        got = [None if pd.isna(v) else v for v in coded["location"].astype(object)]
        assert got == [None if pd.isna(v) else v for v in plain["location"]] and got[1] is None
        assert coded["horizon"].tolist() == plain["horizon"].tolist()
        assert coded["value"].tolist() == plain["value"].tolist()


def test_delimited_text_objects_equal_the_plain_columns():
    data = b"location,output_type_id,value\n01,NA,1.5\n,0.5,NA\n US,0.25,2\n"
    plain = read_table(data, source="t.csv", text_except=NUMERIC_COLUMNS)
    objects = read_table(data, source="t.csv", text_except=NUMERIC_COLUMNS, text_categories=True)
    assert objects["location"].dtype == object and objects["location"].tolist() == ["01", "", "US"]
    assert objects["output_type_id"].tolist() == plain["output_type_id"].tolist() == ["NA", "0.5", "0.25"]
    assert objects["value"].tolist()[::2] == [1.5, 2.0] and np.isnan(objects["value"].iloc[1])
