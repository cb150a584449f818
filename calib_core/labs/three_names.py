"""Lab 6 — three names, one algorithm: CRUDE, signed split conformal and Kuleshov on Gaussian forecasts.

All three recalibrators read the same numbers, the standardised calibration errors z_i = (y_i − μ_i)/σ_i
of the L calibration rows, sorted: z_(1) ≤ … ≤ z_(L).  For coverage c = 1 − α the central interval of a
row with prediction N(μ, σ²) is μ + σ·[lower, upper] with

* CRUDE (Zelikman et al., Algorithm 1):       lower = z_(⌊Lα/2⌋ + 1),  upper = z_(⌊L(1 − α/2)⌋ + 1);
* signed split conformal (CRUDE §3.3;
  Linusson et al. 2014):                     lower = z_(⌊(L + 1)α/2⌋), upper = z_(⌈(L + 1)(1 − α/2)⌉);
* Kuleshov et al. (2018) isotonic recalibration of the Gaussian PIT u_i = Φ(z_i): the recalibrated
  quantile at p is Φ⁻¹(R⁻¹(p)) with R the isotonic map through (u_(i), i/L), i.e. z_(i) at p = i/L and
  a monotone interpolation between z_(⌊pL⌋) and z_(⌊pL⌋ + 1) in between.

The ranks differ by at most one, so the three intervals differ by at most one gap between neighbouring
calibration z-scores (exactly zero between CRUDE and conformal when (L + 1)α/2 is an integer), and the three
cover held-out rows equally often.  :func:`run_three_names` simulates an over-confident Gaussian forecaster
(the targets' noise is ``spread`` times the predicted σ, optionally skewed or heavy-tailed and shifted),
fits the three on the calibration rows and evaluates them on fresh test rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from ..base.regression import Gaussian
from ..calibrators import regression as rcal
from ..plots import labs_other

__all__ = ["NOISE_SHAPES", "ThreeNamesResult", "simulate_forecasts", "run_three_names", "three_names_findings"]

#: Shapes of the targets' standardised noise (each with mean 0 and variance 1).
NOISE_SHAPES = ("Gaussian", "skewed", "heavy-tailed")
Noise = Literal["Gaussian", "skewed", "heavy-tailed"]

METHODS = ("CRUDE", "split conformal (signed)", "Kuleshov isotonic")


def _standard_noise(shape: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Mean-0, variance-1 noise: N(0, 1); a centred exponential (skew 2); Student t₃/√3 (heavy tails)."""
    if shape == "Gaussian":
        return rng.standard_normal(n)
    if shape == "skewed":
        return rng.exponential(1.0, n) - 1.0
    if shape == "heavy-tailed":
        return rng.standard_t(3, n) / np.sqrt(3.0)
    raise ValueError(f"noise must be one of {NOISE_SHAPES}, got {shape!r}")


def simulate_forecasts(
    n: int, *, spread: float, shift: float, noise: str, rng: np.random.Generator
) -> tuple[np.ndarray, Gaussian]:
    """n Gaussian forecasts N(μ_i, σ_i²) and their targets y = μ + σ·(shift + spread·e).

    μ ~ N(0, 3²), σ ~ U[0.5, 2], e standardised noise of the given shape: the forecaster is over-confident when
    ``spread`` > 1.

    Parameters
    ----------
    n : int
        Rows.
    spread : float
        Scale of the standardised errors.
    shift : float
        Bias of the standardised errors.
    noise : {"Gaussian", "skewed", "heavy-tailed"}
        Shape of e.
    rng : numpy.random.Generator
        The generator.

    Returns
    -------
    y : ndarray of shape (n,)
        Targets.
    forecasts : Gaussian
        The forecasts.

    References
    ----------
    .. [1] Zelikman, E., Healy, C., Zhou, S., & Avati, A. (2020). CRUDE: calibrating regression uncertainty
       distributions empirically. arXiv:2005.12496.
    """
    mu = 3.0 * rng.standard_normal(n)
    sigma = rng.uniform(0.5, 2.0, n)
    y = mu + sigma * (shift + spread * _standard_noise(noise, n, rng))
    return y, Gaussian(mu, sigma)


