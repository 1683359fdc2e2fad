"""The package's shape (issue 15): short functions, thin CLI modules, one home for the Hill
estimator. Read from the source with ``ast``, so nothing is imported or run."""
import ast
import pathlib

import pytest

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
    """Lines from the def (decorators included) to the last line of the body."""
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return node.end_lineno - first + 1


def test_the_scan_sees_the_package():
    names = {p.relative_to(PKG).as_posix() for p in _modules()}
    assert {"theory.py", "cli/envelope.py", "simulation/_simulate.py"} <= names
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
    """levysde/tails.py is the single home of Hill-type tail estimation (issue 15, item 2)."""
    homes = sorted({p.relative_to(PKG).as_posix() for p in _modules() for n in _functions(p)
                    if "hill" in n.name.lower()})
    assert homes == ["tails.py"], f"functions named *hill* defined in {homes}"
