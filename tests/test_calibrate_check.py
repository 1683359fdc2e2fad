"""The calibration study of `levysde check` runs in quick mode (CI) and reports every figure
(benchmarks/calibrate_check.py; the full study's table is in docs/calibration.md)."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
def test_calibrate_check_quick_json():
    p = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "calibrate_check.py"), "--quick",
                        "--json", "--workers", "1"], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["n_datasets"] == 12 and d["n_negatives"] == 6
    for key in ("coverage_1sigma", "coverage_2sigma"):
        assert set(d[key]) == {"kappa_hat", "alpha_hat", "beta_tail"}
        for v in d[key].values():
            assert v is None or 0.0 <= v <= 1.0
    # one of each negative kind (transients, ballistic drift, frozen, too few neurons/records): none gets a phase
    assert d["false_positive_rate"] == 0.0, d["false_positives"]
    assert d["coverage_1sigma"]["kappa_hat"] is not None and d["coverage_1sigma"]["beta_tail"] is not None
