"""dashboard.redraw_cache.plain_copy: the copy of a figure dict's tree that dict_figure encodes equals
``copy.deepcopy``'s (types, values, array dtypes, orders and bytes) and shares no container or array with it."""

from __future__ import annotations

import copy

import numpy as np
import plotly.io as pio
from _plotly_utils.utils import convert_to_base64
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dashboard.redraw_cache import plain_copy

_FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)
_ARRAYS = hnp.arrays(st.sampled_from([np.float64, np.float32, np.int64, np.int8, np.uint64, np.bool_]),
                     hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=4))
_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1), _FLOATS, st.text(max_size=5), _ARRAYS,
                    st.builds(lambda v: np.float64(v), _FLOATS),
                    st.builds(lambda v: np.array(v, dtype=object), st.lists(st.text(max_size=3), max_size=3)))
_TREES = st.recursive(_LEAVES, lambda kids: st.one_of(
    st.lists(kids, max_size=4), st.tuples(kids, kids),
    st.dictionaries(st.sampled_from(["x", "y", "range", "marker", "name", "text", "customdata"]), kids,
                    max_size=4)), max_leaves=20)


def _same(a, b) -> None:
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.flags.c_contiguous == b.flags.c_contiguous
        if a.dtype == object:
            assert a.tolist() == b.tolist()
        else:
            assert a.tobytes() == b.tobytes()
    elif isinstance(a, float) and a != a:
        assert b != b
    else:
        assert a == b


def _containers(obj):
    if isinstance(obj, dict):
        yield obj
        for v in obj.values():
            yield from _containers(v)
    elif isinstance(obj, list):
        yield obj
        for v in obj:
            yield from _containers(v)
    elif isinstance(obj, tuple):
        for v in obj:
            yield from _containers(v)
    elif isinstance(obj, np.ndarray):
        yield obj


@settings(max_examples=300, deadline=None)
@given(_TREES)
def test_plain_copy_is_deepcopy(tree) -> None:
    got, want = plain_copy(tree), copy.deepcopy(tree)
    _same(got, want)
    _same(got, tree)
    originals = {id(c) for c in _containers(tree)}
    assert not any(id(c) in originals for c in _containers(got))
    # what dict_figure does with it: the encoded JSON is the deep copy's
    wrapped_got, wrapped_want = {"layout": {"k": got}}, {"layout": {"k": want}}
    convert_to_base64(wrapped_got)
    convert_to_base64(wrapped_want)
    assert pio.to_json(wrapped_got, validate=False) == pio.to_json(wrapped_want, validate=False)


def test_non_contiguous_and_fortran_arrays_keep_their_layout() -> None:
    base = np.arange(12.0).reshape(3, 4)
    for a in (base.T, base[:, ::2], np.asfortranarray(base), base.astype(np.float32)[::-1]):
        got, want = plain_copy({"z": a}), copy.deepcopy({"z": a})
        _same(got, want)
        assert got["z"].flags.f_contiguous == want["z"].flags.f_contiguous
        assert got["z"] is not a and not np.shares_memory(got["z"], a)


def test_shared_subtrees_and_edge_values() -> None:
    shared = [1.0, -0.0, float("inf"), float("-inf"), float("nan"), 5e-324, 1.7976931348623157e308]
    tree = {"x": shared, "y": shared, "t": ("a", None, True), "n": np.float32(1.5)}
    got = plain_copy(tree)
    _same(got, copy.deepcopy(tree))
    assert got["x"] is not shared and got["y"] is not shared
    assert plain_copy(3) == 3 and plain_copy("s") == "s" and plain_copy(None) is None
