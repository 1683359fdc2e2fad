"""Reproducible, resumable parameter sweeps, run through Dask, shared between processes.

Each grid point is an independent task ``task(point, seed) -> dict`` whose seed is
derived from one master seed and the point's index only
(``SeedSequence([master_seed, index])``), so the results do not depend on the
number of workers, on the order in which tasks finish, or on which points were
already done. Every finished point is written at once to its own ``.npz`` file
in the store directory (atomically, :func:`levysde.io.files.atomic_write`, mode
``0o666 & ~umask``), so a killed sweep resumes and skips finished points.

Sweeps that share a store share the work: a point is computed only by the sweep that
holds its lock file ``point_NNNNNN.lock`` (``O_CREAT | O_EXCL``, :func:`levysde.io.files.claim`);
the others wait for its result file. A lock whose holder died (a process of this host that
no longer runs; on other hosts, a lock not refreshed for :data:`levysde.io.files.LOCK_STALE_S`
seconds) is taken over. Points are claimed only as workers become free, so two sweeps
started together split the grid between them.

Schedulers:
  * ``"local"`` (default): a ``distributed.LocalCluster`` with ``n_workers``
    single-threaded worker processes, started and closed here (no set-up);
  * ``"tcp://HOST:PORT"``: an existing Dask cluster;
  * ``"sequential"``: a plain loop in this process (no Dask), the reference.

Ctrl-C (KeyboardInterrupt) stops a sweep quietly: the local workers ignore SIGINT (the
terminal sends it to the whole process group) and write nothing to the terminal, and the
cluster is closed with Dask's logging silenced, so the only output is the caller's own
message; finished points stay on disk and the locks of unfinished ones are released.
"""
from __future__ import annotations

import collections
import json
import logging
import multiprocessing
import os
import pathlib
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable

import numpy as np

from levysde.core.extras import require
from levysde.core.validate import check_int, check_real
from levysde.io.archive import check_archive
from levysde.io.files import atomic_write, check_regular, claim, lock_is_stale, refresh, release

__all__ = ["point_seed", "point_file", "run_sweep", "load_point"]

#: seconds between checks for points finished by another sweep on the same store
POLL_S = 0.25


def point_seed(master_seed: int, index: int) -> int:
    """64-bit seed of grid point ``index`` derived from ``master_seed`` (SeedSequence).

    Parameters
    ----------
    master_seed : int
        The sweep's seed, >= 0.
    index : int
        The point's index in the grid, >= 0.

    Returns
    -------
    int
        ``SeedSequence([master_seed, index]).generate_state(1, uint64)[0]``: depends on the
        two numbers only, not on the number of workers or the order of the points.

    Raises
    ------
    ValueError
        Naming ``master_seed`` or ``index`` when not an integer >= 0.

    References
    ----------
    NumPy's ``numpy.random.SeedSequence`` (hash-based seeding of independent streams,
    after M. E. O'Neill's randutils seed_seq).

    Examples
    --------
    >>> print(point_seed(0, 0) != point_seed(0, 1), point_seed(7, 3) == point_seed(7, 3))
    True True
    """
    ss = np.random.SeedSequence([check_int("master_seed", master_seed, 0), check_int("index", index, 0)])
    return int(ss.generate_state(1, np.uint64)[0])


def _point_path(store: pathlib.Path, index: int) -> pathlib.Path:
    return store / f"point_{index:06d}.npz"


def point_file(store: str | os.PathLike[str], index: int) -> pathlib.Path:
    """The file in which the store ``store`` of :func:`run_sweep` keeps the result of point ``index``.

    A sweep skips a point whose file exists; removing the file makes the next sweep compute the
    point again.

    Parameters
    ----------
    store : str or os.PathLike
        The store directory.
    index : int
        The point's index in the sweep's list of points.

    Returns
    -------
    pathlib.Path
        ``store/point_NNNNNN.npz`` (it need not exist).

    Examples
    --------
    >>> print(point_file("store", 3).name)
    point_000003.npz
    """
    return _point_path(pathlib.Path(store), index)


def _lock_path(store: pathlib.Path, index: int) -> pathlib.Path:
    return store / f"point_{index:06d}.lock"


def _save_point(store: pathlib.Path, index: int, point: dict, seed: int, result: dict) -> None:
    arrays = {f"r_{k}": np.asarray(v) for k, v in result.items()}
    meta = json.dumps({"index": index, "point": point, "seed": seed})
    atomic_write(_point_path(store, index), lambda fh: np.savez(fh, meta=np.array(meta), **arrays))


