"""The forecast-hub speed benchmark (``bench/hub_speed.py``) runs end to end at a small size and writes its JSON."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "hub_speed.py"
_spec = importlib.util.spec_from_file_location("bench_hub_speed", BENCH)
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)


def test_hub_shape_reaches_the_rows_asked():
    shape = bench.hub_shape(1_000_000, 10)
    rows = 23 * shape["n_models"] * shape["n_locations"] * shape["n_rounds"] * len(bench.HORIZONS)
    assert 1_000_000 <= rows < 1_050_000 and shape["n_locations"] == 50
    small = bench.hub_shape(2_000, 3)
    assert small["n_locations"] >= 2 and 23 * 3 * small["n_locations"] * small["n_rounds"] * 4 >= 2_000


def test_small_run_writes_every_step(tmp_path, capsys):
    out = tmp_path / "hub_speed.json"
    results = bench.main(["--rows", "3000", "--models", "3", "--repeats", "1", "--formats", "csv,parquet",
                          "--profile", "diagnose", "--out", str(out)])
    assert json.loads(out.read_text())["runs"] == json.loads(json.dumps(results["runs"], default=str))
    assert [r["format"] for r in results["runs"]] == ["csv", "parquet"]
    for run in results["runs"]:
        assert run["quantile_rows"] >= 3000 and run["units"] * 23 == run["quantile_rows"]
        assert run["diagnose"] > 0 and run["pandas_read_pivot_merge"] > 0
        assert run["diagnose_per_model"] == run["diagnose"] / 3
        # every step either measured or unavailable (a branch not merged), never missing
        for key in ("read_join", "wis", "scores_by_model", "scores_by_model_horizon", "hubdata_read_pivot_merge"):
            assert key in run and (run[key] is None or run[key] >= 0)
        if run["read_join"] is not None:
            assert run["rows_loaded"] == run["units"]
            assert run["ratio_read_join_to_pandas"] > 0
        verdicts = {v["model"]: v["verdict"] for v in run["verdicts"]}
        assert set(verdicts) == {"team1-calibrated", "team2-narrow", "team3-biased"}
    assert "cProfile of diagnose" in capsys.readouterr().out
