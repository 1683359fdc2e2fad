"""What the tests share: ``levysde`` run in-process or in a fresh interpreter, the one-line error
check, and optional dependencies hidden from a subprocess.

    from tests.helpers import call, one_line_error, run_cli

Subprocesses import the package from this checkout (``PYTHONPATH`` starts with the repository
root), whatever copy is installed.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from collections.abc import Iterable

#: the repository root
ROOT = pathlib.Path(__file__).resolve().parent.parent

#: holds the sitecustomize that hides the modules named in $LEVYSDE_TEST_HIDE (see :func:`env`)
_HIDE_DIR = pathlib.Path(__file__).resolve().parent / "hide_modules"


def env(base: dict | None = None, *, hide: Iterable[str] = ()) -> dict:
    """The environment of a subprocess: ``base`` (default ``os.environ``) with the repository root
    first on ``PYTHONPATH``. ``hide``: top-level modules (e.g. ``"matplotlib"``) the subprocess
    cannot import, as on a machine without them (tests/hide_modules/sitecustomize.py)."""
    out = dict(os.environ if base is None else base)
    path = [str(ROOT)] + [p for p in out.get("PYTHONPATH", "").split(os.pathsep) if p]
    hide = list(hide)
    if hide:
        path.insert(0, str(_HIDE_DIR))
        out["LEVYSDE_TEST_HIDE"] = ",".join(hide)
    out["PYTHONPATH"] = os.pathsep.join(path)
    return out


def run_cli(*args, cwd=None, env_base: dict | None = None, hide: Iterable[str] = (), timeout: float = 600,
            **kwargs) -> subprocess.CompletedProcess:
    """``python -m levysde ARGS`` in a fresh interpreter (text, stdout and stderr captured);
    ``env_base`` and ``hide`` as in :func:`env`; other keywords go to ``subprocess.run``."""
    return subprocess.run([sys.executable, "-m", "levysde", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env(env_base, hide=hide), timeout=timeout, **kwargs)


def run_python(code: str, *args, cwd=None, env_base: dict | None = None, hide: Iterable[str] = (),
               timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -c CODE ARGS`` in a fresh interpreter, like :func:`run_cli`."""
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env(env_base, hide=hide), timeout=timeout)


def call(capsys, *args) -> tuple[int | str | None, str, str]:
    """``levysde ARGS`` in-process through :func:`levysde.cli.main`: (exit status, stdout, stderr)."""
    from levysde.cli import main

    try:
        rc = main([str(a) for a in args])
    except SystemExit as exc:
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def one_line_error(rc, err: str, *words: str, status: int = 2) -> None:
    """Assert exit status ``status`` and exactly one line on stderr, no traceback, holding ``words``."""
    assert rc == status, (rc, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)
