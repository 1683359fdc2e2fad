"""Every public function and class documents itself in numpydoc sections.

The API reference renders one page per public name (docs/api.md); a reader expects on each:
Parameters (when it takes any), Returns (a function that returns something), and Examples
(which tests/test_docstring_examples.py runs). A module is held to this once its prefix is
listed in SECTIONS_REQUIRED.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import levysde

SECTIONS_REQUIRED = (
    # -- core, io, theory, stats, simulation --
    "levysde.core.",
    "levysde.io.",
    "levysde.theory.",
    "levysde.stats.",
    "levysde.simulation.",

    # -- inference --
    "levysde.inference.",

    # -- rnn, studies, plotting --
    "levysde.rnn",  # the package too: it re-exports names of modules without __all__
    "levysde.studies.",
    "levysde.plotting",

)


def _has(doc: str, section: str) -> bool:
    lines = doc.splitlines()
    return any(a.strip() == section and set(b.strip()) == {"-"} for a, b in zip(lines, lines[1:], strict=False))


def _needs_parameters(obj) -> bool:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return False
    return any(p.name not in ("self", "cls") for p in sig.parameters.values())


def _returns_something(func) -> bool:
    ann = inspect.signature(func).return_annotation
    return ann not in (None, "None")


def _public_objects():
    seen = set()
    for info in pkgutil.walk_packages(levysde.__path__, "levysde."):
        name = info.name
        if any(p.startswith("_") for p in name.split(".")[1:]) or name.startswith("levysde.cli"):
            continue
        if not name.startswith(SECTIONS_REQUIRED):
            continue
        try:
            mod = importlib.import_module(name)
        except ImportError:  # an optional dependency (torch, matplotlib) is absent
            continue
        for attr in getattr(mod, "__all__", []):
            obj = getattr(mod, attr, None)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or id(obj) in seen:
                continue
            seen.add(id(obj))
            yield f"{name}.{attr}", obj


def test_public_names_have_numpydoc_sections():
    if not SECTIONS_REQUIRED:
        pytest.skip("no module listed yet")
    missing = []
    for qual, obj in _public_objects():
        doc = inspect.getdoc(obj) or ""
        need = ["Examples"]
        if inspect.isclass(obj):
            if _needs_parameters(obj) and not _has(doc, "Attributes"):
                need.append("Parameters")
        else:
            if _needs_parameters(obj):
                need.append("Parameters")
            if _returns_something(obj):      # a generator (a context manager's body) yields
                need.append("Yields" if inspect.isgeneratorfunction(inspect.unwrap(obj)) else "Returns")
        lack = [s for s in need if not _has(doc, s)]
        if lack:
            missing.append(f"{qual} ({', '.join(lack)})")
    assert not missing, "missing numpydoc sections:\n  " + "\n  ".join(missing)
