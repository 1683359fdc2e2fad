"""Command-line interface: ``levysde <command> ...`` (also ``python -m levysde``).

Each command lives in its own module of this package and exposes
``add_parser(subparsers)``; the parser sets ``func`` to the command's runner.
Bad input: one line on stderr, exit status 2, no traceback.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings

from ._common import OneLineParser, UsageError, fail, given_flags

#: command modules, in the order shown by ``levysde --help``
COMMANDS = ("phase", "simulate", "envelope", "diagram", "train", "check")


def build_parser() -> OneLineParser:
    from .. import __version__

    parser = OneLineParser(
        prog="levysde",
        description="Time-scale spectra of trained RNNs as a tempered alpha-stable Levy SDE.",
    )
    parser.add_argument("--version", action="version", version=f"levysde {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").add_parser(sub)
    return parser


def _warning_line(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(f"levysde: warning: {message}\n")


def main(argv=None) -> int:
    """Entry point of the ``levysde`` console script. Returns the exit status; Ctrl-C anywhere
    (also while the package imports, levysde._interrupt) is one line and status 130."""
    try:
        return _main(argv)
    except KeyboardInterrupt:        # while building the parser or parsing, before a command runs
        fail("levysde: interrupted", status=130)


def _main(argv) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.error(f"a command is required: {', '.join(COMMANDS)} (see levysde --help)")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    args._flags = given_flags(sub.choices[args.command], sys.argv[1:] if argv is None else argv)
    warnings.showwarning = _warning_line
    try:
        status = args.func(args)
    except (UsageError, ValueError) as exc:
        fail(f"levysde {args.command}: error: {exc}")
    except BrokenPipeError:
        # the reader went away (e.g. `| head`): stop quietly, like other Unix tools
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        fail(f"levysde {args.command}: interrupted", status=130)
    return int(status or 0)
