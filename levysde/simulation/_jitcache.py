"""Where Numba caches the compiled kernels: :data:`CACHE`, the ``cache=`` of every ``njit`` and
``cuda.jit`` of the simulator.

Numba's ``cache=True`` needs a writable cache directory when the function is *decorated*
(``NUMBA_CACHE_DIR``, the ``__pycache__`` beside the source, or the user's cache directory);
without one the import itself fails ("cannot cache function ...: no locator available"), as
in a read-only container, a Nix store or an install with a read-only HOME. So the choice is
made once, here, by decorating a probe:

1. Numba's own locators work: ``CACHE = True`` (the usual case; nothing changes);
2. else a private cache directory in the temporary directory, ``levysde-numba-<uid>`` (mode
   0700 and owned by this user, since Numba loads pickles from it; another one from
   :func:`tempfile.mkdtemp` when that name is taken by someone else) becomes
   ``numba.config.CACHE_DIR``: ``CACHE = True``, silently;
3. else ``CACHE = False`` with one warning: the kernels are compiled again in every process
   (about 20 s), and ``NUMBA_CACHE_DIR`` names a directory that keeps them.
"""
from __future__ import annotations

import os
import stat
import tempfile
import warnings

import numba

__all__ = ["CACHE"]


def _probe() -> int:     # decorated with cache=True to ask Numba whether it can cache here
    return 0


def _cache_works() -> bool:
    try:
        numba.njit(cache=True)(_probe)
    except RuntimeError:         # "cannot cache function ...: no locator available"
        return False
    return True


def _private_dir() -> str | None:
    """A cache directory only this user can write, in the temporary directory (None: none)."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    base = os.path.join(tempfile.gettempdir(), f"levysde-numba-{uid if uid is not None else 'user'}")
    try:
        os.mkdir(base, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        st = os.lstat(base)
        if stat.S_ISDIR(st.st_mode) and (uid is None or st.st_uid == uid) and not st.st_mode & 0o022:
            return base
        return tempfile.mkdtemp(prefix="levysde-numba-")
    except OSError:
        return None


def _choose() -> bool:
    if _cache_works():
        return True
    d = _private_dir()
    if d is not None:
        numba.config.CACHE_DIR = d
        if _cache_works():
            return True
    warnings.warn("no writable directory for Numba's cache (NUMBA_CACHE_DIR, the package's "
                  "__pycache__, the user cache directory and the temporary directory are not "
                  "writable): the simulator's kernels are compiled again in every process (about "
                  "20 s); set NUMBA_CACHE_DIR to a writable directory to keep them", stacklevel=2)
    return False


#: whether the kernels are cached (``cache=`` of every decorator of the simulator)
CACHE = _choose()

