"""Memory bounded by what is decoded, and hostile files each named for what is wrong.

* The loader's peak resident memory (a fresh child process: ``bench/loader_memory.py``) is at most 1.5× the decoded
  size of the columns it keeps, for a ``.csv.gz`` bomb (one line repeated: 485 KB → 250 MB of text) and a Parquet bomb
  (2·10⁷ constant rows × 3 float64 = 458 MB).  Measured before the streaming reader: 4.05× and 3.43×; after: 1.46× and
  1.39× (the floor is 1.33×: the set's row numbers, int64, are a fourth column).  The full-size run is ``slow``; the
  default run loads versions 20 times smaller.
* Every user-set size is capped before allocation (:mod:`calib_core.base.limits`): ``--n-bins 100000`` is refused
  with a message (it used to allocate 1.5 GiB and end in ``internal error: MemoryError``).
* Nested Parquet columns, empty column names, forged ``.npy`` headers in an npz and oversized header cells each get a
  message saying what is wrong.  Every hostile file is generated here, under ``tmp_path`` or in memory.
"""

from __future__ import annotations

import gzip
import importlib.util
import io
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.base.limits import CAPS, MAX_NAME_CHARS, check_options, check_size
from calib_core.data import text_stream

BENCH = Path(__file__).resolve().parents[2] / "bench" / "loader_memory.py"
_spec = importlib.util.spec_from_file_location("bench_loader_memory", BENCH)
loader_memory = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(loader_memory)

TOLERANCE = 1.05  # allocator pages and interpreter noise above the 1.5× target


# ------------------------------------------------------------------------------------------------ memory
@pytest.mark.slow
def test_bombs_at_their_issue_sizes_peak_under_one_and_a_half_times_the_decoded_columns(tmp_path):
    results = loader_memory.run_bombs(tmp_path, scale=1.0)
    for r in results:
        assert r["decoded_mb"] > 400, r
        assert r["ratio"] <= 1.5 * TOLERANCE, r


def test_small_bombs_load_in_bounded_memory(tmp_path):
    """The same bombs 20 times smaller (26 MB and 23 MB decoded): loaded whole, and under 2.5× (at this size the
    allocator's and the interpreter's noise are a larger share: 2.07× measured for the .csv.gz, 4.44× before)."""
    results = loader_memory.run_bombs(tmp_path, scale=0.05)
    for r in results:
        assert r["rows"] > 900_000
        assert r["ratio"] < 2.5, r


def test_streamed_gzip_path_reads_as_the_bytes_do(tmp_path):
    text = b"# units: K\ny,mean,std,group\n" + b"".join(
        f"{i % 7 * 0.5},{i % 5 * 0.25},{1 + i % 3},g{i % 4}\n".encode() for i in range(2000))
    path = tmp_path / "p.csv.gz"
    path.write_bytes(gzip.compress(text))
    from_path = cc.load_predictions(path)
    from_bytes = cc.load_predictions(text, source="p.csv")
    assert from_path.n_rows == from_bytes.n_rows == 2000
    np.testing.assert_array_equal(from_path.y, from_bytes.y)
    np.testing.assert_array_equal(from_path.dist.std(), from_bytes.dist.std())
    assert list(from_path.group[:4]) == ["g0", "g1", "g2", "g3"]
    assert from_path.dist.mean() is from_path.point  # one array for both, not two copies


def test_a_column_that_turns_to_text_in_a_later_chunk_reads_as_a_whole_file_read(monkeypatch):
    """Chunks parsed to different types (numbers, then text) are read again as text: the cell is named as when the
    file is read at once."""
    monkeypatch.setattr(text_stream, "CHUNK_ROWS", 10)
    rows = [f"{i}.5,{i}.0,1.0,{i:02d}" for i in range(40)]
    rows[25] = "abc,25.0,1.0,25"
    data = ("y,mean,std,group\n" + "\n".join(rows) + "\n").encode()
    with pytest.raises(cc.InputError, match=r"row 26: 'abc'"):
        cc.load_predictions(data, source="m.csv")
    rows[25] = "25.5,25.0,1.0,x25"  # group: numbers in the first chunks, text later → text throughout, verbatim
    pset = cc.load_predictions(("y,mean,std,group\n" + "\n".join(rows) + "\n").encode(), source="m.csv")
    assert list(pset.group[:3]) == ["00", "01", "02"] and pset.group[25] == "x25"


def test_integer_and_float_chunks_make_a_float_column(monkeypatch):
    monkeypatch.setattr(text_stream, "CHUNK_ROWS", 3)
    frame = text_stream.read_csv_chunked(io.BytesIO(b"a,b\n1,x\n2,y\n3,z\n4.5,w\n"), {}, 5)
    assert frame["a"].dtype == np.float64 and frame["a"].tolist() == [1.0, 2.0, 3.0, 4.5]
    assert frame["b"].tolist() == ["x", "y", "z", "w"]


# ------------------------------------------------------------------------------------------------ caps
def test_every_cap_has_a_reason_and_a_range():
    for name, cap in CAPS.items():
        assert 0 <= cap.low < cap.high and len(cap.reason) > 20, name


