"""File output for the whole package: one atomic writer, one overwrite policy, one lock.

Every file levysde writes (simulation and RNN run files, checkpoints, figures, phase-diagram
data, sweep points and manifests) goes through :func:`atomic_write`:

* the data go to a temporary file next to the target, named
  ``.<name>.levysde-tmp.<host>.<pid>.<random>``, which then replaces the target with
  ``os.replace``; an interrupted or failed write leaves any earlier file intact;
* SIGINT and SIGTERM that arrive while the file is written are held back and delivered when
  the write is done (in the main thread; :func:`interrupts_deferred`): a handler that raises
  inside the writer would stop it half way, and a writer that calls back into Python from C++
  (``torch.save``) can then abort the interpreter instead of raising;
* the file gets mode ``0o666 & ~umask`` (like a file created with ``open``), not
  ``mkstemp``'s 0600;
* a target that exists and is not a regular file (a directory, FIFO, device node, socket) is
  **refused** with a one-line ValueError: ``os.replace`` would silently put a regular file in
  place of e.g. ``/dev/null``. A symbolic link is followed: the file it points to is replaced
  and the link is kept;
* temporary files left by a writer that was killed (``kill -9``, power loss) are removed by the
  next write to the same target: those of a process of this host that no longer runs, and any
  other (older hosts, older levysde versions' ``.tmp-*`` names) not touched for
  :data:`STALE_TMP_S` seconds.

The command-line overwrite policy (refuse an existing output unless ``--force``) is
:func:`check_output`, called for every output before any work is done.

Sweeps share work between processes through :func:`claim` / :func:`release` lock files
(``os.open`` with ``O_CREAT | O_EXCL``).
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import signal
import socket
import stat
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

__all__ = ["atomic_write", "interrupts_deferred", "check_output", "check_regular", "umask", "claim", "release",
           "lock_is_stale", "clean_stale_tmp", "STALE_TMP_S", "LOCK_STALE_S"]

#: temporary files of other hosts (or of an unknown writer) older than this are stale (seconds)
STALE_TMP_S = 3600.0
#: locks of other hosts not refreshed for this long are stale (seconds); holders refresh theirs
LOCK_STALE_S = 300.0

_TMP_TAG = ".levysde-tmp."


def umask() -> int:
    """The process umask (read from /proc where possible, so that it is not changed even
    briefly).

    Elsewhere it is read by setting it to ``0o022`` and back (:func:`os.umask` can only be read
    so), which another thread creating a file at that instant would see.

    Returns
    -------
    int
        The umask, e.g. ``0o022``; files are written with mode ``0o666 & ~umask()``.

    Examples
    --------
    >>> m = umask()
    >>> 0 <= m <= 0o777
    True
    >>> m == os.umask(m)      # os.umask sets a new mask and returns the old one
    True
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname())[:40] or "host"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:      # exists, owned by someone else
        return True
    except OSError:
        return True
    return True


_KIND = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
         (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
         (stat.S_ISSOCK, "a socket"))


