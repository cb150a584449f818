"""The slice list's column configuration: evidence shown with thousands separators (a finite number at any n), the
effect size that breaks ties beside it."""

from __future__ import annotations

import pandas as pd

from dashboard.slices import slice_list_columns


def test_evidence_is_localized_and_effect_is_configured():
    table = pd.DataFrame({"rank": [1], "slice": ["region = north"], "n": [200_000], "std z": [1.5],
                          "evidence": [19812.3], "effect": [0.9], "adjusted p": [0.0], "verdict": ["miscalibrated"]})
    fmt = slice_list_columns(table)
    evidence = fmt["evidence"]["type_config"] if "type_config" in fmt["evidence"] else fmt["evidence"]
    assert evidence["format"] == "localized" and "Infinity" not in str(fmt["evidence"])
    assert "ties" in str(fmt["effect"])
