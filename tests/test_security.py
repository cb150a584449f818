"""Security checks.

(a) A static check of the code an upload can reach: every ``.py`` file under ``calib_core/``, ``pages/``,
    ``dashboard/`` and ``app.py`` is parsed with ``ast`` and must not call anything that unpickles, evaluates or
    executes:
    pickle / cPickle / dill / joblib / shelve / marshal loads, ``eval``, ``exec``, builtin ``compile``,
    ``__import__`` / ``importlib.import_module`` with a non-literal name, ``os.system`` / ``os.popen`` /
    ``os.exec*`` / ``os.spawn*``, anything from ``subprocess``, ``runpy``, ``pd.read_pickle``, pandas ``eval`` /
    ``query`` (expression evaluation), ``np.load`` unless ``allow_pickle=False`` is passed literally,
    ``yaml.load`` without a safe loader, ``yaml.unsafe_load`` / ``full_load``, ``torch.load`` without
    ``weights_only=True``; importing pickle-family modules is refused too.  The checker is run on small bad
    sources as well, so it is known to fail when such a call is added.
(b) ``.streamlit/config.toml``: XSRF protection on, an upload size limit, no tracebacks shown to users; and the
    running server refuses an upload request that lacks the XSRF token (403).
(c) ``requirements*.txt``: every line pinned with ``==`` (except ``-r``), and pyarrow ≥ 14.0.1 (CVE-2023-47248).
(d) CSV downloads neutralise spreadsheet formulas: ``tests/test_export.py`` tests ``calib_core.export.to_csv_bytes``
    (examples and a hypothesis property); here the Regression page's metric CSV download is checked end to end —
    a model named ``=cmd|' /C calc'!A0`` in an uploaded file comes out neutralised.
(e) Untrusted Parquet: a file declaring pyarrow's old pickled extension type (``arrow.py_extension_type``, the
    CVE-2023-47248 vector) with a live pickle payload loads as plain numbers and never unpickles the payload.
"""

from __future__ import annotations

import ast
import csv
import io
import pickle
import re
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import calib_core as cc

ROOT = Path(__file__).resolve().parents[1]
CHECKED = sorted([*ROOT.joinpath("calib_core").rglob("*.py"), *ROOT.joinpath("views").rglob("*.py"),
                  *ROOT.joinpath("pages").rglob("*.py"),
                  *ROOT.joinpath("dashboard").rglob("*.py"), ROOT / "app.py"])

PICKLE_MODULES = {"pickle", "cPickle", "_pickle", "dill", "cloudpickle", "joblib", "shelve", "marshal", "jsonpickle"}
FORBIDDEN_CALLS = {
    "eval", "exec", "compile", "breakpoint", "input",
    "os.system", "os.popen", "os.startfile", "os.fork", "os.forkpty",
    "pandas.read_pickle", "pandas.eval", "numpy.fromfile", "numpy.memmap",
    "yaml.unsafe_load", "yaml.full_load", "yaml.unsafe_load_all", "yaml.full_load_all",
    "runpy.run_path", "runpy.run_module", "code.interact", "pty.spawn", "ctypes.CDLL", "ctypes.cdll.LoadLibrary",
}
FORBIDDEN_PREFIXES = ("subprocess.", "os.exec", "os.spawn", "os.posix_spawn", "multiprocessing.",
                      "asyncio.create_subprocess", *(f"{m}." for m in PICKLE_MODULES))
