"""examples/paper_gpu.py, the prepared GPU session, run on the CPU at CI sizes (--device cpu --quick)
without Dask (as on the GPU machine): benchmarks time-boxed, runs trained through the sweep's
sequential loop, results resumable from the output directory."""
import json
import pathlib
import subprocess
import sys

import pytest

from tests.helpers import env

pytest.importorskip("torch")
ROOT = pathlib.Path(__file__).resolve().parent.parent
EX = ROOT / "examples" / "paper_gpu.py"


def _run(*args):
    return subprocess.run([sys.executable, str(EX), "--device", "cpu", "--quick", *args], capture_output=True,
                          text=True, timeout=900, cwd=ROOT, env=env(hide=["dask", "distributed"]))


@pytest.mark.slow
def test_gpu_session_on_cpu_quick_without_dask(tmp_path):
    out = tmp_path / "g"
    p = _run("--out", str(out), "--budget-s", "150")
    assert p.returncode == 0, p.stderr[-3000:]
    s = json.loads((out / "summary.json").read_text())
    assert s["device"] == "cpu" and s["preset"] == "cpu-quick" and s["seconds"] < 150 + 60
    assert set(s["benchmarks"]) == {"bench_simulate.py", "steps_per_s.py"}
    for b in s["benchmarks"].values():          # finished (0) or stopped at its time limit (None)
        assert b["rc"] in (0, None) and b["seconds"] <= 0.15 * 150 + 15
    if s["benchmarks"]["bench_simulate.py"]["rc"] == 0:
        assert json.loads((out / "bench_simulate.json").read_text())["numba_steps_per_s"] > 0
    assert "steps/s" in (out / "steps_per_s.txt").read_text()
    assert len(s["runs"]) == 4 and all(r["finished"] for r in s["runs"])
    # resumable: a second session trains nothing more; a paused session (no budget left) exits 3
    mtimes = {f: f.stat().st_mtime_ns for f in (out / "runs").glob("*.npz")}
    q = _run("--out", str(out), "--no-bench")
    assert q.returncode == 0, q.stderr[-3000:]
    assert {f: f.stat().st_mtime_ns for f in (out / "runs").glob("*.npz")} == mtimes
    r = _run("--out", str(tmp_path / "h"), "--no-bench", "--budget-s", "0.001")
    assert r.returncode == 3 and "paused" in r.stderr
