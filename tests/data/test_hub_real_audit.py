"""Independent audit of the forecast-hub reader on the real hubverse example hub (../shared/data/real).

Everything the reader is checked against is computed here in plain pandas, never with the reader's internals:
the model-output files read as text (``dtype=str, keep_default_na=False``), the quantile rows pivoted to one row
per forecast unit, ``target_end_date = origin_date + horizon`` days, left-joined to the target data on
(``target_end_date`` ↔ ``time_idx``, ``location``, ``target``).

(a) these pandas numbers reproduce the sanity table of the folder's PROVENANCE.md (per model, by horizon band and
    by location);
(b) ``cc.load_predictions(hub, truth=…)`` gives the same forecast units, the same y and quantiles per unit, the same
    model ids and task IDs, and therefore the same coverages;
(c) WIS and its three parts per row from ``calib_core.metrics.regression_wis.wis_parts`` equal a pandas computation
    of Bracher et al. (2021), WIS = (1/(K+½)) (½|y − m| + Σ_k α_k/2 · IS_{α_k}), cross-checked with the quantile-
    score form WIS = (1/(2K+1)) Σ_τ 2(1{y ≤ q_τ} − τ)(q_τ − y).
"""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calib_core as cc

HUB = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real" / "hubverse_simple_forecast_hub"
TRUTH = HUB / "target-data" / "covid-hospitalizations.csv"
KEYS = ["model_id", "origin_date", "horizon", "location", "target"]
LEVELS = [0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85,
          0.9, 0.95, 0.975, 0.99]
MODELS = ["UMass-ar", "UMass-gbq", "simple_hub-baseline"]

pytestmark = pytest.mark.skipif(not HUB.is_dir(), reason=f"real hub {HUB} not found")

# PROVENANCE.md, "Sanity numbers": units, below q0.05, above q0.95, cov50, cov90, cov98, share y ≤ median, MAE.
PROVENANCE_MODELS = {
    "UMass-ar": (189, 0.032, 0.026, 0.503, 0.942, 0.995, 0.354, 269.6),
    "UMass-gbq": (189, 0.026, 0.122, 0.439, 0.852, 0.952, 0.397, 311.5),
    "simple_hub-baseline": (189, 0.000, 0.000, 0.815, 1.000, 1.000, 0.180, 324.7),
    "all": (567, 0.019, 0.049, 0.586, 0.931, 0.982, 0.310, 301.9),
}
STATS = ["units", "below_q05", "above_q95", "cov50", "cov90", "cov98", "below_median", "mae_median"]
# cov50 / cov90 by horizon band −6…−1, 0…7, 8…14
PROVENANCE_BANDS = {
    "UMass-ar": ((0.500, 0.815), (0.569, 0.986), (0.429, 1.000)),
    "UMass-gbq": ((0.426, 0.833), (0.472, 0.806), (0.413, 0.921)),
    "simple_hub-baseline": ((0.852, 1.000), (0.875, 1.000), (0.714, 1.000)),
}
BAND_UNITS = (54, 72, 63)
# cov50 / cov90 / above q0.95 / share y ≤ median by location 20, 25, US
PROVENANCE_LOCATIONS = {
    "UMass-ar": ((0.540, 0.952, 0.048, 0.540), (0.524, 1.000, 0.000, 0.143), (0.444, 0.873, 0.032, 0.381)),
    "UMass-gbq": ((0.524, 0.921, 0.063, 0.587), (0.508, 0.825, 0.175, 0.175), (0.286, 0.810, 0.127, 0.429)),
    "simple_hub-baseline": ((0.968, 1.000, 0.000, 0.365), (0.635, 1.000, 0.000, 0.016),
                            (0.841, 1.000, 0.000, 0.159)),
}


# ------------------------------------------------------------------------------------------------- pandas side


def read_raw() -> pd.DataFrame:
    parts = [pd.read_csv(p, dtype=str, keep_default_na=False).assign(model_id=p.parent.name)
             for p in sorted((HUB / "model-output").glob("*/*.csv"))]
    return pd.concat(parts, ignore_index=True)


@pytest.fixture(scope="module")
def raw() -> pd.DataFrame:
    return read_raw()


