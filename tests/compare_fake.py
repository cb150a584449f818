"""ModelComparison-shaped objects for the Compare models page's tests: the fields of ``cc.compare_models``' result
(``.table``, ``.pairwise``, ``.baseline``, ``.score``, ``.clustering``, ``.sentences``, ``.notes``) with chosen
numbers, so the view-model and the figures are tested on known values whatever the core computes."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class FakeComparison:
    table: pd.DataFrame
    pairwise: pd.DataFrame
    baseline: str
    score: str = "wis"
    clustering: str = "whole reference_date clusters resampled (12 clusters)"
    sentences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def fake_comparison(models=("base", "good", "bad", "same"), relative=(1.0, 0.8, 1.3, 0.97),
                    p_holm=(np.nan, 0.003, 0.01, 0.6), baseline: str | None = None, score: str = "wis",
                    n_units: int = 96) -> FakeComparison:
    models = [str(m) for m in models]
    baseline = baseline or models[0]
    rel = np.asarray(relative, float)
    base_mean = 10.0
    table = pd.DataFrame({
        "model": models, "n_units": n_units, "mean_score": base_mean * rel, "relative_score": rel,
        "relative_lo": np.where(np.array(models) == baseline, 1.0, rel * 0.9),  # the core's baseline: 1–1
        "relative_hi": np.where(np.array(models) == baseline, 1.0, rel * 1.1),
        "dm_statistic": np.log(rel) * 10, "p_value": np.asarray(p_holm, float) / 2,
        "p_holm": np.asarray(p_holm, float), "better_than_baseline": (rel < 1) & (np.asarray(p_holm) < 0.05),
        "in_mcs": rel <= np.min(rel) * 1.25, "mcs_p": np.clip(np.min(rel) / rel, 0, 1),
    })
    a, b = np.triu_indices(len(models), 1)
    pairwise = pd.DataFrame({"model_a": np.array(models)[a], "model_b": np.array(models)[b],
                             "ratio": rel[a] / rel[b], "p_value": np.linspace(0.001, 0.5, len(a))})
    sentences = [f"{m}'s {score.upper()} is {r:.2f} of the baseline's." for m, r in zip(models, rel)]
    return FakeComparison(table, pairwise, baseline, score, sentences=sentences,
                          notes=["3 forecast units not forecast by every model were left out."])