def load_point(path) -> tuple[dict, int, dict]:
    """Read one stored point of a sweep's store.

    Parameters
    ----------
    path : str or os.PathLike
        A ``point_NNNNNN.npz`` file of a store written by :func:`run_sweep`.

    Returns
    -------
    point : dict
        The grid point (as given to the task).
    seed : int
        Its seed (:func:`point_seed`).
    result : dict
        The task's result; scalars come back as Python scalars (int, float, bool, str: the
        values a fresh run of the task gives for Python scalars), arrays as arrays.

    Raises
    ------
    ValueError
        One line naming ``path`` when it is not a point file written by :func:`run_sweep`.

    Examples
    --------
    >>> import os, tempfile
    >>> def square(point, seed):
    ...     return {"y": point["x"] ** 2}
    >>> with tempfile.TemporaryDirectory() as store:
    ...     _ = run_sweep(square, [{"x": 1}, {"x": 2}], store=store, scheduler="sequential", progress=False)
    ...     point, seed, result = load_point(os.path.join(store, "point_000001.npz"))
    >>> print(point, seed == point_seed(0, 1), result["y"])
    {'x': 2} True 4
    """
    check_archive(path, "sweep point file")      # before np.load allocates what the headers declare
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            result = {k[2:]: (z[k].item() if z[k].ndim == 0 else z[k]) for k in z.files if k.startswith("r_")}
        return meta["point"], meta["seed"], result
    except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
        raise ValueError(f"cannot read sweep point {path!r}: not a point file of levysde.studies.sweep "
                         f"({type(exc).__name__})") from None


def _stored_result(store: pathlib.Path, index: int, point: dict, seed: int) -> dict:
    """The result stored for grid point ``index``; ValueError (one line) when the file holds
    another point or seed (a point file of another sweep copied into the store), which would
    otherwise be taken for this point's result."""
    path = _point_path(store, index)
    got_point, got_seed, result = load_point(path)
    if json.dumps(got_point, sort_keys=True) != json.dumps(point, sort_keys=True) or got_seed != seed:
        raise ValueError(f"store {str(store)!r}: {path.name} holds another sweep's point "
                         f"({got_point}, seed {got_seed}), not point {index} of this sweep; remove it "
                         f"or use another store")
    return result


def _call(task, point, seed, numba_threads):
    if numba_threads is not None:
        try:
            import numba

            numba.set_num_threads(min(int(numba_threads), numba.config.NUMBA_NUM_THREADS))
        except ImportError:  # pragma: no cover
            pass
    return task(point, seed)


def _open_store(store, points: list, master_seed: int) -> pathlib.Path:
    """Create/validate the store directory and its manifest ``sweep.json`` (created exclusively,
    so two sweeps starting together agree on one manifest)."""
    store = pathlib.Path(store)
    if store.exists() and not store.is_dir():
        raise ValueError(f"store {str(store)!r} exists and is not a directory")
    try:
        store.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot create store directory {str(store)!r} "
                         f"({exc.strerror or type(exc).__name__})") from None
    manifest = {"master_seed": int(master_seed), "points": points}
    mpath = store / "sweep.json"
    check_regular(mpath, "sweep manifest")
    if not mpath.exists():
        text = json.dumps(manifest, indent=1).encode()
        tmp = store / f".sweep.json.{os.getpid()}.new"
        atomic_write(tmp, lambda fh: fh.write(text))
        try:
            os.link(tmp, mpath)           # fails if another sweep created it first
        except FileExistsError:
            pass
        except OSError:                   # no hard links on this file system
            if not mpath.exists():
                os.replace(tmp, mpath)
        finally:
            if tmp.exists():
                tmp.unlink()
    try:
        same = json.loads(mpath.read_text()) == json.loads(json.dumps(manifest))
    except ValueError:
        raise ValueError(f"store {str(store)!r}: sweep.json is not valid JSON") from None
    if not same:
        raise ValueError(f"store {str(store)!r} holds a different sweep (points or master_seed differ)")
    return store


#: the idiom a script that starts local Dask workers needs
_MAIN_GUARD = 'if __name__ == "__main__":'


def _is_main_guard(node) -> bool:
    """Whether ``node`` is ``if __name__ == "__main__":`` (either operand order)."""
    import ast

    t = node.test if isinstance(node, ast.If) else None
    if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq)):
        return False
    sides = {ast.dump(t.left), ast.dump(t.comparators[0])}
    return sides == {ast.dump(ast.Name("__name__", ast.Load())), ast.dump(ast.Constant("__main__"))}


