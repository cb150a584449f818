"""The light reader of plain Gaussian data sets gives the parser's summaries bit for bit, whole row groups or slices,
with partitions of invalid rows left to the parser."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from calib_core.scale import distributed as D
from calib_core.scale import distributed_partitions as DP
from calib_core.scale import regression as R
from calib_core.scale.distributed_light import light_layout
from calib_core.scale.distributed_partitions import plan_partitions
from calib_core.scale.distributed_reading import read_head
from calib_core.scale.embedded import summarize_parquet_embedded


def _write(folder, n_files=2, n=2400, group=1200, bad=False, extra=False, seed=0):
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for i in range(n_files):
        sigma = np.round(rng.lognormal(0.0, 0.5, n), 2)  # ties of σ across partitions
        mean = rng.normal(0.0, 2.0, n)
        y = mean + 1.15 * sigma * rng.standard_normal(n)
        if bad and i == 1:
            y[5] = np.nan
            sigma[17] = 0.0
        cols = {"y": y, "mean": mean, "std": sigma}
        if extra:
            cols["note"] = np.arange(n).astype(str)
        pq.write_table(pa.table(cols), folder / f"p{i}.parquet", row_group_size=group)


def _same(a, b):
    assert a.n_rows == b.n_rows and a.dropped == b.dropped and list(a.parts) == list(b.parts)
    for key in a.parts:
        assert list(a.parts[key]) == list(b.parts[key])
        for name in a.parts[key]:
            x, y = np.asarray(a.parts[key][name]), np.asarray(b.parts[key][name])
            assert x.dtype == y.dtype and x.shape == y.shape, name
            if x.dtype == object:
                assert [int(v) for v in x.ravel()] == [int(v) for v in y.ravel()], name
            else:
                assert x.tobytes() == y.tobytes(), name


@pytest.mark.parametrize("sliced, bad", [(False, False), (True, False), (True, True)])
def test_light_reader_and_compiled_summariser_give_the_parsers_summary(tmp_path, monkeypatch, sliced, bad):
    _write(tmp_path, bad=bad)
    if sliced:  # row groups of 1,200 rows cut in slices of ≤ 500 (the second slice starts mid row group)
        monkeypatch.setattr(DP, "PARTITION_BUDGET_BYTES", 500 * (3 * DP.BYTES_PER_CELL))
    monkeypatch.setattr(D, "LIGHT_READER", False)
    monkeypatch.setattr(R, "COMPILED_SUMMARISER", False)
    ref = summarize_parquet_embedded(str(tmp_path / "*.parquet"), threads=2)
    monkeypatch.setattr(D, "LIGHT_READER", True)
    monkeypatch.setattr(R, "COMPILED_SUMMARISER", True)
    got = summarize_parquet_embedded(str(tmp_path / "*.parquet"), threads=2)
    assert len(got.partitions) == len(ref.partitions) and (len(got.partitions) > 4) == sliced
    assert got.passes == ref.passes
    _same(ref.summary, got.summary)
    if bad:
        assert sum(v["count"] for v in got.summary.dropped.values()) == 2


def test_light_layout_only_for_three_float_columns(tmp_path):
    _write(tmp_path / "plain", n_files=1)
    _write(tmp_path / "extra", n_files=1, extra=True)
    for name, expected in (("plain", True), ("extra", False)):
        parts, files = plan_partitions(str(tmp_path / name / "*.parquet"))
        options, head = read_head(files, task=None, columns=None, renormalize=False)
        light = light_layout(files, options, head)
        assert (light is not None) == expected
        if light is not None:
            assert (light.y, light.mean, light.std) == ("y", "mean", "std")
