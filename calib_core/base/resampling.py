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
    """Yield ``n_resamples`` multinomial count vectors (float) of length n summing to n."""
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

    Returns ``{name: (low, high)}`` at the given two-sided ``level``.
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

    ``simulate(rng)`` draws targets from the predictions and returns the statistics; the result is
    ``{name: (mean, low, high)}``.
    """
    if n_simulations <= 0:
        return {}
    rng = np.random.default_rng(seed)
    return _percentile_table([simulate(rng) for _ in range(n_simulations)], level)