def _unguarded_main_line() -> int | None:
    """The line of the main script's top-level statement that led to this call when that statement
    is not under ``if __name__ == "__main__":`` (None when it is, or when there is no main script:
    an interactive session, ``python -c``, a notebook)."""
    import ast
    import inspect

    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    frame = inspect.currentframe()
    while frame is not None and not (frame.f_code.co_name == "<module>" and frame.f_globals is vars(main)):
        frame = frame.f_back
    if frame is None or not path:
        return None
    try:
        tree = ast.parse(pathlib.Path(path).read_text(), filename=path)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None
    line = frame.f_lineno
    for node in tree.body:
        if node.lineno <= line <= (node.end_lineno or node.lineno):
            return None if _is_main_guard(node) else line
    return None


def _check_main_guard() -> None:
    """RuntimeError, at once, when local Dask workers cannot start: they are new processes
    (multiprocessing's "spawn") that import the main script again, so a script that starts a
    sweep at its top level, outside ``if __name__ == "__main__":``, would start one more in every
    worker, which multiprocessing refuses while the worker boots; the sweep would wait for
    workers that never come."""
    what = ("scheduler='local' starts worker processes that import the main script again; "
            "the call that starts them must be under " + _MAIN_GUARD)
    if multiprocessing.parent_process() is not None and \
            getattr(sys.modules.get("__main__"), "__name__", "") == "__mp_main__":
        raise RuntimeError(f"a sweep was started while a worker process imported the main script: {what}")
    line = _unguarded_main_line()
    if line is not None:
        path = sys.modules["__main__"].__file__
        raise RuntimeError(f"{what}; {path}, line {line}, starts the sweep at the top level of the script: "
                           f"put it in a function called under {_MAIN_GUARD} (or use "
                           f"scheduler='sequential')")


def _start_client(scheduler: str, n_workers: int, connect_timeout: float):
    """(client, cluster, slots): a Dask client for ``scheduler`` and the number of tasks kept in
    flight. Local workers are spawned by :func:`_spawn_workers`, so that Ctrl-C reaches only
    this process and nothing the workers print reaches the terminal."""
    from distributed import Client, LocalCluster

    if scheduler != "local":
        try:
            client = Client(scheduler, timeout=connect_timeout)
        except (OSError, TimeoutError) as exc:
            msg = " ".join(str(exc).split()) or type(exc).__name__
            raise ConnectionError(f"cannot connect to the Dask scheduler at {scheduler} ({msg})") from None
        return client, None, max(1, sum(client.nthreads().values()))
    cluster = LocalCluster(n_workers=0, threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=logging.CRITICAL)
    client = None
    try:
        _spawn_workers(cluster, n_workers)
        client = Client(cluster)
        client.wait_for_workers(n_workers, timeout=300)
    except BaseException:
        _close(client, cluster, quiet=True)
        raise
    return client, cluster, int(n_workers)


def _spawn_workers(cluster, n: int, timeout: float = 60.0) -> None:
    """Start ``n`` worker processes of ``cluster`` with SIGINT ignored and stderr on /dev/null.

    Both are inherited through fork + exec and kept by Python, so the terminal's Ctrl-C (sent to
    the whole process group) reaches only this process, and worker tracebacks or log lines
    during a shutdown never reach the terminal (task errors still reach the caller through
    their futures). Only the spawn itself runs under this guard, a fraction of a second; a
    Ctrl-C then is ignored. From a thread other than the main thread the signal disposition
    cannot be changed and only stderr is redirected."""

    main = threading.current_thread() is threading.main_thread()
    before = len(multiprocessing.active_children())
    try:
        sys.stderr.flush()
        saved_fd = os.dup(2)
    except (OSError, ValueError, AttributeError):      # no stderr at all: nothing to protect
        saved_fd = None
    old = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        if saved_fd is not None:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            os.close(devnull)
        cluster.scale(n)
        t0 = time.monotonic()
        while len(multiprocessing.active_children()) < before + n and time.monotonic() - t0 < timeout:
            time.sleep(0.02)
    finally:
        if saved_fd is not None:
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
        if old is not None:
            signal.signal(signal.SIGINT, old)