def _rank_in(sorted_z: np.ndarray, value: float) -> float:
    """1-based position of ``value`` among the sorted scores: an integer for an order statistic (up to rounding,
    1e-9 relative), a half-integer strictly between two of them (NaN for ±inf)."""
    if not np.isfinite(value):
        return float("nan")
    tol = 1e-9 * (1.0 + abs(value))
    lo = int(np.searchsorted(sorted_z, value - tol, side="left"))
    hi = int(np.searchsorted(sorted_z, value + tol, side="right"))
    return float(lo + 1) if hi > lo else float(lo) + 0.5


@dataclass(frozen=True)
class ThreeNamesResult:
    """Outcome of :func:`run_three_names`.

    Attributes
    ----------
    n_calibration, n_test : int
        Calibration (L) and test rows.
    coverage : float
        c.
    z_sorted : ndarray of shape (L,)
        The sorted calibration z-scores.
    bounds : DataFrame
        One row per method — standardised bounds (lower_z, upper_z), their 1-based ranks among the sorted calibration
        z-scores (x.5 = between two), held-out coverage and mean width.
    max_abs_difference : dict of str to float
        Max over test rows and both ends of |endpoint − CRUDE's endpoint| per method, in the target's units.
    max_neighbour_gap : float
        σ_max times the largest gap z_(r+1) − z_(r) around CRUDE's ranks — the bound on it.
    quantile_functions : DataFrame
        Standardised quantile functions on a grid of p (p, CRUDE, Kuleshov).
    sample : DataFrame
        The first test rows sorted by μ with every method's interval (for the interval figure).
    options : dict
        The run's options (spread, shift, noise, seed).

    References
    ----------
    .. [1] Zelikman, E., Healy, C., Zhou, S., & Avati, A. (2020). CRUDE: calibrating regression uncertainty
       distributions empirically. arXiv:2005.12496.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [3] Linusson, H., Johansson, U., & Löfström, T. (2014). Signed-error conformal regression. Advances in
       Knowledge Discovery and Data Mining (PAKDD 2014), LNCS 8443, 224–236.
    """

    n_calibration: int
    n_test: int
    coverage: float
    z_sorted: np.ndarray
    bounds: pd.DataFrame
    max_abs_difference: dict[str, float]
    max_neighbour_gap: float
    quantile_functions: pd.DataFrame
    sample: pd.DataFrame
    options: dict = field(default_factory=dict)

    def figures(self) -> dict:
        """The lab's Plotly figures (``calib_core.plots.labs_other``)."""
        return {
            "quantiles": labs_other.standardised_quantiles_figure(self.quantile_functions, self.bounds, self.coverage),
            "intervals": labs_other.interval_sample_figure(self.sample, list(self.bounds["method"])),
            "coverage": labs_other.coverage_bars_figure(self.bounds, self.coverage, self.n_test),
        }