FORBIDDEN_METHODS = {"read_pickle", "to_pickle", "query", "eval"}  # any object: DataFrame.query / .eval evaluate text
SAFE_YAML_LOADERS = {"SafeLoader", "CSafeLoader", "BaseLoader"}


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_const(node: ast.expr | None, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


def dangerous_calls(source: str, filename: str = "<string>") -> list[str]:
    """Calls and imports in ``source`` that could unpickle, evaluate or execute; [] when there are none.

    Names are resolved through the file's imports (``import numpy as np`` → ``numpy.load``;
    ``from pickle import loads`` → ``pickle.loads``), so aliases do not hide a call.
    """
    tree = ast.parse(source, filename=filename)
    aliases: dict[str, str] = {}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                if a.name.split(".")[0] in PICKLE_MODULES:
                    found.append(f"{filename}:{node.lineno}: import {a.name}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            if node.module.split(".")[0] in PICKLE_MODULES:
                found.append(f"{filename}:{node.lineno}: from {node.module} import …")
    canonical = {"np": "numpy", "pd": "pandas"}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        raw = _dotted(node.func)
        if raw is None:
            continue
        head, _, rest = raw.partition(".")
        name = aliases.get(head, canonical.get(head, head)) + (f".{rest}" if rest else "")
        where = f"{filename}:{node.lineno}: {raw}(…)"
        literal_arg = bool(node.args) and isinstance(node.args[0], ast.Constant)
        if name in FORBIDDEN_CALLS or name.startswith(FORBIDDEN_PREFIXES):
            found.append(where)
        elif isinstance(node.func, ast.Attribute) and node.func.attr in FORBIDDEN_METHODS:
            found.append(where)
        elif name in ("__import__", "importlib.import_module") and not literal_arg:
            found.append(where + " with a computed module name")
        elif name == "numpy.load" and not _is_const(_keyword(node, "allow_pickle"), False):
            found.append(where + " without allow_pickle=False")
        elif name in ("yaml.load", "yaml.load_all"):
            loader = _keyword(node, "Loader") or (node.args[1] if len(node.args) > 1 else None)
            if (_dotted(loader) or "").split(".")[-1] not in SAFE_YAML_LOADERS:
                found.append(where + " without a safe Loader")
        elif name == "torch.load" and not _is_const(_keyword(node, "weights_only"), True):
            found.append(where + " without weights_only=True")
    return found


# ------------------------------------------------------------------------------------------------ (a)
def test_checked_files_exist():
    names = {p.relative_to(ROOT).as_posix() for p in CHECKED}
    assert {"app.py", "calib_core/data/bytes.py", "calib_core/data/classification.py", "pages/data.py"} <= names
    assert len(CHECKED) >= 20


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_unpickling_eval_or_exec_in_code_reachable_from_an_upload(path):
    assert dangerous_calls(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix()) == []


# Tests and benchmarks read no uploads, but they are code of this checkout too: each use there of something that
# unpickles, evaluates or imports by a computed name is listed with why it only ever sees the project's own objects,
# so a new one (e.g. ``exec`` of a revision's source in a benchmark) fails here until it is justified or removed.
# Running the project's own commands (``subprocess``) is not counted.
OUTSIDE_UPLOAD_PATHS = {
    "tests/data/test_reading_exports.py": (("pickle",), "round trip of the project's own InputError / Message"),
    "tests/data/test_quantile_crossing.py": (("pickle",), "round trip of the project's own crossing notice"),
    "tests/test_security.py": (("pickle",), "builds its own trap payload and unpickles it once to show it is live"),
    "tests/scale/test_distributed.py": (("cloudpickle", "__import__"),
                                        "ships this test module's functions to the workers"),
    "tests/scale/test_slices_distributed.py": (("cloudpickle", "__import__"), "the same, for the slice summaries"),
    "tests/peers.py": (("import_module",), "imports a peer package named in its own fixed list"),
    "tests/plots/test_style.py": (("import_module",), "imports the project's own plot modules by their names"),
    "tests/test_docstrings.py": (("import_module",), "imports the project's own modules by their file names"),
    "bench/golden.py": (("import_module",), "imports the project's own lab modules and the pinned libraries by name"),
}


def test_tests_and_benchmarks_unpickle_or_evaluate_only_where_listed():
    files = sorted([*ROOT.joinpath("tests").rglob("*.py"), *ROOT.joinpath("bench").rglob("*.py")])
    unlisted = []
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        found = [f for f in dangerous_calls(path.read_text(encoding="utf-8"), rel) if "subprocess." not in f]
        allowed = OUTSIDE_UPLOAD_PATHS.get(rel, ((), ""))[0]
        unlisted += [f for f in found if not any(word in f for word in allowed)]
    assert unlisted == []
    assert dangerous_calls("exec(compile(source, 'f', 'exec'), ns)") != []  # the benchmark pattern this replaced


@pytest.mark.parametrize(
    "source",
    [
        "import pickle\npickle.loads(b'')",
        "from pickle import loads as l\nl(b'')",
        "import joblib\njoblib.load('m')",
        "import dill",
        "import marshal\nmarshal.loads(b'')",
        "import shelve\nshelve.open('x')",
        "eval('1+1')",
        "exec('x = 1')",
        "code = compile('1', 'f', 'eval')",
        "m = __import__(name)",
        "import importlib\nimportlib.import_module(user_text)",
        "import os\nos.system('ls')",
        "import os\nos.popen('ls')",
        "import os\nos.execv('/bin/sh', [])",
        "import subprocess\nsubprocess.run(['ls'])",
        "from subprocess import Popen\nPopen(['ls'])",
        "import pandas as pd\npd.read_pickle('f')",
        "import pandas\npandas.eval('a + b')",
        "frame.query(user_text)",
        "frame.eval('c = a + b')",
        "import numpy as np\nnp.load(buf)",
        "import numpy as np\nnp.load(buf, allow_pickle=True)",
        "from numpy import load\nload(buf)",
        "import yaml\nyaml.load(text)",
        "import yaml\nyaml.load(text, Loader=yaml.FullLoader)",
        "import yaml\nyaml.unsafe_load(text)",
        "import torch\ntorch.load('m.pt')",
        "import runpy\nrunpy.run_path('x.py')",
    ],
)
def test_the_checker_fails_on_dangerous_calls(source):
    assert dangerous_calls(source), source


def test_the_checker_finds_a_call_injected_into_the_real_loader():
    """The loader's own source passes; the same source with one pickle.loads / eval line added does not."""
    source = (ROOT / "calib_core" / "data" / "bytes.py").read_text(encoding="utf-8")
    assert dangerous_calls(source, "bytes.py") == []
    for injected in ("import pickle as _p\n_p.loads(b'')\n", "eval(str(1))\n", "pd.read_pickle('x')\n"):
        bad = source.replace("\ndef read_table(", f"\n{injected}\n\ndef read_table(", 1)
        assert bad != source and dangerous_calls(bad, "bytes.py"), injected


@pytest.mark.parametrize(
    "source",
    [
        "import re\nre.compile('a+')",
        "import numpy as np\nnp.load(buf, allow_pickle=False)",
        "import yaml\nyaml.load(text, Loader=yaml.SafeLoader)",
        "import yaml\nyaml.safe_load(text)",
        "import torch\ntorch.load('m.pt', weights_only=True)",
        "import importlib\nimportlib.import_module('calib_core.io')",
        "json.loads(text)",
        "import pandas as pd\npd.read_csv(buf)",
    ],
)
def test_the_checker_passes_safe_calls(source):
    assert dangerous_calls(source) == [], source


def test_npz_is_read_without_pickle_and_pickles_are_refused():
    """The one np.load in the loader passes allow_pickle=False (checked above); object arrays and raw pickles are
    refused with a message (tests/data/test_reading.py: test_object_npz_is_refused,
    test_bad_files_raise_input_error)."""
    buf = io.BytesIO()
    np.savez(buf, probs=np.array([[0.5, 0.5]], dtype=object), labels=np.array([0]))
    with pytest.raises(cc.InputError, match="without pickle"):
        cc.load_predictions(buf.getvalue(), source="obj.npz")
    with pytest.raises(cc.InputError, match="never loaded"):
        cc.load_predictions(pickle.dumps({"y": [1.0]}), source="p.pkl")


# ------------------------------------------------------------------------------------------------ (b)
def test_streamlit_config_has_xsrf_protection_and_an_upload_limit():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    server = config["server"]
    assert server["enableXsrfProtection"] is True
    assert server.get("enableCORS", True) is True  # Streamlit turns XSRF protection off when CORS is disabled
    assert isinstance(server["maxUploadSize"], int) and 1 <= server["maxUploadSize"] <= 1024  # MB
    assert config.get("client", {}).get("showErrorDetails") in ("none", False)  # no tracebacks for strangers
    assert config.get("browser", {}).get("gatherUsageStats") is False


def test_running_server_refuses_an_upload_without_the_xsrf_token(streamlit_url):
    """The real server (``streamlit run app.py`` with this config): an upload request without the XSRF cookie and
    header is refused with 403 before any byte reaches the loader."""
    import urllib.error
    import urllib.request

    body = b'--b\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\ny,mean,std\r\n--b--\r\n'
    request = urllib.request.Request(f"{streamlit_url}/_stcore/upload_file/some-session/some-file", data=body,
                                     method="PUT", headers={"Content-Type": "multipart/form-data; boundary=b"})
    with pytest.raises(urllib.error.HTTPError) as ei:
        urllib.request.urlopen(request, timeout=10)
    assert ei.value.code == 403 and b"XSRF" in ei.value.read()


# ------------------------------------------------------------------------------------------------ (c)
PIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]*(\[[A-Za-z0-9_,\-]+\])?==[A-Za-z0-9.+!\-]+(\s*;.*)?$")


@pytest.mark.parametrize("name", ["requirements.txt", "requirements-dev.txt", "requirements-netcal.txt"])
def test_requirements_are_pinned(name):
    lines = [ln.split(" #")[0].strip() for ln in (ROOT / name).read_text(encoding="utf-8").splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("#")]
    assert lines
    for line in lines:
        if line.startswith("-r "):
            assert (ROOT / line[3:].strip()).is_file(), line
            continue
        assert PIN.match(line), f"{name}: {line!r} is not pinned with =="


def test_pyarrow_is_past_the_pickle_extension_cve():
    pins = dict(ln.split("==") for ln in (ROOT / "requirements.txt").read_text().splitlines() if "==" in ln)
    major, minor, patch = (int(x) for x in pins["pyarrow"].split(".")[:3])
    assert (major, minor, patch) >= (14, 0, 1)
    installed = tuple(int(x) for x in pa.__version__.split(".")[:3])
    assert installed >= (14, 0, 1)


def test_pin_pattern_rejects_unpinned_lines():
    for bad in ("numpy", "numpy>=2", "numpy~=2.0", "numpy==", "git+https://example.org/x.git", "-e ."):
        assert not PIN.match(bad), bad
    assert PIN.match("numpy==2.4.6") and PIN.match("uvicorn[standard]==0.30.1")


# ------------------------------------------------------------------------------------------------ (d)
def test_regression_page_metric_csv_download_neutralises_formulas(monkeypatch):
    """Upload a file whose model names are spreadsheet formulas; the metric CSV the page offers (its deferred
    download callable, exactly what a click runs) has them prefixed with ' and no cell that starts a formula."""
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.testing.v1 import AppTest

    deferred: dict[str, object] = {}
    original = MediaFileManager.add_deferred

    def capture(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        deferred[str(file_name)] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name=file_name, **kw)

    monkeypatch.setattr(MediaFileManager, "add_deferred", capture)
    rng = np.random.default_rng(0)
    n = 60
    evil = ["=cmd|' /C calc'!A0", "+SUM(1,2)", "@HYPERLINK(\"http://x\")", "-2+3"]
    frame = pd.DataFrame({"model": np.repeat(evil, n // 4), "y_true": rng.normal(size=n),
                          "mean": rng.normal(size=n) * 0.1, "std": rng.uniform(0.5, 1.5, n)})
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="data_upload").upload("evil.csv", frame.to_csv(index=False).encode(), "text/csv").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert sorted(at.session_state["pset"].models()) == sorted(evil)
    at.switch_page("pages/regression.py").run()
    at.selectbox(key="reg_resamples").select(0).run()
    assert not at.exception, [e.value for e in at.exception]
    name = next(k for k in deferred if k.endswith("_regression_metrics.csv"))
    text = deferred[name]().decode("utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    models = {r[header.index("model")] for r in body}
    assert models == {"'" + m for m in evil}, models
    for row in rows:
        for cell in row:
            if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
                float(cell)  # only plain numbers may start with a sign


# ------------------------------------------------------------------------------------------------ (e)
UNPICKLED: list[str] = []


def _unpickled_marker() -> str:
    UNPICKLED.append("payload ran")
    return "x"


class _Trap:
    def __reduce__(self):
        return (_unpickled_marker, ())


def test_parquet_with_a_pickled_extension_type_is_not_unpickled():
    payload = pickle.dumps(_Trap())
    pickle.loads(payload)  # the payload is live: unpickling it runs the marker
    assert UNPICKLED == ["payload ran"]
    UNPICKLED.clear()
    ext = {b"ARROW:extension:name": b"arrow.py_extension_type", b"ARROW:extension:metadata": payload}
    schema = pa.schema([pa.field("y_true", pa.float64()), pa.field("mean", pa.float64()),
                        pa.field("std", pa.float64(), metadata=ext)],
                       metadata={b"pandas": b'{"index_columns": [], "columns": [], "pandas_version": "2.0.0"}'})
    table = pa.Table.from_arrays([pa.array([1.0, 2.0, 3.0]), pa.array([1.1, 1.9, 3.2]), pa.array([0.5, 0.4, 0.6])],
                                 schema=schema)
    buf = io.BytesIO()
    pq.write_table(table, buf)
    assert pq.read_schema(io.BytesIO(buf.getvalue())).field("std").metadata[b"ARROW:extension:name"] == \
        b"arrow.py_extension_type"  # the trap really is in the file
    try:
        ps = cc.load_predictions(buf.getvalue(), source="trap.parquet")
    except cc.InputError as err:  # refusing is fine too
        assert str(err).startswith("trap.parquet:")
    else:
        np.testing.assert_allclose(ps.dist.std(), [0.5, 0.4, 0.6])
    assert UNPICKLED == [], "the Parquet reader unpickled a payload from the file"
