"""calib_core.scale.distributed on a real ``distributed.LocalCluster`` with 2 worker processes, over Parquet files
the tests
write: partition planning and schema checks, exact order statistics, dropped rows counted over partitions, failed
partitions named, a worker that dies retried.  (Skipped when the optional ``dask`` extra is not installed.)"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

import cloudpickle  # noqa: E402 - dask's dependency, after the skip

import calib_core.scale.distributed as cd
import calib_core.scale.distributed_cluster as ccl
import calib_core.scale.distributed_partitions as cp
import calib_core.scale.distributed_quantiles as cq
import calib_core.scale.distributed_reading as crd
from calib_core.base.predictions import InputError
from calib_core.data.regression import parse_regression_frame

cloudpickle.register_pickle_by_value(__import__(__name__))  # the workers need not import this test module

pytestmark = pytest.mark.slow  # a LocalCluster start is ~5 s on a loaded 2-core machine


@pytest.fixture(scope="module")
def client():
    # Worker processes are started with multiprocessing's "spawn", which re-runs the parent's ``__main__`` file.
    # In a full test run an AppTest may have left app.py as ``__main__`` (the workers would then run the app and
    # die): give the cluster's lifetime (restarts included) a bare ``__main__``, as ``python -m calib_core`` has.
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        with cd.open_client(n_workers=2, memory_limit="1GiB") as c:
            c.wait_for_workers(2, timeout=60)
            yield c
    finally:
        sys.modules["__main__"] = main


def _regression_frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sigma = rng.lognormal(0.0, 0.4, n)
    mean = rng.normal(0.0, 1.0, n)
    return pd.DataFrame({"y": mean + sigma * rng.normal(size=n) * 1.2, "mean": mean, "std": sigma,
                         "group": rng.choice(["a", "b"], n)})


def _write(frames: list[pd.DataFrame], folder: Path, row_group_size: int = 700) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, f in enumerate(frames):
        path = folder / f"part-{i:02d}.parquet"
        f.to_parquet(path, index=False, row_group_size=row_group_size, write_page_checksum=True)
        paths.append(path)
    return paths


def test_partitions_follow_row_groups_and_global_row_ids(tmp_path):
    frames = [_regression_frame(n, i) for i, n in enumerate((1000, 2500, 10))]
    _write(frames, tmp_path)
    parts, files = cp.plan_partitions(str(tmp_path / "*.parquet"), rows_per_partition=1200)
    assert [Path(f).name for f in files] == ["part-00.parquet", "part-01.parquet", "part-02.parquet"]
    assert sum(p.n_rows for p in parts) == 3510
    assert [p.row_id for p in parts] == list(np.cumsum([0] + [p.n_rows for p in parts[:-1]]))
    # row groups of 700: file 0 → groups 0–1 (1000 rows); file 1 → 0–1 (1400), 2–3 (1100); file 2 → 0 (10)
    assert [(Path(p.path).name, p.row_groups, p.file_row, p.n_rows) for p in parts] == [
        ("part-00.parquet", (0, 1), 0, 1000), ("part-01.parquet", (0, 1), 0, 1400),
        ("part-01.parquet", (2, 3), 1400, 1100), ("part-02.parquet", (0,), 0, 10)]
    assert parts[2].name == "part-01.parquet row groups 2–3 (rows 1,401–2,500)"
    locate = crd.locate_row(parts)
    assert locate(1) == "part-00.parquet:1" and locate(1000) == "part-00.parquet:1000"
    assert locate(1001) == "part-01.parquet:1" and locate(2401) == "part-01.parquet:1401"
    assert locate(3510) == "part-02.parquet:10"


def test_a_glob_that_matches_nothing_names_the_pattern(tmp_path):
    with pytest.raises(InputError, match=r"nothing\*\.parquet: matches no file"):
        cp.plan_partitions(str(tmp_path / "nothing*.parquet"))


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda f: f.drop(columns="std"), "column 'std' is in part-00.parquet but not in part-02.parquet"),
        (lambda f: f.assign(std=f["std"].astype(str)), "column 'std' is double in part-00.parquet but "
                                                       "large_string in part-02.parquet"),
        (lambda f: f.assign(extra=1.0), "column 'extra' is in part-02.parquet but not in part-00.parquet"),
    ],
)
def test_files_whose_schemas_disagree_are_named_with_the_column(tmp_path, change, words):
    frames = [_regression_frame(100, i) for i in range(3)]
    frames[2] = change(frames[2])
    _write(frames, tmp_path)
    with pytest.raises(InputError) as err:
        cp.plan_partitions(str(tmp_path / "*.parquet"))
    assert words in str(err.value)
    assert "What to do" in str(err.value)


def test_integer_and_float_columns_are_the_same_kind(tmp_path):
    frames = [_regression_frame(100, i) for i in range(2)]
    frames[1]["y"] = np.round(frames[1]["y"] * 100).astype(np.int64)
    _write(frames, tmp_path)
    parts, _ = cp.plan_partitions(tmp_path)
    assert sum(p.n_rows for p in parts) == 200


def test_order_statistics_are_exact_on_the_cluster(client, tmp_path):
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.lognormal(size=4000), np.full(500, 1.25), np.round(rng.normal(size=1500), 2)])
    rng.shuffle(values)
    frames = [pd.DataFrame({"v": values[a:b]}) for a, b in ((0, 2500), (2500, 2600), (2600, 6000))]
    _write(frames, tmp_path, row_group_size=900)
    parts, _ = cp.plan_partitions(tmp_path, rows_per_partition=1000)
    ids = np.arange(1, values.size + 1)

    def load(part):
        v, i = _read_v(part), ids[part.row_id : part.row_id + part.n_rows]
        return {"all": (v, i), "even": (v[i % 2 == 0], i[i % 2 == 0])}

    ranks = lambda s, n: [0, 1, n // 7, n // 2, n - 2, n - 1]
    for limit in (0, 10**9):  # counting passes down to the last bit of (value, id), and gathering at once
        totals, stats, passes = cq.order_statistics(client, parts, load, ranks, gather_limit=limit)
        assert passes == (6 if limit == 0 else 2)  # 24 + 20 + 20 value bits, 24 + 20 + 20 id bits
        for subset, arr, arr_ids in (("all", values, ids), ("even", values[1::2], ids[1::2])):
            assert totals[subset] == arr.size
            order = np.lexsort((arr_ids, arr))  # ties (1.25 ×500, rounded normals) by row id
            assert stats[subset] == {r: (arr[order][r], arr_ids[order][r]) for r in ranks(subset, arr.size)}


def _read_v(part):
    import pyarrow.parquet as pq

    return pq.ParquetFile(part.path).read_row_groups(list(part.row_groups))["v"].to_numpy()


def _bad_rows_frames():
    frames = [_regression_frame(n, 10 + i) for i, n in enumerate((1500, 1000, 1200))]
    frames[0].loc[[3, 700, 1499], "std"] = np.nan
    frames[1].loc[:, "y"] = np.nan  # a whole partition of bad rows is counted, not a failure
    frames[1].loc[[5, 6], "std"] = -1.0
    frames[2].loc[[0, 1, 2, 3, 4, 5, 6], "std"] = 0.0
    frames[2].loc[1100, "mean"] = np.inf
    return frames


def test_bad_rows_are_counted_per_reason_over_partitions(client, tmp_path):
    frames = _bad_rows_frames()
    _write(frames, tmp_path)
    parts, files = cp.plan_partitions(tmp_path, rows_per_partition=800)
    options, _ = crd.read_head(files, task=None, columns=None, renormalize=False)
    leaf = lambda part: crd.DropTally.of(crd.read_partition(part, options), part.row_id)
    tally = ccl.run_tree(client, leaf, parts, lambda *t: _merge_all(t), stage="drops")
    whole = parse_regression_frame(pd.concat(frames, ignore_index=True), "all")
    assert tally.n_read == 3700 and tally.n_dropped == whole.dropped.total == 3700 - whole.n_rows
    assert tally.counts == {r: int(v.size) for r, v in whole.dropped.reasons.items()}
    assert {r: v.tolist() for r, v in tally.first.items()} == {
        r: np.sort(v)[: crd.FIRST_ROW_IDS].tolist() for r, v in whole.dropped.reasons.items()}
    table = tally.table(crd.locate_row(parts))
    row = table.set_index("reason").loc["std: missing value"]
    assert row["count"] == 3 and row["rows"] == "part-00.parquet:4, part-00.parquet:701, part-00.parquet:1500"
    assert table.set_index("reason").loc["std: σ = 0", "rows"].startswith("part-02.parquet:1, part-02.parquet:2")
    assert table.set_index("reason").loc["y: missing value", "count"] == 1000


def _merge_all(tallies):
    out = tallies[0]
    for t in tallies[1:]:
        out = out.merge(t)
    return out


def test_drop_tally_merge_is_associative_and_commutative():
    rng = np.random.default_rng(0)
    tallies = []
    for i in range(4):
        t = crd.DropTally(n_read=100, n_dropped=int(rng.integers(0, 9)))
        for reason in rng.choice(["a", "b", "c"], size=2, replace=False):
            t.counts[str(reason)] = int(rng.integers(1, 50))
            t.first[str(reason)] = np.sort(rng.choice(1000, 5, replace=False)) + 1000 * i
        tallies.append(t)
    ab_c = tallies[0].merge(tallies[1]).merge(tallies[2].merge(tallies[3]))
    c_ba = tallies[3].merge(tallies[2]).merge(tallies[1]).merge(tallies[0])
    assert ab_c.counts == c_ba.counts and ab_c.n_dropped == c_ba.n_dropped and ab_c.n_read == 400
    assert {k: v.tolist() for k, v in ab_c.first.items()} == {k: v.tolist() for k, v in c_ba.first.items()}


def test_a_partition_that_fails_twice_is_reported_by_name(client, tmp_path):
    frames = [_regression_frame(1000, i) for i in range(3)]
    paths = _write(frames, tmp_path)
    data = bytearray(paths[1].read_bytes())
    mid = len(data) // 3
    data[mid : mid + 400] = os.urandom(400)  # a data page of the second file is garbage (its checksum fails)
    paths[1].write_bytes(bytes(data))
    parts, files = cp.plan_partitions(tmp_path, rows_per_partition=700)
    options, _ = crd.read_head(files, task=None, columns=None, renormalize=False)
    leaf = lambda part: crd.DropTally.of(crd.read_partition(part, options), part.row_id)
    with pytest.raises(cd.PartitionError) as err:
        ccl.run_tree(client, leaf, parts, lambda *t: _merge_all(t), stage="corrupt")
    names = [name for name, _ in err.value.failures]
    assert names and all(name.startswith("part-01.parquet row group") for name in names)
    assert "failed twice" in str(err.value) and "part-01.parquet row group" in str(err.value)


def test_summarize_parquet_names_the_corrupt_partition_and_gives_no_result(client, tmp_path):
    """End to end: a corrupt data page fails its partition in the first pass over the data (the σ edges); the
    error names the file, row groups and rows, and no summary is returned (never a result without them)."""
    frames = [_regression_frame(1000, i) for i in range(3)]
    paths = _write(frames, tmp_path)
    data = bytearray(paths[2].read_bytes())
    mid = len(data) // 3
    data[mid : mid + 400] = os.urandom(400)
    paths[2].write_bytes(bytes(data))
    with pytest.raises(cd.PartitionError) as err:
        cd.summarize_parquet(tmp_path, scheduler=client, rows_per_partition=700)
    names = [name for name, _ in err.value.failures]
    assert names and all(name.startswith("part-02.parquet row group") and "(rows " in name for name in names)
    assert "failed twice" in str(err.value)


def _die_once(part, marker_dir):
    """Kill the worker process the first time partition 2 runs (the marker file says it already died once)."""
    marker = Path(marker_dir) / f"died-{part.index}"
    if part.index == 2 and not marker.exists():
        marker.write_text("x")
        os._exit(1)
    return part.n_rows


def _die_always(part):
    if part.index == 1:
        os._exit(1)
    return part.n_rows


def test_a_worker_that_dies_is_retried_and_one_that_dies_twice_is_named(client, tmp_path):
    frames = [_regression_frame(500, i) for i in range(4)]
    _write(frames, tmp_path / "data")
    parts, _ = cp.plan_partitions(tmp_path / "data", rows_per_partition=500)
    total = ccl.run_tree(client, lambda p: _die_once(p, str(tmp_path)), parts, lambda *n: sum(n), stage="die-once")
    assert total == 2000 and (tmp_path / "died-2").exists()
    client.wait_for_workers(1, timeout=180)
    with pytest.raises(cd.PartitionError) as err:
        ccl.run_tree(client, _die_always, parts, lambda *n: sum(n), stage="die-always")
    assert [name for name, _ in err.value.failures] == [parts[1].name]
    assert "died twice" in str(err.value)


# --- the data set's summary and the CLI --------------------------------------------------------------------------


def _compare_with_memory(result, frames, parse, against_diagnose=True, **spec_options):
    """The cluster's summary equals the summary of all rows in memory; its report equals that summary's report and,
    for every metric the summary gives exactly, cc.diagnose's value (relative 1e-12)."""
    import calib_core as cc
    from calib_core.scale.summary import report, spec_for, summarize

    whole = parse(pd.concat(frames, ignore_index=True), "all")
    spec = spec_for(whole, **spec_options)
    assert result.summary.spec == spec  # the σ-bin edges of the radix select are the in-memory ones
    memory = summarize(whole, spec=spec)
    assert result.summary.n_rows == memory.n_rows == whole.n_rows
    assert sorted(result.summary.parts) == sorted(memory.parts)
    for key, arrays in memory.parts.items():
        for name, arr in arrays.items():
            got = result.summary.parts[key][name]
            if arr.dtype == object:  # exact sums: integers, equal bit for bit whatever the partitions
                assert got.shape == arr.shape and got.tolist() == arr.tolist(), (key, name)
            else:
                np.testing.assert_allclose(got, arr, rtol=1e-12, atol=1e-300, err_msg=f"{key} {name}")
    a = report(result.summary, n_resamples=0, n_simulations=0)
    b = report(memory, n_resamples=0, n_simulations=0)
    pd.testing.assert_frame_equal(a.metrics, b.metrics, rtol=1e-12)
    if not against_diagnose:
        return whole
    d = cc.diagnose(whole, n_resamples=0, n_simulations=0, n_bins=spec_options["n_bins"]).metrics
    exact = [m for m, how in a.options["exactness"].items() if how == "exact"]
    joined = a.metrics.merge(d, on=["model", "group", "metric"], suffixes=("", "_mem"))
    joined = joined[joined["metric"].isin(exact)]
    assert len(joined) >= 10
    np.testing.assert_allclose(joined["value"], joined["value_mem"], rtol=1e-12, atol=1e-15)
    return whole


