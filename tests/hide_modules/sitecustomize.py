"""Test only (tests/helpers.py, ``hide=``): the top-level modules named in $LEVYSDE_TEST_HIDE
(comma-separated) behave as not installed: every import finder reports them (and their
submodules) as not found, so ``import x`` raises ModuleNotFoundError and
``importlib.util.find_spec("x")`` is None, as on a machine without them. (Raising from a finder
would break libraries that probe with find_spec, e.g. torch for tqdm; ``sys.modules[x] = None``
would leave an entry that other libraries read as the module.)"""
import os
import sys

_HIDDEN = frozenset(n for n in os.environ.get("LEVYSDE_TEST_HIDE", "").split(",") if n)


class _Hiding:
    """A finder of sys.meta_path that finds nothing of the hidden modules."""

    def __init__(self, finder):
        self._finder = finder

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _HIDDEN:
            return None
        find = getattr(self._finder, "find_spec", None)
        return None if find is None else find(name, path, target)

    def __getattr__(self, attr):             # invalidate_caches, find_distributions, ...
        return getattr(self._finder, attr)


if _HIDDEN:
    sys.meta_path[:] = [_Hiding(f) for f in sys.meta_path]   # (shadows any sitecustomize of the environment)
