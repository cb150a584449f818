"""Bootstrap confidence intervals and perfect-calibration reference values (shared by all tasks).

Every scalar the Report shows comes with

* a **bootstrap CI**: rows resampled with replacement, expressed as multinomial count weights
  w ~ Multinomial(N, 1/N) so that statistics computed on pre-sorted data stay O(N) per
  replicate (``statistic(weights)`` must accept ``None`` for the original data);
* its **value under perfect calibration**: the statistic recomputed on targets simulated from the
  predicted distributions themselves (y* ~ F_i, or labels y* ~ Categorical(p_i)); the mean over
  simulations is what a perfectly calibrated forecaster with the same predictions would score, and
  the central interval shows the noise level at this N.

Both are seeded (``numpy.random.default_rng(seed)``) and reproducible.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import numpy as np

__all__ = ["bootstrap_weights", "bootstrap_intervals", "simulate_reference"]

Statistic = Callable[[np.ndarray | None], Mapping[str, float]]


def bootstrap_weights(n: int, n_resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Yield ``n_resamples`` multinomial count vectors w ~ Multinomial(n, 1/n) (float), each summing to n.

    Parameters
    ----------
    n : int
        Rows.
    n_resamples : int
        Replicates.
    rng : numpy.random.Generator
        Random numbers.

    Yields
    ------
    ndarray of shape (n,)
        The count weights of one replicate.

    References
    ----------
    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    """
    for _ in range(n_resamples):
        yield np.bincount(rng.integers(0, n, size=n), minlength=n).astype(float)


def _percentile_table(
    draws: list[Mapping[str, float]], level: float
) -> dict[str, tuple[float, float, float]]:
    names = list(draws[0].keys()) if draws else []
    alpha = (1.0 - level) / 2.0
    out: dict[str, tuple[float, float, float]] = {}
    for name in names:
        vals = np.array([d[name] for d in draws], dtype=float)
        vals = vals[np.isfinite(vals)]
        if vals.size == 0:
            out[name] = (np.nan, np.nan, np.nan)
        else:
            lo, hi = np.quantile(vals, [alpha, 1.0 - alpha])
            out[name] = (float(vals.mean()), float(lo), float(hi))
    return out


def bootstrap_intervals(
    statistic: Statistic,
    n: int,
    n_resamples: int = 200,
    level: float = 0.95,
    seed: int | None = 0,
) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap CI of every scalar returned by ``statistic(weights)``.

    Parameters
    ----------
    statistic : callable
        ``statistic(weights)`` → ``{name: value}``; ``weights=None`` for the data.
    n : int
        Rows.
    n_resamples : int, default 200
        Replicates.
    level : float, default 0.95
        Two-sided level.
    seed : int or None, default 0
        Seed.

    Returns
    -------
    dict of str to (float, float)
        ``{name: (low, high)}``.

    References
    ----------
    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    """
    if n_resamples <= 0 or n == 0:
        return {}
    rng = np.random.default_rng(seed)
    draws = [statistic(w) for w in bootstrap_weights(n, n_resamples, rng)]
    return {k: (v[1], v[2]) for k, v in _percentile_table(draws, level).items()}


def simulate_reference(
    simulate: Callable[[np.random.Generator], Mapping[str, float]],
    n_simulations: int = 50,
    level: float = 0.95,
    seed: int | None = 0,
) -> dict[str, tuple[float, float, float]]:
    """Mean and central interval of each statistic over simulated perfectly calibrated targets.

    Parameters
    ----------
    simulate : callable
        ``simulate(rng)`` draws targets from the predictions and returns ``{name: value}``.
    n_simulations : int, default 50
        Simulations.
    level : float, default 0.95
        Level of the central interval.
    seed : int or None, default 0
        Seed.

    Returns
    -------
    dict of str to (float, float, float)
        ``{name: (mean, low, high)}``.

    References
    ----------
    Bröcker, J. & Smith, L. A. (2007). Increasing the reliability of reliability diagrams. Weather and
    Forecasting 22(3), 651–661.

    Dawid, A. P. (1984). Statistical theory: the prequential approach. Journal of the Royal Statistical Society
    A 147(2), 278–292.
    """
    if n_simulations <= 0:
        return {}
    rng = np.random.default_rng(seed)
    return _percentile_table([simulate(rng) for _ in range(n_simulations)], level)
