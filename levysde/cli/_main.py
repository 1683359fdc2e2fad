"""The parser of ``levysde`` and the dispatch to its commands (:func:`levysde.cli.main`)."""
from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import warnings

from levysde import __version__
from levysde.cli import COMMANDS
from levysde.cli._common import OneLineParser, UsageError, fail
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


#: exit status when the report cannot be written (a full disk, an I/O error on standard output)
EXIT_OUTPUT = 1


class OutputError(Exception):
    """Standard output cannot be written (not a broken pipe: that ends quietly, status 141)."""


#: a printed number that is zero with a minus sign (-0, -0.0, -0.000, -0e+00), not part of a word
_NEGATIVE_ZERO = re.compile(r"(?<![\w.])-(0(?:\.0*)?(?:[eE][+-]?\d+)?)(?![\w.])")


class _GuardedStdout:
    """Standard output for a command: text its encoding cannot hold is written with backslash
    escapes (an ASCII-only locale and a file name such as ``日本.npz``), a number printed as
    negative zero (``X = -0``, ``-0.0`` in JSON) loses its sign, and a failed write or flush
    (``> /dev/full``, an I/O error) is an :class:`OutputError` naming it."""

    def __init__(self, stream):
        self._stream = stream

    def _guard(self, op, *args):
        try:
            return op(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(f"cannot write the report to standard output "
                              f"({exc.strerror or type(exc).__name__}); the report is incomplete") from None

    def write(self, text):
        text = _NEGATIVE_ZERO.sub(r"\1", text)
        try:
            return self._guard(self._stream.write, text)
        except UnicodeEncodeError:
            enc = getattr(self._stream, "encoding", None) or "ascii"
            return self._guard(self._stream.write, text.encode(enc, "backslashreplace").decode(enc))

    def flush(self):
        return self._guard(self._stream.flush)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def given_flags(parser: argparse.ArgumentParser, argv) -> dict:
    """The options given on the command line ``argv``: {dest: option string}, for commands that
    must reject flags which do not apply (see :func:`reject_flags`). ``parser`` is the
    command's (sub)parser; flags are spelled in full (no abbreviations)."""
    flags = {}
    seen = {s: a.dest for a in parser._actions for s in a.option_strings}
    for tok in argv:
        if tok == "--":
            break
        opt = tok.split("=", 1)[0] if tok.startswith("--") else tok
        if opt in seen and seen[opt] not in flags:
            flags[seen[opt]] = opt
    return flags


def repeated_flag(parser: argparse.ArgumentParser, argv) -> str | None:
    """One-line reason when an option of ``parser`` is given more than once in ``argv`` (argparse
    would silently keep the last value: ``--kappa 2 --kappa 3`` runs with kappa = 3); else None."""
    seen: dict = {}
    dest = {s: a.dest for a in parser._actions for s in a.option_strings}
    for tok in argv:
        if tok == "--":
            break
        opt = tok.split("=", 1)[0] if tok.startswith("--") else tok
        if opt not in dest:
            continue
        if dest[opt] in seen:
            first = seen[dest[opt]]
            also = f" (also as {first})" if first != opt else ""
            return (f"argument {opt}: given more than once{also}; give it once (with several values "
                    f"after one flag where it takes several)")
        seen[dest[opt]] = opt
    return None


#: numpy's internal floating-point and empty-data warnings (not shown by the command line: the
#: numbers they concern are reported as unavailable, with the reason, by the estimators)
_NUMPY_INTERNALS = (r"(invalid value|overflow|divide by zero|underflow) encountered", r"Mean of empty slice",
                    r"Degrees of freedom <= 0")


def _warning_line(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(f"levysde: warning: {message}\n")


def run(argv) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the command, return its exit status."""
    if sys.stdout is None:              # started with standard output closed (`>&-`)
        fail("levysde: error: standard output is closed, so the report would be lost; "
             "redirect it instead (> report.txt or > /dev/null)")
    stdout = sys.stdout
    sys.stdout = _GuardedStdout(stdout)
    try:
        return _run(argv)
    finally:
        sys.stdout = stdout


def _run(argv) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.error(f"a command is required: {', '.join(COMMANDS)} (see levysde --help)")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    tokens = sys.argv[1:] if argv is None else argv
    again = repeated_flag(sub.choices[args.command], tokens)
    if again:
        fail(f"levysde {args.command}: error: {again}")
    args._flags = given_flags(sub.choices[args.command], tokens)
    warnings.showwarning = _warning_line
    for text in _NUMPY_INTERNALS:     # numpy's floating-point notes name no flag; results say what failed
        warnings.filterwarnings("ignore", message=text, category=RuntimeWarning)
    try:
        status = args.func(args)
        sys.stdout.flush()              # a full disk shows here, not as an error at exit
    except OutputError as exc:
        _drop_stdout()
        fail(f"levysde {args.command}: error: {exc}", status=EXIT_OUTPUT)
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


def _drop_stdout() -> None:
    """Point standard output at /dev/null, so that the interpreter's flush at exit does not
    report the same failure again."""
    try:
        sys.stdout.flush()
    except Exception:   # noqa: BLE001 - the failure is being reported already
        pass
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
