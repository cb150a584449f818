"""Load every file in ../shared/data/real and check what the loader made of it.

Only loading is checked here (rows kept, drops and their reasons, layouts, column roles, a few
numbers from each folder's PROVENANCE.md that prove the columns were assigned correctly);
diagnostics on these sets are tested elsewhere.  Skipped when the data folder is absent.

``test_every_real_data_file_loads_or_is_rejected_with_a_reason`` walks every data file of
every folder, regression and classification, and prints one line per file: rows read / kept / dropped per
reason, or the reason it is rejected.  Files whose column names no alias matches are loaded with the mapping
in ``REAL_MAPPINGS`` (documented there, from each folder's PROVENANCE.md); the raw UCI tables are not
predictions and must be rejected with a message naming the missing column.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import calib_core as cc
from calib_core.base.regression import Gaussian, QuantileSet, SampleSet
from calib_core.data.bytes import read_table

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real"

pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason=f"real data folder {REAL} not found")


def summary(ps: cc.PredictionSet) -> str:
    drops = "; ".join(f"{r}: {len(v)}" for r, v in ps.dropped.reasons.items()) or "no drops"
    n_members = f" M={ps.dist.samples.shape[1]}" if isinstance(ps.dist, SampleSet) else ""
    return f"{ps.source}: {ps.layout}{n_members}, {ps.n_rows}/{ps.n_read} rows kept ({drops})"


def load(path: Path, **kw) -> cc.PredictionSet:
    ps = cc.load_predictions(path, **kw)
    print(summary(ps))
    assert ps.task == "regression"
    assert ps.n_read == ps.n_rows + ps.dropped.total
    assert len(ps.row_number) == ps.n_rows
    return ps


def rmse(ps: cc.PredictionSet) -> float:
    return float(np.sqrt(np.mean((ps.y - ps.dist.mean()) ** 2)))


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, n, rmse_ref, mean_std_ref",
    [
        ("qm9_E_test_isotonic_calibrated.csv", 13885, 0.03417, 0.01353),
        ("qm9_E_test_uncalibrated.csv", 13885, 0.03417, 0.02258),
        ("qm9_E_validation_uncalibrated.csv", 10000, 0.02553, 0.02252),
    ],
)
def test_busk2022_qm9(name, n, rmse_ref, mean_std_ref):
    ps = load(REAL / "busk2022_qm9_painn_ensemble" / name)
    assert ps.layout == "gaussian" and isinstance(ps.dist, Gaussian)
    assert ps.n_rows == n and ps.dropped.total == 0
    assert rmse(ps) == pytest.approx(rmse_ref, abs=1e-5)
    assert ps.dist.std().mean() == pytest.approx(mean_std_ref, abs=1e-5)
    # var_aleatoric / var_epistemic are not taken for the variance when a std column exists
    assert any("var_aleatoric" in m for m in ps.messages if m.startswith("columns not used"))


@pytest.mark.parametrize(
    "name, rmse_ref, mean_std_ref",
    [
        ("logP_10k_a_LS-GCN_test.csv", 0.27881, 0.29043),
        ("logP_10k_a_LS-NN_test.csv", 0.27881, 0.28826),
        ("logP_150k_LS-GCN_test.csv", 0.15904, 0.15564),
    ],
)
def test_rasmussen2023_logp(name, rmse_ref, mean_std_ref):
    ps = load(REAL / "rasmussen2023_logp_gcn_uq" / name)
    assert ps.layout == "gaussian" and ps.n_rows == 5000 and ps.dropped.total == 0
    assert rmse(ps) == pytest.approx(rmse_ref, abs=1e-5)
    assert ps.dist.std().mean() == pytest.approx(mean_std_ref, abs=1e-5)


PALMER = REAL / "palmer2022_materials_error_uncertainty"
PALMER_EXPECTED = {  # kept rows and (reason, count) of drops, from PROVENANCE.md (n and n_zero_std)
    "Perovskite_GPR_Bayesian_Test_cal.csv": (3822, ("uE: σ < 0", 14)),
    "Perovskite_GPR_Bayesian_Test_uncal.csv": (3818, ("uE: σ = 0", 18)),
}


@pytest.mark.parametrize("name", sorted(p.name for p in PALMER.glob("*_Test_*.csv")) if PALMER.is_dir() else [])
def test_palmer2022_error_files(name):
    ps = load(PALMER / name)
    assert ps.layout == "gaussian"
    assert ps.n_read == (2040 if name.startswith("Diffusion") else 3836)
    np.testing.assert_array_equal(ps.dist.mean(), 0.0)  # y := E, mean := 0
    assert any("prediction error" in m for m in ps.messages)
    assert list(ps.features.columns) == ["X"]
    kept, drop = PALMER_EXPECTED.get(name, (ps.n_read, None))
    assert ps.n_rows == kept
    if drop is None:
        assert ps.dropped.total == 0
    else:
        reason, count = drop
        assert list(ps.dropped.reasons) == [reason] and len(ps.dropped.reasons[reason]) == count


def test_palmer2022_sibling_column_orders():
    """`*_cal.csv` has columns E,X,uE and `*_uncal.csv` E,uE,X over the same numbers: roles go by name."""
    if not PALMER.is_dir():
        pytest.skip("palmer2022 folder missing")
    n_pairs = 0
    for cal in sorted(PALMER.glob("*_Test_cal.csv")):
        uncal = cal.with_name(cal.name.replace("_cal.csv", "_uncal.csv"))
        a, b = cc.load_predictions(cal), cc.load_predictions(uncal)
        common, ia, ib = np.intersect1d(a.row_number, b.row_number, return_indices=True)
        np.testing.assert_array_equal(a.y[ia], b.y[ib])
        # σ of each file is the other file's X column: the bodies are identical, only the header differs
        np.testing.assert_array_equal(a.dist.std()[ia], b.features["X"].to_numpy()[ib])
        np.testing.assert_array_equal(b.dist.std()[ib], a.features["X"].to_numpy()[ia])
        assert not np.array_equal(a.dist.std()[ia], b.dist.std()[ib])
        n_pairs += 1
    assert n_pairs == 6


BOSTON = REAL / "torchuq_boston_gaussian_quantile" / "boston_val_predictions.csv"
BOSTON_Q = ["q0.05", "q0.15", "q0.25", "q0.35", "q0.45", "q0.55", "q0.65", "q0.75", "q0.85", "q0.95"]


def test_torchuq_boston_gaussian_via_columns():
    ps = load(BOSTON, columns={"y": "y_true", "mean": "mean", "std": "std"})
    assert ps.layout == "gaussian" and ps.n_rows == 101 and ps.dropped.total == 0
    assert rmse(ps) == pytest.approx(0.44196, abs=1e-5)
    cov90 = np.mean(np.abs(ps.y - ps.dist.mean()) <= 1.6449 * ps.dist.std())
    assert cov90 == pytest.approx(0.56436, abs=1e-5)


def _boston_raw_quantiles() -> np.ndarray:
    return np.loadtxt(BOSTON, delimiter=",", skiprows=1, usecols=range(4, 14))


def test_torchuq_boston_quantiles_via_columns():
    ps = load(BOSTON, columns={"y": "y_true", "quantiles": BOSTON_Q})
    assert ps.layout == "quantile" and isinstance(ps.dist, QuantileSet)
    np.testing.assert_allclose(ps.dist.levels, np.arange(1, 20, 2) / 20)
    # the quantile NN's outputs are not monotone in half of the rows (PROVENANCE: "NOT always monotone"): by default
    # those 52 rows are sorted (rearrangement) and kept — before, they were dropped and 49 of 101 rows remained
    raw = _boston_raw_quantiles()
    crossing = np.flatnonzero((np.diff(raw, axis=1) < 0).any(axis=1)) + 1
    assert crossing.size == 52
    assert ps.n_rows == 101 and ps.dropped.total == 0
    np.testing.assert_array_equal(ps.dist.values, np.sort(raw, axis=1))
    notice = next(m for m in ps.messages if getattr(m, "kind", "") == "crossing")
    assert notice.startswith("52 rows had crossing quantiles; sorted per row (rearrangement)")
    np.testing.assert_array_equal(notice.rows, crossing)
    # crossing="drop": the old behaviour, every crossing row counted under its reason
    dropped = load(BOSTON, columns={"y": "y_true", "quantiles": BOSTON_Q}, crossing="drop")
    assert dropped.n_rows == 49 and list(dropped.dropped.reasons) == ["quantiles decrease with the level (crossing)"]
    np.testing.assert_array_equal(dropped.dropped.reasons["quantiles decrease with the level (crossing)"], crossing)


def test_torchuq_boston_rearrangement_lowers_the_quantile_loss():
    """On the real file: the sorted rows' quantile loss is below the raw rows' (Chernozhukov et al. 2010), row by
    row, and strictly lower in total."""
    from calib_core.metrics.regression_isotonic_quantile import quantile_score

    ps = load(BOSTON)
    raw = _boston_raw_quantiles()
    levels = np.arange(1, 20, 2) / 20
    before = sum(quantile_score(ps.y, raw[:, j], t) for j, t in enumerate(levels))
    after = sum(quantile_score(ps.y, ps.dist.values[:, j], t) for j, t in enumerate(levels))
    assert np.all(after <= before + 1e-12)
    assert after.mean() < before.mean()
    print(f"boston quantile NN: mean pinball loss over 10 levels {before.mean() / 10:.5f} raw, "
          f"{after.mean() / 10:.5f} rearranged")


def test_torchuq_boston_default_keeps_every_row_and_each_choice():
    """The file has mean/std and 10 quantile columns: by default every row is kept; each choice says what it gives."""
    ps = load(BOSTON)  # auto: both layouts keep all 101 rows; on the tie the quantiles are read
    assert ps.layout == "quantile" and ps.n_rows == 101 and ps.dropped.total == 0
    layout = next(m for m in ps.messages if getattr(m, "kind", "") == "layout")
    assert "keeps 101 of 101 rows" in layout and "layout='gaussian'" in layout and "on a tie" in layout
    gauss = load(BOSTON, layout="gaussian")
    assert gauss.layout == "gaussian" and gauss.n_rows == 101 and rmse(gauss) == pytest.approx(0.44196, abs=1e-5)
    assert load(BOSTON, columns={"quantiles": None}).layout == "gaussian"  # the mapping way still works
    # crossing="drop" without a layout: the Gaussian columns keep every row, the quantiles 49 — Gaussian is read
    auto_drop = load(BOSTON, crossing="drop")
    assert auto_drop.layout == "gaussian" and auto_drop.n_rows == 101
    note = next(m for m in auto_drop.messages if getattr(m, "kind", "") == "layout")
    assert "because it keeps the most rows" in note and "would keep 49" in note and "layout='quantile'" in note
    forced = load(BOSTON, layout="quantile", crossing="drop")
    assert forced.layout == "quantile" and forced.n_rows == 49 and forced.dropped.total == 52
    pp = load(BOSTON, columns={"mean": "point_pred", "quantiles": None, "std": None})
    assert pp.layout == "point" and pp.dist is None
    assert np.sqrt(np.mean((pp.y - pp.point) ** 2)) == pytest.approx(0.440, abs=5e-4)


UNCVAL = REAL / "uncval_chem_error_uncertainty"


@pytest.mark.parametrize("name, rmse_ref", [("ZHE2022_AIQM1.csv", 2.94321), ("ZHE2022_ANI-1ccx.csv", 5.07802)])
def test_uncval_zhe2022_error_files(name, rmse_ref):
    ps = load(UNCVAL / name)
    assert ps.layout == "gaussian" and ps.n_rows == 472 and ps.dropped.total == 0
    np.testing.assert_array_equal(ps.dist.mean(), 0.0)
    assert rmse(ps) == pytest.approx(rmse_ref, abs=1e-5)
    assert any("'System'" in m or "System" in m for m in ps.messages if m.startswith("columns not used"))


def test_uncval_pro2022_needs_a_mapping():
    """PRO2022 has R (reference), V (prediction) and two 95 % expanded uncertainties: no alias matches."""
    path = UNCVAL / "PRO2022_Data.csv"
    with pytest.raises(cc.InputError, match="Proppe2022") as ei:
        cc.load_predictions(path)
    assert "no target column" in str(ei.value) and "R, V, UV95A, UV95" in str(ei.value)
    print(f"PRO2022_Data.csv without mapping: InputError ({str(ei.value)[:90]}…)")
    ps = load(path, columns={"y": "R", "mean": "V", "u95": "UV95"})
    assert ps.layout == "gaussian" and ps.n_rows == 212 and ps.dropped.total == 0
    assert rmse(ps) == pytest.approx(0.105, abs=5e-4)
    assert (ps.dist.std() * 1.959963984540054).mean() == pytest.approx(0.174, abs=5e-4)
    assert any("Proppe2022" in m for m in ps.messages)
    ps_a = load(path, columns={"y": "R", "mean": "V", "u95": "UV95A"})
    assert (ps_a.dist.std() * 1.959963984540054).mean() == pytest.approx(0.239, abs=5e-4)


def test_weather_srft_members():
    ps = load(REAL / "weather_srft_uwme_temp_ensemble" / "srft_temperature_kelvin.csv")
    assert ps.layout == "sample" and ps.dist.samples.shape == (36826, 8)
    assert ps.dropped.total == 0
    frame = read_table(REAL / "weather_srft_uwme_temp_ensemble" / "srft_temperature_kelvin.csv")
    np.testing.assert_allclose(ps.dist.mean(), frame["ens_mean"], atol=5e-5)  # ens_mean written with 4 decimals
    g = load(REAL / "weather_srft_uwme_temp_ensemble" / "srft_temperature_kelvin.csv", columns={"samples": None})
    assert g.layout == "gaussian" and g.n_rows == 36826
    assert rmse(g) == pytest.approx(3.23112, abs=1e-5)


ECMWF = REAL / "weather_ecmwf_ens_precip_frankfurt" / "rain_frankfurt_mm.csv"


def test_weather_ecmwf_members_ctr_p1_p50():
    ps = load(ECMWF)
    assert ps.layout == "sample" and ps.dist.samples.shape == (3617, 51) and ps.dropped.total == 0
    assert any("CTR, P1, P2" in m for m in ps.messages)
    assert any("HRES" in m for m in ps.messages if m.startswith("columns not used"))
    assert any("1 row(s) have all members equal" in m for m in ps.messages)
    explicit = load(ECMWF, columns={"samples": ["CTR"] + [f"P{i}" for i in range(1, 51)]})
    np.testing.assert_array_equal(explicit.dist.samples, ps.dist.samples)
    # as mean ± std, the one day with zero ensemble spread is dropped (PROVENANCE: n = 3616, n_zero_std = 1)
    g = load(ECMWF, columns={"samples": None})
    assert g.n_rows == 3616 and list(g.dropped.reasons) == ["ens_std: σ = 0"]
    hres = load(ECMWF, columns={"mean": "HRES", "samples": None, "std": None})
    assert hres.layout == "point" and hres.n_rows == 3617


GEFS = REAL / "weather_gefs_reforecast_precip_innsbruck" / "rain_innsbruck_mm.csv"


def test_weather_gefs_zero_inflated():
    ps = load(GEFS)
    assert ps.layout == "sample" and ps.dist.samples.shape == (4971, 11) and ps.dropped.total == 0
    assert [c for c in ps.messages if "members" in c][0].startswith("11 ensemble members")
    ties = [m for m in ps.messages if "have y equal to a member value" in m]
    n_ties = int(np.sum((ps.dist.samples == ps.y[:, None]).any(axis=1)))
    assert ties and ties[0].startswith(f"{n_ties} row(s)") and n_ties > 100
    assert any("12 row(s) have all members equal" in m for m in ps.messages)
    g = load(GEFS, columns={"samples": None})
    assert g.n_rows == 4959 and len(g.dropped.reasons["ens_std: σ = 0"]) == 12  # PROVENANCE: n_zero_std = 12


# ---------------------------------------------------------------------------------------------
# every file of every folder
# ---------------------------------------------------------------------------------------------

NIAMEY_METHODS = ("Logistic", "EMOS", "ENS", "EPC")
DETECTED: dict[str, list[tuple[str, str | None]]] = {
    # Files that needed a mapping until the loader read files as ML tools write them: (what, model or None).
    # COCO detections (PROVENANCE: "Binary confidence-calibration data (score vs. matched)"): the detection's
    # confidence `score` is the probability of the positive class, `matched` (1 = true positive) the label.
    "netcal_coco_detection_conf/faster-rcnn-resnet-50-iou-0.60.csv": [("score vs matched", None)],
    "netcal_coco_detection_conf/ssd-resnet-50-v1-iou-0.60.csv": [("score vs matched", None)],
    # Niamey probability of precipitation: four forecasting methods, one column each, outcome `obs` (0/1): read as
    # four models.
    "weather_niamey_pop_binary/precip_Niamey_2016.csv": [(m, m) for m in NIAMEY_METHODS],
}
"""Files detected with no mapping, checked against their PROVENANCE figures."""
REAL_MAPPINGS: dict[str, list[tuple[str, dict]]] = {
    # Proppe 2022: reference R, prediction V, 95 % expanded uncertainty UV95 (PROVENANCE; UV95A is an alternative).
    "uncval_chem_error_uncertainty/PRO2022_Data.csv": [
        ("R, V, UV95", {"columns": {"y": "R", "mean": "V", "u95": "UV95"}})],
}
"""Files that need a column mapping: relative path → [(what, keyword arguments of cc.load_predictions)]."""

REJECTED_FOLDERS = {"uci_regression_raw": ("no target column found", "no prediction column found")}
"""Folders of raw data (features and targets, no predictions): every file must be refused with one of these."""

HUB_FOLDERS = {"hubverse_simple_forecast_hub"}
"""Forecast hubs (long format: output_type / output_type_id / value, truth in separate target data): read with their
truth by the forecast-hub reader (calib_core.data.hub), so they are left out of the walk below and tested on their
own (here and in tests/data/test_hub_real.py)."""

PROVENANCE_CHECKS = {  # (rows, mean of the positive-class probability, base rate) from PROVENANCE.md
    ("netcal_coco_detection_conf/faster-rcnn-resnet-50-iou-0.60.csv", "score vs matched"): (40062, 0.70696, 0.51435),
    ("netcal_coco_detection_conf/ssd-resnet-50-v1-iou-0.60.csv", "score vs matched"): (44810, 0.48091, 0.50348),
    ("weather_niamey_pop_binary/precip_Niamey_2016.csv", "Logistic"): (92, 0.529, 0.576),
    ("weather_niamey_pop_binary/precip_Niamey_2016.csv", "EMOS"): (92, 0.517, 0.576),
    ("weather_niamey_pop_binary/precip_Niamey_2016.csv", "ENS"): (92, 0.787, 0.576),
    ("weather_niamey_pop_binary/precip_Niamey_2016.csv", "EPC"): (92, 0.519, 0.576),
}


def _drops(ps: cc.PredictionSet) -> str:
    return "; ".join(f"{r}: {len(v)}" for r, v in ps.dropped.reasons.items()) or "none"


def _checked(ps: cc.PredictionSet) -> cc.PredictionSet:
    assert ps.n_read == ps.n_rows + ps.dropped.total and len(ps.row_number) == ps.n_rows >= 2
    return ps


def test_every_real_data_file_loads_or_is_rejected_with_a_reason():
    data_files = sorted(p for p in REAL.rglob("*") if p.is_file() and p.suffix.lower() in (".csv", ".npz", ".parquet",
                                                                                             ".tsv", ".txt", ".gz")
                        and p.relative_to(REAL).parts[0] not in HUB_FOLDERS)
    assert len(data_files) >= 70  # 74 files in 15 folders when this was written
    lines, loaded, mapped, rejected = [], 0, 0, 0
    for path in data_files:
        rel = path.relative_to(REAL).as_posix()
        folder = rel.split("/")[0]
        try:
            ps = _checked(cc.load_predictions(path))
        except cc.InputError as err:
            message = str(err)
            assert message.startswith(f"{path.name}:") and "What to do" in message, message
            if rel in REAL_MAPPINGS:  # needs a mapping: say why, then load with the documented mapping
                mapped += 1
                lines.append(f"{rel}: without a mapping → {message.split(': ', 1)[1].split(' (looked')[0][:110]}")
                for what, kwargs in REAL_MAPPINGS[rel]:
                    ps = _checked(cc.load_predictions(path, **kwargs))
                    lines.append(f"    with mapping [{what}]: {ps.task}/{ps.layout}, read {ps.n_read:,}, "
                                 f"kept {ps.n_rows:,}, dropped {ps.dropped.total} ({_drops(ps)})")
                    expected = PROVENANCE_CHECKS.get((rel, what))
                    if expected:
                        n, mean_p, base_rate = expected
                        assert ps.n_rows == n and ps.dropped.total == 0
                        assert ps.probs[:, 1].mean() == pytest.approx(mean_p, abs=6e-4)
                        assert ps.labels.mean() == pytest.approx(base_rate, abs=6e-4)
                continue
            assert folder in REJECTED_FOLDERS, f"{rel} was rejected but should load: {message}"
            assert any(reason in message for reason in REJECTED_FOLDERS[folder]), message
            assert "columns are:" in message  # the message lists what the file has
            rejected += 1
            reason = message.split(": ", 1)[1].split(" (looked")[0]
            columns = message.split("columns are: ")[1].split(" What to do")[0][:80]
            lines.append(f"{rel}: rejected → {reason} (columns: {columns})")
            continue
        assert rel not in REAL_MAPPINGS, f"{rel} now loads without its mapping: update REAL_MAPPINGS"
        assert folder not in REJECTED_FOLDERS, f"{rel} is raw data but loaded as {ps.layout}"
        for what, model in DETECTED.get(rel, []):
            part = ps if model is None else ps.take(ps.model == model)
            n, mean_p, base_rate = PROVENANCE_CHECKS[(rel, what)]
            assert part.n_rows == n and ps.dropped.total == 0 and ps.classes == ["0", "1"]
            assert part.probs[:, 1].mean() == pytest.approx(mean_p, abs=6e-4)
            assert part.labels.mean() == pytest.approx(base_rate, abs=6e-4)
        loaded += 1
        lines.append(f"{rel}: {ps.task}/{ps.layout}, read {ps.n_read:,}, kept {ps.n_rows:,}, "
                     f"dropped {ps.dropped.total} ({_drops(ps)})")
    print(f"\n{len(data_files)} data files: {loaded} load as they are, {mapped} load with a documented mapping, "
          f"{rejected} are rejected with a reason\n" + "\n".join(lines))
    assert loaded + mapped + rejected == len(data_files)
    assert rejected == sum(1 for p in data_files if p.relative_to(REAL).parts[0] in REJECTED_FOLDERS)


def test_a_forecast_hub_file_loads():
    """A hubverse model-output file loads as quantile forecasts with its truth (target data), one row per forecast
    unit; without the truth it is refused with a message asking for it (never the numeric-column message, which would
    advise deleting the hub's task-ID cells)."""
    hub = REAL / "hubverse_simple_forecast_hub"
    path = next((hub / "model-output" / "UMass-ar").glob("*.csv"))
    with pytest.raises(cc.InputError, match="give its truth") as err:
        cc.load_predictions(path)
    assert "non-numeric" not in str(err.value) and "leave them empty" not in str(err.value)
    ps = cc.load_predictions(path, truth=hub / "target-data" / "covid-hospitalizations.csv")
    assert (ps.task, ps.layout, ps.n_rows, ps.dropped.total) == ("regression", "quantile", 63, 0)
    assert len(ps.dist.levels) == 23 and set(ps.model) == {"UMass-ar"}
    assert set(ps.units["location"]) == {"20", "25", "US"}