def _close(client, cluster, *, quiet: bool) -> None:
    """Close the client and the local cluster; ``quiet`` (after an interruption or error):
    silence Dask's, tornado's and asyncio's logging and unraisable-exception reports while
    closing (restored afterwards), so that no worker or connection tracebacks follow the
    caller's one-line message."""
    names = ("distributed", "tornado", "asyncio")
    saved = [logging.getLogger(n).level for n in names], sys.unraisablehook
    if quiet:
        for n in names:
            logging.getLogger(n).setLevel(logging.CRITICAL + 1)
        sys.unraisablehook = lambda unraisable: None
        # an interrupted Client leaves coroutines that are collected later, even at exit
        warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
    try:
        for obj in (client, cluster):
            if obj is None:
                continue
            try:
                obj.close(timeout=5) if quiet else obj.close()
            except BaseException:        # noqa: BLE001 - closing after an interruption must not raise
                if not quiet:
                    raise
    finally:
        if quiet:
            for n, level in zip(names, saved[0], strict=True):
                logging.getLogger(n).setLevel(level)
            sys.unraisablehook = saved[1]


class _NoBar:
    """Stands in for the progress bar without the ``[progress]`` extra (tqdm): draws nothing."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(**kwargs):
    """A ``tqdm.auto`` bar with ``kwargs``, or a :class:`_NoBar` when tqdm is not installed."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(**kwargs)


class _Runner:
    """One sweep's loop: claim points as slots become free, run them, save them, and collect
    the points that other sweeps on the same store finish."""

    def __init__(self, task, points, seeds, results, store, numba_threads, bar):
        self.task, self.points, self.seeds, self.results = task, points, seeds, results
        self.store, self.numba_threads, self.bar = store, numba_threads, bar
        self.held: set[int] = set()

    def _stored(self, i: int) -> bool:
        if self.store is None or not _point_path(self.store, i).exists():
            return False
        self.results[i] = _stored_result(self.store, i, self.points[i], self.seeds[i])
        self.bar.update(1)
        return True

    def _claim(self, i: int) -> bool:
        if self.store is None:
            return True
        if not claim(_lock_path(self.store, i)):
            return False
        self.held.add(i)
        if self._stored(i):          # finished by another sweep just before we claimed it
            self._release(i)
            return False
        return True

    def _release(self, i: int) -> None:
        release(_lock_path(self.store, i))
        self.held.discard(i)

    def finish(self, i: int, res: dict) -> None:
        self.results[i] = res
        if self.store is not None:
            _save_point(self.store, i, self.points[i], self.seeds[i], res)
            self._release(i)
        self.bar.update(1)

    def release_all(self) -> None:
        for i in list(self.held):
            self._release(i)

    def run(self, todo: list, client, slots: int) -> None:
        pending, waiting, inflight = collections.deque(todo), [], {}
        while pending or waiting or inflight:
            while pending and len(inflight) < slots:
                i = pending.popleft()
                if self._stored(i):
                    continue
                if not self._claim(i):
                    if self.results[i] is None:
                        waiting.append(i)
                    continue
                if client is None:
                    inflight[i] = None
                else:
                    inflight[client.submit(_call, self.task, self.points[i], self.seeds[i],
                                           self.numba_threads, pure=False)] = i
            if client is None and inflight:
                i = inflight.popitem()[0]
                self.finish(i, _call(self.task, self.points[i], self.seeds[i], self.numba_threads))
            elif inflight:
                from distributed import wait

                try:
                    done = wait(list(inflight), timeout=POLL_S if waiting else 30.0,
                                return_when="FIRST_COMPLETED").done
                except TimeoutError:
                    done = ()
                for fut in done:
                    self.finish(inflight.pop(fut), fut.result())
            elif waiting:
                time.sleep(POLL_S)
            for i in self.held:
                refresh(_lock_path(self.store, i))
            for i in list(waiting):          # finished by the other sweep, or its holder died
                if self._stored(i):
                    waiting.remove(i)
                elif not _lock_path(self.store, i).exists() or lock_is_stale(_lock_path(self.store, i)):
                    waiting.remove(i)
                    pending.append(i)


