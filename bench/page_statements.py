"""How thin are the dashboard pages?  Two counts, plain ``ast`` + ``tokenize`` (no Streamlit import).

``python bench/page_statements.py [--root .] [--files]``

(a) **Page statements that make no Streamlit call.**  Every *simple* statement (an ``ast.stmt`` that is not a
    compound statement — not ``if/for/while/with/try/match/def/class``; the statements *inside* them are counted)
    of every ``pages/*.py``, except imports and bare string constants (docstrings).  A statement *makes a
    Streamlit call* when its expression tree contains any of:

    1. an attribute of the module name ``st`` (``st.title(…)``, ``st.session_state[…] = …``,
       ``st.column_config.NumberColumn(…)``);
    2. a method call on a name bound to a Streamlit object: a name assigned (plainly or by tuple unpacking) from
       an expression that is itself a Streamlit call, bound by ``with <streamlit call> as name``, or a ``for``
       target over an iterable that holds a Streamlit call or object — the columns, tabs, containers and progress
       bars of ``c1, c2 = st.columns(2)`` / ``c1.slider(…)`` / ``for col, x in zip(cols, xs): col.metric(…)``;
    3. a call of a *Streamlit-wrapping* function: a function that makes a Streamlit call in its body (by this same
       rule, to a fixed point) or is decorated with a Streamlit decorator (``@st.cache_data``); a class is
       Streamlit-wrapping when one of its methods is (its instances are then Streamlit objects, rule 2).  They
       are looked for in the page itself and in the dashboard plumbing (``pages/common.py`` and every module of
       the top-level ``dashboard/`` package, re-exports of its ``__init__`` included), called as ``f(…)`` or
       ``alias.f(…)`` for any imported module alias of the plumbing (``common.f``, ``ui.f``).

    Reported: the count per file, the total over ``pages/*.py``, and the same over the page files proper
    (without ``pages/common.py``, the shared plumbing that used to live among the pages).

(b) **Repeated blocks of code** in ``pages/`` and ``app.py`` (and, reported separately, with ``dashboard/``).
    Each file is tokenised; comments, blank lines, import statements and docstrings are dropped and every
    physical line is normalised: names → ``N`` (keywords kept), strings (f-strings included) → ``S``, numbers →
    ``0``; adjacent string literals (implicit concatenation over several lines) are one ``S`` on the first line.
    A window of 6 consecutive normalised lines that occurs at two or more places (not overlapping, any files)
    is repeated; overlapping and touching repeated windows of one file are merged into one block.  Reported:
    the number of such blocks (every occurrence counts) and the lines they cover.
"""

from __future__ import annotations

import argparse
import ast
import io
import keyword
import tokenize
from collections import defaultdict
from pathlib import Path

WINDOW = 6
COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
            ast.AsyncFunctionDef, ast.ClassDef, ast.Match) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


# ------------------------------------------------------------------------------------------------ (a) statements
def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


