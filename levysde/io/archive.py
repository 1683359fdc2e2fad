"""Bounds of a zip archive (a ``.npz`` run file, a torch checkpoint) checked before it is loaded.

``numpy.load`` allocates every array at the shape its ``.npy`` header declares before reading
its data, and a zip member may declare any uncompressed size: a file of a few hundred bytes can
ask for terabytes (a MemoryError, or the machine swapping). :func:`check_archive` reads only the
zip directory and the ``.npy`` headers (``numpy.lib.format.read_array_header_1_0`` / ``_2_0``)
and refuses, with one line "corrupt or oversized ...", an archive whose

* ``.npy`` header declares more bytes than its member holds (a valid member holds exactly the
  header plus ``prod(shape) * itemsize`` bytes), or object arrays;
* members are stored uncompressed but declare more bytes than the archive has, or are
  compressed beyond deflate's largest ratio (1032 : 1, RFC 1951's longest match per 2 bits);
* members together need more memory than is available (:func:`levysde.core.memory.available_memory`).
"""
from __future__ import annotations

import math
import os
import zipfile

import numpy as np

from levysde.core.memory import available_memory

__all__ = ["check_archive", "MAX_DEFLATE_RATIO"]

#: the largest ratio of uncompressed to compressed size that deflate can reach
MAX_DEFLATE_RATIO = 1032


def _npy_bytes(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[int, int]:
    """(header length, declared data bytes) of the ``.npy`` member ``info``; ValueError when the
    header cannot be read or declares object arrays."""
    fmt = np.lib.format
    with zf.open(info) as fh:
        version = fmt.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = fmt.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, _, dtype = fmt.read_array_header_2_0(fh)
        else:
            raise ValueError(f".npy format version {version[0]}.{version[1]} (levysde writes 1.0)")
        header = fh.tell()
    if dtype.hasobject:
        raise ValueError("object arrays")
    return header, math.prod(int(n) for n in shape) * dtype.itemsize


def check_archive(path: str | os.PathLike[str], what: str = "run file") -> None:
    """Raise ValueError, one line "cannot read PATH: corrupt or oversized WHAT (...)", unless the
    zip archive ``path`` can be loaded within the bounds of the module docstring. Reads the zip
    directory and the ``.npy`` headers only. A file that is not a zip archive passes (the loader
    reports it); ``.npy`` headers are checked in members whose names end in ``.npy``.

    Parameters
    ----------
    path : str or os.PathLike
        The archive (a ``.npz`` run file, a torch checkpoint). A missing or unreadable file
        passes: the loader then reports it.
    what : str, optional
        How the message names the file (default ``"run file"``).

    Raises
    ------
    ValueError
        One line ``cannot read PATH: corrupt or oversized WHAT (REASON)`` when a member's
        ``.npy`` header is unreadable, declares object arrays or more (or fewer) bytes than the
        member holds; when a stored member declares more bytes than the file has or a compressed
        one a ratio above :data:`MAX_DEFLATE_RATIO`; or when the members need more memory than
        :func:`levysde.core.memory.available_memory` reports.

    References
    ----------
    .. [1] P. Deutsch, "DEFLATE Compressed Data Format Specification version 1.3", RFC 1951
       (1996): the longest match (258 bytes) costs at least 2 bits, whence the 1032 : 1 bound.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> path = os.path.join(d, 'run.npz')
    >>> np.savez(path, zeta=np.zeros(10))
    >>> check_archive(path)                       # a sound archive: nothing to say
    >>> import io
    >>> buf = io.BytesIO()                        # an .npy header declaring 10^6 values ...
    >>> np.lib.format.write_array_header_1_0(buf, {'descr': '<f8', 'fortran_order': False,
    ...                                            'shape': (10**6,)})
    >>> _ = buf.write(bytes(80))                  # ... and holding 10
    >>> with zipfile.ZipFile(path, 'w') as zf:
    ...     zf.writestr('zeta.npy', buf.getvalue())
    >>> try:
    ...     check_archive(path)
    ... except ValueError as e:
    ...     print(str(e).replace(d, 'DIR'))
    cannot read DIR/run.npz: corrupt or oversized run file
    (member 'zeta.npy' declares 8000000 bytes of data but holds 80)
    """
    def bad(reason: str) -> ValueError:
        return ValueError(f"cannot read {os.fspath(path)}: corrupt or oversized {what} ({reason})")

    try:
        if not zipfile.is_zipfile(path):
            return
        size = os.path.getsize(path)
        with zipfile.ZipFile(path) as zf:
            total = 0
            for info in zf.infolist():
                if info.compress_type == zipfile.ZIP_STORED and info.file_size > size:
                    raise bad(f"member {info.filename!r} declares {info.file_size} bytes in a file of {size}")
                if info.file_size > max(info.compress_size, 1) * MAX_DEFLATE_RATIO:
                    raise bad(f"member {info.filename!r} declares {info.file_size} bytes from "
                              f"{info.compress_size} compressed")
                if info.filename.endswith(".npy"):
                    try:
                        header, nbytes = _npy_bytes(zf, info)
                    except (ValueError, EOFError, OSError, zipfile.BadZipFile, NotImplementedError) as exc:
                        raise bad(f"member {info.filename!r}: {' '.join(str(exc).split())[:120]}") from None
                    if header + nbytes != info.file_size:
                        raise bad(f"member {info.filename!r} declares {nbytes} bytes of data but holds "
                                  f"{info.file_size - header}")
                total += info.file_size
    except (OSError, zipfile.BadZipFile, EOFError):
        return                      # unreadable: the loader's own one-line error names it
    avail = available_memory()
    if avail is not None and total > avail:
        raise bad(f"its arrays need {total / 2**30:.3g} GiB; {avail / 2**30:.3g} GiB of memory are available")
