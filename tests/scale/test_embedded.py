"""calib_core.scale.embedded: the in-process engine for Parquet data sets past memory, on Parquet files the tests
write — the merge tree of the serial run, summaries bit for bit those of the serial run and equal to the in-memory
summary and ``cc.diagnose`` (several files, row groups, dropped rows, groups, models, classification), failures
named, the window that bounds memory, slice summaries, the CLI's default engine and the dashboard's."""

from __future__ import annotations

import argparse
import os
import random
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
import calib_core.scale.distributed as cd
import calib_core.scale.distributed_cluster as ccl
from calib_core import cli
from calib_core.data.classification import parse_classification_frame
from calib_core.data.engine_option import resolve_engine
from calib_core.data.regression import parse_regression_frame
from calib_core.scale import embedded as em
from calib_core.scale.summary import report, spec_for, summarize


def _regression_frame(n: int, seed: int, models: tuple[str, ...] = ("m",)) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sigma = rng.lognormal(0.0, 0.4, n)
    mean = rng.normal(0.0, 1.0, n)
    frame = pd.DataFrame({"y": mean + sigma * rng.normal(size=n) * 1.2, "mean": mean, "std": sigma,
                          "group": rng.choice(["a", "b"], n)})
    if len(models) > 1:
        frame["model"] = rng.choice(list(models), n)
    return frame


def _bad_rows_frames(models: tuple[str, ...] = ("m",)) -> list[pd.DataFrame]:
    frames = [_regression_frame(n, 10 + i, models) for i, n in enumerate((1500, 1000, 1200))]
    frames[0].loc[[3, 700, 1499], "std"] = np.nan
    frames[1].loc[:, "y"] = np.nan  # a whole file of bad rows is counted, not a failure
    frames[1].loc[[5, 6], "std"] = -1.0
    frames[2].loc[[0, 1, 2, 3, 4, 5, 6], "std"] = 0.0
    frames[2].loc[1100, "mean"] = np.inf
    return frames


def _write(frames: list[pd.DataFrame], folder: Path, row_group_size: int = 700) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, f in enumerate(frames):
        path = folder / f"part-{i:02d}.parquet"
        f.to_parquet(path, index=False, row_group_size=row_group_size, write_page_checksum=True)
        paths.append(path)
    return paths


# --- the engine: the serial run's merge tree, on threads -------------------------------------------------------------


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_the_merge_tree_is_the_serial_runs_whatever_order_the_partitions_finish_in(threads):
    rng = random.Random(threads)

    def leaf(p):
        time.sleep(rng.random() * 0.001)  # partitions finish out of order
        return (p,)

    def combine(*values):  # not associative: the nesting shows the tree
        return ("merge", *values)

    for n in [1, 2, 7, 8, 9, 63, 64, 65, 200]:
        engine = em.EmbeddedEngine(threads)
        assert engine.run_tree(leaf, list(range(n)), combine, stage="t") == \
            ccl.run_tree(None, leaf, list(range(n)), combine, stage="t"), n
        assert engine.stats["leaves"] == n and engine.stats["max_in_flight"] <= engine.window


def test_the_window_bounds_the_partitions_held_and_threads_are_used():
    engine = em.EmbeddedEngine(3, window=5)
    running, most, names = [0], [0], set()
    lock = threading.Lock()

    def leaf(p):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            names.add(threading.current_thread().name)
        time.sleep(0.002)
        with lock:
            running[0] -= 1
        return p

    assert engine.run_tree(leaf, list(range(60)), lambda *v: sum(v), stage="w") == sum(range(60))
    assert most[0] <= 3 and len(names) >= 2 and all(n.startswith("calib-w") for n in names)
    assert engine.stats["max_in_flight"] <= 5 and engine.stats["max_waiting"] <= 5
    with pytest.raises(ValueError, match="at least 1"):
        em.EmbeddedEngine(0)
    assert 1 <= em.default_threads() <= em.MAX_DEFAULT_THREADS


class _Part:
    def __init__(self, i):
        self.index, self.name = i, f"file.parquet row group {i}"


