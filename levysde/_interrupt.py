"""Ctrl-C while the ``levysde`` command line starts up.

The console script (``levysde = "levysde.cli:main"``) and ``python -m levysde`` both import the
package ``levysde`` before :func:`levysde.cli.main` runs, and that import is the slow part of
a start (numpy, scipy, numba and the compiled kernels' caches: about a second). An interrupt
there used to end in a KeyboardInterrupt traceback. :func:`cli_interrupt_guard` wraps the
package's imports: when this process is the command line (:func:`running_cli`) an interrupt
becomes the CLI's usual answer, one line ``levysde: interrupted`` on stderr and exit status
130 (128 + SIGINT); for a library user (a script, a notebook, the REPL) KeyboardInterrupt
propagates unchanged.
"""
from __future__ import annotations

import contextlib
import os
import sys

#: exit status of an interrupted command (128 + SIGINT, as shells report it)
EXIT_INTERRUPTED = 130

#: the console script's file name (POSIX; Windows launchers)
_SCRIPT_NAMES = ("levysde", "levysde.exe", "levysde-script.py")


def running_cli() -> bool:
    """Whether this process is the levysde command line: the console script (``sys.argv[0]``
    named ``levysde``) or ``python [options] -m levysde`` (read from ``sys.orig_argv``, since
    during the package's import ``sys.argv[0]`` is still ``"-m"``)."""
    if sys.argv and os.path.basename(sys.argv[0]) in _SCRIPT_NAMES:
        return True
    argv = list(getattr(sys, "orig_argv", ()))[1:]
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-m":
            return argv[i + 1:i + 2] == ["levysde"]
        if a.startswith("-m"):
            return a[2:] == "levysde"
        if not a.startswith("-") or a in ("-c", "-"):
            return False                      # a script, -c code or stdin: not -m levysde
        i += 2 if a in ("-X", "-W") else 1    # options that take a separate argument
    return False


@contextlib.contextmanager
def cli_interrupt_guard():
    """Context manager: KeyboardInterrupt inside it exits the command line with one line on
    stderr and status 130 (:func:`running_cli`), and propagates unchanged otherwise."""
    try:
        yield
    except KeyboardInterrupt:
        if not running_cli():
            raise
        sys.stderr.write("levysde: interrupted\n")
        sys.stderr.flush()
        raise SystemExit(EXIT_INTERRUPTED) from None