@pytest.fixture(scope="module")
def wide(raw) -> pd.DataFrame:
    """One row per forecast unit: task IDs, q<level> columns, y (pandas pivot + merge)."""
    q = raw[raw["output_type"] == "quantile"].assign(level=lambda d: d["output_type_id"].astype(float),
                                                     value=lambda d: d["value"].astype(float))
    w = q.pivot_table(index=KEYS, columns="level", values="value", aggfunc="first").reset_index()
    w.columns = [c if isinstance(c, str) else f"q{c:g}" for c in w.columns]
    w["horizon"] = w["horizon"].astype(np.int64)
    w["target_end_date"] = pd.to_datetime(w["origin_date"]) + pd.to_timedelta(w["horizon"], unit="D")
    truth = pd.read_csv(TRUTH, dtype={"location": str, "target": str}, keep_default_na=False)
    truth = truth.assign(time_idx=pd.to_datetime(truth["time_idx"])).rename(
        columns={"time_idx": "target_end_date", "value": "y"})
    out = w.merge(truth, on=["target_end_date", "location", "target"], how="left", validate="many_to_one")
    out["y"] = out["y"].astype(float)
    return out


def sanity(w: pd.DataFrame) -> pd.DataFrame:
    """Per-unit indicators of the PROVENANCE definitions (inclusive interval ends)."""
    y = w["y"]
    return pd.DataFrame({
        "below_q05": y < w["q0.05"], "above_q95": y > w["q0.95"],
        "cov50": (w["q0.25"] <= y) & (y <= w["q0.75"]), "cov90": (w["q0.05"] <= y) & (y <= w["q0.95"]),
        "cov98": (w["q0.01"] <= y) & (y <= w["q0.99"]), "below_median": y <= w["q0.5"],
        "mae_median": (y - w["q0.5"]).abs(),
    })


def table(w: pd.DataFrame, by) -> pd.DataFrame:
    s = sanity(w)
    g = s.groupby(by, sort=False)
    return pd.concat([g.size().rename("units"), g.mean()], axis=1)[STATS]


def assert_provenance_tables(w: pd.DataFrame, model: np.ndarray, horizon: np.ndarray, location: np.ndarray):
    per_model = table(w, model)
    everything = table(w, np.full(len(w), "all"))
    got = pd.concat([per_model, everything])
    for name, ref in PROVENANCE_MODELS.items():
        row = got.loc[name]
        assert row["units"] == ref[0]
        np.testing.assert_allclose(row[STATS[1:-1]].to_numpy(float), ref[1:-1], atol=5e-4, err_msg=name)
        assert abs(row["mae_median"] - ref[-1]) <= 0.05, (name, row["mae_median"])
    band = np.select([horizon <= -1, horizon <= 7], ["a", "b"], "c")
    by_band = table(w, [model, band])
    for name, refs in PROVENANCE_BANDS.items():
        for b, n, ref in zip("abc", BAND_UNITS, refs):
            row = by_band.loc[(name, b)]
            assert row["units"] == n
            np.testing.assert_allclose(row[["cov50", "cov90"]].to_numpy(float), ref, atol=5e-4, err_msg=(name, b))
    by_location = table(w, [model, location])
    for name, refs in PROVENANCE_LOCATIONS.items():
        for loc, ref in zip(("20", "25", "US"), refs):
            row = by_location.loc[(name, loc)]
            np.testing.assert_allclose(row[["cov50", "cov90", "above_q95", "below_median"]].to_numpy(float), ref,
                                       atol=5e-4, err_msg=(name, loc))


def test_a_pandas_join_reproduces_provenance(raw, wide):
    assert len(raw) == 13608 and (raw["output_type"] == "quantile").sum() == 13041
    med = raw[raw["output_type"] == "median"]
    assert len(med) == 567 and (med["output_type_id"] == "NA").all()
    # the median rows equal the 0.5 quantile in every unit
    m = med.merge(raw[raw["output_type_id"] == "0.5"], on=KEYS, suffixes=("", "_q"))
    assert len(m) == 567 and (m["value"].astype(float) == m["value_q"].astype(float)).all()
    assert len(wide) == 567 and wide["y"].notna().all()
    assert sorted(wide["location"].unique()) == ["20", "25", "US"]
    assert wide["target_end_date"].min() == pd.Timestamp("2022-11-29")
    assert wide["target_end_date"].max() == pd.Timestamp("2023-01-02")
    q = wide[[f"q{t:g}" for t in LEVELS]].to_numpy()
    assert not np.isnan(q).any() and (np.diff(q, axis=1) >= 0).all()  # no crossing
    assert_provenance_tables(wide, wide["model_id"].to_numpy(), wide["horizon"].to_numpy(),
                             wide["location"].to_numpy())


