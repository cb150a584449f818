"""Numbers shown as numbers: tiny and huge values become scientific text that fits a cell; ordinary columns are
left alone."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd
import streamlit as st
from hypothesis import given, settings
from hypothesis import strategies as hs

from views.numbers import LARGE, SMALL, display_numbers, format_numbers, needs_exponent, needs_text

finite = hs.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(hs.lists(finite, min_size=1, max_size=20))
def test_every_text_is_short_and_reads_back_the_number(values):
    texts = format_numbers(values, "%.4f")
    for value, text in zip(values, texts):
        assert len(text) <= 16, text  # '-1.797e+308' at most: a cell, never a row of digits
        back, exact = Decimal(text), Decimal(value)  # exact: '1.798e+308' is past the largest float
        if value == 0 or SMALL <= abs(value) < LARGE:
            assert abs(back - exact) <= Decimal("5.0001e-5") * max(1, abs(exact))
        else:
            assert abs(back - exact) <= Decimal("5.0001e-4") * abs(exact)  # 4 significant digits


def test_the_cases_users_met():
    texts = format_numbers([2.9e-149, 0.5, 123456789.0, 1e300, -1e-300, 0.0, np.nan, np.inf, -np.inf], "%.4g")
    assert texts == ["2.9e-149", "0.5", "1.235e+08", "1e+300", "-1e-300", "0", "", "inf", "-inf"]


def test_huge_values_turn_a_column_into_text_tiny_ones_into_a_g_format():
    frame = pd.DataFrame({"huge": [1e300, 0.3], "tiny": [2.9e-149, 0.3], "plain": [0.5, 0.25], "n": [1, 2],
                          "name": ["a", "b"]})
    shown, config = display_numbers(frame)
    assert shown["huge"].tolist() == ["1e+300", "0.3"]
    assert config["huge"]["alignment"] == "right" and config["huge"]["type_config"]["type"] == "text"
    assert shown["tiny"].dtype == float and config["tiny"]["type_config"]["format"] == "%.6g"  # still sorts
    assert "plain" not in config and shown["n"].tolist() == [1, 2]
    same, none = display_numbers(frame[["plain", "n"]])
    assert same.equals(frame[["plain", "n"]]) and none == {}


def test_a_fixed_format_with_tiny_values_becomes_a_g_format():
    given_config = {"p": st.column_config.NumberColumn("P", format="%.4f", width=80)}
    _, config = display_numbers(pd.DataFrame({"p": [1e-9, 0.5]}), given_config)
    assert config["p"]["type_config"]["format"] == "%.4g" and config["p"]["label"] == "P"


def test_a_number_column_keeps_its_format_label_width_and_help():
    frame = pd.DataFrame({"value": [1e300, 0.123456]})
    given_config = {"value": st.column_config.NumberColumn("v", format="%.3f", width=72, help="the value")}
    shown, config = display_numbers(frame, given_config)
    assert shown["value"].tolist() == ["1e+300", "0.123"]
    assert (config["value"]["label"], config["value"]["width"], config["value"]["help"]) == ("v", 72, "the value")


def test_needs_text_and_exponent():
    assert needs_text([np.inf]) and needs_text([2e9]) and not needs_text([1e-5])
    assert not needs_text([0.0, 1e-4, 999999999.0, np.nan]) and not needs_text(["a"]) and not needs_text([])
    assert needs_exponent([1e-5]) and needs_exponent([1e-5], "%.4f") and not needs_exponent([1e-5], "%.4g")
    assert not needs_exponent([0.0, 1e-4, np.nan]) and not needs_exponent(["a"])
