"""The command line on time columns far from today: dates of the years 1500 to 9999 are read as written, a date
outside the years 1 to 9999 is a dropped row with its reason, zone-less cells beside zoned ones are taken as UTC and
the command says so, a Parquet ``timestamp[s]`` of 1500 stays 1500, and YYYYMMDDHH numbers of a time-named column are
dates.  The files are made here."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from calib_core import cli

FAST = ["--resamples", "20", "--simulations", "5"]
SRFT = Path("/work/shared/data/real/weather_srft_uwme_temp_ensemble/srft_temperature_kelvin.csv")


def _frame(times: list) -> pd.DataFrame:
    n = len(times)
    rng = np.random.default_rng(0)
    return pd.DataFrame({"time": times, "y": rng.normal(size=n), "mean": 0.0, "std": 1.0})


def test_report_on_far_dates_with_mixed_zones_says_what_it_did(tmp_path, capsys):
    cells = np.array(["1500-01-01", "2026-01-01T10:00+01:00", "9999-12-31", "2026-01-01 05:00"], dtype=object)
    times = cells[np.arange(60) % 4]
    times[5] = "0000-06-01"
    path = tmp_path / "far.csv"
    _frame(list(times)).to_csv(path, index=False)
    code = cli.main(["report", str(path), "--out", str(tmp_path / "r.html"), *FAST])
    out = capsys.readouterr().out
    assert code == 0
    assert "dropped 1 row(s): time: outside the years 1 to 9999 (rows 6)" in out
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "1500-01-01 00:00:00 to 9999-12-31 00:00:00" in html and "taken as UTC" in html
    assert "note: time column 'time': 45 cells have no time zone (rows 1, 3, 4, 5, 7, … (45 in all)) and were " \
           "taken as UTC; the other 14 cells carry a zone (+01:00) and were converted to UTC." in out


def test_report_on_a_parquet_timestamp_s_of_1500(tmp_path, capsys):
    n = 40
    stamps = [dt.datetime(1500, 1, 1) + dt.timedelta(days=int(d)) for d in range(n)]
    table = pa.table({"time": pa.array(stamps, pa.timestamp("s")), "y": np.linspace(-1, 1, n),
                      "mean": np.zeros(n), "std": np.ones(n)})
    path = tmp_path / "old.parquet"
    pq.write_table(table, path)
    code = cli.main(["report", str(path), "--out", str(tmp_path / "r.html"), *FAST])
    assert code == 0 and "dropped" not in capsys.readouterr().out
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "time from column &#x27;time&#x27;: 1500-01-01 00:00:00 to 1500-02-09 00:00:00 (kept to the microsecond" \
        in html


@pytest.mark.skipif(not SRFT.exists(), reason="the SRFT real file is not on this machine")
def test_report_on_the_srft_file_reads_its_yyyymmddhh_dates(tmp_path, capsys):
    code = cli.main(["report", str(SRFT), "--out", str(tmp_path / "r.html"), *FAST])
    assert code == 0
    assert "note: time column 'date': YYYYMMDDHH numbers read as dates/times (UTC)." in capsys.readouterr().out
