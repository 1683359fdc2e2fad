"""Sweeps: seeds from one master seed, 2-worker LocalCluster == sequential bit for bit, resume."""
import numpy as np
import pytest

from levysde.sweep import load_point, point_seed, run_sweep


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
    for a, b in zip(seq, par):
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
    assert all(a["mean"] == b["mean"] for a, b in zip(first, again))
    with pytest.raises(ValueError, match="different sweep"):
        run_sweep(counting, POINTS, master_seed=4, store=store, scheduler="sequential", progress=False)


def test_bad_arguments():
    with pytest.raises(ValueError, match="points"):
        run_sweep(draw, [], progress=False)
    with pytest.raises(ValueError, match="scheduler"):
        run_sweep(draw, POINTS, scheduler="mpi", progress=False)
    with pytest.raises(ValueError, match="n_workers"):
        run_sweep(draw, POINTS, n_workers=0, progress=False)


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
