"""Command-line interface: ``levysde <command> ...`` (also ``python -m levysde``).

Each command lives in its own module of this package and exposes ``add_parser(subparsers)``;
the parser sets ``func`` to the command's runner. Bad input: one line on stderr, exit status 2,
no traceback. Ctrl-C at any point, the start-up imports included: one line ``interrupted`` on
stderr, exit status 130 (128 + SIGINT).

This module imports nothing but the standard library, so that the numeric stack (numpy, scipy,
numba: most of a start) is imported inside :func:`main`, where an interrupt is handled. For the
same reason each command module imports the library inside its ``run`` function: building the
parser loads every command module, and ``levysde phase`` should not pay for the simulator.
"""
from __future__ import annotations

import sys

__all__ = ["main", "build_parser", "COMMANDS", "EXIT_INTERRUPTED"]

#: command modules, in the order shown by ``levysde --help``
COMMANDS = ("phase", "simulate", "envelope", "diagram", "train", "check", "paper", "learnability")

#: exit status of an interrupted command (128 + SIGINT, as shells report it)
EXIT_INTERRUPTED = 130


def build_parser():
    """The ``levysde`` argument parser (:class:`argparse.ArgumentParser`), every command included."""
    from levysde.cli._main import build_parser as build

    return build()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``levysde`` console script and of ``python -m levysde``.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 on success, 2 for bad input (one line on stderr), 1 when the report
        cannot be written to standard output (a full disk, an I/O error: one line on stderr;
        a closed standard output is refused before any work, status 2), 130 when interrupted
        (Ctrl-C), 141 when the reader of the output went away. Text the output's encoding
        cannot hold (file names on an ASCII-only locale) is written with backslash escapes.

    Examples
    --------
    >>> from levysde.cli import main
    >>> main(["phase", "--eta-j", "3", "--json"])  # doctest: +SKIP
    """
    try:
        from levysde.cli._main import run

        return run(argv)
    except KeyboardInterrupt:      # while importing, building the parser or parsing
        sys.stderr.write("levysde: interrupted\n")
        sys.stderr.flush()
        return EXIT_INTERRUPTED
