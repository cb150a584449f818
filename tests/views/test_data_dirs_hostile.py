"""Hostile paths typed into the Data page's server-path box (views.data_dirs.resolve_data_files): NUL and control
characters, symbolic-link loops under '**', walks without end, and a fuzz of the resolver whose invariant is that
every answer is either files inside the allowed directories or an InputError with a message."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calib_core.base.predictions import InputError
from views import data_dirs
from views.loading import resolve_hub_folder


@pytest.fixture
def allowed(tmp_path):
    root = tmp_path / "allowed"
    runs = root / "runs"
    (runs / "a").mkdir(parents=True)
    (runs / "b").mkdir()
    frame = pd.DataFrame({"y": [0.1, 0.2], "mean": [0.0, 0.1], "std": [1.0, 1.0]})
    frame.to_parquet(runs / "a" / "x.parquet")
    frame.to_parquet(runs / "b" / "y.parquet")
    outside = tmp_path / "outside"
    outside.mkdir()
    frame.to_parquet(outside / "secret.parquet")
    return root, outside


def _loops(root: Path) -> None:
    os.symlink("..", root / "runs" / "a" / "up")
    os.symlink("../a", root / "runs" / "b" / "loop")


def test_a_glob_through_two_symlink_loops_is_refused_within_seconds(allowed):
    root, _ = allowed
    _loops(root)
    dirs = data_dirs.allowed_dirs(str(root))
    t0 = time.perf_counter()
    with pytest.raises(InputError, match="a loop") as err:
        data_dirs.resolve_data_files("runs/**/*.parquet", dirs)
    assert time.perf_counter() - t0 < 5
    assert "up" in err.value.message or "loop" in err.value.message
    assert data_dirs.resolve_data_files("runs/*/*.parquet", dirs) == sorted(
        str(p.resolve()) for p in (root / "runs").glob("*/*.parquet"))


def test_a_glob_never_lists_a_folder_outside(allowed):
    root, outside = allowed
    os.symlink(outside, root / "runs" / "elsewhere")
    with pytest.raises(InputError, match="elsewhere is a symbolic link that leads outside") as err:
        data_dirs.resolve_data_files("**/*.parquet", data_dirs.allowed_dirs(str(root)))
    assert "secret.parquet" not in str(err.value) and data_dirs.ENV_VAR in str(err.value)


def test_a_walk_without_end_is_refused(allowed, monkeypatch):
    root, _ = allowed
    for i in range(30):
        (root / "runs" / f"f{i}.txt").write_text("")
    monkeypatch.setattr(data_dirs, "_MAX_ENTRIES", 20)
    with pytest.raises(InputError, match="more than 20 files and folders"):
        data_dirs.resolve_data_files("runs/**/*.parquet", data_dirs.allowed_dirs(str(root)))
    with pytest.raises(InputError, match="more than 20 files and folders"):
        data_dirs.resolve_data_files("runs", data_dirs.allowed_dirs(str(root)))


@pytest.mark.parametrize("text, words", [
    ("runs/a/x\x00.parquet", "NUL character"), ("runs/\x1b[31m.parquet", "control character (\\x1b)"),
    ("runs/\ud800.parquet", "cannot write"), ("runs/" + "é" * 200 + ".parquet", "name of 408 bytes")])
def test_invalid_path_characters_are_refused_with_a_message(allowed, text, words):
    root, _ = allowed
    with pytest.raises(InputError) as err:
        data_dirs.resolve_data_files(text, data_dirs.allowed_dirs(str(root)))
    assert words in str(err.value) and "\x00" not in str(err.value) and "\x1b" not in str(err.value)
    with pytest.raises(InputError):  # the summary-file box and the hub folder box say the same
        data_dirs.resolve_summary_file(text, data_dirs.allowed_dirs(str(root)))
    with pytest.raises(InputError):
        resolve_hub_folder(text, data_dirs.allowed_dirs(str(root)))


# ---------------------------------------------------------------------------------------------- fuzz
_PIECES = st.one_of(
    st.sampled_from(["..", ".", "*", "**", "?", "[a]", "runs", "a", "b", "x.parquet", "*.parquet", "up", "loop",
                     "elsewhere", "~", "/", "//", "\x00", "\n", "é", "\ud800", "secret.parquet", "outside"]),
    st.text(min_size=0, max_size=8),
    st.text(alphabet="ab", min_size=250, max_size=300),
)


def _fuzz_tree(tmp_path_factory) -> tuple[Path, list[Path]]:
    base = tmp_path_factory.mktemp("fuzz")
    root = base / "allowed"
    (root / "runs" / "a").mkdir(parents=True)
    (root / "runs" / "b").mkdir()
    pd.DataFrame({"y": [0.1]}).to_parquet(root / "runs" / "a" / "x.parquet")
    (base / "outside").mkdir()
    pd.DataFrame({"y": [0.1]}).to_parquet(base / "outside" / "secret.parquet")
    _loops(root)
    os.symlink(base / "outside", root / "runs" / "elsewhere")
    return root, data_dirs.allowed_dirs(str(root))


def _check(text: str, dirs: list[Path]) -> None:
    t0 = time.perf_counter()
    try:
        files = data_dirs.resolve_data_files(text, dirs)
    except InputError as err:
        assert err.message and "What to do" in str(err), repr(text)
        assert "\x00" not in str(err)
    else:
        assert files, repr(text)
        for f in files:
            real = Path(os.path.realpath(f))
            assert any(real == d or d in real.parents for d in dirs), (text, f)
            assert "outside" not in f
    assert time.perf_counter() - t0 < 5, repr(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(_PIECES, min_size=0, max_size=6), absolute=st.booleans())
def test_fuzz_the_resolver_answers_files_inside_or_a_message(tmp_path_factory, pieces, absolute):
    root, dirs = _fuzz_tree(tmp_path_factory)
    text = "/".join(pieces)
    _check(str(root) + "/" + text if absolute else text, dirs)


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(_PIECES, min_size=0, max_size=10), absolute=st.booleans())
def test_fuzz_the_resolver_at_length(tmp_path_factory, pieces, absolute):
    root, dirs = _fuzz_tree(tmp_path_factory)
    text = "/".join(pieces)
    _check(str(root) + "/" + text if absolute else text, dirs)
