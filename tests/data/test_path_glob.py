"""calib_core.data.path_glob: user paths checked before any file system call, globs walked with bounds.

Symbolic-link loops are made with os.symlink in tmp_path; every hostile case must answer within seconds."""

from __future__ import annotations

import glob
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calib_core.base.predictions import InputError
from calib_core.data.path_glob import bounded_glob, check_path_text


def two_loops(root: Path) -> Path:
    """runs/a/x.parquet, runs/b/y.parquet and two links that point back up: a/up -> .., b/loop -> ../a."""
    for name in ("a/x.parquet", "b/y.parquet"):
        p = root / "runs" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"")
    os.symlink("..", root / "runs" / "a" / "up")
    os.symlink("../a", root / "runs" / "b" / "loop")
    return root / "runs"


def test_two_symlink_loops_under_a_double_star_are_refused_at_once(tmp_path):
    runs = two_loops(tmp_path)
    t0 = time.perf_counter()
    with pytest.raises(InputError, match="loop") as err:
        bounded_glob(str(runs / "**" / "*.parquet"))
    assert time.perf_counter() - t0 < 2
    assert "a/up" in err.value.message or "b/loop" in err.value.message
    # without wildcards through the links, the same tree is read as usual
    assert bounded_glob(str(runs / "*" / "*.parquet")) == sorted(str(p) for p in runs.glob("*/*.parquet"))


def test_a_link_to_a_sibling_is_walked_once_and_no_loop(tmp_path):
    runs = tmp_path / "runs"
    (runs / "a").mkdir(parents=True)
    (runs / "a" / "x.parquet").write_bytes(b"")
    os.symlink("a", runs / "b")
    (found,) = bounded_glob(str(runs / "**" / "*.parquet"))  # a/x.parquet or b/x.parquet: the same real file
    assert os.path.realpath(found) == str((runs / "a" / "x.parquet").resolve())


def test_entries_and_depth_are_bounded(tmp_path):
    for i in range(50):
        (tmp_path / f"f{i}.parquet").write_bytes(b"")
    with pytest.raises(InputError, match="more than 20 files and folders"):
        bounded_glob(str(tmp_path / "*.parquet"), max_entries=20)
    deep = tmp_path.joinpath(*["d"] * 12)
    deep.mkdir(parents=True)
    with pytest.raises(InputError, match="more than 5 folders deep"):
        bounded_glob(str(tmp_path / "**" / "*.parquet"), max_depth=5)


def test_a_folder_outside_is_refused_before_it_is_listed(tmp_path):
    inside, outside = tmp_path / "in", tmp_path / "out"
    inside.mkdir()
    outside.mkdir()
    (outside / "secret.parquet").write_bytes(b"")
    os.symlink(outside, inside / "link")
    with pytest.raises(InputError, match="link is a symbolic link that leads outside") as err:
        bounded_glob(str(inside / "**" / "*.parquet"), inside=lambda real: inside.resolve() in (real, *real.parents))
    assert "secret" not in str(err.value)


@pytest.mark.parametrize("text, words", [
    ("runs/a\x00b.parquet", "NUL character (\\x00) at character 7"),
    ("runs/\nx.parquet", "control character (\\x0a) at character 6"),
    ("runs/\x7f.parquet", "control character (\\x7f)"),
    ("runs/\ud800.parquet", "cannot write (U+D800 at character 6)"),
    ("runs/" + "x" * 300 + ".parquet", "more than the 255"),
    ("/".join(["abcdefgh"] * 600), "more than the 4,096"),
])
def test_path_text_that_no_file_can_have_is_refused_with_a_message(text, words):
    with pytest.raises(InputError) as err:
        check_path_text(text)
    assert words in str(err.value), str(err.value)
    assert "\x00" not in str(err.value) and "\n" not in str(err.value)  # shown escaped
    assert "type the path again" in str(err.value) or "shorter" in str(err.value)


# ---------------------------------------------------------------------------------------------- fuzz
_NAMES = st.sampled_from(["a", "b", "c.parquet", "d.pq", ".h.parquet", "e f.parquet", "g[1].parquet", "é.parquet"])
_PATTERN_PARTS = st.sampled_from(["*", "**", "*.parquet", "?.pq", "a", "b", "[ab]", ".*", "*[!q]"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=st.lists(st.lists(_NAMES, min_size=1, max_size=4), min_size=1, max_size=8),
       pattern=st.lists(_PATTERN_PARTS, min_size=1, max_size=4))
def test_bounded_glob_finds_what_glob_finds_on_trees_without_links(tmp_path_factory, tree, pattern):
    root = tmp_path_factory.mktemp("tree")
    for parts in tree:
        path = root.joinpath(*parts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                path.write_bytes(b"")
        except (FileExistsError, NotADirectoryError):
            continue
    text = os.path.join(str(root), *pattern)
    expected = sorted({p.rstrip(os.sep) for p in glob.glob(text, recursive=True)})
    found = sorted({p.rstrip(os.sep) for p in bounded_glob(text)})
    assert found == expected, (pattern, tree)