def test_a_leaf_that_fails_once_is_run_again_and_one_that_fails_twice_is_named():
    calls: dict[int, int] = {}

    def leaf(p):
        calls[p.index] = calls.get(p.index, 0) + 1
        if p.index == 3 and calls[3] == 1:
            raise MemoryError("transient")
        if p.index in (5, 11):
            raise ValueError(f"bad page in {p.index}")
        return 1

    engine = em.EmbeddedEngine(2)
    with pytest.raises(ccl.PartitionError) as err:
        engine.run_tree(leaf, [_Part(i) for i in range(16)], lambda *v: sum(v), stage="f")
    assert [name for name, _ in err.value.failures] == ["file.parquet row group 5", "file.parquet row group 11"]
    assert "ValueError: bad page in 5" in str(err.value) and "failed twice" in str(err.value)
    assert calls[3] == 2 and calls[5] == 2 and all(calls[i] == 1 for i in (0, 1, 15))  # every partition was run
    assert engine.run_tree(lambda p: 1 if calls.setdefault(-1, 0) else 1, [_Part(0)], sum, stage="one") == 1


# --- the data set's summary ---------------------------------------------------------------------------------------


def _assert_equals_memory(result, frames, parse, **spec_options):
    whole = parse(pd.concat(frames, ignore_index=True), "all")
    spec = spec_for(whole, **spec_options)
    assert result.summary.spec == spec  # exact equal-count σ edges (or equal-mass edges) of the radix select
    memory = summarize(whole, spec=spec)
    assert result.summary.n_rows == memory.n_rows == whole.n_rows and sorted(result.summary.parts) == sorted(
        memory.parts)
    for key, arrays in memory.parts.items():
        for name, arr in arrays.items():
            got = result.summary.parts[key][name]
            if arr.dtype == object:  # exact sums: bit for bit
                assert got.tolist() == arr.tolist(), (key, name)
            else:
                np.testing.assert_allclose(got, arr, rtol=1e-12, atol=1e-300, err_msg=f"{key} {name}")
    assert result.summary.dropped == {r: {"count": int(v.size), "first": np.sort(v)[:10].tolist()}
                                      for r, v in whole.dropped.reasons.items()}
    assert result.n_dropped == whole.dropped.total
    a = report(result.summary, n_resamples=0, n_simulations=0)
    d = cc.diagnose(whole, n_resamples=0, n_simulations=0, **spec_options).metrics
    exact = [m for m, how in a.options["exactness"].items() if how == "exact"]
    joined = a.metrics.merge(d, on=["model", "group", "metric"], suffixes=("", "_mem"))
    joined = joined[joined["metric"].isin(exact)]
    assert len(joined) >= 10
    np.testing.assert_allclose(joined["value"], joined["value_mem"], rtol=1e-12, atol=1e-15)
    return whole


def test_the_embedded_summary_is_the_serial_one_bit_for_bit_and_the_in_memory_one(tmp_path):
    frames = _bad_rows_frames(models=("m1", "m2"))
    _write(frames, tmp_path)
    serial = cd.summarize_parquet(tmp_path, scheduler=cd.IN_PROCESS, rows_per_partition=400, n_bins=10)
    result = em.summarize_parquet_embedded(tmp_path, threads=3, rows_per_partition=400, n_bins=10)
    assert len(result.partitions) == len(serial.partitions) == 7 and result.passes == serial.passes
    _assert_same_summary(result.summary, serial.summary)
    assert result.cluster == "the embedded engine (this process, 3 threads)"
    _assert_equals_memory(result, frames, parse_regression_frame, n_bins=10)
    table = result.dropped_table().set_index("reason")
    assert table.loc["mean: infinite value", "rows"] == "part-02.parquet:1101"
    assert table.loc["std: missing value", "rows"] == "part-00.parquet:4, part-00.parquet:701, part-00.parquet:1500"
    assert table.loc["y: missing value", "count"] == 1000
    assert any("has no valid row" in m and "part-01.parquet" in m for m in result.messages)


def test_tied_sigmas_and_another_partitioning_give_the_same_exact_sums(tmp_path):
    frames = [_regression_frame(n, 20 + i) for i, n in enumerate((900, 1100))]
    for f in frames:
        f["std"] = np.round(f["std"], 1)  # ties across partitions and at the edges
    _write(frames, tmp_path, row_group_size=300)
    a = em.summarize_parquet_embedded(tmp_path, threads=2, rows_per_partition=300, n_bins=8)
    b = em.summarize_parquet_embedded(tmp_path, threads=1, rows_per_partition=1000, n_bins=8)
    assert a.summary.spec == b.summary.spec
    for key, arrays in a.summary.parts.items():
        for name, arr in arrays.items():
            if arr.dtype == object or arr.dtype.kind in "iu":
                assert arr.tolist() == b.summary.parts[key][name].tolist(), (key, name)
    _assert_equals_memory(a, frames, parse_regression_frame, n_bins=8)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_classification_with_models_is_summarised_as_in_memory(tmp_path, strategy):
    rng = np.random.default_rng(5)
    frames = []
    for n in (900, 1300):
        logits = rng.normal(size=(n, 4)) * 2
        p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        frame = pd.DataFrame({f"prob_{k}": p[:, k] for k in range(4)})
        frame["label"] = (p.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1).clip(0, 3)
        frame["model"] = rng.choice(["m1", "m2"], n)
        frames.append(frame)
    frames[1].loc[[3, 4], "prob_2"] = np.nan
    _write(frames, tmp_path, row_group_size=250)
    result = em.summarize_parquet_embedded(tmp_path, threads=2, rows_per_partition=500, n_bins=12, strategy=strategy)
    serial = cd.summarize_parquet(tmp_path, scheduler=cd.IN_PROCESS, rows_per_partition=500, n_bins=12,
                                  strategy=strategy)
    _assert_same_summary(result.summary, serial.summary)
    _assert_equals_memory(result, frames, lambda f, s: parse_classification_frame(f, s), n_bins=12,
                          strategy=strategy)
    assert result.dropped_table()["rows"].tolist() == ["part-01.parquet:4, part-01.parquet:5"]


