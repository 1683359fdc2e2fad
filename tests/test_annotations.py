"""The typed part of the package (the ``files`` of ``[tool.mypy]`` in pyproject.toml, checked by
``python -m mypy`` in CI): every public function and method there has a complete signature, so
that mypy checks its callers. Read from the source with ``ast``; nothing is imported.

Numba-compiled functions (``@njit``, ``@intrinsic``) are exempt: Numba infers their types from
the arguments of each call and ignores annotations, which would only claim what it does not check.
"""
import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
JIT_DECORATORS = {"njit", "jit", "intrinsic", "vectorize", "guvectorize", "generated_jit"}


def typed_files() -> list[pathlib.Path]:
    """The ``files`` of ``[tool.mypy]`` (modules and folders), as .py paths."""
    text = (ROOT / "pyproject.toml").read_text()
    section = text.split("[tool.mypy]", 1)[1]
    listed = re.search(r"^files\s*=\s*\[(.*?)\]", section, re.S | re.M).group(1)
    out = []
    for name in re.findall(r'"([^"]+)"', listed):
        path = ROOT / name
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


def _jitted(node: ast.FunctionDef) -> bool:
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in JIT_DECORATORS:
            return True
    return False


def _public_functions(tree: ast.Module):
    """Module-level public functions and the public methods of public classes."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            yield node.name, node, False
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if (isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and (not item.name.startswith("_") or item.name in ("__init__", "__post_init__"))):
                    yield f"{node.name}.{item.name}", item, True


def missing_annotations(path: pathlib.Path, root: pathlib.Path = ROOT) -> list[str]:
    """One line per public function of ``path`` with an unannotated parameter or return."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    bad = []
    for name, fn, method in _public_functions(tree):
        if _jitted(fn):
            continue
        a = fn.args
        params = a.posonlyargs + a.args + a.kwonlyargs + [p for p in (a.vararg, a.kwarg) if p]
        static = any(getattr(d, "id", "") == "staticmethod" for d in fn.decorator_list)
        if method and not static and params and (a.posonlyargs + a.args)[:1] == params[:1]:
            params = params[1:]                           # self / cls
        missing = [p.arg for p in params if p.annotation is None]
        if fn.returns is None:
            missing.append("return")
        if missing:
            bad.append(f"{path.relative_to(root)}:{fn.lineno} {name}: {', '.join(missing)}")
    return bad


def test_the_typed_files_exist():
    files = typed_files()
    assert ROOT / "levysde" / "theory" / "phases.py" in files
    assert all(p.exists() for p in files), [str(p) for p in files if not p.exists()]


@pytest.mark.parametrize("path", typed_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_public_signatures_are_annotated(path):
    bad = missing_annotations(path)
    assert not bad, "public functions without complete annotations:\n" + "\n".join(bad)


def test_the_check_catches_what_it_should(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f(x, y: int) -> int: ...\n"
                   "def g(x: int): ...\n"
                   "def _private(x): ...\n"
                   "@njit\ndef kernel(x): ...\n"
                   "class C:\n    def m(self, a) -> None: ...\n    def ok(self) -> int: ...\n"
                   "    @staticmethod\n    def s(a) -> None: ...\n")
    text = "\n".join(b.split(" ", 1)[1] for b in missing_annotations(src, tmp_path))
    assert text.splitlines() == ["f: x", "g: return", "C.m: a", "C.s: a"]

