"""The learnability experiment's campaign (levysde.studies.learnability_campaign,
examples/learnability_campaign.py) and its table (examples/learnability_table.py) on the
``learnability-quick`` profile: end to end, resumable (a rerun redoes nothing, a run paused at a
deadline resumes to exactly the uninterrupted run), status rows, a table of a partial campaign."""
import importlib.util
import json
import math
import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from levysde.inference.learnability_measure import measure_learnability  # noqa: E402
from levysde.io.learnfile import learnability_path, read_learnability  # noqa: E402
from levysde.rnn.learnability_presets import LEARNABILITY_MODELS, learnability_steps  # noqa: E402
from levysde.studies.campaign import CampaignPaused  # noqa: E402
from levysde.studies.learnability_campaign import (  # noqa: E402
    learnability_point,
    learnability_points,
    learnability_status,
    run_learnability_campaign,
)

ROOT = pathlib.Path(__file__).resolve().parent.parent
QUICK = "learnability-quick"
SUBSET = {"models": ("diaggate", "gru"), "optimizers": ("adamw", "sgd")}


def _example(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    """A quick campaign of two models x two optimizers, run once for the module."""
    out = tmp_path_factory.mktemp("learn") / "c"
    res = run_learnability_campaign(QUICK, out, scheduler="sequential", progress=False, **SUBSET)
    return out, res


def test_points_gated_models_first_and_complete():
    pts = learnability_points("learnability-cpu")
    assert len(pts) == 5 * 2 * 3 and len({p["run"] for p in pts}) == 30
    models = [p["model"] for p in pts]
    assert set(models[:12]) == {"gru", "lstm"} and set(models[12:]) == {"constgate", "sharedgate", "diaggate"}
    p = next(p for p in pts if p["run"] == "lstm-sgd_s1001.npz")
    assert (p["optimizer"], p["seed"], p["config"]["optimizer"], p["config"]["seed"]) == ("sgd", 1001, "sgd", 1001)
    assert p["config"]["steps"] == learnability_steps("learnability-cpu") == 1200
    assert p["matched"] == {"sequences": 128, "lags": [4, 256, 64]}
    assert not p["config"]["layernorm"] and next(q for q in pts if q["model"] == "diaggate")["config"]["layernorm"]
    with pytest.raises(ValueError, match="model"):
        learnability_points(QUICK, models=["rnn"])
    with pytest.raises(ValueError, match="repeats"):
        learnability_points(QUICK, seeds=[1, 1])


def test_quick_campaign_trains_measures_and_reports(campaign):
    out, res = campaign
    steps = learnability_steps(QUICK)
    assert [r["step"] for r in res] == [steps] * 4 and all(r["finished"] and r["measured"] for r in res)
    runs = out / "runs"
    names = {"gru-adamw_s212", "gru-sgd_s212", "diaggate-adamw_s212", "diaggate-sgd_s212"}
    for n in names:
        assert (runs / f"{n}.npz").exists() and (runs / f"{n}.ckpt").exists()
        assert (runs / f"{n}.learnability.npz").exists()
    assert len(list((out / "sweep").glob("*/point_*.npz"))) == 4
    rows = learnability_status(out)
    assert [(r["model"], r["optimizer"]) for r in rows] == [("gru", "adamw"), ("gru", "sgd"),
                                                           ("diaggate", "adamw"), ("diaggate", "sgd")]
    for r in rows:
        sums, meta = read_learnability(str(runs / r["run"].replace(".npz", ".learnability.npz")))
        assert meta["source"]["model"] == r["model"] and meta["source"]["sequences"] == 16
        assert sums["lags"].tolist() == np.unique(np.linspace(4, 256, 16).astype(int)).tolist()
        m = measure_learnability(sums)           # the default settings, measured again
        assert r["alpha_median"] == pytest.approx(float(np.nanmedian(m.alpha)), rel=1e-12)
        assert r["H_N"] == m.H_N[-1] and r["H_N_significant"] == m.H_N_significant[-1] and r["N_max"] == 12800
        assert (r["seed"], r["step"], r["steps"], r["measured"]) == (212, steps, steps, True)
        assert 0 < r["loss_ratio"] < 10


def test_rerun_redoes_nothing(campaign):
    out, res = campaign
    files = sorted((out / "runs").iterdir())
    mtimes = [f.stat().st_mtime_ns for f in files]
    again = run_learnability_campaign(QUICK, out, scheduler="sequential", progress=False, **SUBSET)
    assert again == res
    assert [f.stat().st_mtime_ns for f in sorted((out / "runs").iterdir())] == mtimes
    # a subset is a store of its own, and its finished runs are neither trained nor measured again
    sub = run_learnability_campaign(QUICK, out, models=["gru"], optimizers=["sgd"], scheduler="sequential",
                                    progress=False)
    assert sub == [res[1]]
    assert [f.stat().st_mtime_ns for f in sorted((out / "runs").iterdir())] == mtimes
    assert len(list((out / "sweep").iterdir())) == 2


def test_paused_run_resumes_exactly(campaign, tmp_path):
    out, _ = campaign
    drv = _example("learnability_campaign")
    args = ["--quick", "--scheduler", "sequential", "--models", "gru", "--optimizers", "sgd", "--out", str(tmp_path)]
    assert drv.main([*args, "--budget-s", "0"]) == drv.EXIT_PAUSED
    row, = learnability_status(tmp_path)
    assert (row["step"], row["measured"]) == (0, False) and not row["finished"]
    assert drv.main(args) == 0
    a, b = out / "runs" / "gru-sgd_s212", tmp_path / "runs" / "gru-sgd_s212"
    with np.load(f"{a}.npz") as x, np.load(f"{b}.npz") as y:
        for k in ("step", "loss", "loss_ratio", "zeta"):
            np.testing.assert_array_equal(x[k], y[k])
    sa, _ = read_learnability(f"{a}.learnability.npz")
    sb, _ = read_learnability(f"{b}.learnability.npz")
    for k in sa:
        np.testing.assert_array_equal(sa[k], sb[k])
    # trained but not measured: the deadline holds the measurement back, the next run makes it
    os.remove(f"{b}.learnability.npz")
    row, = learnability_status(tmp_path)
    assert row["finished"] and not row["measured"] and math.isnan(row["H_N"])
    point, = learnability_points(QUICK, models=["gru"], optimizers=["sgd"])
    with pytest.raises(CampaignPaused, match="matched statistic"):
        learnability_point(point, 0, runs_dir=str(tmp_path / "runs"), deadline=time.time() - 1)
    assert not os.path.exists(learnability_path(f"{b}.npz"))
    assert learnability_point(point, 0, runs_dir=str(tmp_path / "runs"))["measured"]
    sc, _ = read_learnability(f"{b}.learnability.npz")
    for k in sa:
        np.testing.assert_array_equal(sa[k], sc[k])


def test_status_and_table_of_a_partial_campaign(campaign, tmp_path, capsys):
    out, _ = campaign
    drv = _example("learnability_campaign")
    assert drv.main(["--status", "--json", "--out", str(out)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["run"] for r in rows] == [r["run"] for r in learnability_status(out)]
    tab = _example("learnability_table")
    figs = tmp_path / "figs"
    argv = [str(out), "--json"] + (["--figures", str(figs)] if importlib.util.find_spec("matplotlib") else [])
    assert tab.main(argv) == 0
    t = json.loads(capsys.readouterr().out)
    assert [(r["model"], r["optimizer"]) for r in t["rows"]] == [("diaggate", "adamw"), ("diaggate", "sgd"),
                                                                ("gru", "adamw"), ("gru", "sgd")]
    assert len(t["missing_cells"]) == 6 and "lstm sgd" in t["missing_cells"] and not t["unmeasured_runs"]
    by = {r["run"]: r for r in rows}
    for r in t["rows"]:
        s = by[f"{r['model']}-{r['optimizer']}_s212.npz"]
        assert r["seeds"] == [212] and r["N_max"] == 12800
        assert float(r["H_N_mean"]) == s["H_N"] and float(r["H_N_significant_mean"]) == s["H_N_significant"]
        assert float(r["alpha_hat"]) == pytest.approx(s["alpha_median"], abs=6e-3)     # printed to 3 digits
    if importlib.util.find_spec("matplotlib"):
        assert {f.name for f in figs.iterdir()} == {"diaggate-adamw.png", "diaggate-sgd.png", "gru-adamw.png",
                                                   "gru-sgd.png", "windows.png", "windows_significant.png"}
    assert tab.main([str(out), "--markdown"]) == 0
    text = capsys.readouterr().out
    assert text.count("\n| ") == 5 and "cells without a measured run: constgate adamw" in text
    assert tab.main([str(tmp_path / "nowhere")]) == 2


@pytest.mark.slow
def test_quick_campaign_on_a_local_cluster(tmp_path):
    pytest.importorskip("distributed")
    p = subprocess.run([sys.executable, str(ROOT / "examples" / "learnability_campaign.py"), "--quick", "--out",
                        str(tmp_path), "--json", "--workers", "2"], capture_output=True, text=True, timeout=900,
                       cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr[-2000:]
    rows = json.loads(p.stdout)
    assert len(rows) == 10 and {r["model"] for r in rows} == set(LEARNABILITY_MODELS)
    assert all(r["finished"] and r["measured"] for r in rows)