def test_a_corrupt_page_names_its_file_and_row_group_and_gives_no_result(tmp_path):
    frames = [_regression_frame(1000, i) for i in range(3)]
    paths = _write(frames, tmp_path)
    data = bytearray(paths[2].read_bytes())
    mid = len(data) // 3
    data[mid : mid + 400] = os.urandom(400)  # a data page of the third file is garbage (its checksum fails)
    paths[2].write_bytes(bytes(data))
    with pytest.raises(cd.PartitionError) as err:
        em.summarize_parquet_embedded(tmp_path, threads=2, rows_per_partition=700)
    names = [name for name, _ in err.value.failures]
    assert names and all(name.startswith("part-02.parquet row group") and "(rows " in name for name in names)
    assert "failed twice" in str(err.value)


def test_memory_is_a_window_of_partitions_and_the_tree_levels_not_the_data_set():
    """Leaves of 256 kB each: the engine's peak (tracemalloc) is at most the window plus 7 waiting values per level
    of the merge tree (log₈ N levels) — 256 leaves need under 30 of them where the serial run holds all 256."""
    leaf_mb = 1 << 18

    def leaf(p):
        return np.full(leaf_mb // 8, float(p))

    def combine(*values):
        out = values[0].copy()
        for v in values[1:]:
            out += v
        return out

    def peak(n, engine):
        tracemalloc.start()
        try:
            out = engine.run_tree(leaf, list(range(n)), combine, stage="m")
            assert out[0] == sum(range(n))
            return tracemalloc.get_traced_memory()[1] / leaf_mb
        finally:
            tracemalloc.stop()

    engine = em.EmbeddedEngine(2)
    for n in (16, 256):
        levels = int(np.ceil(np.log(n) / np.log(8)))
        assert peak(n, engine) <= engine.window + 7 * levels + 3, n
    assert engine.stats["max_in_flight"] <= engine.window == 4


def _assert_same_summary(a, b):
    """Two summaries equal bit for bit (spec, rows, drops, every array; the zip's time stamps aside)."""
    assert a.spec == b.spec and a.n_rows == b.n_rows and a.dropped == b.dropped and a.models == b.models
    assert sorted(a.parts) == sorted(b.parts)
    for key, arrays in a.parts.items():
        assert sorted(arrays) == sorted(b.parts[key])
        for name, arr in arrays.items():
            other = b.parts[key][name]
            if arr.dtype == object:
                assert arr.tolist() == other.tolist(), (key, name)
            else:
                assert arr.dtype == other.dtype and np.array_equal(arr.view(np.uint8), other.view(np.uint8)), (
                    key, name)


def test_slice_summaries_are_the_serial_ones(tmp_path):
    from calib_core.scale.slices_ranking import summary_ranking

    frames = [_regression_frame(n, 30 + i) for i, n in enumerate((800, 1200))]
    for f in frames:
        f["region"] = np.where(f["mean"] > 0, "north", "south")
        f["x"] = f["mean"] * 2.0
    _write(frames, tmp_path, row_group_size=300)
    serial = cd.slice_summary_parquet(tmp_path, scheduler=cd.IN_PROCESS, rows_per_partition=300)
    result = em.slice_summary_parquet_embedded(tmp_path, threads=2, rows_per_partition=300)
    assert result.summary.n_rows == serial.summary.n_rows == 2000
    pd.testing.assert_frame_equal(summary_ranking(result.summary), summary_ranking(serial.summary))
    assert result.cluster.startswith("the embedded engine")


# --- the CLI's default engine --------------------------------------------------------------------------------------


def _ns(file, **kw):
    base = {"engine": None, "scheduler": None, "truth": None, "output_type": None, "threads": None}
    return argparse.Namespace(file=[file], **{**base, **kw})


def test_the_engine_of_a_command_line(tmp_path):
    _write([_regression_frame(50, 0)], tmp_path / "data")
    hub = tmp_path / "hub"
    hub.mkdir()
    pd.DataFrame({"output_type": ["quantile"], "output_type_id": [0.5], "value": [1.0]}).to_parquet(
        hub / "2024-01-06-team-model.parquet")
    assert resolve_engine(_ns(str(tmp_path / "data" / "*.parquet"))) == "embedded"
    assert resolve_engine(_ns(str(tmp_path / "data"))) == "embedded"
    assert resolve_engine(_ns(str(tmp_path / "data" / "part-00.parquet"))) == "memory"
    assert resolve_engine(_ns(str(hub))) == "memory"  # a hub's model folder stays a hub
    assert resolve_engine(_ns(str(tmp_path / "data"), truth="t.csv")) == "memory"
    assert resolve_engine(_ns(str(tmp_path / "data"), scheduler="tcp://h:1")) == "dask"
    assert resolve_engine(_ns(str(tmp_path / "data"), engine="dask")) == "dask"
    with pytest.raises(ValueError, match="--scheduler names a Dask cluster"):
        resolve_engine(_ns(str(tmp_path / "data"), engine="embedded", scheduler="tcp://h:1"))
    with pytest.raises(ValueError, match="--threads must be at least 1"):
        resolve_engine(_ns(str(tmp_path / "data"), threads=0))


def test_cli_report_of_a_glob_uses_the_embedded_engine_by_default(tmp_path, monkeypatch, capsys):
    frames = _bad_rows_frames()
    _write(frames, tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    fast = ["--resamples", "0", "--simulations", "0", "--n-bins", "8"]
    code = cli.main(["report", "data/*.parquet", "--out", "r.html", "--save-summary", "run.summary",
                     "--rows-per-partition", "600", "--threads", "2", *fast])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "regression, 2,689 rows, 1,011 dropped" in out.out
    assert "Summarised by the embedded engine (this process, 2 threads)" in out.out
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "part-01.parquet:1" in html and "y: missing value" in html
    serial = cd.summarize_parquet("data/*.parquet", scheduler=cd.IN_PROCESS, rows_per_partition=600, n_bins=8)
    from calib_core.scale.summary import Summary

    _assert_same_summary(Summary.from_bytes((tmp_path / "run.summary").read_bytes()), serial.summary)
    assert cli.main(["report", "data", "--out", "d.html", *fast]) == 0  # a directory too
    assert "embedded engine" in capsys.readouterr().out
    # a glob read in memory is refused with the engine that reads it; --scheduler is the Dask engine's
    assert cli.main(["report", "data/*.parquet", "--engine", "memory", "--out", "m.html"]) == 2
    assert "--engine embedded" in capsys.readouterr().err
    assert cli.main(["report", "data/*.parquet", "--engine", "embedded", "--scheduler", "tcp://h:1",
                     "--out", "m.html"]) == 2
    assert "--scheduler names a Dask cluster" in capsys.readouterr().err


def test_cli_names_a_corrupt_partition_with_exit_code_3(tmp_path, monkeypatch, capsys):
    paths = _write([_regression_frame(1000, i) for i in range(2)], tmp_path / "data")
    data = bytearray(paths[1].read_bytes())
    data[len(data) // 3 : len(data) // 3 + 400] = os.urandom(400)
    paths[1].write_bytes(bytes(data))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["report", "data", "--out", "r.html", "--rows-per-partition", "700"]) == 3
    err = capsys.readouterr().err
    assert "part-01.parquet row group" in err and "failed twice" in err and not (tmp_path / "r.html").exists()


# --- the dashboard's engine ------------------------------------------------------------------------------------------


def test_the_dashboards_engine_is_embedded_unless_a_cluster_is_configured(monkeypatch):
    from dashboard import summary as dsum

    monkeypatch.delenv(dsum.ENGINE_VAR, raising=False)
    monkeypatch.setattr(dsum, "_secret", lambda key: None)
    scheduler, where = dsum.engine()
    assert isinstance(scheduler, em.EmbeddedEngine) and "embedded engine in this server process" in where
    monkeypatch.setenv(dsum.ENGINE_VAR, "local")
    assert dsum.engine()[0] is None
    monkeypatch.setenv(dsum.ENGINE_VAR, "tcp://10.0.0.5:8786")
    assert dsum.engine()[0] == "tcp://10.0.0.5:8786"