def test_summarize_parquet_on_the_cluster_equals_the_in_memory_summary(client, tmp_path):
    frames = _bad_rows_frames()
    _write(frames, tmp_path)
    result = cd.summarize_parquet(tmp_path, scheduler=client, rows_per_partition=800, n_bins=10)
    assert len(result.partitions) == 4 and result.n_read == 3700
    whole = _compare_with_memory(result, frames, parse_regression_frame, n_bins=10)
    assert result.n_dropped == whole.dropped.total
    assert result.summary.dropped == {
        r: {"count": int(v.size), "first": np.sort(v)[: crd.FIRST_ROW_IDS].tolist()}
        for r, v in whole.dropped.reasons.items()}
    table = result.dropped_table().set_index("reason")
    assert table.loc["mean: infinite value", "rows"] == "part-02.parquet:1101"


def test_tied_sigmas_give_the_in_memory_sigma_bins(client, tmp_path):
    frames = _bad_rows_frames()
    for f in frames:
        f["std"] = np.round(f["std"], 1)  # ties in σ, across partitions and at the σ-bin edges
    _write(frames, tmp_path)
    result = cd.summarize_parquet(tmp_path, scheduler=client, rows_per_partition=500, n_bins=10)
    _compare_with_memory(result, frames, parse_regression_frame, n_bins=10)


