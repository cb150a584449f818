"""Small files cannot exhaust the server: what a file decodes or decompresses to is checked
against the limit *before* it is decoded, the dashboard gives the core its own upload limit (and says how to
raise it), and cached uploads are bounded in bytes.

The bombs of the issue (a 262 KB Parquet of 2e7 constant rows, an 8.7 MB Parquet of 1e8 rows × 20 columns, a
1.9 MB .csv.gz inflating to 4.3 GB) are built here at sizes that keep the test fast, with the limit lowered to
match: what matters is the ratio of declared / inflated size to the limit, and that nothing is decoded first.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zipfile

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import calib_core as cc
from calib_core.data import bytes as data_bytes

MB = 1 << 20


def constant_parquet(n_rows: int, n_columns: int) -> bytes:
    """``n_rows`` constant rows (mean, std, y, then extra constant columns): run-length encoding makes it tiny."""
    names = ["mean", "std", "y"] + [f"x{j}" for j in range(n_columns - 3)]
    table = pa.table({name: pa.array(np.full(n_rows, 1.0 if name == "std" else 0.0)) for name in names})
    buf = io.BytesIO()
    pq.write_table(table, buf, row_group_size=n_rows)
    return buf.getvalue()


@pytest.fixture
def no_parquet_decoding(monkeypatch):
    """Fail the test if any Parquet data page is decoded (the footer alone must decide)."""

    def refuse(*args, **kwargs):
        raise AssertionError("the Parquet data was decoded before the size check")

    monkeypatch.setattr(pq.ParquetFile, "read", refuse)
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", refuse)


@pytest.mark.parametrize(("n_rows", "n_columns"), [(400_000, 3), (200_000, 20)])
def test_parquet_bomb_is_refused_from_its_footer(n_rows, n_columns, no_parquet_decoding):
    data = constant_parquet(n_rows, n_columns)
    meta = pq.ParquetFile(pa.BufferReader(data)).metadata
    declared = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    limit = 1 * MB
    # the bomb passes the old checks: the file and its declared (encoded) size are far below the limit ...
    assert len(data) < limit / 10 and declared < limit / 10
    # ... while it decodes to rows x columns x 8 bytes, several times the limit
    assert n_rows * n_columns * 8 > 5 * limit
    with pytest.raises(cc.InputError) as err:
        cc.load_predictions(data, source="bomb.parquet", max_bytes=limit, limit_hint="ask for more")
    text = str(err.value)
    assert "bomb.parquet" in text and f"{n_rows:,} rows × {n_columns} columns" in text
    assert "more than the size limit of 1 MB" in text and "raise the limit: ask for more" in text


def test_parquet_within_the_limit_still_loads():
    data = constant_parquet(10_000, 3)
    assert data_bytes.parquet_decoded_bytes(pq.ParquetFile(pa.BufferReader(data)).metadata) == 10_000 * 3 * 8
    assert cc.load_predictions(data, max_bytes=10_000 * 3 * 8).n_rows == 10_000


def test_parquet_repeated_long_string_is_counted_and_held_once():
    """A long string repeated on every row: its dictionary page counts, and it is decoded once (a dictionary),
    not once per row (400 rows × 100 kB would be 40 MB as plain strings)."""
    n = 400
    frame = pd.DataFrame({"mean": np.zeros(n), "std": np.ones(n), "y": np.zeros(n), "group": ["g" * 100_000] * n})
    buf = io.BytesIO()
    frame.to_parquet(buf)
    data = buf.getvalue()
    assert len(data) < 200_000
    pset = cc.load_predictions(data, max_bytes=2 * MB)
    assert pset.n_rows == n and len({id(g) for g in pset.group}) == 1


def _csv_bytes(n_rows: int) -> bytes:
    return b"y,mean,std\n" + b"0.5,0.25,1\n" * n_rows


@pytest.mark.parametrize("kind", ["gzip", "bzip2", "xz", "zip"])
def test_compressed_csv_bomb_stops_at_the_limit(kind, monkeypatch):
    raw = _csv_bytes(300_000)  # 3.3 MB of text
    limit = 1 * MB
    if kind == "gzip":
        data = gzip.compress(raw)
    elif kind == "bzip2":
        data = bz2.compress(raw)
    elif kind == "xz":
        data = lzma.compress(raw)
    else:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("preds.csv", raw)
        data = buf.getvalue()
    assert len(data) < limit / 10
    with pytest.raises(cc.InputError) as err:
        cc.load_predictions(data, source=f"bomb.{kind}", max_bytes=limit, limit_hint="ask for more")
    text = str(err.value)
    assert "decompresses to more than the size limit of 1 MB" in text and "raise the limit: ask for more" in text
    # below the limit the same compressed table loads
    small = _csv_bytes(1000)
    packed = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}.get(kind)
    if packed is not None:
        assert cc.load_predictions(packed(small), max_bytes=limit).n_rows == 1000


def test_decompression_is_a_stream_bounded_by_the_limit(monkeypatch):
    """Decompression is a stream read in chunks (never inflated in full and then measured), stopped once past the
    limit.  (It used to be one read of limit + 1 bytes; text is now streamed to the parser in chunks of at most
    ``CHUNK_BYTES``, so the bound is on each chunk and on the total, not on one read.)"""
    from calib_core.data.text_stream import CHUNK_BYTES

    asked: list[int] = []
    given: list[int] = []
    original = gzip.GzipFile.read

    def read(self, size=-1):
        asked.append(size)
        out = original(self, size)
        given.append(len(out))
        return out

    monkeypatch.setattr(gzip.GzipFile, "read", read)
    with pytest.raises(cc.InputError, match="decompresses to more than"):
        cc.load_predictions(gzip.compress(_csv_bytes(300_000)), max_bytes=MB)
    assert asked and all(0 <= size <= CHUNK_BYTES for size in asked)
    assert sum(given) <= 3 * (MB + CHUNK_BYTES)  # opened three times at most (format, scan, parse), each stopped


# ------------------------------------------------------------------------------------------------- dashboard
@pytest.fixture
def small_upload_limit(monkeypatch):
    """The dashboard with ``server.maxUploadSize = 1`` (MB) and an empty upload cache."""
    from dashboard import state

    monkeypatch.setattr(state, "upload_limit_mb", lambda: 1)
    state.UPLOADS.clear()
    yield state
    state.UPLOADS.clear()


def test_dashboard_gives_the_core_its_upload_limit_and_says_how_to_raise_it(small_upload_limit):
    state = small_upload_limit
    bomb = gzip.compress(_csv_bytes(300_000))  # inflates to 3.3 MB: under the core's default, over the upload limit
    assert cc.load_predictions(bomb).n_rows == 300_000
    with pytest.raises(cc.InputError) as err:
        state.parse_upload(state.content_token(bomb), bomb, "bomb.csv", "", None, False)
    text = str(err.value)
    assert "more than the size limit of 1 MB" in text and "--server.maxUploadSize" in text and "now 1" in text
    assert "max_bytes" not in text  # the Python API's advice is not the dashboard user's
    with pytest.raises(cc.InputError, match="maxUploadSize"):
        state.upload_columns(state.content_token(bomb) + "x", bomb, "bomb.csv")
    parquet = constant_parquet(200_000, 3)
    with pytest.raises(cc.InputError, match="decode to about 4.58 MB in memory, more than the size limit of 1 MB"):
        state.parse_upload(state.content_token(parquet), parquet, "bomb.parquet", "", None, False)


def test_cached_uploads_are_bounded_in_bytes(small_upload_limit):
    state = small_upload_limit
    sets = []
    for seed in range(6):  # six different uploads of ≈ 0.3 MB each once parsed
        rng = np.random.default_rng(seed)
        frame = pd.DataFrame({"y": rng.normal(size=10_000), "mean": 0.0, "std": 1.0})
        data = frame.to_csv(index=False).encode()
        pset = state.parse_upload(state.content_token(data), data, f"f{seed}.csv", "", None, False)
        sets.append(pset)
        assert state.UPLOADS.total_bytes <= MB
    assert 1 <= len(state.UPLOADS) < 6
    # the most recent upload is a hit (the same object, no copy); the oldest was evicted
    data = pd.DataFrame({"y": np.random.default_rng(5).normal(size=10_000), "mean": 0.0, "std": 1.0}).to_csv(
        index=False).encode()
    assert state.parse_upload(state.content_token(data), data, "f5.csv", "", None, False) is sets[-1]
