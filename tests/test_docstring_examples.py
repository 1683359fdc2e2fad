"""The Examples of every public docstring run and print what they show (doctest).

The API pages show these examples (docs/api.md), so they must work as written. Modules are
all but the CLI's (private ones too: some public functions are defined there); an example that needs an optional
dependency that is not installed (torch, matplotlib) is skipped with its module.
"""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import levysde

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def public_modules() -> list[str]:
    names = ["levysde"]
    for info in pkgutil.walk_packages(levysde.__path__, "levysde."):
        if any(p.startswith("_") for p in info.name.split(".")) or info.name.startswith("levysde.cli"):
            continue
        names.append(info.name)
    return names


def modules_with_docs() -> list[str]:
    """The public modules and the private ones whose functions the public API exports
    (``levysde.simulation.simulate`` is defined in ``levysde.simulation._simulate``)."""
    names = public_modules()
    for info in pkgutil.walk_packages(levysde.__path__, "levysde."):
        if info.name not in names and not info.name.startswith("levysde.cli") and not info.name.endswith("_cuda"):
            names.append(info.name)
    return names


def _tests(modname: str) -> list[doctest.DocTest]:
    try:
        mod = importlib.import_module(modname)
    except ImportError as e:
        pytest.skip(f"{modname}: {e}")
    finder = doctest.DocTestFinder(exclude_empty=True)
    # the module's own names, as for ``python -m doctest``, plus np and levysde
    tests = finder.find(mod, modname, extraglobs={"np": np, "levysde": levysde})
    return [t for t in tests if t.examples]


@pytest.mark.parametrize("modname", modules_with_docs())
def test_docstring_examples(modname):
    tests = _tests(modname)
    if not tests:
        pytest.skip("no examples")
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    failed = []
    with np.printoptions(legacy=False):
        for t in tests:
            runner.run(t, out=failed.append)
    assert runner.failures == 0, "".join(failed)


#: modules whose every public function shows an example (the theory, the simulator's scheme,
#: the jackknife; the others are being filled in)
EXAMPLES_REQUIRED = ("levysde.theory.", "levysde.simulation.scheme", "levysde.stats.jackknife")


def test_public_functions_have_examples():
    """Every public function of the modules in EXAMPLES_REQUIRED, and simulate, show an example."""
    missing = []
    for modname in public_modules():
        if not modname.startswith(EXAMPLES_REQUIRED):
            continue
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if callable(obj) and not isinstance(obj, type) and getattr(obj, "__module__", "") == modname:
                if ">>>" not in (obj.__doc__ or ""):
                    missing.append(f"{modname}.{name}")
    if ">>>" not in (levysde.simulate.__doc__ or ""):
        missing.append("levysde.simulate")
    assert not missing, "no Examples section: " + ", ".join(missing)
