"""The monitor's steps from a column of dates written as text (``time="<column>"``): dates outside the nanosecond
range keep their year (a nanosecond cast used to move 1500-01-01 to 2084) and the labels have four-digit years."""

from __future__ import annotations

import numpy as np

from calib_core.base.eprocess import _label, _ordered, time_steps


def test_text_dates_of_any_year_are_ordered_as_dates_without_moving():
    values = np.array(["1500-01-08", "1500-01-01", "9999-12-31", "1500-01-01"], dtype=object)
    codes, labels = time_steps(values)
    assert codes.tolist() == [1, 0, 2, 0]
    assert np.datetime_as_string(labels, unit="D").tolist() == ["1500-01-01", "1500-01-08", "9999-12-31"]
    assert _ordered(np.array(["2026-01-01", "2026-01-08"], dtype=object)).dtype == np.dtype("datetime64[ns]")
    zoned = _ordered(np.array(["2026-01-01T00:00+01:00", "2026-01-08T00:00+01:00"], dtype=object))
    assert np.datetime_as_string(zoned, unit="m").tolist() == ["2025-12-31T23:00", "2026-01-07T23:00"]


def test_labels_write_four_digit_years():
    assert _label(np.datetime64("0001-02-03", "us"), "day") == "0001-02-03"
    assert _label(np.datetime64("0999-02-03T04:05", "us"), "time step") == "0999-02-03 04:05"
    assert _label(np.datetime64("2026-02-01", "ns"), "month") == "2026-02"
