"""The server's garbage-collection policy: no full collection after every page run (runner.postScriptGC off in the
config the server and the launcher read)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from launcher import config_flags

ROOT = Path(__file__).resolve().parents[2]


def test_no_full_collection_after_every_run():
    config = ROOT / ".streamlit" / "config.toml"
    assert tomllib.loads(config.read_text(encoding="utf-8"))["runner"]["postScriptGC"] is False
    assert "--runner.postScriptGC=false" in config_flags(config)  # the calibration-lab command passes it on

