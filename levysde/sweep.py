"""Reproducible, resumable parameter sweeps, run through Dask.

Each grid point is an independent task ``task(point, seed) -> dict`` whose seed is
derived from one master seed and the point's index only
(``SeedSequence([master_seed, index])``), so the results do not depend on the
number of workers, on the order in which tasks finish, or on which points were
already done. Every finished point is written at once to its own ``.npz`` file
in the store directory (atomically: temp file + rename), so a killed sweep
resumes and skips finished points.

Schedulers:
  * ``"local"`` (default): a ``distributed.LocalCluster`` with ``n_workers``
    single-threaded worker processes, started and closed here (no set-up);
  * ``"tcp://HOST:PORT"``: an existing Dask cluster;
  * ``"sequential"``: a plain loop in this process (no Dask), the reference.
"""
from __future__ import annotations

import json
import os
import pathlib
import tempfile
from typing import Callable

import numpy as np

__all__ = ["point_seed", "run_sweep", "load_point"]


def point_seed(master_seed: int, index: int) -> int:
    """64-bit seed of grid point ``index`` derived from ``master_seed`` (SeedSequence)."""
    if int(master_seed) != master_seed or master_seed < 0:
        raise ValueError(f"master_seed must be an integer >= 0; got {master_seed!r}")
    ss = np.random.SeedSequence([int(master_seed), int(index)])
    return int(ss.generate_state(1, np.uint64)[0])


def _point_path(store: pathlib.Path, index: int) -> pathlib.Path:
    return store / f"point_{index:06d}.npz"


def _save_point(store: pathlib.Path, index: int, point: dict, seed: int, result: dict) -> None:
    arrays = {f"r_{k}": np.asarray(v) for k, v in result.items()}
    meta = json.dumps({"index": index, "point": point, "seed": seed})
    fd, tmp = tempfile.mkstemp(dir=store, suffix=".tmp.npz")
    os.close(fd)
    np.savez(tmp, meta=np.array(meta), **arrays)
    os.replace(tmp, _point_path(store, index))


def load_point(path) -> tuple[dict, int, dict]:
    """Read one stored point: (point, seed, result dict)."""
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        result = {k[2:]: (z[k][()] if z[k].ndim == 0 else z[k]) for k in z.files if k.startswith("r_")}
    return meta["point"], meta["seed"], result


def _call(task, point, seed, numba_threads):
    if numba_threads is not None:
        try:
            import numba

            numba.set_num_threads(min(int(numba_threads), numba.config.NUMBA_NUM_THREADS))
        except ImportError:  # pragma: no cover
            pass
    return task(point, seed)


def run_sweep(task: Callable[[dict, int], dict], points: list[dict], *, master_seed: int = 0,
              store=None, scheduler: str = "local", n_workers: int = 2,
              numba_threads: int | None = 1, progress: bool = True,
              connect_timeout: float = 10.0) -> list[dict]:
    """Run ``task(point, seed)`` for every point; return the result dicts in point order.

    Parameters
    ----------
    task : picklable top-level function ``(point: dict, seed: int) -> dict`` of
        scalars/arrays (JSON-able point values).
    points : list of dicts (the grid), at least one.
    master_seed : int >= 0; point i gets :func:`point_seed` (master_seed, i).
    store : directory for the per-point files (created); ``None`` keeps nothing
        on disk (no resume). A store written with other points or another master
        seed is refused.
    scheduler : ``"local"``, ``"sequential"`` or a ``"tcp://HOST:PORT"`` address.
    n_workers : worker processes of the local cluster (>= 1).
    numba_threads : Numba threads per task (default 1: workers are the parallelism).
    progress : tqdm bar on stderr.
    connect_timeout : seconds to wait for a ``tcp://`` scheduler (default 10).

    Raises
    ------
    ValueError for bad arguments, a store path that is not a directory, or a
    mismatching store; ConnectionError (one line, naming the address) when the
    ``tcp://`` scheduler cannot be reached within ``connect_timeout``; errors raised
    by a task propagate (points finished before it stay on disk).
    """
    if not points:
        raise ValueError("points must contain at least one grid point")
    if int(n_workers) != n_workers or n_workers < 1:
        raise ValueError(f"n_workers must be an integer >= 1; got {n_workers!r}")
    if not (scheduler in ("local", "sequential") or str(scheduler).startswith("tcp://")):
        raise ValueError(f"scheduler must be 'local', 'sequential' or 'tcp://HOST:PORT'; got {scheduler!r}")
    if not connect_timeout > 0:
        raise ValueError(f"connect_timeout must be > 0 seconds; got {connect_timeout!r}")
    seeds = [point_seed(master_seed, i) for i in range(len(points))]
    results: list = [None] * len(points)
    if store is not None:
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
        if mpath.exists():
            if json.loads(mpath.read_text()) != json.loads(json.dumps(manifest)):
                raise ValueError(f"store {str(store)!r} holds a different sweep (points or master_seed differ)")
        else:
            mpath.write_text(json.dumps(manifest, indent=1))
        for i in range(len(points)):
            if _point_path(store, i).exists():
                results[i] = load_point(_point_path(store, i))[2]
    todo = [i for i in range(len(points)) if results[i] is None]

    from tqdm.auto import tqdm

    client = cluster = None
    if scheduler != "sequential" and todo:
        # connect before the progress bar is drawn, so a failure is reported alone
        from distributed import Client, LocalCluster

        if scheduler == "local":
            cluster = LocalCluster(n_workers=int(n_workers), threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            try:
                client = Client(cluster)
            except BaseException:
                cluster.close()
                raise
        else:
            try:
                client = Client(scheduler, timeout=connect_timeout)
            except (OSError, TimeoutError) as exc:
                msg = " ".join(str(exc).split()) or type(exc).__name__
                raise ConnectionError(f"cannot connect to the Dask scheduler at {scheduler} ({msg})") from None

    bar = tqdm(total=len(points), initial=len(points) - len(todo), disable=not progress,
               desc="sweep", unit="pt")

    def finish(i, res):
        results[i] = res
        if store is not None:
            _save_point(store, i, points[i], seeds[i], res)
        bar.update(1)

    try:
        if client is None:
            for i in todo:
                finish(i, _call(task, points[i], seeds[i], numba_threads))
        else:
            from distributed import as_completed

            futures = {client.submit(_call, task, points[i], seeds[i], numba_threads, pure=False): i
                       for i in todo}
            for fut in as_completed(futures):
                finish(futures[fut], fut.result())
    finally:
        bar.close()
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    return results
