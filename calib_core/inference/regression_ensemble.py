"""Tests of ensembles judged as ensembles: the rank histogram, the member range, and when z may be tested at all.

Null hypothesis: the target and the M members of every row are exchangeable (the target is one more draw of the
law the members are drawn from; Anderson 1996; Talagrand, Vautard & Strauss 1997; Hamill 2001).  Then the
randomised rank of the target (ties broken at random; Czado, Gneiting & Held 2009) is uniform on {0, …, M},
independently over rows.

* ``rank_chi2`` (:func:`ensemble_tests`): Pearson's X² of the M + 1 rank counts against the uniform multinomial —
  the χ²_M law when every expected count N/(M + 1) is at least 5 (Cochran's rule), else the exact multinomial law
  simulated (``n_null`` draws, seeded).  Reference M (E X² = M exactly).
* ``range_coverage``: the number of ranks in 1 … M − 1 is Binomial(N, (M − 1)/(M + 1)) exactly; exact two-sided
  binomial test, Clopper–Pearson interval.  Every row of an ensemble has the same M (rows with a missing member
  are dropped when the file is read), so one binomial law holds.
* **Degenerate spread** (:func:`degenerate_spread`): z = (y − x̄)/σ and its statistics (mean z, std z, ZMS, mean
  log z², ENCE) are tested against the exchangeability null's per-row moments by normal or gamma laws, which need
  the null's variance spread over many rows.  When some rows have a spread that is 0 or tiny against the distance
  of one of their pooled values (rain: 50 members at 0 mm and one at 0.1 mm), the candidate target at that value
  has |z| in the hundreds or thousands, and a handful of rows carry the whole null variance (the ECMWF rain
  ensemble's null reference of ZMS was 1.2e12).  The criterion, per statistic: the effective number of rows of
  the null variance, n_eff = (Σ_i v_i)² / Σ_i v_i² with v_i = Var₀(z_i) (mean z) or Var₀(z_i²) (std z, ZMS, mean
  log z², ENCE), below :data:`MIN_EFFECTIVE_ROWS` — then the statistic gets no p-value and no reference, and its
  note says why.  n_eff equals N when every row contributes alike; it falls to about 1 when one row dominates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import special

from ..base import significance as sig
from ..metrics.regression import RegressionRows
from ..metrics.regression_ensemble_ranks import ensemble_size, range_coverage_expected, rank_counts

__all__ = ["MIN_EFFECTIVE_ROWS", "Z_KEYS", "effective_rows", "degenerate_spread", "ensemble_tests",
           "withhold_degenerate"]


#: Fewest effective rows of the exchangeability null's variance for a z statistic to be tested
MIN_EFFECTIVE_ROWS = 50.0

#: z statistics and the per-row null variance whose effective rows decide whether they are tested
Z_KEYS = {"z_mean": "z", "z_std": "z2", "zms": "z2", "mean_log_z2": "z2", "ence": "z2"}

_MIN_EXPECTED = 5.0  # Cochran: χ²_M for the rank histogram when every expected count is at least 5


def effective_rows(v: np.ndarray) -> float:
    """n_eff = (Σ v_i)² / Σ v_i² over the finite v_i ≥ 0: how many rows carry a sum's variance.

    Parameters
    ----------
    v : ndarray
        Per-row variances.

    Returns
    -------
    float
        Between 1 (one row carries it all) and the number of rows (all alike); 0 when there is none.

    Examples
    --------
    >>> effective_rows(np.ones(10)), round(effective_rows(np.array([1.0, 1.0, 1e6])), 3)
    (10.0, 1.0)

    References
    ----------
    .. [1] Kish, L. (1965). *Survey Sampling*. Wiley (the effective sample size (Σw)²/Σw²).
    """
    v = np.asarray(v, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size == 0:
        return 0.0
    v = v / v.max()
    return float(v.sum() ** 2 / np.sum(v * v))


def degenerate_spread(z_moments: tuple, n_rows: int) -> dict[str, str]:
    """Which z statistics of an ensemble cannot be tested, and why: ``{key: note}`` (empty when all can).

    The per-row null moments (E z, E z², E z³, E z⁴) of the exchangeability null give v_i = Var₀(z_i) and
    Var₀(z_i²); a statistic of :data:`Z_KEYS` is withheld when the effective rows (:func:`effective_rows`) of its
    variance are below :data:`MIN_EFFECTIVE_ROWS`.

    Parameters
    ----------
    z_moments : tuple of ndarray
        (E z, E z², E z³, E z⁴) per row with a finite z (:meth:`EnsembleNull.z_moments`).
    n_rows : int
        The rows with a finite z.

    Returns
    -------
    dict of str to str
        The withheld statistics and the note each gets.

    References
    ----------
    .. [1] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. *Monthly
       Weather Review* 129(3), 550–560.
    .. [2] Kish, L. (1965). *Survey Sampling*. Wiley.
    """
    m1, m2, _, m4 = (np.broadcast_to(np.asarray(x, dtype=float), (n_rows,)) for x in z_moments)
    with np.errstate(invalid="ignore", over="ignore"):
        var = {"z": m2 - m1 * m1, "z2": m4 - m2 * m2}
        ref = {"z": float(np.nanmean(m2)) if n_rows else np.nan, "z2": float(np.nanmean(m2)) if n_rows else np.nan}
    out = {}
    for which, v in var.items():
        ne = effective_rows(v)
        if ne >= MIN_EFFECTIVE_ROWS:
            continue
        what = "z" if which == "z" else "z²"
        note = (f"no test: degenerate ensemble spread — under exchangeability the null variance of {what} is "
                f"carried by about {ne:.3g} of the {n_rows:,} rows (effective rows (Σv)²/Σv² < "
                f"{MIN_EFFECTIVE_ROWS:g}; rows whose spread is 0 or tiny against one of their pooled values; the "
                f"null's mean z² is {ref[which]:.3g}, not ≈ 1), so no normal or gamma law holds; the rank "
                "histogram and the member range test this ensemble instead")
        out.update({k: note for k, w in Z_KEYS.items() if w == which})
    return out


def withhold_degenerate(rec: dict[str, dict[str, Any]], z_moments: tuple, layout: str,
                        keys: tuple[str, ...] = tuple(Z_KEYS)) -> None:
    """Remove the p-value and reference of the z statistics ``keys`` of an ensemble whose spread is degenerate
    (:func:`degenerate_spread`) and write the reason into their note; nothing for other layouts.

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (updated).
    z_moments : tuple of ndarray
        The exchangeability null's per-row moments of z.
    layout : str
        The predictive layout ("sample" for ensembles).
    keys : tuple of str, default all of :data:`Z_KEYS`
        The statistics to look at.

    References
    ----------
    .. [1] Anderson, J. L. (1996). A method for producing and evaluating probabilistic forecasts from ensemble
       model integrations. *Journal of Climate* 9(7), 1518–1530.
    """
    if layout != "sample":
        return
    m2 = np.asarray(z_moments[1], dtype=float)
    withheld = degenerate_spread(z_moments, int(m2.size) if m2.ndim else 0)
    for k in keys:
        if k in withheld and k in rec:
            rec[k].update(p_value=np.nan, p_mc_se=np.nan, perfect=np.nan, perfect_se=np.nan, debiased=np.nan,
                          test="", note=withheld[k])


def ensemble_tests(rec: dict[str, dict[str, Any]], values: Mapping[str, float], r: RegressionRows, z_moments: tuple,
                   n_null: int, level: float, seed: int | None) -> None:
    """The tests of an ensemble judged as an ensemble, written into their records (nothing for other layouts).

    rank_chi2: Pearson X² = Σ_k (O_k − E)²/E of the randomised-rank counts, E = N/(M + 1); p-value from χ²_M when
    E ≥ 5, else from ``n_null`` exact multinomial draws (seeded by ``seed``); reference M.  range_coverage: K
    ranks in 1 … M − 1, K ~ Binomial(N, (M − 1)/(M + 1)), exact two-sided test (twice the smaller tail), Clopper–Pearson
    interval.  Then the z statistics with a degenerate null (:func:`withhold_degenerate`) lose their p-values.

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (updated).
    values : mapping of str to float
        The point values.
    r : RegressionRows
        The rows.
    z_moments : tuple of ndarray
        The exchangeability null's per-row moments of z.
    n_null : int
        Multinomial draws when some expected count is below 5.
    level : float
        Two-sided level of the interval.
    seed : int or None
        Seeds the multinomial draws.

    References
    ----------
    .. [1] Anderson, J. L. (1996). A method for producing and evaluating probabilistic forecasts from ensemble
       model integrations. *Journal of Climate* 9(7), 1518–1530.
    .. [2] Talagrand, O., Vautard, R. & Strauss, B. (1997). Evaluation of probabilistic prediction systems. *Proc.
       ECMWF Workshop on Predictability*, 1–25.
    .. [3] Hamill, T. M. (2001). Interpretation of rank histograms for verifying ensemble forecasts. *Monthly Weather
       Review* 129(3), 550–560.
    .. [4] Czado, C., Gneiting, T. & Held, L. (2009). Predictive model assessment for count data. *Biometrics*
       65(4), 1254–1261.
    .. [5] Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and sharpness.
       *Journal of the Royal Statistical Society B* 69(2), 243–268.
    """
    m = ensemble_size(r.dist)
    if not m:
        return
    n = r.n
    if "rank_chi2" in values:
        x2 = float(values["rank_chi2"])
        e = n / (m + 1.0)
        if e >= _MIN_EXPECTED:
            p, se = float(special.chdtrc(m, x2)), 0.0
            test = f"χ² law, {m} d.f. (Pearson; expected count {e:.3g} ≥ 5 per rank)"
        else:
            rng = np.random.default_rng(np.random.SeedSequence([0 if seed is None else int(seed), 2025, n, m]))
            draws = rng.multinomial(n, np.full(m + 1, 1.0 / (m + 1)), size=max(int(n_null), 1))
            x2_null = np.sum((draws - e) ** 2, axis=1) / e
            mc = sig.monte_carlo_p(x2, x2_null, "greater")
            p, se = mc.p, mc.se
            test = f"Monte Carlo ({draws.shape[0]:,} draws of the exact multinomial law; expected count {e:.3g} < 5)"
        rec["rank_chi2"].update(p_value=p, p_mc_se=se, perfect=float(m), test=test,
                                note="randomised ranks (ties broken at random); no interval: a test statistic")
    if "range_coverage" in values:
        p0 = float(range_coverage_expected(m))
        k = int(round(float(np.sum(rank_counts(r)[1:m]))))
        lo, hi = sig.clopper_pearson(k, n, level)
        rec["range_coverage"].update(
            p_value=sig.binomial_test(k, n, p0), p_mc_se=0.0, perfect=p0, ci_low=lo, ci_high=hi,
            interval="Clopper–Pearson (exact)",
            test=f"exact binomial (expectation (M − 1)/(M + 1) = {p0:.4f} for M = {m}; ties broken at random)")
    withhold_degenerate(rec, z_moments, "sample")
