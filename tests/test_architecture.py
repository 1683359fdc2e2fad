"""The package's shape: layers that import only downwards, short functions, thin CLI modules,
one home for the Hill estimator. Read from the source with ``ast``, so nothing is imported or
run (the import graph itself is docs/layers.py, which also draws docs/api.md's layer table)."""
import ast
import importlib.util
import pathlib
import sys

import pytest

_spec = importlib.util.spec_from_file_location(
    "layers", pathlib.Path(__file__).resolve().parent.parent / "docs" / "layers.py")
layers = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("layers", layers)
_spec.loader.exec_module(layers)

PKG = pathlib.Path(__file__).resolve().parent.parent / "levysde"
MAX_FUNCTION_LINES = 120
MAX_CLI_MODULE_LINES = 250


def _modules():
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def _functions(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _length(node) -> int:
    """Lines from the def (decorators included) to the last line of the body, less the
    docstring's: the limit is on a function's logic, not on its documentation."""
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    body = node.body
    doc = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        doc = body[0].end_lineno - body[0].lineno + 1
    return node.end_lineno - first + 1 - doc


def test_the_scan_sees_the_package():
    names = {p.relative_to(PKG).as_posix() for p in _modules()}
    assert {"theory/phases.py", "cli/envelope.py", "simulation/_simulate.py"} <= names
    # the length rule measures what it should: a known one-line function is 1 line long
    src = "def f(x):\n    return x\n\n\n@staticmethod\ndef g():\n    pass\n"
    nodes = [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.FunctionDef)]
    assert [_length(n) for n in nodes] == [2, 3]


def test_no_function_over_120_lines():
    long = [f"{p.relative_to(PKG)}:{n.name} ({_length(n)} lines)"
            for p in _modules() for n in _functions(p) if _length(n) > MAX_FUNCTION_LINES]
    assert not long, "functions over 120 lines: " + ", ".join(long)


@pytest.mark.parametrize("path", sorted((PKG / "cli").glob("*.py")), ids=lambda p: p.name)
def test_cli_module_at_most_250_lines(path):
    n = len(path.read_text().splitlines())
    assert n <= MAX_CLI_MODULE_LINES, f"levysde/cli/{path.name} has {n} lines"


def test_one_module_defines_the_hill_estimator():
    """levysde/stats/tails.py is the single home of Hill-type tail estimation."""
    homes = sorted({p.relative_to(PKG).as_posix() for p in _modules() for n in _functions(p)
                    if "hill" in n.name.lower()})
    assert homes == ["stats/tails.py"], f"functions named *hill* defined in {homes}"


def test_every_module_belongs_to_a_layer():
    """The package root and ``__main__`` aside, every module sits in one of the named layers."""
    stray = [m for m in layers.modules() if layers.layer(m) is None and m not in ("levysde", "levysde.__main__")]
    assert not stray, f"modules outside the layers {layers.LAYERS}: {stray}"


def test_imports_follow_the_layer_order():
    """No import (top-level or inside a function) from a later layer, no private name or private
    module from outside its owner, no function-level import of the package outside the CLI
    (where it keeps start-up fast) but for the listed reasons."""
    bad = layers.violations()
    assert not bad, "\n".join(bad)


def test_the_layer_check_catches_what_it_should(tmp_path, monkeypatch):
    """The rules fire on a crafted package: an upward import, a function-level one, a private
    name and a private module from another layer (so the test above can fail)."""
    pkg = tmp_path / "levysde"
    (pkg / "theory").mkdir(parents=True)
    (pkg / "simulation").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "theory" / "__init__.py").write_text("")
    (pkg / "simulation" / "__init__.py").write_text("")
    (pkg / "simulation" / "_k.py").write_text("X = 1\n")
    (pkg / "theory" / "bad.py").write_text(
        "from levysde.simulation import drift\n"
        "from levysde.simulation._k import X\n"
        "from levysde.theory.ok import _private\n"
        "def f():\n    from levysde.theory import ok\n")
    (pkg / "theory" / "ok.py").write_text("_private = 1\n")
    (pkg / "simulation" / "drift.py").write_text("")
    monkeypatch.setattr(layers, "PKG", pkg)
    monkeypatch.setattr(layers, "_MODULES", layers.modules())
    text = "\n".join(layers.violations())
    assert "layer theory imports levysde.simulation.drift" in text
    assert "private module levysde.simulation._k" in text
    assert "private names ['_private']" in text
    assert "function-level import of levysde.theory.ok" in text


def test_api_page_shows_the_current_layers():
    """docs/api.md includes the table that docs/build.py draws from the import graph."""
    api = (PKG.parent / "docs" / "api.md").read_text()
    assert "_generated/layers.md" in api
