"""The lab index page and the Labs section of the navigation."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from calib_core.labs import LABS, lab

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


def test_every_lab_has_a_page_and_a_one_sentence_lesson():
    assert len(LABS) == 11 and len({item.key for item in LABS}) == 11  # the clinical lab is the 11th
    for item in LABS:
        assert (ROOT / "pages" / item.page_file).exists(), f"lab {item.key!r} has no page {item.page_file}"
        lesson = item.lesson.strip()
        assert lesson.endswith(".") and lesson.count(". ") == 0, f"{item.key}: the lesson must be one sentence"
        assert any(ch.isdigit() for ch in item.reference) and "§" in item.reference, item.reference
        assert lab(item.key) is item


def test_lab_index_lists_each_lesson_with_a_link_and_runs_cleanly():
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/labs.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Teaching labs"
    text = " ".join(m.value for m in at.markdown)
    for number, item in enumerate(LABS, start=1):
        assert f"**{number}. {item.title}** — {item.lesson}" in text
    links = at.get("page_link")
    assert len(links) == len(LABS)
    assert [link.proto.page for link in links] == [f"lab_{item.key}" for item in LABS]
    assert all(link.proto.page_script_hash for link in links)  # resolved to a registered page


def test_every_lab_page_opens_from_the_navigation():
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    for item in LABS:
        at.switch_page(f"pages/{item.page_file}").run()
        assert not at.exception, (item.key, [e.value for e in at.exception])
        assert at.title and at.title[0].value, item.key
