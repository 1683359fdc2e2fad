"""The parser of ``levysde`` and the dispatch to its commands (:func:`levysde.cli.main`)."""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings

from levysde import __version__
from levysde.cli import COMMANDS
from levysde.cli._common import OneLineParser, UsageError, fail, given_flags
from levysde.core.extras import MissingExtraError


def build_parser() -> OneLineParser:
    """The ``levysde`` parser with every command's subparser."""
    parser = OneLineParser(
        prog="levysde",
        description="Time-scale spectra of trained RNNs as a tempered alpha-stable Levy SDE.",
    )
    parser.add_argument("--version", action="version", version=f"levysde {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for name in COMMANDS:
        importlib.import_module(f"levysde.cli.{name}").add_parser(sub)
    return parser


def _warning_line(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(f"levysde: warning: {message}\n")


def run(argv) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the command, return its exit status."""
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
    except (UsageError, ValueError, MissingExtraError) as exc:    # MissingExtraError: one line, the extra
        fail(f"levysde {args.command}: error: {exc}")
    except BrokenPipeError:
        # the reader went away (e.g. `| head`): stop quietly, like other Unix tools
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        fail(f"levysde {args.command}: interrupted", status=130)
    return int(status or 0)