# ------------------------------------------------------------------------------------------------- reader side


def reader_available() -> bool:
    return "truth" in inspect.signature(cc.load_predictions).parameters


@pytest.fixture(scope="module")
def pset():
    if not reader_available():
        pytest.skip("cc.load_predictions has no truth= yet (forecast-hub reader not merged)")
    return cc.load_predictions(HUB, truth=TRUTH)


def reader_frame(ps) -> pd.DataFrame:
    """The PredictionSet as one row per unit with the same column names as ``wide``."""
    units = ps.units
    q = pd.DataFrame(ps.dist.values, columns=[f"q{t:g}" for t in ps.dist.levels])
    return pd.concat([
        pd.DataFrame({"model_id": ps.model.astype(str), "y": ps.y}),
        units[["origin_date", "horizon", "location", "target", "target_end_date"]].reset_index(drop=True),
        q,
    ], axis=1)


def test_b_reader_reads_the_same_units_values_and_ids(pset, wide):
    ps = pset
    assert ps.task == "regression" and ps.layout == "quantile"
    assert ps.n_rows == 567 and ps.dropped.total == 0 and ps.n_read == 567
    np.testing.assert_allclose(ps.dist.levels, LEVELS)
    assert sorted(set(ps.model.astype(str))) == sorted(MODELS)
    u = ps.units
    assert u["location"].map(type).eq(str).all() and set(u["location"]) == {"20", "25", "US"}
    assert u["horizon"].dtype == np.int64 and u["target_end_date"].dtype == "datetime64[ns]"
    assert u["reference_date"].dtype == "datetime64[ns]"
    # the round is the origin_date column (not the file-name date, 7 days earlier), also kept as reference_date
    np.testing.assert_array_equal(pd.to_datetime(u["origin_date"]).to_numpy(), u["reference_date"].to_numpy())
    np.testing.assert_array_equal(np.asarray(ps.time, dtype="datetime64[ns]"), u["target_end_date"].to_numpy())
    assert sorted(ps.row_number) == list(range(1, 568))
    got = reader_frame(ps)
    got["origin_date"] = got["origin_date"].astype(str).str[:10]
    assert not got.duplicated(KEYS).any()
    both = wide.merge(got, on=KEYS, how="outer", suffixes=("", "_reader"), indicator=True, validate="one_to_one")
    assert (both["_merge"] == "both").all(), both.loc[both["_merge"] != "both", KEYS]
    np.testing.assert_array_equal(both["y_reader"], both["y"])
    np.testing.assert_array_equal(both["target_end_date_reader"].to_numpy(), both["target_end_date"].to_numpy())
    for t in LEVELS:
        np.testing.assert_array_equal(both[f"q{t:g}_reader"], both[f"q{t:g}"], err_msg=f"level {t}")


def test_b_reader_coverages_equal_provenance(pset):
    got = reader_frame(pset)
    assert_provenance_tables(got, got["model_id"].to_numpy(), got["horizon"].to_numpy(),
                             got["location"].to_numpy())


# ------------------------------------------------------------------------------------------------- WIS


def wis_pandas(w: pd.DataFrame) -> pd.DataFrame:
    """WIS and parts per unit (Bracher et al. 2021), from the 11 central intervals and the median."""
    y = w["y"].to_numpy()
    m = w["q0.5"].to_numpy()
    lower = [t for t in LEVELS if t < 0.5]
    k = len(lower)
    disp = np.zeros_like(y)
    over = 0.5 * np.clip(m - y, 0, None)
    under = 0.5 * np.clip(y - m, 0, None)
    for tau in lower:
        alpha = 2 * tau
        lo, hi = w[f"q{tau:g}"].to_numpy(), w[f"q{1 - tau:g}"].to_numpy()
        # α/2 · IS_α = α/2 (u − l) + (l − y)⁺ + (y − u)⁺
        disp += alpha / 2 * (hi - lo)
        over += np.clip(lo - y, 0, None)
        under += np.clip(y - hi, 0, None)
    scale = 1.0 / (k + 0.5)
    out = pd.DataFrame({"dispersion": scale * disp, "overprediction": scale * over, "underprediction": scale * under})
    out["wis"] = out.sum(axis=1)
    # the quantile-score form of the same number
    qs = sum(2 * ((y <= w[f"q{t:g}"].to_numpy()) - t) * (w[f"q{t:g}"].to_numpy() - y) for t in LEVELS)
    np.testing.assert_allclose(out["wis"], qs / (2 * k + 1), rtol=1e-12)
    return out


