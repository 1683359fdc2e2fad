"""What the campaigns' command-line drivers share (examples/paper_campaign.py,
examples/learnability_campaign.py): an argument parser whose errors are one line. Torch-free, so
that a usage error needs neither PyTorch nor Dask.
"""
from __future__ import annotations

import argparse
import sys
from typing import NoReturn

__all__ = ["CampaignParser"]


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
