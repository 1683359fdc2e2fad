"""The memory this machine has available, for the checks that refuse a run too large to fit."""
from __future__ import annotations

import os

__all__ = ["available_memory"]


def available_memory() -> int | None:
    """Bytes of memory available (MemAvailable of /proc/meminfo; None when unknown)."""
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
