"""A forecast hub's dates never move either: its tables hold dates in nanoseconds, so a date outside
1677-09-21 … 2262-04-11 (which used to come back 585 years later: 1500-12-03 as 2085-06-21) is refused with the
column, examples and rows.  The hubs are written here."""

from __future__ import annotations

import pytest

import calib_core as cc
from calib_core.data.hub import read_hub
from tests.data.hub_fixtures import quantile_rows, truth_series, write_hub


def test_hub_forecast_dates_outside_the_nanosecond_range_are_refused(tmp_path):
    truth = truth_series(start="1500-11-01")
    files = {m: {r: quantile_rows(m, r, truth=truth) for r in ("1500-12-03", "1500-12-10")} for m in ("a", "b")}
    root = write_hub(tmp_path / "hub", files, truth)
    with pytest.raises(cc.InputError, match=r"column 'reference_date': \d+ date\(s\) lie outside 1677-09-21 … "
                                            r"2262-04-11.*'1500-12-03'.*rows 1, 2, 3") as err:
        read_hub(root)
    assert "check the years" in str(err.value)


def test_hub_truth_dates_outside_the_nanosecond_range_are_refused(tmp_path):
    good = truth_series()
    files = {m: {r: quantile_rows(m, r, truth=good) for r in ("2022-12-03", "2022-12-10")} for m in ("a", "b")}
    truth = good.copy()
    truth.loc[[4, 7], "target_end_date"] = ["1500-01-01", "2263-01-01"]
    root = write_hub(tmp_path / "hub", files, truth)
    with pytest.raises(cc.InputError, match=r"column 'target_end_date': 2 date\(s\) lie outside .*rows 5, 8"):
        read_hub(root)