class _Scope:
    """What counts as Streamlit in one module: the ``st`` alias, Streamlit objects, wrapping functions."""

    def __init__(self, st_names: set[str], wrappers: set[str], plumbing_modules: dict[str, set[str]]):
        self.st_names = st_names  # usually {"st"}
        self.objects: set[str] = set()  # names bound to Streamlit objects (columns, tabs, containers, …)
        self.wrappers = wrappers  # local function names that wrap a Streamlit call
        self.plumbing = plumbing_modules  # alias → wrapping function names of that plumbing module

    def is_streamlit(self, tree: ast.AST) -> bool:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in self.st_names:
                return True
            if isinstance(node, ast.Call):
                f = node.func
                if isinstance(f, ast.Attribute) and _root_name(f) in self.objects:
                    return True
                if isinstance(f, ast.Name) and (f.id in self.wrappers or f.id in self.plumbing.get("", set())):
                    return True
                if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                        and f.attr in self.plumbing.get(f.value.id, set())):
                    return True
        return False

    def bind(self, stmt: ast.stmt) -> None:
        """Record the names a statement binds to Streamlit objects."""
        targets: list[ast.AST] = []
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None and self.is_streamlit(stmt.value):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        elif isinstance(stmt, (ast.For, ast.AsyncFor)) and (self.is_streamlit(stmt.iter) or any(
                isinstance(n, ast.Name) and n.id in self.objects for n in ast.walk(stmt.iter))):
            targets = [stmt.target]
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None
                       and self.is_streamlit(i.context_expr)]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    self.objects.add(n.id)


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _simple_statements(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(node, COMPOUND):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if _is_docstring(node):
                continue
            yield node


def _statements_in_order(tree: ast.AST):
    """All statements in source order (so bindings are seen before uses)."""
    return sorted((n for n in ast.walk(tree) if isinstance(n, ast.stmt)), key=lambda n: (n.lineno, n.col_offset))


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The dotted module of ``from <module> import …`` (relative imports resolved inside ``package``)."""
    if not node.level:
        return node.module or ""
    base = package.split(".")[: max(len(package.split(".")) - node.level + 1, 0)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(tree: ast.AST, package: str = "") -> tuple[set[str], dict[str, str], dict[str, str]]:
    """(aliases of streamlit, module alias → dotted module, imported function name → dotted module)."""
    st_names, modules, functions = set(), {}, {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "streamlit":
                    st_names.add(a.asname or "streamlit")
                modules[a.asname or a.name.split(".")[0]] = a.name
        elif isinstance(node, ast.ImportFrom) and (node.module or node.level):
            module = _absolute(node, package)
            for a in node.names:
                modules[a.asname or a.name] = f"{module}.{a.name}"
                functions[a.asname or a.name] = module
    return st_names, modules, functions


def _wrapping_functions(tree: ast.AST, scope: _Scope) -> set[str]:
    """Names of the functions defined in ``tree`` that wrap a Streamlit call (fixed point over local calls)."""
    defs = {n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    found: set[str] = set()
    for name, d in defs.items():
        if any(scope.is_streamlit(dec) for dec in d.decorator_list):
            found.add(name)
    while True:
        scope.wrappers = set(found)
        new = {name for name, d in defs.items() if name not in found and any(scope.is_streamlit(s) for s in d.body)}
        new |= {c.name for c in classes if c.name not in found and any(
            isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name in found | new for m in c.body)}
        if not new:
            return found
        found |= new


def plumbing_wrappers(root: Path) -> dict[str, set[str]]:
    """Dotted module name → wrapping functions, for ``pages/common.py`` and every ``dashboard/*.py``."""
    files = {"pages.common": root / "pages" / "common.py"}
    for p in sorted((root / "dashboard").glob("*.py")):
        files["dashboard" if p.stem == "__init__" else f"dashboard.{p.stem}"] = p
    trees = {m: ast.parse(p.read_text(encoding="utf-8")) for m, p in files.items() if p.exists()}
    result: dict[str, set[str]] = {m: set() for m in trees}
    for _ in range(len(trees) + 2):  # modules call each other: iterate to a fixed point
        for m, tree in trees.items():
            scope = _module_scope(tree, result, m if files[m].name == "__init__.py" else m.rpartition(".")[0])
            for s in _statements_in_order(tree):
                scope.bind(s)
            result[m] = _wrapping_functions(tree, scope)
        for m in list(result):  # re-exports: names of a package's __init__ imported from its modules
            tree = trees[m]
            package = m if files[m].name == "__init__.py" else m.rpartition(".")[0]
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and _absolute(node, package) in result:
                    source = result[_absolute(node, package)]
                    result[m] |= {a.asname or a.name for a in node.names if a.name in source}
    return result


def _module_scope(tree: ast.AST, wrappers_by_module: dict[str, set[str]], package: str = "") -> _Scope:
    st_names, modules, functions = _imports(tree, package)
    plumbing: dict[str, set[str]] = {"": set()}
    for alias, dotted in modules.items():
        if dotted in wrappers_by_module:
            plumbing[alias] = wrappers_by_module[dotted]
    for name, module in functions.items():
        if name in wrappers_by_module.get(module, set()):
            plumbing[""].add(name)
    return _Scope(st_names or {"st"}, set(), plumbing)


def count_statements(path: Path, wrappers_by_module: dict[str, set[str]]) -> tuple[int, int]:
    """(simple statements without a Streamlit call, all simple statements) of one page file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    scope = _module_scope(tree, wrappers_by_module)
    for s in _statements_in_order(tree):  # bind Streamlit objects in source order
        scope.bind(s)
    scope.wrappers = _wrapping_functions(tree, scope)
    simple = list(_simple_statements(tree))
    return sum(not scope.is_streamlit(s) for s in simple), len(simple)


# ------------------------------------------------------------------------------------------------ (b) repeats
def normalised_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, normalised text) of every line that holds code."""
    out: dict[int, list[str]] = defaultdict(list)
    src = path.read_text(encoding="utf-8")
    skip: set[int] = set()  # lines of import statements and docstrings
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_docstring(node):
            skip.update(range(node.lineno, node.end_lineno + 1))
    fstring = 0
    previous = ""
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        kind = tok.type
        if tok.start[0] in skip:
            continue
        if kind in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                    tokenize.ENDMARKER):
            continue
        name = tokenize.tok_name[kind]
        if name == "FSTRING_START":  # Python ≥ 3.12 tokenises f-strings into parts: one S for the whole
            fstring += 1
            if fstring == 1 and previous != "S":
                out[tok.start[0]].append("S")
            previous = "S"
            continue
        if name == "FSTRING_END":
            fstring -= 1
            continue
        if fstring:
            continue
        if kind == tokenize.NAME:
            text = tok.string if keyword.iskeyword(tok.string) else "N"
        elif kind == tokenize.STRING:
            text = "S"
            if previous == "S":  # implicit concatenation: one string
                continue
        elif kind == tokenize.NUMBER:
            text = "0"
        else:
            text = tok.string
        previous = text
        out[tok.start[0]].append(text)
    return [(line, " ".join(parts)) for line, parts in sorted(out.items())]


def repeated_blocks(paths: list[Path], window: int = WINDOW) -> tuple[int, int, list[tuple[str, int, int]]]:
    """(number of repeated blocks, lines they cover, [(file, first line, last line)])."""
    lines = {p: normalised_lines(p) for p in paths}
    where: dict[tuple[str, ...], list[tuple[Path, int]]] = defaultdict(list)
    for p, ls in lines.items():
        for i in range(len(ls) - window + 1):
            where[tuple(text for _, text in ls[i:i + window])].append((p, i))
    covered: dict[Path, set[int]] = defaultdict(set)  # indices into lines[p]
    for places in where.values():
        if len(places) < 2:
            continue
        kept: list[tuple[Path, int]] = []  # drop self-overlapping occurrences (a run of identical lines)
        for p, i in places:
            if not any(q == p and abs(i - j) < window for q, j in kept):
                kept.append((p, i))
        if len(kept) < 2:
            continue
        for p, i in kept:
            covered[p].update(range(i, i + window))
    blocks: list[tuple[str, int, int]] = []
    n_lines = 0
    for p, idx in covered.items():
        run: list[int] = []
        for i in sorted(idx) + [None]:
            if run and (i is None or i != run[-1] + 1):
                blocks.append((str(p), lines[p][run[0]][0], lines[p][run[-1]][0]))
                n_lines += len(run)
                run = []
            if i is not None:
                run.append(i)
    return len(blocks), n_lines, sorted(blocks)


# ------------------------------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=Path(__file__).resolve().parents[1], type=Path)
    ap.add_argument("--files", action="store_true", help="list the counts per file and the repeated blocks")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    wrappers = plumbing_wrappers(root)
    pages = sorted((root / "pages").glob("*.py"))
    per_file = {p.name: count_statements(p, wrappers) for p in pages}
    no_st = sum(a for a, _ in per_file.values())
    total = sum(b for _, b in per_file.values())
    proper = {k: v for k, v in per_file.items() if k != "common.py"}
    no_st_p = sum(a for a, _ in proper.values())
    total_p = sum(b for _, b in proper.values())
    print(f"(a) simple statements with no Streamlit call, pages/*.py: {no_st} of {total} ({no_st / total:.0%})")
    print(f"    pages without pages/common.py:                      {no_st_p} of {total_p} ({no_st_p / total_p:.0%})")
    dash = sorted((root / "dashboard").glob("*.py"))
    if dash:
        d = [count_statements(p, wrappers) for p in dash]
        d_no, d_all = sum(a for a, _ in d), sum(b for _, b in d)
        print(f"    dashboard/*.py (plumbing, for reference):           {d_no} of {d_all}")
    if args.files:
        for name, (a, b) in per_file.items():
            print(f"      {name:24s} {a:4d} of {b:4d}")
    base = pages + [root / "app.py"]
    n, n_lines, blocks = repeated_blocks(base)
    print(f"(b) repeated blocks (>= {WINDOW} lines, names/strings/numbers normalised), pages/ + app.py: "
          f"{n} blocks, {n_lines} lines")
    if dash:
        n2, n2_lines, _ = repeated_blocks(base + dash)
        print(f"    with dashboard/:                                    {n2} blocks, {n2_lines} lines")
    if args.files:
        for f, a, b in blocks:
            print(f"      {Path(f).relative_to(root)}:{a}-{b}")


if __name__ == "__main__":
    main()
