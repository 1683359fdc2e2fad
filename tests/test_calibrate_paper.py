"""The calibration study of the paper's estimators runs in quick mode (CI) and reports every figure
(benchmarks/calibrate_paper.py; the full study's tables are in docs/paper_protocol.md)."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
def test_calibrate_paper_quick_json():
    p = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "calibrate_paper.py"), "--quick",
                        "--json", "--workers", "1"], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["n_datasets"] == 2 and d["errors"] == []
    assert len(d["beta"]) == 6 and len(d["kappa"]) == 2          # 3 windows x 2 drifts; 1 interval x 2 drifts
    for v in list(d["beta"].values()) + list(d["kappa"].values()):
        assert v["n"] >= 1 and 0.0 <= v["coverage"] <= 1.0 and v["bias"] is not None
    assert set(d["censored"]) == {"censored|broad", "dropped|broad"}


def test_summary_counts_coverage_and_bias():
    """Coverage and bias from rows with a known truth (beta = 1, kappa = 1)."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import calibrate_paper as cp

    s = cp._stats([[1.1, 0.9, 1.2], [0.8, 0.7, 0.95], [float("nan"), 0, 0]], 1.0)
    assert s["n"] == 2 and s["n_failed"] == 1 and s["coverage"] == 0.5
    assert s["bias"] == pytest.approx(-0.05)
    full = cp.design(False)
    assert len(full) == 144 and len({r["seed"] for r in full}) == 144
    assert sum(r["block"] == "main" for r in full) == 48 and len(cp.design(False, "kappa")) == 96
