"""The paper's profiles (levysde.rnn.presets) and their campaign driver on the Dask sweep
(examples/paper_campaign.py, levysde.studies.campaign): the CI form (--quick) on a local cluster,
resumable through the store, and a run paused at a deadline that resumes to exactly the
uninterrupted run."""
import json
import math
import pathlib
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("distributed")

from levysde.rnn.presets import PAPER_MODELS, PRESETS, preset_config, preset_steps  # noqa: E402
from levysde.rnn.trainer import TrainConfig  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
EX = ROOT / "examples" / "paper_campaign.py"


def test_profiles_are_the_papers_and_valid():
    p = preset_config("paper", "diaggate", 47)
    assert (p["hidden"], p["seq_len"], p["n_train"], p["probe_batch"], p["batch"]) == (512, 1280, 8000, 6000, 380)
    assert p["steps"] == 1400 * 22 == preset_steps("paper") and p["record_epochs"] == 40
    assert (p["lr"], p["weight_decay"], p["clip"], p["gate_tau0"]) == (1e-3, 1e-4, 1.0, 199.5)
    assert abs(-math.expm1(-1 / p["gate_tau0"]) - 0.005) < 1e-6            # s0 = 0.005
    s = preset_config("paper-smoke", "sharedgate", 47)
    assert (s["hidden"], s["seq_len"], s["n_train"], s["lag_count"], s["lag_alpha"], s["lag_hi"]) == \
        (256, 512, 2000, 10, 0.8, 256) and s["steps"] == 200 * 6
    c = preset_config("cpu", "constgate-pathA", 83)
    # the cpu profile keeps the ratios it names
    assert c["gate_tau0"] / c["lag_hi"] == pytest.approx(p["gate_tau0"] / p["lag_hi"], rel=0.01)
    assert [v / c["seq_len"] for v in c["window_lags"][:2]] == [v / p["seq_len"] for v in p["window_lags"][:2]]
    assert c["batch"] / c["n_train"] == pytest.approx(p["batch"] / p["n_train"], rel=0.02)
    assert (c["lr"], c["clip"], c["weight_decay"], c["record_epochs"]) == (1e-3, 1.0, 1e-4, 40)
    assert c["steps"] // math.ceil(c["n_train"] / c["batch"]) == 1400 and c["slow_forcing_alpha"] == 1.5
    for name in PRESETS:
        for lab, _, _ in PAPER_MODELS:
            TrainConfig(**preset_config(name, lab, 1)).validate()
    with pytest.raises(ValueError, match="preset"):
        preset_config("gpu", "diaggate", 1)
    with pytest.raises(ValueError, match="label"):
        preset_config("cpu", "gru", 1)


def _run(*args, timeout=600):
    p = subprocess.run([sys.executable, str(EX), *args], capture_output=True, text=True, timeout=timeout,
                       cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    return p


@pytest.mark.slow
def test_quick_campaign_on_the_dask_sweep_resumes(tmp_path):
    out = tmp_path / "c"
    p = _run("--quick", "--out", str(out), "--json", "--workers", "2")
    assert p.returncode == 0, p.stderr[-2000:]
    rows = json.loads(p.stdout)
    assert len(rows) == 8 and {r["label"] for r in rows} == {m[0] for m in PAPER_MODELS}
    assert all(r["finished"] and r["records"] == 4 for r in rows)
    assert len(list((out / "sweep").glob("point_*.npz"))) == 8
    mtimes = {f: f.stat().st_mtime_ns for f in (out / "runs").glob("*.npz")}
    q = _run("--quick", "--out", str(out), "--json", "--scheduler", "sequential")
    assert q.returncode == 0, q.stderr[-2000:]
    assert json.loads(q.stdout) == rows
    assert {f: f.stat().st_mtime_ns for f in (out / "runs").glob("*.npz")} == mtimes
    # a run paused at a deadline resumes to exactly the uninterrupted run
    paused = tmp_path / "p"
    args = ("--quick", "--scheduler", "sequential", "--models", "constgate-pathA", "--seeds", "47")
    r = _run(*args, "--out", str(paused), "--budget-s", "0")
    assert r.returncode == 3 and "paused" in r.stderr
    assert not list((paused / "sweep").glob("point_*.npz"))
    with np.load(paused / "runs" / "constgate-pathA_s47.npz") as z:
        assert z["step"].tolist() == [0]                # stopped after one step, between records
    r = _run(*args, "--out", str(paused))
    assert r.returncode == 0, r.stderr[-2000:]
    with np.load(out / "runs" / "constgate-pathA_s47.npz") as a, \
            np.load(paused / "runs" / "constgate-pathA_s47.npz") as b:
        for k in ("zeta", "zeta_window", "slow_mask", "loss", "step"):
            np.testing.assert_array_equal(a[k], b[k])


def test_units_batch_the_leaky_models_and_keep_forcing_apart():
    from levysde.studies.campaign import campaign_points, campaign_units
    units = campaign_units(campaign_points("cpu", seeds=[47, 83, 12]))
    got = [(u["label"], u["seeds"]) for u in units]
    assert got == [("constgate-pathB", [47, 83, 12]), ("constgate-pathA", [47]), ("sharedgate", [47, 83, 12]),
                   ("diaggate", [47, 83, 12]), ("constgate-pathA", [83]), ("constgate-pathA", [12])]
    assert all(c["seed"] == s for u in units for c, s in zip(u["configs"], u["seeds"], strict=True))


@pytest.mark.slow
def test_batched_campaign_is_the_separate_campaign_and_resumes(tmp_path):
    """``--batch-seeds``: the same run files as separate runs (float32 reassociation), paused
    at a deadline (exit 3, every seed checkpointed) and resumed to the uninterrupted runs."""
    args = ("--quick", "--scheduler", "sequential", "--models", "diaggate", "constgate-pathA")
    sep, bat = tmp_path / "s", tmp_path / "b"
    assert _run(*args, "--out", str(sep)).returncode == 0
    r = _run(*args, "--out", str(bat), "--batch-seeds", "--budget-s", "0")
    assert r.returncode == 3 and "paused" in r.stderr
    r = _run(*args, "--out", str(bat), "--batch-seeds", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    rows = json.loads(r.stdout)
    assert len(rows) == 4 and all(x["finished"] for x in rows)
    assert len(list((bat / "sweep-batched").glob("point_*.npz"))) == 3       # diaggate's seeds: one point
    for f in sorted((sep / "runs").glob("*.npz")):
        with np.load(f) as a, np.load(bat / "runs" / f.name) as b:
            for k in ("zeta", "zeta_window", "loss", "step"):
                np.testing.assert_allclose(b[k], a[k], rtol=2e-5, atol=2e-7, err_msg=f"{f.name} {k}")
