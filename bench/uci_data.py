"""Loader for the raw UCI regression sets in ``../shared/data/real/uci_regression_raw`` (read-only).

The folder holds the Hernández-Lobato & Adams / Gal & Ghahramani benchmark versions (see its
PROVENANCE.md): ``<name>.csv`` with a header, the target being the column named in PROVENANCE.md
(the last column except for the naval set, whose second target ``turb_decay_state`` is dropped from
the features, as in Gal's ``index_features.txt``), and ``<name>_test_masks.csv`` with Gal's standard
test masks (n_rows × n_splits, 1 = test row).  Nothing is copied into the repository.

    from bench.uci_data import load_uci, UCI_SETS
    X, y, info = load_uci("concrete")
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["UCI_DIR", "UCI_SETS", "UciInfo", "available", "load_uci", "load_test_masks"]

#: ../shared/data/real/uci_regression_raw relative to the repository root (override: CALIB_UCI_DIR).
UCI_DIR = Path(
    os.environ.get(
        "CALIB_UCI_DIR", Path(__file__).resolve().parents[2] / "shared" / "data" / "real" / "uci_regression_raw"
    )
)

#: file stem -> (target column, columns that are not features besides the target), from PROVENANCE.md
UCI_SETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "airfoil": ("scaled_sound_pressure_level_dB", ()),
    "bostonHousing": ("MEDV", ()),
    "concrete": ("Concrete-compressive-strength", ()),
    "energy": ("heating_load", ()),
    "kin8nm": ("y", ()),
    "naval-propulsion-plant": ("comp_decay_state", ("turb_decay_state",)),
    "power-plant": ("PE", ()),
    "protein-tertiary-structure": ("RMSD", ()),
    "wine-quality-red": ("quality", ()),
    "yacht": ("residuary_resistance", ()),
}


@dataclass(frozen=True)
class UciInfo:
    """Where a data set came from and what its columns are."""

    name: str
    path: Path
    target: str
    features: tuple[str, ...]
    n_rows: int


def available() -> list[str]:
    """Names of the sets present on disk (empty if the shared folder is missing)."""
    return [name for name in UCI_SETS if (UCI_DIR / f"{name}.csv").is_file()]


def load_uci(name: str, data_dir: Path | None = None) -> tuple[np.ndarray, np.ndarray, UciInfo]:
    """Features X (n, d) float64, target y (n,) and an :class:`UciInfo` for one raw UCI set.

    Raises FileNotFoundError naming the file when the shared folder is missing, and ValueError when
    the expected target column is absent or a cell is not numeric/finite.
    """
    if name not in UCI_SETS:
        raise KeyError(f"unknown UCI set {name!r}; known: {', '.join(UCI_SETS)}")
    folder = Path(data_dir) if data_dir is not None else UCI_DIR
    path = folder / f"{name}.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found (the raw UCI sets live in ../shared/data/real/uci_regression_raw)")
    df = pd.read_csv(path)
    target, extra = UCI_SETS[name]
    if target not in df.columns:
        raise ValueError(f"{path}: target column {target!r} missing; columns are {list(df.columns)}")
    features = tuple(c for c in df.columns if c != target and c not in extra)
    X = df.loc[:, list(features)].to_numpy(dtype=float)
    y = df[target].to_numpy(dtype=float)
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError(f"{path}: non-finite values")
    return X, y, UciInfo(name=name, path=path, target=target, features=features, n_rows=len(y))


def load_test_masks(name: str, data_dir: Path | None = None) -> np.ndarray:
    """Gal's standard splits as a boolean (n_rows, n_splits) array (True = test row); airfoil has none."""
    folder = Path(data_dir) if data_dir is not None else UCI_DIR
    path = folder / f"{name}_test_masks.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found")
    return pd.read_csv(path).to_numpy() == 1
