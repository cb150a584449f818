"""A seeded synthetic forecast hub in hubverse format, with models whose calibration is known.

:func:`write_example_hub` writes a hub folder — ``model-output/<model>/<round>-<model>.csv|.parquet`` in the
hubverse long format (task IDs ``reference_date, target, horizon, location, target_end_date`` then
``output_type, output_type_id, value``), ``target-data/time-series.csv`` (``target_end_date, target, location,
observation``) and a minimal ``hub-config`` (``admin.json``, ``tasks.json``) —, and
:func:`example_hub_frames` returns the same tables in memory.  Locations are text with leading zeros
(``"01"``, ``"02"`` …), as in the US hubs' FIPS codes.

The truth law.  For location ℓ and target date t the observation is

    y_{ℓ,t} = μ_{ℓ,t} + Σ_{j=1..K} ε_{ℓ,t,j},   ε_j ~ N(0, s_ℓ²) independent,

with K the number of horizons, μ_{ℓ,t} = a_ℓ (1 + 0.3 sin(2π t / 52)) a seasonal level (t in weeks) and
s_ℓ = 0.05 a_ℓ.  A forecast made k steps ahead (k = h − min(horizons) + 1 ∈ 1…K) already knows the
components ε_{k+1} … ε_K, so its TRUE predictive law is N(μ + Σ_{j>k} ε_j, k s²): the law y is drawn from
given what is known at that horizon.  Every target date is therefore forecast by several rounds, each with its
own exact law, and one observation per (location, target date) is shared by all of them, as in a real hub.

With ``family="negbin"`` the observation is a count, y ~ NegBin(mean μ_{ℓ,t}, size r = 20) independently per
(location, date), and the calibrated law at every horizon is that negative binomial.

The models (``miscalibration`` cycles through them; model ids ``team<i>-<kind>``):

* ``"calibrated"`` — the exact quantiles F⁻¹(τ) of the true predictive law (``scipy.stats`` ppf) at every stated
  level: P(y ≤ q_τ) = τ (``"normal"``; for counts ≥ τ);
* ``"narrow"`` — the same centre, spread × 0.6 (over-confident: too many observations outside the intervals);
* ``"biased"`` — the true law shifted up by 0.75 of its standard deviation (forecasts too high: the share of
  observations at or below the median is Φ(0.75) ≈ 0.77 for the normal family, not 0.5);
* ``"wide"`` — the same centre, spread × 1.6 (under-confident).

Everything is seeded: the same arguments give bit-identical files.

References
----------
Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
format. PLOS Computational Biology 17(2), e1008618.

Hubverse (2024). Model output, target data and hub configuration formats. Hubverse documentation,
https://docs.hubverse.io.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["HUB_LEVELS", "HUB_MODEL_KINDS", "ExampleHub", "example_hub_frames", "write_example_hub"]

#: The 23 quantile levels of the US COVID-19 and FluSight hubs.
HUB_LEVELS = (0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75,
              0.8, 0.85, 0.9, 0.95, 0.975, 0.99)

#: The kinds of model of the example hub: spread factor and shift (in predictive standard deviations).
HUB_MODEL_KINDS = {"calibrated": (1.0, 0.0), "narrow": (0.6, 0.0), "biased": (1.0, 0.75), "wide": (1.6, 0.0)}

#: The example hub's one target.
TARGET = "wk inc flu hosp"
#: First round (a Saturday, as in FluSight).
FIRST_ROUND = pd.Timestamp("2023-10-14")
#: Negative-binomial size r of the count family (variance μ + μ²/r).
NEGBIN_SIZE = 20.0

Family = Literal["normal", "negbin"]
FileFormat = Literal["csv", "parquet"]


@dataclass(frozen=True)
class ExampleHub:
    """The tables of an example hub.

    Attributes
    ----------
    forecasts : DataFrame
        All model output in the hubverse long format, with a ``model_id`` column first (one row per model ×
        forecast unit × level), sorted by model, round, location, horizon, level.
    truth : DataFrame
        The target data: ``target_end_date`` (datetime64), ``target``, ``location`` (text), ``observation``.
    models : dict of str to str
        Model id → its kind (``"calibrated"``, ``"narrow"``, ``"biased"``, ``"wide"``).
    levels : tuple of float
        The stated quantile levels.
    """

    forecasts: pd.DataFrame
    truth: pd.DataFrame
    models: dict[str, str]
    levels: tuple[float, ...]


def _model_kinds(n_models: int, miscalibration: Sequence[str] | None) -> dict[str, str]:
    kinds = list(miscalibration) if miscalibration is not None else ["calibrated", "narrow", "biased"]
    unknown = [k for k in kinds if k not in HUB_MODEL_KINDS]
    if unknown or not kinds:
        raise ValueError(f"miscalibration: unknown kind(s) {unknown}; choose from {list(HUB_MODEL_KINDS)}")
    if n_models < 1:
        raise ValueError(f"n_models must be at least 1, got {n_models}")
    return {f"team{i + 1}-{kinds[i % len(kinds)]}": kinds[i % len(kinds)] for i in range(n_models)}


def example_hub_frames(
    *,
    n_models: int = 3,
    n_locations: int = 5,
    n_rounds: int = 8,
    horizons: Sequence[int] = (0, 1, 2, 3),
    levels: Sequence[float] = HUB_LEVELS,
    seed: int = 0,
    family: Family = "normal",
    miscalibration: Sequence[str] | None = None,
) -> ExampleHub:
    """The model output and target data of a synthetic hub, in memory.

    Rounds are weekly (``reference_date`` = 2023-10-14 + 7r days); ``target_end_date = reference_date + 7 h``
    days.  Model ``i`` (0-based) gives the exact quantiles q_τ = F⁻¹(τ) of the law
    ``N(c + δ σ_k, (f σ_k)²)`` (normal family; σ_k = s √k) with (f, δ) the spread factor and shift of its kind
    (``HUB_MODEL_KINDS``) and c, σ_k the true conditional mean and standard deviation k steps ahead (see the
    module docstring); the truth is drawn once per (location, target date) from the true law.

    Parameters
    ----------
    n_models : int
        Number of models (kinds cycle through ``miscalibration``).
    n_locations : int
        Number of locations, named ``"01"``, ``"02"`` … (zero-padded to at least two digits).
    n_rounds : int
        Number of weekly rounds.
    horizons : sequence of int
        Horizons in weeks (may include 0 or negative values).
    levels : sequence of float
        The stated quantile levels (default: the 23 hub levels).
    seed : int
        Seed of the random generator.
    family : {"normal", "negbin"}
        The truth law (see the module docstring).
    miscalibration : sequence of str, optional
        The kinds of the models, cycled (default ``("calibrated", "narrow", "biased")``).

    Returns
    -------
    ExampleHub
        ``forecasts`` (long format with ``model_id``), ``truth``, ``models`` (id → kind) and ``levels``.

    Raises
    ------
    ValueError
        On an unknown kind or family, no horizon, or levels outside (0, 1).

    References
    ----------
    Bracher, J., Ray, E. L., Gneiting, T. & Reich, N. G. (2021). Evaluating epidemic forecasts in an interval
    format. PLOS Computational Biology 17(2), e1008618.

    Examples
    --------
    >>> hub = example_hub_frames(n_locations=2, n_rounds=1, horizons=(1,), levels=(0.25, 0.5, 0.75))
    >>> len(hub.forecasts), list(hub.truth.columns)
    (18, ['target_end_date', 'target', 'location', 'observation'])
    >>> sorted(hub.models.values())
    ['biased', 'calibrated', 'narrow']
    """
    models = _model_kinds(n_models, miscalibration)
    tau = np.asarray(levels, dtype=float)
    h = np.asarray(sorted(set(int(x) for x in horizons)), dtype=np.int64)
    if h.size == 0 or n_locations < 1 or n_rounds < 1:
        raise ValueError("example hub: give at least one horizon, one location and one round")
    if tau.size == 0 or np.any((tau <= 0) | (tau >= 1)):
        raise ValueError(f"levels must lie strictly between 0 and 1, got {list(levels)}")
    if family not in ("normal", "negbin"):
        raise ValueError(f"family must be 'normal' or 'negbin', got {family!r}")
    rng = np.random.default_rng(seed)
    n_steps = h.size if h.size == 1 else int(h[-1] - h[0] + 1)
    width = max(2, len(str(n_locations)))
    locations = np.array([str(i + 1).zfill(width) for i in range(n_locations)])
    scale = np.round(rng.uniform(50.0, 1000.0, n_locations), 1)

    # Target dates: every reference date + 7h; index weeks from the first round.
    week_min, week_max = int(h[0]), int(n_rounds - 1 + h[-1])
    weeks = np.arange(week_min, week_max + 1)
    n_weeks = weeks.size
    mu = scale[:, None] * (1.0 + 0.3 * np.sin(2 * np.pi * weeks[None, :] / 52.0))  # (L, W)
    s = 0.05 * scale  # (L,)
    eps = rng.standard_normal((n_locations, n_weeks, n_steps)) * s[:, None, None]  # (L, W, K)
    if family == "normal":
        y = mu + eps.sum(axis=2)
    else:
        r = NEGBIN_SIZE
        y = rng.negative_binomial(r, r / (r + mu)).astype(float)

    # Forecast units: round × location × horizon (sorted as written).
    rr, ll, hh = (a.ravel() for a in np.meshgrid(np.arange(n_rounds), np.arange(n_locations), h, indexing="ij"))
    w = rr + hh - week_min  # index of the target week
    k = (hh - h[0] + 1) if h.size > 1 else np.ones_like(hh)  # steps ahead, 1 … K
    if family == "normal":
        known = np.cumsum(eps[:, :, ::-1], axis=2)[:, :, ::-1]  # known[..., j] = Σ_{i ≥ j} ε_i
        known = np.concatenate([known, np.zeros((n_locations, n_weeks, 1))], axis=2)
        centre = mu[ll, w] + known[ll, w, k]  # Σ_{j > k} ε_j (0-based index k)
        sd = s[ll] * np.sqrt(k)
    else:
        centre = mu[ll, w]
        sd = np.sqrt(centre + centre**2 / NEGBIN_SIZE)

    ref = FIRST_ROUND + pd.to_timedelta(7 * rr, unit="D")
    end = FIRST_ROUND + pd.to_timedelta(7 * (rr + hh), unit="D")
    n_units, n_levels = rr.size, tau.size
    frames = []
    for model, kind in models.items():
        spread, shift = HUB_MODEL_KINDS[kind]
        if family == "normal":
            q = stats.norm.ppf(tau[None, :], loc=(centre + shift * sd)[:, None], scale=(spread * sd)[:, None])
        else:
            # spread f scales the standard deviation: variance f²(m + m²/r) with the same mean m.
            m = centre + shift * sd
            var = (spread * sd) ** 2
            size = m**2 / np.maximum(var - m, 1e-9)
            q = stats.nbinom.ppf(tau[None, :], size[:, None], (size / (size + m))[:, None])
        frames.append(pd.DataFrame({
            "model_id": model,
            "reference_date": np.repeat(ref.strftime("%Y-%m-%d").to_numpy(), n_levels),
            "target": TARGET,
            "horizon": np.repeat(hh, n_levels),
            "location": np.repeat(locations[ll], n_levels),
            "target_end_date": np.repeat(end.strftime("%Y-%m-%d").to_numpy(), n_levels),
            "output_type": "quantile",
            "output_type_id": np.tile([f"{t:g}" for t in tau], n_units),
            "value": q.ravel(),
        }))
    forecasts = pd.concat(frames, ignore_index=True)
    lw, ww = np.meshgrid(np.arange(n_locations), np.arange(n_weeks), indexing="ij")
    truth = pd.DataFrame({
        "target_end_date": (FIRST_ROUND + pd.to_timedelta(7 * weeks[ww.ravel()], unit="D")),
        "target": TARGET,
        "location": locations[lw.ravel()],
        "observation": y[lw.ravel(), ww.ravel()],
    })
    return ExampleHub(forecasts=forecasts, truth=truth, models=models, levels=tuple(float(t) for t in tau))


def _tasks_json(hub: ExampleHub, file_format: str) -> dict:
    fc = hub.forecasts
    return {
        "schema_version": "https://raw.githubusercontent.com/hubverse-org/schemas/main/v3.0.0/tasks-schema.json",
        "rounds": [{
            "round_id_from_variable": True,
            "round_id": "reference_date",
            "model_tasks": [{
                "task_ids": {
                    "reference_date": {"required": None, "optional": sorted(fc["reference_date"].unique())},
                    "target": {"required": [TARGET], "optional": None},
                    "horizon": {"required": None, "optional": sorted(int(x) for x in fc["horizon"].unique())},
                    "location": {"required": None, "optional": sorted(fc["location"].unique())},
                    "target_end_date": {"required": None, "optional": sorted(fc["target_end_date"].unique())},
                },
                "output_type": {"quantile": {
                    "output_type_id": {"required": list(hub.levels), "optional": None},
                    "value": {"type": "double"},
                }},
                "target_metadata": [{
                    "target_id": TARGET, "target_name": "Weekly incident influenza hospitalisations (synthetic)",
                    "target_units": "count", "target_keys": {"target": TARGET}, "target_type": "continuous",
                    "is_step_ahead": True, "time_unit": "week",
                }],
            }],
            "submissions_due": {"relative_to": "reference_date", "start": -6, "end": 0},
        }],
    }


def write_example_hub(
    path: str | Path,
    *,
    n_models: int = 3,
    n_locations: int = 5,
    n_rounds: int = 8,
    horizons: Sequence[int] = (0, 1, 2, 3),
    levels: Sequence[float] = HUB_LEVELS,
    seed: int = 0,
    family: Family = "normal",
    miscalibration: Sequence[str] | None = None,
    file_format: FileFormat = "csv",
    target_end_date: bool = True,
) -> ExampleHub:
    """Write a synthetic hub folder (see :func:`example_hub_frames` for the laws).

    Layout: ``<path>/model-output/<model>/<reference_date>-<model>.<csv|parquet>`` (one file per model and
    round, no ``model_id`` column), ``<path>/target-data/time-series.csv`` and ``<path>/hub-config/{admin,
    tasks}.json`` (``time_unit`` week).  In Parquet files every task-ID column and ``output_type_id`` are
    strings and ``value`` is float64.

    Parameters
    ----------
    path : str or Path
        The hub folder (created; existing files of the same names are replaced).
    n_models, n_locations, n_rounds, horizons, levels, seed, family, miscalibration
        As in :func:`example_hub_frames`.
    file_format : {"csv", "parquet"}
        Format of the model-output files (the target data are always CSV).
    target_end_date : bool
        Write the ``target_end_date`` column in the model output (else the reader derives it from
        ``reference_date + horizon`` weeks).

    Returns
    -------
    ExampleHub
        The tables written (``forecasts`` with ``model_id`` and, always, ``target_end_date``).

    Raises
    ------
    ValueError
        On an unknown file format, and as :func:`example_hub_frames`.

    References
    ----------
    Hubverse (2024). Model output, target data and hub configuration formats. Hubverse documentation,
    https://docs.hubverse.io.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     hub = write_example_hub(d, n_rounds=2)
    ...     sorted(p.name for p in pathlib.Path(d, "model-output", "team1-calibrated").iterdir())
    ['2023-10-14-team1-calibrated.csv', '2023-10-21-team1-calibrated.csv']
    """
    if file_format not in ("csv", "parquet"):
        raise ValueError(f"file_format must be 'csv' or 'parquet', got {file_format!r}")
    hub = example_hub_frames(n_models=n_models, n_locations=n_locations, n_rounds=n_rounds, horizons=horizons,
                             levels=levels, seed=seed, family=family, miscalibration=miscalibration)
    root = Path(path)
    (root / "target-data").mkdir(parents=True, exist_ok=True)
    (root / "hub-config").mkdir(parents=True, exist_ok=True)
    admin = {
        "schema_version": "https://raw.githubusercontent.com/hubverse-org/schemas/main/v3.0.0/admin-schema.json",
        "name": "Calibration Lab example hub", "maintainer": "Calibration Lab",
        "repository": {"host": "github", "owner": "calibration-lab", "name": "example-hub"},
        "file_format": [file_format], "timezone": "UTC",
    }
    (root / "hub-config" / "admin.json").write_text(json.dumps(admin, indent=2))
    (root / "hub-config" / "tasks.json").write_text(json.dumps(_tasks_json(hub, file_format), indent=2))
    truth = hub.truth.assign(target_end_date=hub.truth["target_end_date"].dt.strftime("%Y-%m-%d"))
    truth.to_csv(root / "target-data" / "time-series.csv", index=False)
    columns = [c for c in hub.forecasts.columns if c != "model_id" and (target_end_date or c != "target_end_date")]
    for (model, ref), part in hub.forecasts.groupby(["model_id", "reference_date"], sort=False):
        folder = root / "model-output" / str(model)
        folder.mkdir(parents=True, exist_ok=True)
        out = part[columns].reset_index(drop=True)
        name = folder / f"{ref}-{model}.{file_format}"
        if file_format == "csv":
            out.to_csv(name, index=False)
        else:
            out.to_parquet(name, index=False)
    return hub