def test_n_bins_of_100000_is_refused_before_allocation(tmp_path, capsys):
    from calib_core.cli import main

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"y": rng.normal(size=50), "mean": np.zeros(50), "std": np.ones(50)})
    path = tmp_path / "p.csv"
    frame.to_csv(path, index=False)
    code = main(["report", str(path), "--out", str(tmp_path / "r.html"), "--n-bins", "100000"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "--n-bins is 100,000, above the cap of 1,000" in err and "MemoryError" not in err
    ps = cc.load_predictions(path)
    with pytest.raises(cc.InputError, match="n_bins is 100,000, above the cap"):
        cc.diagnose(ps, n_bins=100_000)
    with pytest.raises(cc.InputError, match="n_resamples is 1,000,000,000"):
        cc.diagnose(ps, n_resamples=10**9)
    with pytest.raises(cc.InputError, match="repeats is 5,000"):
        cc.evaluate(ps, {"none": None}, repeats=5000)


def test_check_size_words_and_products():
    with pytest.raises(cc.InputError, match="Confidence bins must be a whole number"):
        check_size("n_bins", 2.5, control="Confidence bins")
    with pytest.raises(cc.InputError, match="below the least of 2 PIT histogram bins"):
        check_size("pit_bins", 1)
    with pytest.raises(cc.InputError, match="asks for 50,000,000 bin statistics"):
        check_options({"n_bins": 500, "n_resamples": 100_000})
    check_options({"n_bins": 15, "n_resamples": "auto", "level": 0.9})


# ------------------------------------------------------------------------------------------------ messages
def _parquet(table) -> bytes:
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


@pytest.mark.parametrize("kind", ["list", "struct", "map"])
def test_nested_parquet_columns_are_named_with_their_type(kind):
    import pyarrow as pa

    column = {"list": pa.array([[0.2, 0.8], [0.6, 0.4]]),
              "struct": pa.array([{"a": 1}, {"a": 2}]),
              "map": pa.array([[("k", 1)], [("k", 2)]], pa.map_(pa.string(), pa.int64()))}[kind]
    data = _parquet(pa.table({"label": [0, 1], "probs": column}))
    with pytest.raises(cc.InputError) as err:
        cc.load_predictions(data, source="n.parquet")
    text = str(err.value)
    assert "'probs' (" + kind in text and "numbers, booleans, text" in text and "unexpected" not in text


def test_empty_parquet_column_names_are_named_by_position():
    import pyarrow as pa

    table = pa.table([pa.array([1.0, 2.0]), pa.array([1.0, 2.0]), pa.array([1.0, 1.0]), pa.array([3.0, 4.0])],
                     names=["y", "mean", "std", ""])
    with pytest.raises(cc.InputError, match=r"position 4 of 4 have an empty name \(the first one after 'std'\)"):
        cc.load_predictions(_parquet(table), source="e.parquet")
    table = pa.table([pa.array([1.0, 2.0]), pa.array([1.0, 2.0]), pa.array([3.0, 4.0])], names=["y", "", " "])
    with pytest.raises(cc.InputError, match="position 2, 3 of 3 have an empty name"):
        cc.load_predictions(_parquet(table), source="e.parquet")


def _forged_npz(old: bytes, new: bytes) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, probs=np.full((10, 2), 0.5), labels=np.arange(10) % 2)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            member = zin.read(info)
            if info.filename == "probs.npy":
                member = member.replace(old, new)
            zout.writestr(info.filename, member)
    return out.getvalue()


@pytest.mark.parametrize("old, new", [(b"(10, 2)", b"(10000000000, 2)"), (b"<f8", b"<c16"), (b"(10, 2)", b"(3, 2) ")])
def test_forged_npy_headers_are_named_as_inconsistent(old, new):
    with pytest.raises(cc.InputError) as err:
        cc.load_predictions(_forged_npz(old, new), source="f.npz")
    text = str(err.value)
    assert "npz array 'probs' has a header declaring shape" in text
    assert "inconsistent with the file size" in text and "pickle" not in text


def test_a_two_megabyte_column_name_is_named_with_its_length():
    data = b"y,mean," + b"s" * 2_000_000 + b"\n1,2,3\n4,5,6\n"
    with pytest.raises(cc.InputError) as err:
        cc.load_predictions(data, source="h.csv")
    text = str(err.value)
    assert f"over the limit of {MAX_NAME_CHARS:,} characters" in text and "column 3's name" in text
    assert "at least" in text and "one column" not in text
    data = b"y,mean," + b"s" * 5000 + b"\n1,2,3\n4,5,6\n"
    with pytest.raises(cc.InputError, match=f"column 3's name .* is 5,000 characters long, over the limit of "
                                            f"{MAX_NAME_CHARS:,}"):
        cc.load_predictions(data, source="h.csv")
    data = gzip.compress(b"y,mean," + b"s" * 2_000_000 + b"\n1,2,3\n")
    with pytest.raises(cc.InputError, match="column 3's name"):
        cc.load_predictions(data, source="h.csv.gz")


def test_a_long_first_data_row_is_not_taken_for_a_long_header():
    """A header that ends normally followed by a cell over 1 MB: the sample of the first MB ends inside a data row,
    which is no reason to refuse the header."""
    data = b"y,mean,std,note\n1,2,3," + b"x" * 1_500_000 + b"\n4,5,6,a\n"
    assert cc.load_predictions(data, source="l.csv").n_rows == 2
