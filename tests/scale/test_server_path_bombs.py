"""Parquet bombs and bad partitions on the server path: the Data page's in-process summary
(views.summary.summarize_data_set), ``calib_core.scale.distributed.summarize_parquet`` and the CLI's
``report --engine dask``.  Every hostile file is written here (pyarrow, dictionary encoding, os.symlink); each case
must answer within seconds, with a message naming the file, row group and column, or with a summary that counts
what it could not use."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import calib_core.scale.distributed as cd
import calib_core.scale.distributed_partitions as cp
from calib_core import cli
from calib_core.base.predictions import InputError
from views import data_dirs
from views import summary as sv

ROOT = Path(__file__).resolve().parents[2]


def regression_frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sigma = rng.lognormal(0.0, 0.4, n)
    mean = rng.normal(0.0, 1.0, n)
    return pd.DataFrame({"y": mean + sigma * rng.normal(size=n), "mean": mean, "std": sigma})


def row_bomb(path: Path, n: int) -> None:
    """n constant rows (y = mean = 0, std = 1) in one row group: a few hundred kB for 2·10⁷ rows."""
    zeros = pa.array(np.zeros(n))
    pq.write_table(pa.table({"y": zeros, "mean": zeros, "std": pa.array(np.ones(n))}), path, row_group_size=n,
                   compression="zstd")


def dictionary_bomb(path: Path, rows: int = 1_000_000, value_bytes: int = 10_000_000) -> None:
    """A text column whose dictionary holds one 10 MB string, referenced by every row (~10 kB on disk)."""
    note = pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)), pa.array(["a" * value_bytes]))
    zeros = pa.array(np.zeros(rows))
    pq.write_table(pa.table({"y": zeros, "mean": zeros, "std": pa.array(np.ones(rows)), "note": note}), path,
                   compression="zstd", write_statistics=["y", "mean", "std"])


def test_the_dictionary_bomb_is_refused_before_reading_naming_file_row_group_and_column(tmp_path):
    dictionary_bomb(tmp_path / "note.parquet")
    assert (tmp_path / "note.parquet").stat().st_size < 40_000
    t0 = time.perf_counter()
    with pytest.raises(InputError) as err:
        sv.summarize_data_set("note.parquet", data_dirs.allowed_dirs(str(tmp_path)))
    assert time.perf_counter() - t0 < 5
    message = str(err.value)
    assert "note.parquet" in message and "row group 0" in message and "'note'" in message, message
    assert "10 TB" in message and "1,000,000 rows" in message and "What to do" in message
    assert err.value.columns == ["note"]


def test_the_dictionary_bomb_through_the_cli_engine_dask(tmp_path, monkeypatch, capsys):
    dictionary_bomb(tmp_path / "note.parquet")
    monkeypatch.chdir(tmp_path)
    t0 = time.perf_counter()
    code = cli.main(["report", "note.parquet", "--engine", "dask", "--scheduler", cd.IN_PROCESS, "--out", "r.html"])
    assert time.perf_counter() - t0 < 10
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "row group 0" in err and "'note'" in err, err
    assert not (tmp_path / "r.html").exists()


def budget_for(monkeypatch, rows: int, n_columns: int = 3) -> None:
    """A partition budget that holds ``rows`` rows of a numeric table (small files then exercise the slices)."""
    monkeypatch.setattr(cp, "PARTITION_BUDGET_BYTES", rows * cp.BYTES_PER_CELL * n_columns)


def test_a_row_group_larger_than_a_partition_is_read_in_slices_with_the_same_summary(tmp_path, monkeypatch):
    budget_for(monkeypatch, 1500)
    frame = regression_frame(6000, 1)
    (tmp_path / "one").mkdir()
    (tmp_path / "many").mkdir()
    frame.to_parquet(tmp_path / "one" / "d.parquet", index=False, row_group_size=6000)  # one row group
    frame.to_parquet(tmp_path / "many" / "d.parquet", index=False, row_group_size=1500)  # four row groups
    sliced = cd.summarize_parquet(tmp_path / "one", scheduler=cd.IN_PROCESS, rows_per_partition=1500, n_bins=8)
    grouped = cd.summarize_parquet(tmp_path / "many", scheduler=cd.IN_PROCESS, rows_per_partition=1500, n_bins=8)
    assert [p.rows for p in sliced.partitions] == [(0, 1500), (1500, 3000), (3000, 4500), (4500, 6000)]
    assert [p.row_id for p in sliced.partitions] == [p.row_id for p in grouped.partitions] == [0, 1500, 3000, 4500]
    assert "row group 0 (a slice) (rows 1,501–3,000)" in sliced.partitions[1].name
    a, b = sliced.summary, grouped.summary
    assert a.spec == b.spec and a.n_rows == b.n_rows == 6000 and sorted(a.parts) == sorted(b.parts)
    for key, arrays in b.parts.items():
        for name, arr in arrays.items():
            got = a.parts[key][name]
            if arr.dtype == object:
                assert got.tolist() == arr.tolist(), (key, name)
            else:
                np.testing.assert_allclose(got, arr, rtol=1e-12, atol=1e-300, err_msg=f"{key} {name}")


def test_the_row_bomb_is_planned_in_slices_from_its_footer(tmp_path):
    row_bomb(tmp_path / "rows.parquet", 2_000_000)
    t0 = time.perf_counter()
    parts, _ = cp.plan_partitions(tmp_path / "rows.parquet")
    assert time.perf_counter() - t0 < 2
    cut = cp.auto_rows_per_partition(3)
    assert len(parts) == -(-2_000_000 // cut) and all(p.rows is not None and p.n_rows <= cut for p in parts)
    assert sum(p.n_rows for p in parts) == 2_000_000 and parts[-1].rows[1] == 2_000_000


@pytest.mark.parametrize("n, per", [(300_000, 100_000), pytest.param(2_000_000, 250_000, marks=pytest.mark.slow)])
def test_the_row_bomb_is_summarised_in_process_slice_by_slice(tmp_path, monkeypatch, n, per):
    """Rows in one row group (a scaled issue case), summarised slice by slice as the Data page does."""
    budget_for(monkeypatch, per)
    row_bomb(tmp_path / "rows.parquet", n)
    t0 = time.perf_counter()
    result = sv.summarize_data_set("rows.parquet", data_dirs.allowed_dirs(str(tmp_path)), rows_per_partition=per,
                                   n_bins=4)
    assert result.summary.n_rows == n and len(result.partitions) == n // per
    assert time.perf_counter() - t0 < 120


def _files(folder: Path, bad_position: int, n_files: int = 3) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n_files):
        frame = regression_frame(400, 10 + i)
        if i == bad_position:
            frame["std"] = -1.0  # no valid row in this file
        path = folder / f"part-{i}.parquet"
        frame.to_parquet(path, index=False)
        paths.append(path)
    return paths


@pytest.mark.parametrize("bad_position", [0, 1, 2])
def test_a_partition_with_no_valid_row_is_counted_wherever_it_is(tmp_path, bad_position):
    _files(tmp_path / "data", bad_position)
    result = sv.summarize_data_set("data/*.parquet", data_dirs.allowed_dirs(str(tmp_path)), n_bins=5)
    assert result.summary.n_rows == 800 and result.n_read == 1200 and result.n_dropped == 400
    note = [m for m in result.messages if "no valid row" in m]
    assert len(note) == 1, result.messages
    assert note[0].startswith(f"Partition {bad_position + 1} of 3 (part-{bad_position}.parquet row group 0")
    assert "std" in note[0] and "400" in note[0]
    assert "part-" in result.dropped_table().iloc[0]["rows"]


def test_the_order_of_the_files_does_not_change_the_counts(tmp_path):
    """The same files in two orders (the bad one first or last): the same rows summarised and dropped."""
    paths = _files(tmp_path / "data", 0)
    first = cd.summarize_parquet([str(p) for p in paths], scheduler=cd.IN_PROCESS, n_bins=5)
    last = cd.summarize_parquet([str(p) for p in paths[::-1]], scheduler=cd.IN_PROCESS, n_bins=5)
    assert first.summary.n_rows == last.summary.n_rows == 800
    assert first.n_dropped == last.n_dropped == 400
    assert {r: d["count"] for r, d in first.summary.dropped.items()} == \
        {r: d["count"] for r, d in last.summary.dropped.items()}


def test_a_data_set_without_any_valid_row_is_still_refused_with_the_readers_message(tmp_path):
    for i in range(2):
        frame = regression_frame(50, i)
        frame["std"] = -1.0
        frame.to_parquet(tmp_path / f"p{i}.parquet", index=False)
    with pytest.raises(InputError, match="std"):
        cd.summarize_parquet(tmp_path, scheduler=cd.IN_PROCESS)


def test_the_cli_refuses_a_glob_through_symlink_loops(tmp_path, monkeypatch, capsys):
    (tmp_path / "runs" / "a").mkdir(parents=True)
    regression_frame(50, 0).to_parquet(tmp_path / "runs" / "a" / "x.parquet", index=False)
    os.symlink("..", tmp_path / "runs" / "a" / "up")
    os.symlink(".", tmp_path / "runs" / "self")
    monkeypatch.chdir(tmp_path)
    t0 = time.perf_counter()
    code = cli.main(["report", "runs/**/*.parquet", "--engine", "dask", "--scheduler", cd.IN_PROCESS,
                     "--out", "r.html"])
    assert time.perf_counter() - t0 < 10
    err = capsys.readouterr().err
    assert code == 2 and "loop" in err and "Traceback" not in err, err


@pytest.mark.slow
def test_the_issue_row_bomb_in_a_separate_process_stays_within_its_memory(tmp_path):
    """The 262 kB file of 2·10⁷ rows in one row group, summarised in-process as the Data page does, in a child
    process whose address space is capped at 3.5 GB (the unsliced read took 2·10⁷ × 3 × ~230 B ≈ 14 GB; measured
    sliced: peak RSS 950 MB)."""
    row_bomb(tmp_path / "rows.parquet", 20_000_000)
    assert (tmp_path / "rows.parquet").stat().st_size < 400_000
    script = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (3584 << 20, 3584 << 20))
        sys.path.insert(0, {str(ROOT)!r})
        from views import data_dirs, summary as sv
        r = sv.summarize_data_set("rows.parquet", data_dirs.allowed_dirs({str(tmp_path)!r}), n_bins=4)
        print(r.summary.n_rows, len(r.partitions), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    n_rows, n_parts, peak_kb = map(int, proc.stdout.split())
    assert n_rows == 20_000_000 and n_parts == 24 and peak_kb < 2_000_000


@pytest.mark.slow
def test_the_bombs_on_a_local_cluster(tmp_path, monkeypatch):
    """The Dask path proper: a LocalCluster of one worker refuses the dictionary bomb from the client before any task
    is sent, and summarises a sliced row group."""
    (tmp_path / "bomb").mkdir()
    dictionary_bomb(tmp_path / "bomb" / "note.parquet")
    row_bomb(tmp_path / "rows.parquet", 200_000)
    budget_for(monkeypatch, 50_000)  # the plan (on the client) cuts the slices; the workers read them
    main = sys.modules["__main__"]
    import types

    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        with cd.open_client(n_workers=1, memory_limit="1GiB") as client:
            with pytest.raises(InputError, match="'note'"):
                cd.summarize_parquet(tmp_path / "bomb", scheduler=client)
            result = cd.summarize_parquet(tmp_path / "rows.parquet", scheduler=client, rows_per_partition=50_000,
                                          n_bins=4)
    finally:
        sys.modules["__main__"] = main
    assert result.summary.n_rows == 200_000 and len(result.partitions) == 4
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0


def test_small_row_groups_of_wide_rows_are_grouped_within_the_budget(tmp_path):
    """20 row groups of 1,000 rows, each row ~100 kB once its dictionary is expanded: partitions stop at the budget,
    not at the 869,565 rows of a numeric table."""
    dictionary_bomb(tmp_path / "wide.parquet", rows=1000, value_bytes=100_000)
    table = pq.read_table(tmp_path / "wide.parquet")
    pq.write_table(pa.concat_tables([table] * 20), tmp_path / "wide.parquet", row_group_size=1000,
                   write_statistics=["y", "mean", "std"])
    parts, _ = cp.plan_partitions(tmp_path / "wide.parquet")
    assert sum(p.n_rows for p in parts) == 20_000 and len(parts) >= 3
    assert max(p.n_rows for p in parts) <= cp.PARTITION_BUDGET_BYTES // 100_000 + 1000


def test_a_dictionary_of_many_short_values_and_one_long_one_every_row_uses_is_refused_when_read(tmp_path):
    """The footer's estimate (rows × the mean dictionary value) is ~100 bytes a row here; the read keeps text as
    dictionaries and sums the lengths of the values the rows use before any string is made: 200,000 × 10 MB."""
    rows = 200_000
    values = pa.array([f"v{i}" for i in range(100_000)] + ["a" * 10_000_000])
    note = pa.DictionaryArray.from_arrays(pa.array(np.full(rows, 100_000, dtype=np.int32)), values)
    zeros = pa.array(np.zeros(rows))
    pq.write_table(pa.table({"y": zeros, "mean": zeros, "std": pa.array(np.ones(rows)), "note": note}),
                   tmp_path / "mixed.parquet", compression="zstd", write_statistics=["y", "mean", "std"])
    parts, _ = cp.plan_partitions(tmp_path / "mixed.parquet")  # the footer cannot tell
    assert len(parts) == 1
    t0 = time.perf_counter()
    with pytest.raises(InputError, match="column 'note' decodes to") as err:
        sv.summarize_data_set("mixed.parquet", data_dirs.allowed_dirs(str(tmp_path)))
    assert time.perf_counter() - t0 < 10
    assert "mixed.parquet" in str(err.value) and err.value.columns == ["note"]
