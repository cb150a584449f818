"""The filter controls' choices are worked out once per loaded set and equal those of a fresh computation."""

from __future__ import annotations

import gc

import numpy as np

import calib_core as cc
from views import pages as views


def _set(split: list[str], group: list[str] | None = None) -> cc.PredictionSet:
    n = len(split)
    return cc.PredictionSet(task="regression", y=np.zeros(n), dist=cc.Gaussian(np.zeros(n), np.ones(n)),
                            split=np.asarray(split), group=None if group is None else np.asarray(group))


def test_choices_are_memoised_per_set_and_returned_as_new_lists():
    a = _set(["cal", "test", "cal"], ["x", "y", "x"])
    first = views.filter_choices(a)
    assert first == (["model"], [cc.ALL, "x", "y"], ["all", "cal", "test"])
    first[2].append("changed by a caller")
    assert views.filter_choices(a) == (["model"], [cc.ALL, "x", "y"], ["all", "cal", "test"])
    b = _set(["test", "test"])  # another set: its own choices
    assert views.filter_choices(b) == (["model"], [cc.ALL], ["all", "test"])


def test_a_set_that_is_gone_leaves_nothing_behind():
    a = _set(["cal"])
    views.filter_choices(a)
    key = id(a)
    assert key in views._FILTER_CHOICES
    del a
    gc.collect()
    assert key not in views._FILTER_CHOICES