def run_three_names(
    n_calibration: int = 999,
    n_test: int = 5000,
    *,
    coverage: float = 0.9,
    spread: float = 1.5,
    shift: float = 0.0,
    noise: Noise = "Gaussian",
    seed: int = 0,
    n_sample: int = 30,
) -> ThreeNamesResult:
    """Fit CRUDE, signed split conformal and Kuleshov isotonic recalibration and compare their intervals.

    On ``n_calibration`` simulated Gaussian forecasts (:func:`simulate_forecasts`); their central intervals of
    ``coverage`` on ``n_test`` fresh rows (CRUDE §3.3; Kuleshov et al. 2018 §3).  Vectorised; O((L + n_test) log L).

    Parameters
    ----------
    n_calibration : int, default 999
        L.
    n_test : int, default 5000
        Fresh rows.
    coverage : float, default 0.9
        c = 1 − α.
    spread : float, default 1.5
        Scale of the standardised errors (> 1: over-confident).
    shift : float, default 0.0
        Bias of the standardised errors.
    noise : {"Gaussian", "skewed", "heavy-tailed"}, default "Gaussian"
        Shape of the noise.
    seed : int, default 0
        Seed of the simulation.
    n_sample : int, default 30
        Test rows of the interval figure.

    Returns
    -------
    ThreeNamesResult
        Bounds, differences and the data behind the figures.

    References
    ----------
    .. [1] Zelikman, E., Healy, C., Zhou, S., & Avati, A. (2020). CRUDE: calibrating regression uncertainty
       distributions empirically. arXiv:2005.12496.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [3] Linusson, H., Johansson, U., & Löfström, T. (2014). Signed-error conformal regression. Advances in
       Knowledge Discovery and Data Mining (PAKDD 2014), LNCS 8443, 224–236.
    .. [4] Vovk, V., Gammerman, A., & Shafer, G. (2005). Algorithmic Learning in a Random World. Springer.
    """
    if not 0.0 < coverage < 1.0:
        raise ValueError("coverage must be in (0, 1)")
    if n_calibration < 5 or n_test < 1:
        raise ValueError("need at least 5 calibration rows and 1 test row")
    rng = np.random.default_rng(seed)
    y_cal, d_cal = simulate_forecasts(n_calibration, spread=spread, shift=shift, noise=noise, rng=rng)
    y_test, d_test = simulate_forecasts(n_test, spread=spread, shift=shift, noise=noise, rng=rng)
    crude = rcal.CRUDE().fit(d_cal, y_cal)
    conformal = rcal.SplitConformal(signed=True).fit(d_cal, y_cal)
    kuleshov = rcal.IsotonicRecalibration().fit(d_cal, y_cal)
    z = crude.z_sorted_
    mu, sigma = d_test.mean(), d_test.std()
    intervals = {
        "uncalibrated Gaussian": d_test.interval(coverage),
        METHODS[0]: crude.interval(d_test, coverage),
        METHODS[1]: conformal.interval(d_test, coverage),
        METHODS[2]: kuleshov.transform(d_test).interval(coverage),
    }
    rows = []
    for name, (lo, hi) in intervals.items():
        lo_z, hi_z = float(np.median((lo - mu) / sigma)), float(np.median((hi - mu) / sigma))
        rows.append(
            {
                "method": name,
                "lower_z": lo_z,
                "upper_z": hi_z,
                "lower_rank": float("nan") if name.startswith("uncal") else _rank_in(z, lo_z),
                "upper_rank": float("nan") if name.startswith("uncal") else _rank_in(z, hi_z),
                "coverage_test": float(np.mean((y_test >= lo) & (y_test <= hi))),
                "mean_width": float(np.mean(hi - lo)),
            }
        )
    bounds = pd.DataFrame(rows)
    c_lo, c_hi = intervals[METHODS[0]]
    max_diff = {
        name: float(max(np.max(np.abs(lo - c_lo)), np.max(np.abs(hi - c_hi))))
        for name, (lo, hi) in intervals.items()
        if name in METHODS[1:]
    }
    # CRUDE's ranks r_lo, r_hi; the other two lie within one rank of them
    alpha = 1.0 - coverage
    L = z.size
    gaps = []
    for p in (alpha / 2.0, 1.0 - alpha / 2.0):
        r = min(int(p * L), L - 1)  # 0-based index of CRUDE's order statistic
        gaps += [z[min(r + 1, L - 1)] - z[r], z[r] - z[max(r - 1, 0)]]
    max_gap = float(np.max(sigma) * max(gaps))
    p = np.linspace(0.005, 0.995, 199)
    unit = Gaussian(np.zeros(1), np.ones(1))
    qf = pd.DataFrame(
        {
            "p": p,
            METHODS[0]: crude.transform(unit).ppf(p[None, :])[0],
            METHODS[2]: kuleshov.transform(unit).ppf(p[None, :])[0],
            "Gaussian": stats.norm.ppf(p),
        }
    )
    k = min(int(n_sample), n_test)
    order = np.argsort(mu[:k])
    sample = pd.DataFrame({"row": np.arange(1, k + 1), "mean": mu[:k][order], "y": y_test[:k][order]})
    for name, (lo, hi) in intervals.items():
        sample[f"{name}|lower"] = lo[:k][order]
        sample[f"{name}|upper"] = hi[:k][order]
    return ThreeNamesResult(
        n_calibration=int(n_calibration),
        n_test=int(n_test),
        coverage=float(coverage),
        z_sorted=z,
        bounds=bounds,
        max_abs_difference=max_diff,
        max_neighbour_gap=max_gap,
        quantile_functions=qf,
        sample=sample,
        options={"spread": spread, "shift": shift, "noise": noise, "seed": seed},
    )


