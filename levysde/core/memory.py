"""The memory this machine has available, for the checks that refuse a run too large to fit."""
from __future__ import annotations

import os

__all__ = ["available_memory"]


def available_memory() -> int | None:
    """Bytes of memory available to new processes on this machine, or None when unknown.

    Read from ``MemAvailable`` of ``/proc/meminfo`` (Linux: free memory plus the page cache
    that can be reclaimed); elsewhere the available physical pages times the page size
    (``os.sysconf``). The checks that refuse a run too large to fit compare their estimate of
    its memory with this number.

    Returns
    -------
    int or None
        Bytes available; None when neither source can be read (the checks then do not refuse).

    Examples
    --------
    >>> m = available_memory()
    >>> m is None or m > 0
    True
    """
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
