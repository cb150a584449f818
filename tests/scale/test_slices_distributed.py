"""The slice explorer's summaries on a real ``distributed.LocalCluster`` with 2 worker processes over Parquet files
the test writes: the ranking from the merged summary equals the in-memory explorer's ranking of
the same rows, for regression and classification.  (Skipped without the optional ``dask`` extra.)"""

from __future__ import annotations

import sys
import types

import pandas as pd
import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

import cloudpickle  # noqa: E402 - dask's dependency, after the skip

import calib_core.scale.distributed as cd
from calib_core.data.classification import parse_classification_frame
from calib_core.data.regression import parse_regression_frame
from calib_core.scale import slices_ranking as sr
from calib_core.slices import classification as cls_slices
from calib_core.slices import regression as reg_slices
from tests.scale import test_slices as helpers  # noqa: E402

cloudpickle.register_pickle_by_value(__import__(__name__))
cloudpickle.register_pickle_by_value(helpers)

pytestmark = pytest.mark.slow  # a LocalCluster start is ~5 s on a loaded 2-core machine


@pytest.fixture(scope="module")
def client():
    main = sys.modules["__main__"]  # spawned workers re-run __main__: give them a bare one (see test_distributed)
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        with cd.open_client(n_workers=2, memory_limit="1GiB") as c:
            c.wait_for_workers(2, timeout=60)
            yield c
    finally:
        sys.modules["__main__"] = main


def test_regression_slices_on_the_cluster_equal_in_memory(client, tmp_path):
    frame = helpers.regression_frame(8_000, 11)
    helpers._write_parts(frame, tmp_path, [2_500, 2_600, 6_000], row_group_size=900)
    out = cd.slice_summary_parquet(str(tmp_path / "*.parquet"), scheduler=client, rows_per_partition=1_000)
    assert len(out.partitions) >= 6 and "2 workers" in out.cluster
    whole = parse_regression_frame(frame, "all")
    mem, _ = reg_slices.slice_ranking(whole)
    helpers.assert_same_ranking(mem, sr.summary_ranking(out.summary), "regression")


def test_classification_slices_on_the_cluster_equal_in_memory(client, tmp_path):
    frame = helpers.classification_frame(7_000, 12)
    helpers._write_parts(frame, tmp_path, [3_000], row_group_size=800)
    out = cd.slice_summary_parquet(str(tmp_path / "*.parquet"), scheduler=client, rows_per_partition=1_000)
    whole = parse_classification_frame(pd.concat([frame], ignore_index=True), "all", None, False)
    mem, _ = cls_slices.slice_ranking(whole)
    helpers.assert_same_ranking(mem, sr.summary_ranking(out.summary), "classification")
