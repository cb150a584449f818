"""dashboard.frame: the guard that frames every page with app.py's navigation runs on the first import of
``dashboard``, so every page file must import it before drawing (a page that does not, e.g. Help before this test,
opened first on a fresh server showed Streamlit's one-entry-per-file navigation)."""

from __future__ import annotations

import ast
from pathlib import Path

PAGES = sorted((Path(__file__).resolve().parents[2] / "pages").glob("*.py"))


def test_every_page_imports_dashboard_before_any_streamlit_call():
    assert len(PAGES) >= 10
    for path in PAGES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        first_call = min((n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)), default=10**9)
        imports = [n.lineno for n in tree.body if isinstance(n, ast.Import)
                   and any(alias.name == "dashboard" for alias in n.names)]
        assert imports and imports[0] < first_call, f"{path.name} must `import dashboard` before drawing"
