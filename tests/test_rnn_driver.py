"""examples/anticollapse.py --quick: the experiment driver's CI run (issue 10), resumable."""
import json
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("torch")
EX = pathlib.Path(__file__).resolve().parent.parent / "examples" / "anticollapse.py"
KEYS = ("model", "seed", "learned", "stationary", "kappa_hat", "kappa_hat_se", "beta_tail", "beta_tail_se",
        "beta_theory", "beta_theory_se", "envelope_class", "loss_ratio")


def test_anticollapse_quick_grid_and_resume(tmp_path):
    out = tmp_path / "grid"
    cmd = [sys.executable, str(EX), "--quick", "--device", "cpu", "--out", str(out), "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = json.loads(p.stdout)
    assert len(rows) == 15 and sorted({r["seed"] for r in rows}) == [0, 1, 2]
    assert {r["model"] for r in rows} == {"constgate+forcing", "sharedgate", "diaggate", "gru", "lstm"}
    for r in rows:
        assert all(k in r for k in KEYS), r
        assert isinstance(r["learned"], bool) and r["loss_ratio"] > 0
        assert r["learned"] == (r["loss_ratio"] <= 0.5)
        if not r["learned"]:
            assert r["phase"] is None                      # no phase claimed for a network that did not learn
    # resumable: a rerun trains nothing and gives the same rows; a lost check file is recomputed
    (out / "gru_H16_s1.check.json").unlink()
    mtimes = {f: f.stat().st_mtime for f in out.glob("*.npz")}
    q = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert q.returncode == 0, q.stderr[-2000:]
    assert json.loads(q.stdout) == rows
    assert {f: f.stat().st_mtime for f in out.glob("*.npz")} == mtimes
