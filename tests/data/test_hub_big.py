"""A big hub: 10 models × 10 rounds × 50 locations × 9 horizons = 45,000 forecast units × 23 levels (1,035,000
quantile rows) read and joined to its truth within a CPU budget (about 2.2 s measured on one core; the bound leaves
room for slower CI machines)."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from calib_core.data.hub import read_hub

from .hub_fixtures import LEVELS

pytestmark = pytest.mark.slow


def big_hub(root, fmt):
    rng = np.random.default_rng(0)
    locs = [f"{i:02d}" for i in range(1, 51)]
    horizons = np.arange(9)
    dates = pd.date_range("2023-01-01", periods=200, freq="D")
    truth = pd.DataFrame({"target_end_date": np.tile(dates.strftime("%Y-%m-%d"), len(locs)),
                          "location": np.repeat(locs, len(dates)), "target": "wk inc flu hosp",
                          "observation": rng.poisson(100, len(locs) * len(dates)).astype(float)})
    (root / "target-data").mkdir(parents=True)
    truth.to_csv(root / "target-data" / "time-series.csv", index=False)
    z = stats.norm.ppf(LEVELS)
    n = len(locs) * len(horizons)
    loc, h = np.repeat(locs, len(horizons)), np.tile(horizons, len(locs))
    for m in range(10):
        folder = root / "model-output" / f"model{m}"
        folder.mkdir(parents=True)
        for r in pd.date_range("2023-01-07", periods=10, freq="7D"):
            values = (rng.normal(100, 10, n)[:, None] + 10 * z[None, :]).ravel()
            frame = pd.DataFrame({
                "reference_date": r.strftime("%Y-%m-%d"), "target": "wk inc flu hosp", "horizon": np.repeat(h, 23),
                "location": np.repeat(loc, 23),
                "target_end_date": np.repeat((r + pd.to_timedelta(7 * h, unit="D")).strftime("%Y-%m-%d"), 23),
                "output_type": "quantile", "output_type_id": np.tile([f"{lv:g}" for lv in LEVELS], n),
                "value": np.round(values, 2)})
            path = folder / f"{r:%Y-%m-%d}-model{m}.{fmt}"
            frame.to_parquet(path, index=False) if fmt == "parquet" else frame.to_csv(path, index=False)
    return root


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_million_quantile_rows_read_and_join_within_the_budget(tmp_path, fmt):
    hub = big_hub(tmp_path, fmt)
    start = time.process_time()
    ps = read_hub(hub)
    seconds = time.process_time() - start
    assert ps.n_read == ps.n_rows == 45_000 and ps.dist.values.shape == (45_000, 23)
    assert pd.Series(ps.model).value_counts().eq(4_500).all() and ps.units["location"].iloc[0] == "01"
    assert seconds < 6.0, f"{fmt}: {seconds:.2f} s CPU"
