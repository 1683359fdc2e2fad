"""Smoke run of the benchmark in quick mode (CI): it runs and reports every figure.
Speed itself is not asserted (a shared machine makes timings unreliable)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_benchmark_quick_json():
    p = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "bench_simulate.py"), "--json",
                        "--quick"], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    for k in ("numba_steps_per_s", "numpy_steps_per_s", "limit_steps_per_s", "ratio_vs_numpy",
              "ratio_vs_limit"):
        assert d[k] > 0, k
    assert d["ratio_vs_numpy"] == d["numba_steps_per_s"] / d["numpy_steps_per_s"]
