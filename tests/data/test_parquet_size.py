"""calib_core.data.parquet_size: what a Parquet file decodes to, from its footer and dictionary page headers.

The hostile files are written by the tests (pyarrow, dictionary encoding): a 10 MB string referenced by 10⁶ rows in
a file of about 10 kB, and 2·10⁷ constant rows in one row group."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from calib_core.data import bytes as data_bytes
from calib_core.data import parquet_size as ps


def dictionary_bomb(path, *, rows=1_000_000, value_bytes=10_000_000):
    """y, mean, std and a text column whose dictionary holds one long value referenced by every row."""
    note = pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)), pa.array(["a" * value_bytes]))
    zeros = pa.array(np.zeros(rows))
    pq.write_table(pa.table({"y": zeros, "mean": zeros, "std": pa.array(np.ones(rows)), "note": note}), path,
                   compression="zstd", write_statistics=["y", "mean", "std"])


def test_a_dictionary_of_one_long_string_decodes_to_rows_times_its_length(tmp_path):
    path = tmp_path / "note.parquet"
    dictionary_bomb(path)
    assert path.stat().st_size < 40_000
    pf = pq.ParquetFile(path)
    (group,) = ps.row_group_sizes(pf.metadata, pf.schema, source=str(path))
    note = {c.name: c for c in group.columns}["note"]
    assert note.dictionary_values == 1 and 10_000_000 <= note.dictionary_bytes <= 10_000_010
    assert note.decoded >= 1_000_000 * 10_000_000  # 10 TB
    assert group.widest().name == "note" and group.bytes_per_row > 1e7
    # without the file, the footer alone counts the dictionary once (what a read that keeps dictionaries takes)
    assert ps.decoded_bytes(pf.metadata, pf.schema) < 1e8
    assert ps.decoded_bytes(pf.metadata, pf.schema, source=str(path)) == group.decoded


def test_many_distinct_values_use_the_mean_dictionary_value():
    rng = np.random.default_rng(0)
    words = np.array(["x" * int(k) for k in rng.integers(1, 40, 500)], dtype=object)
    codes = rng.integers(0, 500, 20_000)
    sink = io.BytesIO()
    pq.write_table(pa.table({"w": pa.array(words[codes])}), sink)
    meta = pq.ParquetFile(io.BytesIO(sink.getvalue())).metadata
    (column,) = ps.row_group_sizes(meta, source=io.BytesIO(sink.getvalue()))[0].columns
    distinct = np.unique(words[codes])
    mean = np.mean([len(w) for w in distinct])
    assert column.dictionary_values == distinct.size
    expected = 20_000 * 8 + 20_000 * mean
    assert abs(column.decoded - expected) < 0.01 * expected + 20_000  # + the data pages (codes)
    actual = sum(len(w) for w in words[codes])  # the true decoded text: within 15 % of the mean-based estimate
    assert abs((column.decoded - 8 * 20_000) - actual) < 0.15 * actual


def test_plain_columns_and_the_upload_bound_are_unchanged():
    sink = io.BytesIO()
    pq.write_table(pa.table({"y": np.zeros(1000), "k": np.arange(1000, dtype=np.int32),
                             "s": [f"row {i}" for i in range(1000)]}), sink, use_dictionary=False)
    pf = pq.ParquetFile(io.BytesIO(sink.getvalue()))
    u = pf.metadata.row_group(0).column(2).total_uncompressed_size
    assert data_bytes.parquet_decoded_bytes(pf.metadata, pf.schema) == 8000 + 8000 + 8000 + u
    assert ps.decoded_bytes(pf.metadata, pf.schema, source=io.BytesIO(sink.getvalue())) == 8000 + 8000 + 8000 + u


@pytest.mark.parametrize("junk", [b"", b"\x00" * 600, b"\xff" * 600, b"\x1c" * 600, bytes(range(256)) * 3])
def test_a_broken_page_header_gives_no_estimate_never_an_error(junk):
    assert ps.dictionary_page_header(io.BytesIO(junk), 0) is None


def test_the_row_bomb_declares_its_rows_in_one_row_group(tmp_path):
    n = 2_000_000
    path = tmp_path / "rows.parquet"
    zeros = pa.array(np.zeros(n))
    pq.write_table(pa.table({"y": zeros, "mean": zeros, "std": pa.array(np.ones(n))}), path, row_group_size=n,
                   compression="zstd")
    pf = pq.ParquetFile(path)
    sizes = ps.row_group_sizes(pf.metadata, pf.schema, source=str(path))
    assert len(sizes) == 1 and sizes[0].rows == n and sizes[0].decoded == 3 * 8 * n
    assert path.stat().st_size < 100_000
