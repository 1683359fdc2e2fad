"""Sweeps: seeds from one master seed, 2-worker LocalCluster == sequential bit for bit, resume."""
import numpy as np
import pytest

from levysde.studies.sweep import load_point, point_seed, run_sweep


def draw(point, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(1000) * point["scale"]
    return {"mean": x.mean(), "sample": x[:5], "seed_used": seed}


POINTS = [{"scale": s} for s in (0.5, 1.0, 2.0, 4.0)]


def test_point_seeds_are_distinct_and_index_based():
    seeds = [point_seed(7, i) for i in range(100)]
    assert len(set(seeds)) == 100
    assert point_seed(7, 3) == seeds[3] and point_seed(8, 3) != seeds[3]
    with pytest.raises(ValueError, match="master_seed"):
        point_seed(-1, 0)


def test_local_cluster_matches_sequential_bit_for_bit(tmp_path):
    seq = run_sweep(draw, POINTS, master_seed=11, scheduler="sequential", progress=False)
    par = run_sweep(draw, POINTS, master_seed=11, scheduler="local", n_workers=2,
                    store=tmp_path / "s", progress=False)
    for a, b in zip(seq, par, strict=True):
        assert a["mean"] == b["mean"] and np.array_equal(a["sample"], b["sample"])
    # stored files carry the same numbers
    point, seed, res = load_point(tmp_path / "s" / "point_000002.npz")
    assert point == POINTS[2] and seed == point_seed(11, 2) and res["mean"] == seq[2]["mean"]


def test_resume_skips_finished_points(tmp_path):
    calls = []

    def counting(point, seed):
        calls.append(point["scale"])
        return draw(point, seed)

    store = tmp_path / "r"
    first = run_sweep(counting, POINTS[:2] + POINTS[2:], master_seed=3, store=store,
                      scheduler="sequential", progress=False)
    (store / "point_000001.npz").unlink()          # as if killed before point 1 was written
    calls.clear()
    again = run_sweep(counting, POINTS, master_seed=3, store=store, scheduler="sequential", progress=False)
    assert calls == [POINTS[1]["scale"]]
    assert all(a["mean"] == b["mean"] for a, b in zip(first, again, strict=True))
    with pytest.raises(ValueError, match="different sweep"):
        run_sweep(counting, POINTS, master_seed=4, store=store, scheduler="sequential", progress=False)


def test_bad_arguments():
    with pytest.raises(ValueError, match="points"):
        run_sweep(draw, [], progress=False)
    with pytest.raises(ValueError, match="scheduler"):
        run_sweep(draw, POINTS, scheduler="mpi", progress=False)
    with pytest.raises(ValueError, match="n_workers"):
        run_sweep(draw, POINTS, n_workers=0, progress=False)
    # n_workers only configures the local cluster: with another scheduler it is an error
    with pytest.raises(ValueError, match="n_workers applies only to scheduler='local'"):
        run_sweep(draw, POINTS, scheduler="sequential", n_workers=3, progress=False)


def test_store_that_is_a_file_is_refused(tmp_path):
    f = tmp_path / "f"
    f.write_text("keep me")
    with pytest.raises(ValueError, match="not a directory"):
        run_sweep(draw, POINTS, store=f, scheduler="sequential", progress=False)
    assert f.read_text() == "keep me"


def test_unreachable_scheduler_is_one_connection_error():
    import time

    t0 = time.perf_counter()
    with pytest.raises(ConnectionError, match="tcp://127.0.0.1:1") as info:
        run_sweep(draw, POINTS, scheduler="tcp://127.0.0.1:1", connect_timeout=1, progress=False)
    assert "\n" not in str(info.value) and time.perf_counter() - t0 < 20
    with pytest.raises(ValueError, match="connect_timeout"):
        run_sweep(draw, POINTS, scheduler="sequential", connect_timeout=0, progress=False)


# ------------------------------------------------------------------ sharing a store (issue 14, item 22)

def _slow(point, seed):
    import time

    time.sleep(0.15)
    return draw(point, seed)


GRID = [{"scale": float(s)} for s in range(1, 13)]


def test_two_concurrent_sweeps_share_the_points(tmp_path):
    """Two sweeps started together on one store compute disjoint sets of points that cover the
    grid; both return the full, identical result (each computed point exactly once)."""
    import threading

    store = tmp_path / "shared"
    done = {"a": [], "b": []}
    out = {}

    def runner(name):
        def task(point, seed):
            done[name].append(point["scale"])
            return _slow(point, seed)
        out[name] = run_sweep(task, GRID, master_seed=2, store=store, scheduler="sequential",
                              progress=False)

    threads = [threading.Thread(target=runner, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    a, b = done["a"], done["b"]
    assert sorted(a + b) == [p["scale"] for p in GRID]          # every point once, none twice
    assert a and b                                              # both did a share of the work
    ref = run_sweep(draw, GRID, master_seed=2, scheduler="sequential", progress=False)
    for res in (out["a"], out["b"]):
        assert [r["mean"] for r in res] == [r["mean"] for r in ref]
    assert not list(store.glob("*.lock")) and not list(store.glob(".*"))


def test_point_held_by_a_live_sweep_is_waited_for_and_a_dead_ones_lock_is_taken_over(tmp_path):
    import json
    import subprocess
    import sys
    import threading
    import time

    from levysde.io import files as _io
    from levysde.studies.sweep import _lock_path, _save_point

    store = tmp_path / "s"
    run_sweep(draw, POINTS[:1] + POINTS[1:], master_seed=1, store=store, scheduler="sequential",
              progress=False)
    for i in (0, 1):
        (store / f"point_00000{i}.npz").unlink()
    # point 0: locked by a process that no longer runs (killed -9) -> taken over and computed
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    _lock_path(store, 0).write_text(json.dumps({"host": _io._host(), "pid": p.pid, "time": 0}))
    # point 1: locked by a live sweep (this process) that finishes it 0.5 s later -> not recomputed
    assert _io.claim(_lock_path(store, 1)) and not _io.claim(_lock_path(store, 1))
    seeds = [point_seed(1, i) for i in range(len(POINTS))]

    def other_sweep():
        time.sleep(0.5)
        _save_point(store, 1, POINTS[1], seeds[1], draw(POINTS[1], seeds[1]))
        _io.release(_lock_path(store, 1))

    calls = []

    def counting(point, seed):
        calls.append(point["scale"])
        return draw(point, seed)

    t = threading.Thread(target=other_sweep)
    t.start()
    res = run_sweep(counting, POINTS, master_seed=1, store=store, scheduler="sequential", progress=False)
    t.join()
    assert calls == [POINTS[0]["scale"]]
    assert [r["mean"] for r in res] == [draw(pt, s)["mean"] for pt, s in zip(POINTS, seeds, strict=True)]
    assert not list(store.glob("*.lock"))


def test_lock_of_another_host_is_stale_only_when_not_refreshed(tmp_path):
    import json
    import os
    import time

    from levysde.io import files as _io

    lock = tmp_path / "x.lock"
    lock.write_text(json.dumps({"host": "elsewhere", "pid": 1, "time": 0}))
    assert not _io.lock_is_stale(lock) and not _io.claim(lock)
    old = time.time() - 2 * _io.LOCK_STALE_S
    os.utime(lock, (old, old))
    assert _io.lock_is_stale(lock) and _io.claim(lock)
    assert json.loads(lock.read_text())["pid"] == os.getpid()


def test_store_files_get_normal_permissions(tmp_path):
    import os
    import stat

    old = os.umask(0o022)
    try:
        run_sweep(draw, POINTS[:2], master_seed=0, store=tmp_path / "p", scheduler="sequential",
                  progress=False)
    finally:
        os.umask(old)
    files = sorted((tmp_path / "p").iterdir())
    assert [f.name for f in files] == ["point_000000.npz", "point_000001.npz", "sweep.json"]
    for f in files:
        assert stat.S_IMODE(f.stat().st_mode) == 0o644, f


_INTERRUPTED = """
import sys, time
from levysde.studies.sweep import run_sweep

def slow(point, seed):
    time.sleep(60)
    return {"x": 1.0}

if __name__ == "__main__":
    try:
        run_sweep(slow, [{"a": 1}, {"a": 2}], store=sys.argv[1], scheduler="local", n_workers=1,
                  progress=False)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\\n")
        sys.exit(130)
"""


@pytest.mark.slow
def test_ctrl_c_on_a_local_cluster_sweep_is_quiet(tmp_path):
    """SIGINT to the whole process group (what Ctrl-C does) while a Dask task runs: the only
    output is the caller's line; the lock of the running point is released."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "sweep_script.py"
    script.write_text(_INTERRUPTED)
    store = tmp_path / "st"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    p = subprocess.Popen([sys.executable, str(script), str(store)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True, env=env)
    t0 = time.time()
    while not list(store.glob("*.lock")) and time.time() - t0 < 120 and p.poll() is None:
        time.sleep(0.1)
    assert list(store.glob("*.lock")), p.communicate()
    time.sleep(1.0)                      # the task is running in the worker
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130 and err == "interrupted\n", err
    assert not list(store.glob("*.lock"))


@pytest.mark.parametrize("kw,msg", [
    ({"master_seed": None}, "master_seed must be an integer >= 0; got None"),
    ({"master_seed": [1, 2]}, "master_seed must be an integer"),
    ({"store": [1, 2]}, "store must be a directory path"),
    ({"numba_threads": "2"}, "numba_threads must be an integer >= 1"),
    ({"connect_timeout": None}, r"connect_timeout must be a real number in \(0, inf\)"),
])
def test_bad_argument_types_are_value_errors_naming_them(kw, msg):
    """Issue 14 item 15: wrong types give a ValueError naming the argument, not a TypeError."""
    with pytest.raises(ValueError, match=msg):
        run_sweep(draw, POINTS, scheduler="sequential", progress=False, **kw)


def test_load_point_of_a_non_point_names_the_file(tmp_path):
    (tmp_path / "x.npz").write_bytes(b"not a zip")
    for path in (tmp_path / "x.npz", tmp_path, tmp_path / "missing.npz"):
        with pytest.raises(ValueError, match="cannot read sweep point"):
            load_point(path)
