"""Lab 10 — the reference value depends on the error law (Pernot 2024, arXiv 2403.00423 and 2402.10043).

Data: N heteroscedastic forecasts μ_i = 0, σ_i = exp(U(−1, 1)), and targets whose errors are ε_i = σ_i·t_i with t_i
Student-t_ν scaled to variance 1 — *calibrated in variance* (E ε² = σ²) but heavy-tailed for small ν.

The same forecasts are judged under three nulls ("a perfectly calibrated forecaster with these σ"), each a law of
the standardised error z = ε/σ with E z² = 1:

* **Gaussian**: z ~ N(0, 1) (what the Regression page assumes for ENCE's band);
* **Student-t_ν**: z = t·√((ν − 2)/ν), the true law of these data;
* **empirical z**: z drawn with replacement from the observed z/√ZMS (the data's own shape, unit mean square;
  Pernot's simulated reference from the data).

For each null ``draws`` data sets ε* = σ·z* are simulated with the *same σ* (so the same σ-bins), and ENCE (at
2–100 equal-count σ-bins), ZMS = mean z² and mean log z² are computed on each: their mean is the null's reference
value and the central 95% of the draws its band.  ENCE's reference rises with the tails (each bin's RMSE/RMV is a
ratio of noisier sums); ZMS's reference stays 1 under every null but its band widens; mean log z²'s reference
itself moves (Gaussian −1.2704; Student-t_ν ψ(½) − ψ(ν/2) + log(ν − 2)).  The observed statistics are judged
against each band: a calibrated forecaster looks miscalibrated under the wrong null.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..metrics.regression import LOG_CHI2_1_MEAN
from ..metrics.regression_tails import DEFAULT_BIN_COUNTS, log_z2_moments_student

__all__ = ["NULLS", "STATISTIC_LABELS", "ErrorLawLab", "run_error_law", "error_law_findings", "references_display"]

GAUSSIAN, STUDENT, EMPIRICAL = "Gaussian", "Student-t", "empirical z"
#: The three nulls, in the order they are drawn.
NULLS = (GAUSSIAN, STUDENT, EMPIRICAL)
STATISTICS = ("ence", "zms", "mean_log_z2")
#: Readable names of the statistics (the registry's labels).
STATISTIC_LABELS = {"ence": "ENCE", "zms": "ZMS (mean z²)", "mean_log_z2": "mean log z²"}


@dataclass(frozen=True)
class ErrorLawLab:
    """Result of :func:`run_error_law`.

    Attributes
    ----------
    n : int
        Rows.
    nu : float
        ν of the Student-t errors.
    n_bins : int
        The σ-bins of the headline ENCE.
    draws : int
        Simulated data sets per null.
    observed : DataFrame
        The data's ENCE at every bin count (``n_bins, ence``).
    observed_values : dict of str to float
        Its ENCE at ``n_bins``, ZMS and mean log z².
    bands : DataFrame
        One row per (null, n_bins) with ENCE's ``mean``, ``low``, ``high`` under that null.
    references : DataFrame
        One row per (null, statistic) — ``mean``, ``low``, ``high`` (95% of the draws), ``observed``, ``p_value``
        (two-sided Monte Carlo; ENCE one-sided, above) and ``verdict`` ("inside", "above", "below"); ENCE at
        ``n_bins``.

    References
    ----------
    .. [1] Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the
       reliability of calibration statistics for machine learning regression tasks. arXiv:2402.10043.
    .. [2] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. APL Machine Learning, 1(4), 046121 (arXiv:2309.06240).
    .. [3] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """

    n: int
    nu: float
    n_bins: int
    draws: int
    observed: pd.DataFrame
    observed_values: dict[str, float]
    bands: pd.DataFrame
    references: pd.DataFrame

    def reference(self, null: str, statistic: str) -> pd.Series:
        r = self.references
        return r[(r["null"] == null) & (r["statistic"] == statistic)].iloc[0]


def _student(rng: np.random.Generator, nu: float, size) -> np.ndarray:
    return rng.standard_t(nu, size) * np.sqrt((nu - 2.0) / nu)


def _ence_curves(var_sorted: np.ndarray, sq_sorted: np.ndarray, bin_counts: tuple[int, ...]) -> np.ndarray:
    """ENCE at each bin count for rows already in σ order; ``sq_sorted`` (draws, n) → (draws, len(bin_counts))."""
    n = var_sorted.size
    cum_v = np.concatenate([[0.0], np.cumsum(var_sorted)])
    cum_e = np.concatenate([np.zeros((sq_sorted.shape[0], 1)), np.cumsum(sq_sorted, axis=1)], axis=1)
    out = np.empty((sq_sorted.shape[0], len(bin_counts)))
    for j, b in enumerate(bin_counts):
        starts = (np.arange(b + 1, dtype=np.int64) * n + b - 1) // b  # calib_core.base.binning.equal_count_bins
        s_v = np.diff(cum_v[starts])
        s_e = np.diff(cum_e[:, starts], axis=1)
        ok = s_v > 0
        out[:, j] = np.mean(np.abs(1.0 - np.sqrt(s_e[:, ok] / s_v[ok])), axis=1)
    return out


def run_error_law(n: int = 2000, *, nu: float = 4.0, n_bins: int = 15, seed: int = 0, draws: int = 400
                  ) -> ErrorLawLab:
    """Simulate the lab (module docstring): Student-t_ν errors of calibrated variance and draws under each null.

    Parameters
    ----------
    n : int, default 2000
        Rows.
    nu : float, default 4.0
        ν of the Student-t errors (ν > 2).
    n_bins : int, default 15
        The σ-bins of the headline ENCE.
    seed : int, default 0
        Seed of the simulation.
    draws : int, default 400
        Simulated data sets per null, with the same σ.

    Returns
    -------
    ErrorLawLab
        Observed statistics, ENCE bands and references under the three nulls.

    References
    ----------
    .. [1] Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the
       reliability of calibration statistics for machine learning regression tasks. arXiv:2402.10043.
    .. [2] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. APL Machine Learning, 1(4), 046121 (arXiv:2309.06240).
    .. [3] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """
    if not nu > 2:
        raise ValueError(f"the Student-t errors need ν > 2 degrees of freedom for a variance, got {nu}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1610]))
    sigma = np.exp(rng.uniform(-1.0, 1.0, n))
    z_obs = _student(rng, nu, n)
    order = np.argsort(sigma, kind="stable")
    var_sorted = sigma[order] ** 2
    bin_counts = tuple(sorted({*(b for b in DEFAULT_BIN_COUNTS if b <= n // 2), int(n_bins)}))
    j_cur = bin_counts.index(int(n_bins))
    obs_curve = _ence_curves(var_sorted, (z_obs[order] ** 2 * var_sorted)[None, :], bin_counts)[0]
    zms_obs = float(np.mean(z_obs**2))
    observed_values = {"ence": float(obs_curve[j_cur]), "zms": zms_obs,
                       "mean_log_z2": float(np.mean(np.log(z_obs**2)))}
    pool = z_obs / np.sqrt(zms_obs)
    band_rows, ref_rows = [], []
    for null in NULLS:
        if null == GAUSSIAN:
            z = rng.standard_normal((draws, n))
        elif null == STUDENT:
            z = _student(rng, nu, (draws, n))
        else:
            z = pool[rng.integers(0, n, (draws, n))]
        z2 = z * z
        curves = _ence_curves(var_sorted, z2 * var_sorted[None, :], bin_counts)
        for j, b in enumerate(bin_counts):
            col = curves[:, j]
            band_rows.append({"null": null, "n_bins": b, "mean": float(col.mean()),
                              "low": float(np.quantile(col, 0.025)), "high": float(np.quantile(col, 0.975))})
        with np.errstate(divide="ignore"):
            lz = np.log(z2)
        lz = np.where(np.isfinite(lz), lz, np.nan)
        sims = {"ence": curves[:, j_cur], "zms": z2.mean(axis=1), "mean_log_z2": np.nanmean(lz, axis=1)}
        for stat in STATISTICS:
            x = sims[stat]
            v = observed_values[stat]
            above = (1 + np.sum(x >= v)) / (draws + 1)
            below = (1 + np.sum(x <= v)) / (draws + 1)
            p = float(above) if stat == "ence" else float(min(1.0, 2 * min(above, below)))
            lo, hi = float(np.quantile(x, 0.025)), float(np.quantile(x, 0.975))
            ref_rows.append({"null": null, "statistic": stat, "mean": float(x.mean()), "low": lo, "high": hi,
                             "observed": v, "p_value": p,
                             "verdict": "above" if v > hi else "below" if v < lo else "inside"})
    observed = pd.DataFrame({"n_bins": bin_counts, "ence": obs_curve})
    return ErrorLawLab(n=n, nu=float(nu), n_bins=int(n_bins), draws=draws, observed=observed,
                       observed_values=observed_values, bands=pd.DataFrame(band_rows),
                       references=pd.DataFrame(ref_rows))


def _band(row: pd.Series) -> str:
    return f"{row['mean']:.3g} [{row['low']:.3g}, {row['high']:.3g}]"


def error_law_findings(result: ErrorLawLab) -> list[str]:
    """What the numbers say, from :attr:`ErrorLawLab.references` (nothing fixed).

    Where the observed ENCE, ZMS and mean log z² fall under each null, how far ENCE's reference moves from the
    Gaussian null to the others, and the exact Student-t reference of mean log z².

    Parameters
    ----------
    result : ErrorLawLab
        A run of :func:`run_error_law`.

    Returns
    -------
    list of str
        One sentence per finding, plain text.

    References
    ----------
    .. [1] Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the
       reliability of calibration statistics for machine learning regression tasks. arXiv:2402.10043.
    """
    nu, b = result.nu, result.n_bins
    obs = result.observed_values
    out = []
    parts = [f"{null} {_band(result.reference(null, 'ence'))} ({result.reference(null, 'ence')['verdict']})"
             for null in NULLS]
    out.append(f"ENCE at {b} σ-bins is {obs['ence']:.3g}; the value a perfectly calibrated forecaster with these σ "
               f"gets (mean [95% band]) under each error law: " + "; ".join(parts) + ".")
    g, t, e = (float(result.reference(null, "ence")["mean"]) for null in NULLS)
    out.append(f"ENCE's reference moves with the error law alone: from {g:.3g} (Gaussian) to {t:.3g} with "
               f"Student-t errors (ν = {nu:g}, {100 * (t / g - 1):+.0f}%) and {e:.3g} with the data's own z "
               f"({100 * (e / g - 1):+.0f}%).")
    verdicts = {null: result.reference(null, "ence")["verdict"] for null in NULLS}
    if verdicts[GAUSSIAN] == "above" and verdicts[STUDENT] == "inside":
        out.append("These forecasts are calibrated in variance, yet under the Gaussian null ENCE calls them "
                   "miscalibrated: the verdict came from the assumed error law, not from the σ.")
    elif verdicts[GAUSSIAN] == verdicts[STUDENT]:
        out.append(f"At this N and ν the Gaussian and Student-t nulls agree on ENCE ({verdicts[GAUSSIAN]} the band); "
                   "lower ν or larger N separates them.")
    zr = [result.reference(null, "zms") for null in NULLS]
    out.append(f"ZMS is {obs['zms']:.3g}; its reference is ≈ 1 under every law ("
               + ", ".join(f"{null} {r['mean']:.3g}" for null, r in zip(NULLS, zr)) + "), only its band widens: "
               + ", ".join(f"{null} [{r['low']:.3g}, {r['high']:.3g}]" for null, r in zip(NULLS, zr)) + ".")
    lr = {null: result.reference(null, "mean_log_z2") for null in NULLS}
    exact = log_z2_moments_student(nu)[0]
    out.append(f"mean log z² is {obs['mean_log_z2']:.3g}; its reference itself moves: Gaussian "
               f"{lr[GAUSSIAN]['mean']:.3g} (exactly {LOG_CHI2_1_MEAN:.4f}), Student-t {lr[STUDENT]['mean']:.3g} "
               f"(exactly {exact:.4f} at ν = {nu:g}), empirical {lr[EMPIRICAL]['mean']:.3g} — judged under the "
               f"Gaussian null it is {lr[GAUSSIAN]['verdict']} the band, under the Student-t null "
               f"{lr[STUDENT]['verdict']}.")
    return out


def references_display(result: ErrorLawLab) -> pd.DataFrame:
    """:attr:`ErrorLawLab.references` with readable statistic names (ENCE at its B).

    Parameters
    ----------
    result : ErrorLawLab
        A run of :func:`run_error_law`.

    Returns
    -------
    DataFrame
        The references table for display.

    References
    ----------
    .. [1] Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the
       reliability of calibration statistics for machine learning regression tasks. arXiv:2402.10043.
    """
    out = result.references.copy()
    out["statistic"] = out["statistic"].map(
        lambda k: f"ENCE at {result.n_bins} bins" if k == "ence" else STATISTIC_LABELS[k])
    return out
