"""The server-start warm-up (``dashboard.cache.warm_up_server``, started by ``app.py`` in a background thread) takes
the first-use work out of a user's first diagnosis: after it, building the diagnosis pages' figures and tables on
other data imports no new module, and every N-only null table a diagnosis above 2,000 rows reads is built."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
import json, sys, threading
sys.path.insert(0, {root!r})
import dashboard.cache as dc
from calib_core.inference import regression_nulls as ri

thread = threading.Thread(target=dc.warm_up_server)  # as app.py starts it: no Streamlit context in the thread
thread.start()
thread.join()
tables = ri._built_n_only_table.cache_info().currsize
before = set(sys.modules)
dc.warm_up_pages()  # the same figures and tables again (other data would take the same code paths)
new = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in ("plotly", "_plotly_utils", "pandas",
                                                                              "scipy", "calib_core"))
print(json.dumps({{"tables": tables, "new": new}}))
"""


def test_after_the_warm_up_the_pages_first_figures_import_nothing_new():
    out = subprocess.run([sys.executable, "-c", _SCRIPT.format(root=str(ROOT))], capture_output=True, text=True,
                         cwd=ROOT, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["tables"] == 2
    assert res["new"] == []


def test_without_the_warm_up_the_first_figure_imports_plotly_modules():
    """The check above can fail: a fresh process imports Plotly's figure and validator modules on the first figure."""
    script = _SCRIPT.format(root=str(ROOT)).replace("thread.start()\nthread.join()\n", "")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=600,
                         check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert any(m.startswith("plotly.") for m in res["new"])