def run_sweep(task: Callable[[dict, int], dict], points: list[dict], *, master_seed: int = 0,
              store=None, scheduler: str = "local", n_workers: int | None = None,
              numba_threads: int | None = 1, progress: bool = True,
              connect_timeout: float = 10.0) -> list[dict]:
    """Run ``task(point, seed)`` for every point; return the result dicts in point order.

    Parameters
    ----------
    task : callable
        ``task(point: dict, seed: int) -> dict`` of scalars or arrays; a picklable top-level
        function for a Dask scheduler.
    points : list of dict
        The grid, at least one point (JSON-able values).
    master_seed : int, optional
        >= 0 (default 0); point i gets :func:`point_seed` ``(master_seed, i)``.
    store : str or os.PathLike, optional
        Directory of the per-point files (created); None (default): nothing on disk, no resume.
        A store of other points or another master seed is refused; sweeps on one store share
        the points (lock files; module docstring).
    scheduler : str, optional
        ``"local"`` (default), ``"sequential"`` or a ``"tcp://HOST:PORT"`` address. A Dask
        scheduler (local or tcp) needs the ``[sweep]`` extra (``pip install 'levysde[sweep]'``);
        ``"sequential"`` runs the points in this process and needs nothing more.
    n_workers : int, optional
        Worker processes of the local cluster (>= 1; default 2); only with
        ``scheduler="local"`` (a ValueError otherwise, rather than silently ignored).
    numba_threads : int or None, optional
        Numba threads per task (default 1: workers are the parallelism); None: Numba's own.
    progress : bool, optional
        tqdm bar on stderr when it is a terminal (default True; none without tqdm).
    connect_timeout : float, optional
        Seconds to wait for a ``tcp://`` scheduler, > 0 (default 10).

    Returns
    -------
    list of dict
        The task's results, in point order (stored ones read back from ``store``).

    Raises
    ------
    ValueError
        For bad arguments, a store path that is not a directory, or a mismatching store.
    levysde.core.extras.MissingExtraError
        An ImportError, one line naming the extra, for a Dask scheduler without Dask's
        ``distributed``.
    ConnectionError
        One line, naming the address, when the ``tcp://`` scheduler is not reached in time.
    RuntimeError
        At once, with ``scheduler="local"``, when started at the top level of a script outside
        ``if __name__ == "__main__":`` (see Notes).
    KeyboardInterrupt
        After a quiet shutdown (module docstring). A task's errors propagate (finished points stay).

    Notes
    -----
    ``scheduler="local"`` starts its workers with multiprocessing's "spawn" method, as Dask
    does: every worker is a new interpreter that imports the main script again. A script
    must therefore start the sweep under the main guard, as for any multiprocessing code::

        def main():
            run_sweep(task, points, scheduler="local")

        if __name__ == "__main__":
            main()

    Without it every booting worker would start a sweep of its own, which multiprocessing
    refuses: run_sweep detects the unguarded call and raises RuntimeError before starting any
    worker. Interactive shells, notebooks and ``python -c`` need no guard.

    Examples
    --------
    >>> def square(point, seed):
    ...     return {"y": point["x"] ** 2}
    >>> run_sweep(square, [{"x": 1}, {"x": 2}, {"x": 3}], scheduler="sequential", progress=False)
    [{'y': 1}, {'y': 4}, {'y': 9}]
    """
    if not points:
        raise ValueError("points must contain at least one grid point")
    if not (scheduler in ("local", "sequential") or str(scheduler).startswith("tcp://")):
        raise ValueError(f"scheduler must be 'local', 'sequential' or 'tcp://HOST:PORT'; got {scheduler!r}")
    if scheduler != "sequential":
        require("distributed", f"run_sweep with scheduler={scheduler!r}")     # the [sweep] extra
    if n_workers is None:
        n_workers = 2
    elif scheduler != "local":
        raise ValueError(f"n_workers applies only to scheduler='local' (got scheduler={scheduler!r})")
    n_workers = check_int("n_workers", n_workers, 1)
    if numba_threads is not None:
        numba_threads = check_int("numba_threads", numba_threads, 1)
    check_real("connect_timeout", connect_timeout, 0.0, lo_open=True, why="seconds")
    if store is not None and not isinstance(store, (str, os.PathLike)):
        raise ValueError(f"store must be a directory path (str or os.PathLike) or None; got {store!r}")
    seeds = [point_seed(master_seed, i) for i in range(len(points))]
    results: list = [None] * len(points)
    if store is not None:
        store = _open_store(store, points, master_seed)
        for i in range(len(points)):
            if _point_path(store, i).exists():
                results[i] = _stored_result(store, i, points[i], seeds[i])
    todo = [i for i in range(len(points)) if results[i] is None]

    client = cluster = None
    slots = 1
    if scheduler == "local" and todo:
        _check_main_guard()
    if scheduler != "sequential" and todo:
        # connect before the progress bar is drawn, so a failure is reported alone
        client, cluster, slots = _start_client(scheduler, n_workers, connect_timeout)
    bar = _progress_bar(total=len(points), initial=len(points) - len(todo),
                        disable=None if progress else True, desc="sweep", unit="pt")   # None: a TTY only
    runner = _Runner(task, points, seeds, results, store, numba_threads, bar)
    ok = False
    try:
        runner.run(todo, client, slots)
        ok = True
    finally:
        runner.release_all()
        bar.close()
        _close(client, cluster, quiet=not ok)
    return results