def _ensemble_frame(n: int, seed: int, m: int = 8) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    mu = rng.normal(0.0, 1.0, n)
    sd = rng.lognormal(0.0, 0.3, n)
    members = mu[:, None] + sd[:, None] * rng.standard_normal((n, m))
    members[:5] = members[:5, :1]  # degenerate rows (all members equal): their kernel needs the global floor
    frame = pd.DataFrame(members, columns=[f"member_{j}" for j in range(m)])
    frame.insert(0, "y", mu + 1.2 * sd * rng.standard_normal(n))
    frame["group"] = rng.choice(["a", "b"], n)
    return frame


def test_ensembles_are_summarised_on_the_cluster_as_in_memory(client, tmp_path):
    """Ensembles on Dask: the rank PIT is row-local (its randomisation hashed from the row id) and the kernel
    floor of the NLL (1% of the median positive bandwidth over all rows) comes from the same radix select as the
    σ edges; the summary equals the in-memory one bit for bit and its exact metrics equal cc.diagnose's."""
    from calib_core.scale.regression import silverman_bandwidths

    frames = [_ensemble_frame(n, 40 + i) for i, n in enumerate((900, 700, 1100))]
    frames[1].loc[[3, 4], "member_2"] = np.nan  # dropped rows, counted
    _write(frames, tmp_path)
    result = cd.summarize_parquet(tmp_path, scheduler=client, rows_per_partition=600, n_bins=8)
    assert result.summary.spec.layout == "sample" and len(result.partitions) == 5  # row groups of 700
    whole = parse_regression_frame(pd.concat(frames, ignore_index=True), "all")
    h = silverman_bandwidths(whole.dist.samples)
    assert result.summary.spec.kde_floor == 0.01 * float(np.median(h[h > 0]))
    assert result.passes == 3  # σ edges and the kernel floor in the same two passes, then the summaries
    _compare_with_memory(result, frames, parse_regression_frame, against_diagnose=False, n_bins=8)
    assert sum(d["count"] for d in result.summary.dropped.values()) == 2
    # against cc.diagnose: every metric that does not depend on the PIT's randomisation V (hashed from the row id
    # here, drawn in row order in memory) nor, per group, on the kernel floor (in memory: the subset's own median)
    import calib_core as cc
    from calib_core.base.predictions import ALL
    from calib_core.scale.summary import report

    a = report(result.summary, n_resamples=0, n_simulations=0).metrics
    d = cc.diagnose(whole, n_resamples=0, n_simulations=0, n_bins=8).metrics
    joined = a.merge(d, on=["model", "group", "metric"], suffixes=("", "_mem"))
    row_local = joined["metric"].isin(["rmse", "mae", "crps", "sharpness", "cv", "ence", "z_mean", "z_std",
                                       "z_skewness", "z_excess_kurtosis"]) | \
        joined["metric"].str.startswith(("coverage_", "width_", "interval_score_")) | \
        ((joined["metric"] == "nll") & (joined["group"] == ALL))
    assert row_local.sum() >= 40
    np.testing.assert_allclose(joined.loc[row_local, "value"], joined.loc[row_local, "value_mem"], rtol=1e-12)


