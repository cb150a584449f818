"""Properties of the hub reader: the order of rows and files does not matter, and text task IDs round-trip."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calib_core.data.hub import read_hub

from .hub_fixtures import quantile_rows, truth_series


def as_file(frame: pd.DataFrame, name: str) -> io.BytesIO:
    buf = io.BytesIO(frame.to_csv(index=False).encode())
    buf.name = name
    return buf


def canonical(ps) -> pd.DataFrame:
    """The set as a table sorted by model and task IDs (order-free comparison)."""
    table = ps.units.assign(model=ps.model, y=ps.y)
    for j, lv in enumerate(ps.dist.levels):
        table[f"q{lv:g}"] = ps.dist.values[:, j]
    keys = ["model"] + [c for c in ps.units.columns]
    return table.sort_values(keys).reset_index(drop=True)


ids = st.lists(st.text(alphabet="0123456789ANUS", min_size=1, max_size=3), min_size=2, max_size=5, unique=True)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(locations=ids, seed=st.integers(0, 2**32 - 1))
def test_shuffling_rows_and_files_gives_the_same_set_and_text_ids_round_trip(locations, seed):
    rng = np.random.default_rng(seed)
    truth = truth_series(locations=locations)
    frames = {f"2022-12-{d:02d}-{m}.csv": quantile_rows(m, f"2022-12-{d:02d}", locations=locations,
                                                         levels=[0.1, 0.5, 0.9], truth=truth, median=False,
                                                         spread=3 + k)
              for k, (m, d) in enumerate([("a", 3), ("a", 10), ("b", 3)])}
    first = read_hub([as_file(f, n) for n, f in frames.items()], as_file(truth, "t.csv"))
    names = list(frames)
    rng.shuffle(names)
    shuffled = [as_file(frames[n].sample(frac=1.0, random_state=int(rng.integers(1 << 31))), n) for n in names]
    second = read_hub(shuffled, as_file(truth.sample(frac=1.0, random_state=1), "t.csv"))
    assert first.n_rows == second.n_rows == 3 * 2 * len(locations)
    pd.testing.assert_frame_equal(canonical(first), canonical(second))
    assert set(first.units["location"]) == set(locations)  # "01" stays "01", "NA" stays "NA", "1" ≠ "01"
    assert set(first.slice_columns["location"]) == set(locations)
