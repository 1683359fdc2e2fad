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


def test_coverage_skips_datasets_without_a_finite_truth():
    """A positive whose true phase is collapsed has beta* = NaN: no truth to cover. It must not count as
    a miss nor turn the mean standardized error into NaN; n says how many were counted."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import calibrate_check as cc

    def row(est, se, truth):
        return {"kind": "positive", "set": "s", "beta_tail": est, "beta_tail_se": se, "phase": None,
                "phase_withheld": [], "truth": {"beta_tail": truth, "kappa_hat": 1.0, "alpha_hat": 1.0, "phase": "x"}}

    rows = [row(1.0, 0.1, 1.05), row(1.0, 0.1, 1.15), row(1.0, 0.1, 1.3), row(1.0, 0.1, float("nan"))]
    assert cc.coverage(rows, "beta_tail", 1) == (1 / 3, 3)          # |z| = 0.5, 1.5, 3 over the finite truths
    assert cc.coverage(rows, "beta_tail", 2) == (2 / 3, 3)
    s = cc.summarize(rows)
    assert s["coverage_n"]["beta_tail"] == 3
    assert s["mean_standardized_error"]["beta_tail"] == pytest.approx(-(0.5 + 1.5 + 3.0) / 3)


def test_full_study_design():
    """416 datasets: the 200 of issue 11, 120 extra positives, 72 + 24 jump-dominated positives (sizes of
    real runs: H 64-1024, R 50-200 for positives), every dataset with its own seed."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import calibrate_check as cc

    sp = cc.specs(False)
    blocks = [s["block"] for s in sp]
    assert [blocks.count(b) for b in ("original", "extra", "alpha", "alpha_small")] == [200, 120, 72, 24]
    assert len({s["seed"] for s in sp}) == len(sp)
    pos = [s for s in sp if s["kind"] == "positive"]
    assert all(64 <= s["H"] <= 1024 and 50 <= s["R"] <= 200 for s in pos)
    assert {s["set"] for s in sp if s["block"] == "original"} == set(cc.PARAM_SETS) - set(cc.ALPHA_SETS)