def check_regular(path: str | os.PathLike[str], what: str = "output") -> None:
    """Raise ValueError (one line, naming ``what`` and ``path``) when ``path`` exists and is not
    a regular file (after following symbolic links). levysde never replaces such a target.

    Parameters
    ----------
    path : str or os.PathLike
        The intended output file. A missing file passes, and so does a path whose status cannot
        be read for other reasons (permissions: the write itself then reports it).
    what : str, optional
        How the message names the file (a flag such as ``"--out"``; default ``"output"``).

    Raises
    ------
    ValueError
        When ``path`` is a directory, FIFO, device node or socket, or a component of it is not a
        directory, the name is too long, or symbolic links loop.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> check_regular(os.path.join(d, 'new.npz'))      # missing: fine
    >>> try:
    ...     check_regular(d, '--out')
    ... except ValueError as e:
    ...     print(str(e).replace(d, 'DIR'))
    --out 'DIR' is a directory; levysde writes regular files only (give a file name)
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        if exc.errno in (errno.ENOTDIR, errno.ENAMETOOLONG, errno.ELOOP):
            raise ValueError(f"{what} {os.fspath(path)!r}: {exc.strerror}") from None
        return
    if stat.S_ISREG(mode):
        return
    kind = next((k for test, k in _KIND if test(mode)), "not a regular file")
    raise ValueError(f"{what} {os.fspath(path)!r} is {kind}; levysde writes regular files only "
                     f"(give a file name)")


def clean_stale_tmp(path: str | os.PathLike[str]) -> list[str]:
    """Remove temporary files of interrupted writes of ``path`` (see the module docstring).

    A temporary file ``.<name>.levysde-tmp.<host>.<pid>.<random>`` of this host is stale when
    process ``pid`` no longer runs; one of another host, or with an unparseable name or an older
    levysde's ``.tmp-*`` name, when it has not been modified for :data:`STALE_TMP_S` seconds.
    Files of live writers are kept; only regular files are removed; errors (a directory that
    cannot be listed, a file removed meanwhile) are ignored.

    Parameters
    ----------
    path : str or os.PathLike
        The target whose temporary files to clean (symbolic links followed, as
        :func:`atomic_write` does).

    Returns
    -------
    list of str
        The names (not paths) of the files removed, in directory order.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> dead = os.path.join(d, '.run.npz.levysde-tmp.otherhost.1.abcd')  # another host's write
    >>> open(dead, 'w').close()
    >>> os.utime(dead, (0, 0))                   # last touched in 1970: stale
    >>> clean_stale_tmp(os.path.join(d, 'run.npz'))
    ['.run.npz.levysde-tmp.otherhost.1.abcd']
    """
    target = os.path.realpath(os.fspath(path))
    d, name = os.path.split(target)
    removed: list[str] = []
    try:
        entries = os.listdir(d)
    except OSError:
        return removed
    mine = f".{name}{_TMP_TAG}"
    legacy = re.compile(r"^\.tmp-[A-Za-z0-9_]{8}" + re.escape(name) + r"$")  # levysde <= 0.x
    host = _host()
    now = time.time()
    for entry in entries:
        if entry.startswith(mine):
            parts = entry[len(mine):].split(".")
            try:
                h, pid = parts[0], int(parts[1])
            except (IndexError, ValueError):
                h, pid = None, None
            stale = (not _pid_alive(pid)) if h == host and pid is not None else None
        elif legacy.match(entry):
            stale = None
        else:
            continue
        full = os.path.join(d, entry)
        try:
            st = os.lstat(full)
            if not stat.S_ISREG(st.st_mode):
                continue
            if stale is None:
                stale = now - st.st_mtime > STALE_TMP_S
            if stale:
                os.unlink(full)
                removed.append(entry)
        except OSError:
            continue
    return removed


def atomic_write(path: str | os.PathLike[str], writer: Callable[[IO[bytes]], Any], *,
                 what: str = "output") -> None:
    """Write ``path`` atomically (module docstring): ``writer(fh)`` fills a temporary binary file
    next to the target, which gets mode ``0o666 & ~umask`` and then replaces the target.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (its directory must exist). A symbolic link is followed (the link
        is kept).
    writer : callable
        Called with the open binary temporary file; it writes the content.
    what : str, optional
        How error messages name the file (e.g. ``"--out"``; default ``"output"``).

    Raises
    ------
    ValueError
        One line, when ``path`` exists and is not a regular file.
    OSError
        When the directory cannot be written; and whatever ``writer`` raises. On any failure
        (or interruption) the temporary file is removed and ``path`` is untouched.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> path = os.path.join(d, 'out.txt')
    >>> atomic_write(path, lambda fh: fh.write(b'beta* = 0.808'))
    >>> print(open(path).read())
    beta* = 0.808
    """
    target = os.path.realpath(os.fspath(path))
    check_regular(target, what)
    clean_stale_tmp(target)
    d, name = os.path.split(target)
    tmp = os.path.join(d, f".{name}{_TMP_TAG}{_host()}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with interrupts_deferred():
            with os.fdopen(fd, "wb") as fh:
                writer(fh)
            os.chmod(tmp, 0o666 & ~umask())
            check_regular(target, what)    # made a FIFO/device meanwhile: still refuse
            os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


#: the signals :func:`interrupts_deferred` holds back
DEFERRED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[list[int]]:
    """Hold SIGINT and SIGTERM back for the duration of the block; deliver them after it.

    Inside the block the Python handlers of :data:`DEFERRED_SIGNALS` are replaced by one that
    only records the signal; on leaving the block the handlers are restored and each recorded
    signal is raised again (``signal.raise_signal``), so the program's own handler (or the
    default action) runs then, once per signal kind. Outside the main thread, where Python
    cannot set handlers, the block runs unchanged.

    Yields
    ------
    list of int
        The signals recorded so far (for tests and diagnostics).

    Examples
    --------
    >>> import os, signal
    >>> seen = []
    >>> old = signal.signal(signal.SIGTERM, lambda s, f: seen.append("handled"))
    >>> with interrupts_deferred() as held:
    ...     os.kill(os.getpid(), signal.SIGTERM)
    ...     seen.append("block done")
    >>> _ = signal.signal(signal.SIGTERM, old)
    >>> held == [signal.SIGTERM], seen
    (True, ['block done', 'handled'])
    """
    held: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield held
        return

    def _hold(signum, frame):
        if signum not in held:
            held.append(signum)

    old = {s: signal.signal(s, _hold) for s in DEFERRED_SIGNALS}
    try:
        yield held
    finally:
        for s, h in old.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)
        for signum in held:
            signal.raise_signal(signum)


def check_output(path: str | os.PathLike[str], what: str = "output", *, force: bool = False,
                 example: str = "run.npz", force_flag: str = "--force") -> None:
    """The overwrite policy of every command-line output, checked before any work is done.

    ``path`` must be writable as a file: it must not end in a path separator, must not be a
    directory or any other non-regular file (FIFO, device, socket), its directory must exist
    and accept new files (probed with a temporary file that is removed again), and it must not
    exist unless ``force``. Nothing is created.

    Parameters
    ----------
    path : str or os.PathLike
        The output file.
    what : str, optional
        How messages name the output (a flag such as ``"--out"``; default ``"output"``).
    force : bool, optional
        Allow replacing an existing regular file (default False).
    example : str, optional
        The file name suggested in the messages (default ``"run.npz"``).
    force_flag : str, optional
        The flag that allows replacing the file, named when it exists (default ``"--force"``).

    Raises
    ------
    ValueError
        One line starting with ``what`` and naming ``path``, when it cannot be written.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> check_output(os.path.join(d, 'run.npz'))   # a new file in a writable folder: fine
    >>> open(os.path.join(d, 'run.npz'), 'w').close()
    >>> try:
    ...     check_output(os.path.join(d, 'run.npz'))
    ... except ValueError as e:
    ...     print('refused:', 'exists' in str(e))
    refused: True
    """
    path = os.fspath(path)
    seps = tuple(s for s in (os.sep, os.altsep) if s)
    if not path or path.endswith(seps):
        raise ValueError(f"{what} {path!r} must name a file, not a directory (e.g. {example})")
    if os.path.isdir(path):
        raise ValueError(f"{what} {path!r} is a directory; give a file name such as "
                         f"{os.path.join(path, example)!r}")
    check_regular(path, what)
    d = os.path.dirname(os.path.realpath(path))
    if not os.path.isdir(d):
        raise ValueError(f"{what}: directory {d!r} does not exist (create it first: mkdir -p {d})")
    probe = os.path.join(d, f".levysde-probe.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as exc:
        raise ValueError(f"{what}: cannot create files in directory {d!r} "
                         f"({exc.strerror or type(exc).__name__})") from None
    os.unlink(probe)
    if os.path.lexists(path) and not force:
        raise ValueError(f"{what} {path!r} already exists; use {force_flag} to overwrite it or choose "
                         f"another name")


# ----------------------------------------------------------------------------- lock files

def _lock_info(lock: str) -> dict[str, Any] | None:
    try:
        with open(lock) as fh:
            info = json.loads(fh.read() or "null")
        return info if isinstance(info, dict) else {}
    except (OSError, ValueError):
        return None


def lock_is_stale(lock: str | os.PathLike[str], *, stale_after: float = LOCK_STALE_S) -> bool:
    """Whether lock file ``lock`` was left by a holder that is gone: a process of this host
    that no longer runs, or (other hosts, unreadable content) a lock not refreshed for
    ``stale_after`` seconds. A missing lock is not stale.

    Parameters
    ----------
    lock : str or os.PathLike
        The lock file, as :func:`claim` writes it (JSON with ``host``, ``pid``, ``time``).
    stale_after : float, optional
        Seconds, > 0, since the lock's last modification after which a lock of another host
        (or of unreadable content) counts as abandoned (default :data:`LOCK_STALE_S`).

    Returns
    -------
    bool
        True when the holder is gone.

    Examples
    --------
    >>> import tempfile
    >>> lock = os.path.join(tempfile.mkdtemp(), 'point.lock')
    >>> lock_is_stale(lock)                       # no lock
    False
    >>> claim(lock), lock_is_stale(lock)          # held by this (running) process
    (True, False)
    >>> release(lock)
    """
    lock = os.fspath(lock)
    try:
        mtime = os.stat(lock).st_mtime
    except OSError:
        return False
    info = _lock_info(lock)
    if info and info.get("host") == _host() and isinstance(info.get("pid"), int):
        return not _pid_alive(info["pid"])
    return time.time() - mtime > stale_after


def claim(lock: str | os.PathLike[str], *, stale_after: float = LOCK_STALE_S) -> bool:
    """Try to take lock file ``lock`` (``O_CREAT | O_EXCL``, mode ``0o666 & ~umask``, holding
    the host, pid and time as JSON). Returns True when taken; False when another live holder
    has it. A stale lock (:func:`lock_is_stale`) is removed and taken over. Two processes
    breaking the same stale lock at once can both succeed in rare races; callers must make
    the locked work idempotent (sweeps do: a point's result depends on its seed only and is
    written atomically).

    Parameters
    ----------
    lock : str or os.PathLike
        The lock file to create; its directory must exist.
    stale_after : float, optional
        Passed to :func:`lock_is_stale` (seconds; default :data:`LOCK_STALE_S`).

    Returns
    -------
    bool
        True when this process now holds the lock, False when a live holder has it.

    Raises
    ------
    OSError
        When the lock cannot be created for another reason (a missing or read-only directory).

    See Also
    --------
    release : give the lock up.

    Examples
    --------
    >>> import tempfile
    >>> lock = os.path.join(tempfile.mkdtemp(), 'point.lock')
    >>> claim(lock), claim(lock)                  # the second try finds it taken
    (True, False)
    >>> release(lock); claim(lock)
    True
    >>> release(lock)
    """
    lock = os.fspath(lock)
    body = json.dumps({"host": _host(), "pid": os.getpid(), "time": time.time()}).encode()
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            if not lock_is_stale(lock, stale_after=stale_after):
                return False
            try:
                os.unlink(lock)
            except FileNotFoundError:
                pass
            continue
        with os.fdopen(fd, "wb") as fh:
            fh.write(body)
        return True
    return False


def release(lock: str | os.PathLike[str]) -> None:
    """Remove lock file ``lock`` (no error if it is gone).

    The lock is removed whoever holds it: call it only for a lock this process took with
    :func:`claim`.

    Parameters
    ----------
    lock : str or os.PathLike
        The lock file.

    Raises
    ------
    OSError
        When it exists but cannot be removed (e.g. a read-only directory).

    Examples
    --------
    >>> import tempfile
    >>> lock = os.path.join(tempfile.mkdtemp(), 'point.lock')
    >>> claim(lock)
    True
    >>> release(lock); release(lock)               # a second release is harmless
    >>> os.path.exists(lock)
    False
    """
    try:
        os.unlink(os.fspath(lock))
    except FileNotFoundError:
        pass


def refresh(lock: str | os.PathLike[str]) -> None:
    """Mark lock file ``lock`` as alive (update its mtime) for holders on other hosts."""
    try:
        os.utime(os.fspath(lock))
    except OSError:
        pass