def test_c_wis_parts_on_the_pandas_join_equal_pandas(wide):
    """wis_parts on the pandas-joined quantiles (no reader involved) against the pandas WIS, per row and model."""
    if importlib.util.find_spec("calib_core.metrics.regression_wis") is None:
        pytest.skip("calib_core.metrics.regression_wis not merged yet")
    from calib_core.base.regression import QuantileSet
    from calib_core.metrics.regression_wis import wis_parts

    q = wide[[f"q{t:g}" for t in LEVELS]].to_numpy()
    parts = wis_parts(wide["y"].to_numpy(), QuantileSet(LEVELS, q))
    assert parts.median and parts.stated and len(parts.alphas) == 11
    ref = wis_pandas(wide)
    for name in ref.columns:
        np.testing.assert_allclose(np.asarray(getattr(parts, name)), ref[name], rtol=1e-12, atol=1e-9,
                                   err_msg=name)
    per_model = ref.groupby(wide["model_id"].to_numpy()).mean()
    print(per_model.round(2))
    # regression values of this pandas computation (mean per model over its 189 units)
    expected = pd.DataFrame({"dispersion": [77.03, 67.22, 174.54], "overprediction": [46.99, 76.34, 0.60],
                             "underprediction": [36.06, 60.41, 61.18], "wis": [160.08, 203.97, 236.32]},
                            index=MODELS)
    np.testing.assert_allclose(per_model.loc[MODELS, expected.columns], expected, atol=0.006)


def test_c_wis_per_row_and_per_model_equal_pandas(pset, wide):
    if importlib.util.find_spec("calib_core.metrics.regression_wis") is None:
        pytest.skip("calib_core.metrics.regression_wis not merged yet")
    from calib_core.metrics.regression_wis import wis_parts

    got = reader_frame(pset)
    parts = wis_parts(pset.y, pset.dist)
    ref = wis_pandas(got)
    for name in ("wis", "dispersion", "overprediction", "underprediction"):
        np.testing.assert_allclose(np.asarray(getattr(parts, name)), ref[name], rtol=1e-12, atol=1e-9,
                                   err_msg=name)
    # per model, against the pandas join that never touched the reader
    ref_model = wis_pandas(wide).groupby(wide["model_id"].to_numpy()).mean()
    got_model = pd.DataFrame({n: np.asarray(getattr(parts, n)) for n in ref.columns}).groupby(
        got["model_id"].to_numpy()).mean()
    pd.testing.assert_frame_equal(got_model.loc[MODELS, list(ref.columns)], ref_model.loc[MODELS, list(ref.columns)],
                                  rtol=1e-12)
    # the coverage of every stated central interval, per row, against the pandas indicators (inclusive ends)
    from calib_core.metrics.regression_wis import central_coverages

    cov = central_coverages(pset.y, pset.dist)
    assert len(cov) == 11 and {"coverage_50", "coverage_90", "coverage_98"} <= set(cov)
    ind = sanity(got)
    for c in (50, 90, 98):
        np.testing.assert_array_equal(np.asarray(cov[f"coverage_{c}"]), ind[f"cov{c}"].to_numpy(), err_msg=str(c))
    print(ref_model.round(2))


def test_c_wis_pandas_against_scores_package(wide):
    """The pandas WIS above equals nci ``scores``' quantile score form (a peer), so it is itself checked."""
    scores = pytest.importorskip("scores.continuous")
    import xarray as xr

    ref = wis_pandas(wide)
    obs = xr.DataArray(wide["y"].to_numpy(), dims=("unit",))
    total = sum(scores.quantile_score(xr.DataArray(wide[f"q{t:g}"].to_numpy(), dims=("unit",)), obs, alpha=t,
                                      preserve_dims=["unit"]).to_numpy() for t in LEVELS)
    # scores' quantile score is the pinball loss ρ_τ = QS_τ / 2: WIS = 2 Σ_τ ρ_τ / (2K + 1)
    np.testing.assert_allclose(2 * total / len(LEVELS), ref["wis"], rtol=1e-10)
