"""Shared pieces of the command-line interface: argument parsing with one-line
errors, validated numeric argument types and the model flags of docs/theory.md.

Numerics never live here; commands call the library and only format results.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys

from levysde.core.extras import require
from levysde.core.validate import describe_integers, describe_interval, in_interval
from levysde.theory.params import DEFAULTS


class UsageError(Exception):
    """A bad command-line value; reported as one line on stderr, exit status 2."""


class OneLineParser(argparse.ArgumentParser):
    """ArgumentParser whose errors are a single line on stderr and exit status 2.

    Flags must be spelled in full: abbreviations (``--kap`` for ``--kappa``) are errors
    (``allow_abbrev=False``), since a typo that happens to be a prefix would silently change
    the model. Every command's parser is of this class (``add_subparsers(parser_class=...)``).
    Negative numbers in any float notation (-1e-3, -1E2, -inf, -nan) are read as
    values, not as options, so that range errors name the flag.
    """

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(
            r"^-(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE)

    def parse_known_args(self, args=None, namespace=None):
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str):  # pragma: no cover - exercised via subprocess
        fail(f"{self.prog}: error: {message}{self._dash_hint(message)}")

    def _dash_hint(self, message: str) -> str:
        """A way out when a value that starts with '-' (a file named ``-r.npz``) was read as an
        option, which makes argparse report a missing value or argument instead."""
        known = {s for a in self._actions for s in a.option_strings}
        for tok in getattr(self, "_argv", ()):
            if tok == "--":
                break
            name = tok.split("=", 1)[0]
            if tok.startswith("-") and name not in known and not self._negative_number_matcher.match(tok) \
                    and not name.startswith("--"):
                m = re.match(r"argument (--[\w-]+)", message)
                flag = m.group(1) if m else "--FLAG"
                return (f" ({tok!r} starts with '-', so it is read as an option: write ./{tok} for a file, "
                        f"or {flag}={tok} for a flag's value)")
        return ""


def reject_flags(args, dests, why: str) -> None:
    """UsageError naming the first flag among ``dests`` that was given (``args._flags``, from
    :func:`given_flags`) although it does not apply; ``why`` completes "does not apply ..."."""
    given = getattr(args, "_flags", {})
    for d in dests:
        if d in given:
            raise UsageError(f"argument {given[d]}: does not apply {why}")


def check_output(path: str, flag: str, force: bool, example: str = "run.npz", force_flag: str = "--force") -> None:
    """The overwrite policy of every output (docs/tutorial.md, "Output files"): ``path`` must
    name a regular file in an existing, writable directory and must not exist unless
    ``force_flag`` was given. One-line UsageError naming ``flag`` otherwise; nothing is written."""
    from levysde.io.files import check_output as _check

    try:
        _check(path, f"argument {flag}", force=force, example=example, force_flag=force_flag)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def image_output(path: str, flag: str, force: bool, force_flag: str = "--force") -> str:
    """Check a figure output before any work, the one rule of every command's figure flags: the
    format comes from the suffix (``.png`` is appended to a name without one) and must be one
    that can be written here (:func:`levysde.plotting.figure_formats`: matplotlib writes it and
    the software it needs, such as xelatex for ``.pgf``, is installed), and the file obeys
    :func:`check_output` (``force_flag``: the flag that allows overwriting it); matplotlib
    (the [plot] extra) must be installed. Returns the path that will be written."""
    if not path.strip():
        raise UsageError(f"argument {flag}: expected a file name such as figure.png; got {path!r}")
    if os.path.isdir(path) or path.endswith(os.sep):   # before ".png" would make it a new name
        check_output(path, flag, force, example="figure.png", force_flag=force_flag)
    ext = os.path.splitext(path)[1]
    if not ext:
        path, ext = path + ".png", ".png"
    require("matplotlib.backend_bases", f"argument {flag}: a figure")
    from levysde.plotting import check_figure_format

    try:
        check_figure_format(path)
    except ValueError as exc:
        raise UsageError(f"argument {flag}: {exc}") from None
    check_output(path, flag, force, example="figure" + ext, force_flag=force_flag)
    return path


def same_file(a: str | None, b: str | None) -> bool:
    """Whether two output paths name the same file."""
    return a is not None and b is not None and os.path.realpath(a) == os.path.realpath(b)


def fail(message: str, status: int = 2):
    """Print ``message`` as one line on stderr and exit with ``status``."""
    sys.stderr.write(" ".join(str(message).split()) + "\n")
    raise SystemExit(status)


def real(lo: float | None = None, hi: float | None = None, *,
         lo_open: bool = False, hi_open: bool = False, allowed: str | None = None):
    """argparse type: a finite float in [lo, hi] (ends open when requested); ``allowed`` replaces
    the range named in errors (a bound the library checks in its own words, e.g. --gamma).
    Range and wording are :mod:`levysde.core.validate`'s; the errors quote the flag's text."""
    rng = allowed or ("a finite real number" if lo is None and hi is None
                      else describe_interval(lo, hi, lo_open=lo_open, hi_open=hi_open))

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number; allowed: {rng}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not finite; allowed: {rng}")
        if value != 0 and abs(value) < sys.float_info.min:
            raise argparse.ArgumentTypeError(f"{text} is subnormal; use 0 or a magnitude >= {sys.float_info.min:.3g}")
        if not in_interval(value, lo, hi, lo_open=lo_open, hi_open=hi_open):
            raise argparse.ArgumentTypeError(f"{text} is out of range; allowed: {rng}")
        return value

    parse.__name__ = "number"
    return parse


def integer(lo: int | None = None, hi: int | None = None, why: str = ""):
    """argparse type: an integer in [lo, hi] (compared exactly); ``why`` (the reason for a bound)
    ends the error, worded as :func:`levysde.core.validate.describe_integers`."""
    rng = describe_integers(lo, hi) + (f" ({why})" if why else "")

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer; allowed: {rng}") from None
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"{text} is out of range; allowed: {rng}")
        return value

    parse.__name__ = "integer"
    return parse


def add_model_args(parser: argparse.ArgumentParser, *, multi_eta_j: bool = True,
                   eta_j_required: bool = True) -> None:
    """Add the model flags of ``levysde phase``: --eta-j, --eta-g, --kappa, --alpha, --lam.

    Ranges (docs/theory.md; docs/specification.md §2-§4): eta_J >= 0, eta_G >= 0, kappa > 0, alpha in (0, 2),
    lam >= 0.
    """
    g = parser.add_argument_group("model (docs/theory.md)")
    kw = dict(nargs="+") if multi_eta_j else {}
    g.add_argument("--eta-j", type=real(0.0), required=eta_j_required, metavar="ETA_J",
                   help="jump intensity eta_J >= 0" + (" (one or more values)" if multi_eta_j else ""),
                   **kw)
    g.add_argument("--eta-g", type=real(0.0), default=DEFAULTS["eta_g"],
                   help="Gaussian noise intensity eta_G >= 0 (default %(default)s)")
    g.add_argument("--kappa", type=real(0.0, lo_open=True), default=DEFAULTS["kappa"],
                   help="restoring plateau kappa > 0 (default %(default)s)")
    g.add_argument("--alpha", type=real(0.0, 2.0, lo_open=True, hi_open=True),
                   default=DEFAULTS["alpha"], help="stability index alpha in (0, 2) (default %(default)s)")
    g.add_argument("--lam", type=real(0.0), default=DEFAULTS["lam"],
                   help="tempering lam >= 0; 0 = untempered (default %(default)s)")


def print_json(obj) -> None:
    """Print ``obj`` as strict JSON (no NaN/Infinity tokens)."""
    sys.stdout.write(json.dumps(obj, indent=2, allow_nan=False) + "\n")


def emit(text: str) -> None:
    """Write the whole report at once; a reader that stopped early (``| head``) ends the
    output quietly instead of raising BrokenPipeError at the write or at exit."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass


def check_store(store: str, flag: str) -> None:
    """One-line UsageError naming ``flag`` unless ``store`` is, or can be created as, a writable
    directory (for per-point result files). Nothing is created."""
    import pathlib

    p = pathlib.Path(store)
    if p.exists() and not p.is_dir():
        raise UsageError(f"argument {flag}: {store!r} exists and is not a directory "
                         f"(give a directory for the per-point files)")
    anc = p.absolute()
    while not anc.exists():
        anc = anc.parent
    if not anc.is_dir():
        raise UsageError(f"argument {flag}: cannot create {store!r}: {str(anc)!r} is not a directory")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise UsageError(f"argument {flag}: cannot write in directory {str(anc)!r}")


class Given(argparse.Action):
    """``store`` that also records, in ``namespace._given``, that the flag was on the command line
    (so ``--resume`` can take every flag not given from the checkpoint)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        given = set(getattr(namespace, "_given", ()))
        given.add(self.dest)
        namespace._given = given


class GivenTrue(Given):
    """``store_true`` counterpart of :class:`Given`."""
    def __init__(self, option_strings, dest, default=False, required=False, help=None):
        super().__init__(option_strings, dest, nargs=0, const=True, default=default, required=required, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        super().__call__(parser, namespace, True, option_string)
