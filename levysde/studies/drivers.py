"""What the campaigns' command-line drivers share (examples/paper_campaign.py,
examples/learnability_campaign.py): an argument parser whose errors are one line, and the check
of a campaign directory. Torch-free, so that a usage error needs neither PyTorch nor Dask.

A campaign directory ``OUT`` holds the run files in ``OUT/runs`` (and the sweep's stores beside
it): :func:`check_campaign_dir` refuses, before any work, an ``OUT`` that cannot be one (a file,
a path through a file) and, for a report on a campaign, one that holds none.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys
from typing import NoReturn

__all__ = ["CampaignParser", "check_campaign_dir"]


def check_campaign_dir(out: str | os.PathLike[str], what: str = "out", *, existing: bool = False,
                       create: bool = False) -> pathlib.Path:
    """Check that ``out`` can be (or, with ``existing``, is) a campaign directory.

    ``out`` and its ``runs`` subdirectory must be directories where they exist, and the nearest
    existing folder above them must be one (a path through a regular file cannot be created).

    Parameters
    ----------
    out : str or os.PathLike
        The campaign directory.
    what : str, optional
        How messages name it (a flag such as ``"--out"``; default ``"out"``).
    existing : bool, optional
        Require a campaign there: ``out/runs`` must be an existing directory (keyword only;
        default False).
    create : bool, optional
        Create ``out/runs`` (and the folders above it) once checked (keyword only; default
        False: nothing is created).

    Returns
    -------
    pathlib.Path
        ``out`` as a path.

    Raises
    ------
    ValueError
        One line starting with ``what`` and naming ``out``: a file (or another non-directory)
        in the way, no campaign there (``existing``), or ``out/runs`` that cannot be created
        (``create``).

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> check_campaign_dir(os.path.join(d, "new")).name        # may be created: fine
    'new'
    >>> open(os.path.join(d, "f"), "w").close()
    >>> for kw in ({}, {"existing": True}):
    ...     try:
    ...         check_campaign_dir(os.path.join(d, "f" if not kw else "new"), "--out", **kw)
    ...     except ValueError as e:
    ...         print(str(e).replace(d, "DIR"))
    --out 'DIR/f' is a file, not a campaign directory; give a directory (it is created if missing)
    --out 'DIR/new': no campaign there (no such directory)
    """
    path = pathlib.Path(out)
    runs = path / "runs"
    shown = os.fspath(out)
    for p in (runs, path, *path.parents):
        if not os.path.exists(p):
            continue
        if os.path.isdir(p):
            break
        kind = "a file" if os.path.isfile(p) else "not a directory"
        if p == runs:
            raise ValueError(f"{what} {shown!r}: {os.fspath(runs)!r} is {kind}, not the campaign's runs directory")
        if p == path:
            raise ValueError(f"{what} {shown!r} is {kind}, not a campaign directory"
                             + ("" if existing else "; give a directory (it is created if missing)"))
        raise ValueError(f"{what} {shown!r} cannot be created: {os.fspath(p)!r} is {kind}, not a directory")
    if existing and not runs.is_dir():
        why = "no runs/ directory in it" if path.is_dir() else "no such directory"
        raise ValueError(f"{what} {shown!r}: no campaign there ({why})")
    if create:
        try:
            runs.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"{what} {shown!r}: cannot create the campaign directory {os.fspath(runs)!r} "
                             f"({exc.strerror or type(exc).__name__})") from None
    return path


class CampaignParser(argparse.ArgumentParser):
    """The argument parser of the campaign drivers: a usage error is one line on stderr,
    ``PROG: error: MESSAGE``, and exit status 2, without argparse's usage block.

    Flags must be spelled in full (``allow_abbrev`` is always False), so that a typo that
    happens to be a prefix does not silently select another flag. ``--help`` is argparse's.

    Parameters
    ----------
    *args, **kwargs
        As for :class:`argparse.ArgumentParser`.

    Examples
    --------
    >>> import contextlib, io
    >>> ap = CampaignParser(prog="campaign.py")
    >>> _ = ap.add_argument("--workers", type=int)
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     try:
    ...         ap.parse_args(["--workers", "two"])
    ...     except SystemExit as exc:
    ...         print(exc.code)
    2
    >>> print(err.getvalue(), end="")
    campaign.py: error: argument --workers: invalid int value: 'two'
    """

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE`` as one line on stderr and exit with status 2.

        Parameters
        ----------
        message : str
            What is wrong (its line breaks become spaces).

        Examples
        --------
        See :class:`CampaignParser`.
        """
        sys.stderr.write(f"{self.prog}: error: {' '.join(str(message).split())}\n")
        raise SystemExit(2)

    def campaign_dir(self, out: str, *, status: bool = False) -> str:
        """``--out`` checked by :func:`check_campaign_dir` (``existing=status``; nothing is
        created), or a one-line usage error naming ``--out``.

        Parameters
        ----------
        out : str
            The value of ``--out`` (or its default).
        status : bool, optional
            A report on the campaign (``--status``): there must be one in ``out``.

        Returns
        -------
        str
            ``out``.

        Examples
        --------
        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> CampaignParser().campaign_dir(d) == d
        True
        """
        try:
            check_campaign_dir(out, "--out", existing=status)
        except ValueError as exc:
            self.error(str(exc))
        return out