def test_summarize_parquet_classification(client, tmp_path):
    from calib_core.data.classification import parse_classification_frame

    rng = np.random.default_rng(5)
    frames = []
    for n in (900, 1300):
        logits = rng.normal(size=(n, 4)) * 2
        p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        label = np.array([rng.choice(4, p=row) for row in p])
        frame = pd.DataFrame({f"prob_{k}": p[:, k] for k in range(4)})
        frame["label"] = label
        frame["model"] = rng.choice(["m1", "m2"], n)
        frames.append(frame)
    frames[1].loc[[3, 4], "prob_2"] = np.nan
    _write(frames, tmp_path)
    result = cd.summarize_parquet(tmp_path, scheduler=client, rows_per_partition=500, n_bins=12)
    assert result.summary.spec.task == "classification" and result.n_read == 2200
    _compare_with_memory(result, frames, lambda f, s: parse_classification_frame(f, s), n_bins=12)
    assert result.dropped_table()["rows"].tolist() == ["part-01.parquet:4, part-01.parquet:5"]


def _cli(*args, cwd):
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    return subprocess.run([sys.executable, "-m", "calib_core", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=env)


def test_cli_report_engine_dask_end_to_end_and_the_saved_summary(client, tmp_path):
    frames = _bad_rows_frames()
    _write(frames, tmp_path / "data")
    address = client.scheduler.address
    fast = ("--resamples", "100", "--simulations", "100", "--n-bins", "8")
    proc = _cli("report", "data/*.parquet", "--engine", "dask", "--scheduler", address, "--out", "report.html",
                "--save-summary", "run.summary", "--metrics-csv", "dask.csv", "--rows-per-partition", "900", *fast,
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "regression, 2,689 rows, 1,011 dropped" in proc.stdout and "Summarised on Dask" in proc.stdout
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Summarised on Dask" in html and "part-01.parquet:1" in html and "y: missing value" in html
    proc2 = _cli("report", "run.summary", "--out", "again.html", "--metrics-csv", "again.csv", *fast, cwd=tmp_path)
    assert proc2.returncode == 0, proc2.stderr
    assert "Drawn from the summary file run.summary" in proc2.stdout
    first, again = pd.read_csv(tmp_path / "dask.csv"), pd.read_csv(tmp_path / "again.csv")
    pd.testing.assert_frame_equal(first, again)
    # the same file in memory (one file, so the same row ids) saves the same summary
    pd.concat(frames, ignore_index=True).to_parquet(tmp_path / "one.parquet", index=False)
    proc3 = _cli("report", "one.parquet", "--out", "mem.html", "--save-summary", "mem.summary", *fast, cwd=tmp_path)
    assert proc3.returncode == 0, proc3.stderr
    from calib_core.scale.summary import Summary

    a = Summary.from_bytes((tmp_path / "run.summary").read_bytes())
    b = Summary.from_bytes((tmp_path / "mem.summary").read_bytes())
    assert a.spec == b.spec and a.n_rows == b.n_rows and a.dropped == b.dropped
    assert all(list(a.parts[k]["n"]) == list(b.parts[k]["n"]) for k in b.parts)


def test_cli_engine_dask_names_disagreeing_files_and_refuses_a_glob_in_memory(tmp_path):
    frames = [_regression_frame(50, i) for i in range(2)]
    frames[1] = frames[1].rename(columns={"std": "sigma"})
    _write(frames, tmp_path / "data")
    proc = _cli("report", "data/*.parquet", "--engine", "dask", "--out", "r.html", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "column 'std' is in part-00.parquet but not in part-01.parquet" in proc.stderr
    # without --engine a glob is summarised by the embedded engine (it used to be refused, naming --engine dask),
    # which names the same disagreement; read in memory, it is refused naming the engine that reads it
    proc = _cli("report", "data/*.parquet", "--out", "r.html", cwd=tmp_path)
    assert proc.returncode == 2 and "column 'std' is in part-00.parquet but not in part-01.parquet" in proc.stderr
    proc = _cli("report", "data/*.parquet", "--engine", "memory", "--out", "r.html", cwd=tmp_path)
    assert proc.returncode == 2 and "--engine embedded" in proc.stderr


def test_partitions_are_sized_by_the_width_of_the_table(tmp_path):
    assert cp.auto_rows_per_partition(3) == 600_000_000 // (230 * 3)
    assert cp.auto_rows_per_partition(11) == 237_154 and cp.auto_rows_per_partition(10**6) == 10_000
    narrow = pd.DataFrame({"y": np.zeros(10), "mean": 0.0, "std": 1.0})
    _write([narrow], tmp_path / "narrow", row_group_size=2)
    assert len(cp.plan_partitions(tmp_path / "narrow")[0]) == 1  # 869,565 rows allowed: every row group in one
    assert len(cp.plan_partitions(tmp_path / "narrow", rows_per_partition=4)[0]) == 3  # 4 + 4 + 2 rows


def _classification_frame(n: int, seed: int, k: int = 10) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, 1.5, (n, k))
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    frame = pd.DataFrame({f"prob_{j}": p[:, j] for j in range(k)})
    frame["label"] = (p.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1).clip(0, k - 1)
    return frame


def _peak_on_a_fresh_worker(pattern: str) -> tuple[float, cd.ParquetSummary]:
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        with cd.open_client(n_workers=1, memory_limit="1GiB") as c:
            c.wait_for_workers(1, timeout=60)
            res = cd.summarize_parquet(pattern, scheduler=c, rows_per_partition=30_000)
            (peak,) = ccl.worker_peak_mb(c).values()
    finally:
        sys.modules["__main__"] = main
    return peak, res


def test_a_workers_memory_does_not_grow_with_the_number_of_partitions(tmp_path):
    """Issue 13: memory per worker depends on the partition size and the bins, not on N.  The same 30,000-row
    K = 10 partitions, 4 or 24 of them, on a fresh single-worker LocalCluster: the worker's peak (VmHWM, its own
    — ru_maxrss would include the test process's peak, inherited across fork + exec) grows by less than 40% of what
    keeping the 20 extra partitions' frames would add (a leak of a frame per partition, planted, grew it by 59 MB;
    allocator and task bookkeeping noise reached 9.5 MB in one CI run, over the 8 MB this test first allowed), and
    the merged summary's arrays have the same shapes."""
    frames = [_classification_frame(30_000, i) for i in range(24)]
    _write(frames, tmp_path, row_group_size=30_000)
    few_files = [str(p) for p in sorted(tmp_path.glob("*.parquet"))[:4]]
    peak_few, few = _peak_on_a_fresh_worker(few_files)
    peak_many, many = _peak_on_a_fresh_worker(str(tmp_path / "*.parquet"))
    assert (len(few.partitions), len(many.partitions)) == (4, 24)
    assert many.summary.n_rows == 6 * few.summary.n_rows == 720_000
    frame_mb = frames[0].memory_usage(deep=True).sum() / 2**20  # 2.5 MB of float64/int64 cells
    assert peak_many - peak_few < max(0.4 * 20 * frame_mb, 8.0), (peak_few, peak_many, frame_mb)
    assert peak_many < 1024  # well inside the worker's limit
    assert few.summary.parts.keys() == many.summary.parts.keys()
    for key, arrays in many.summary.parts.items():
        assert {n: a.shape for n, a in arrays.items()} == {n: a.shape for n, a in few.summary.parts[key].items()}