def three_names_findings(result: ThreeNamesResult) -> list[str]:
    """What lab 6's numbers say, each sentence computed from the bounds and the endpoint differences (nothing fixed).

    The ranks of the three methods' bounds among the L sorted calibration z-scores and their largest difference from
    CRUDE's; the largest endpoint difference from CRUDE against the bound σ_max·(largest neighbouring z-gap), and
    whether CRUDE and conformal coincide exactly ((L + 1)α/2 an integer); each method's held-out coverage against
    the central 95% range Bin(n_test, c)/n_test of the coverage chart's grey band, with the calibration set's own
    spread ±2·√(c(1 − c)/L) when one of the three falls outside it.

    Parameters
    ----------
    result : ThreeNamesResult
        A run of :func:`run_three_names`.

    Returns
    -------
    list of str
        One sentence per finding, plain text.

    References
    ----------
    .. [1] Zelikman, E., Healy, C., Zhou, S., & Avati, A. (2020). CRUDE: calibrating regression uncertainty
       distributions empirically. arXiv:2005.12496.
    .. [2] Vovk, V., Gammerman, A., & Shafer, G. (2005). Algorithmic Learning in a Random World. Springer.
    """
    b = result.bounds.set_index("method")
    c, L, n = result.coverage, result.n_calibration, result.n_test
    ranks = "; ".join(f"{m} {b.loc[m, 'lower_rank']:g} and {b.loc[m, 'upper_rank']:g}" for m in METHODS)
    spread = max(abs(float(b.loc[m, side]) - float(b.loc[METHODS[0], side]))
                 for m in METHODS[1:] for side in ("lower_rank", "upper_rank"))
    out = [f"Ranks of the lower and upper bounds among the L = {L:,} sorted calibration z-scores (x.5: between "
           f"two): {ranks} — at most {spread:g} apart."]
    d = result.max_abs_difference
    gap = result.max_neighbour_gap
    within = all(v <= gap * (1 + 1e-9) + 1e-12 for v in d.values())
    half = (L + 1) * (1.0 - c) / 2.0
    integer = abs(half - round(half)) < 1e-9
    same = d[METHODS[1]] == 0.0
    coincide = (f"CRUDE and conformal coincide exactly ((L + 1)α/2 = {half:g} is an integer)" if same and integer
                else "CRUDE and conformal coincide exactly" if same
                else f"CRUDE and conformal differ ((L + 1)α/2 = {half:g} is not an integer)")
    out.append(f"Largest endpoint difference from CRUDE: conformal {d[METHODS[1]]:.4g}, Kuleshov "
               f"{d[METHODS[2]]:.4g}, {'within' if within else 'beyond'} the bound σ_max × largest neighbouring "
               f"z-gap = {gap:.4g}; {coincide}.")
    lo, hi = stats.binom.ppf([0.025, 0.975], n, c) / n

    def place(v: float) -> str:
        return "inside" if lo <= v <= hi else ("below" if v < lo else "above")

    covs = {m: float(b.loc[m, "coverage_test"]) for m in METHODS}
    where = {m: place(v) for m, v in covs.items()}
    listed = ", ".join(f"{m} {v:.4f}" for m, v in covs.items())
    if all(w == "inside" for w in where.values()):
        verdict = "all three inside it"
    else:
        cal = 2.0 * np.sqrt(c * (1.0 - c) / L)
        verdict = (", ".join(f"{m} {w}" for m, w in where.items()) + f" — the {L:,} calibration rows add their own "
                   f"spread of about ±{cal:.4f} to what the test rows show")
    noise = result.options.get("noise", "Gaussian")
    out.append(f"Held-out coverage at nominal {c:g} with {noise} noise: {listed}, against the grey band "
               f"{lo:.4f}–{hi:.4f} (95% binomial range at {n:,} test rows): {verdict}.")
    u = float(b.loc["uncalibrated Gaussian", "coverage_test"])
    word = {"inside": "inside the band: here the Gaussian forecast needs no recalibration",
            "below": "below the band: its intervals are too narrow (over-confident)",
            "above": "above the band: its intervals are too wide (under-confident)"}[place(u)]
    out.append(f"The uncalibrated Gaussian covers {u:.4f}, {word}.")
    return out
