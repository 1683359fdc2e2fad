"""The paper's verdict on a campaign (levysde.studies.paper_verdict, examples/paper_verdict.py): finished
runs only, the paper's estimators per run and pooled per model beside levysde's check on zeta_window."""
from __future__ import annotations

import json
import math
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from levysde.inference import checkpoint_check as CC
from levysde.inference.paper_protocol import paper_estimates
from levysde.io.runfile import load_run, save_run
from levysde.studies import paper_verdict as V

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The synthetic campaign of the examples (2 models x 2 seeds), plus one unfinished run."""
    d = tmp_path_factory.mktemp("verdict")
    V._demo_campaign(d)
    run = load_run(str(d / "runs" / "diaggate_s2.npz"))
    save_run(str(d / "runs" / "diaggate_s3.npz"), {k: v for k, v in run.items() if k != "config"},
             dict(run["config"], seed=3, steps=int(run["config"]["steps"]) + 10))
    return d


@pytest.fixture(scope="module")
def demo_rows(demo):
    return V.verdict_rows(demo, n_boot_beta=50, n_boot_kappa=20, n_boot=20)


def test_only_finished_runs_and_their_numbers(demo, demo_rows):
    runs = V.campaign_runs(demo)
    assert [r["run"] for r in runs if not r["finished"]] == ["diaggate_s3.npz"]
    assert [(r["label"], r["seed"]) for r in demo_rows] == [("sharedgate", 1), ("sharedgate", 2), ("diaggate", 1),
                                                             ("diaggate", 2)]
    r = demo_rows[0]
    assert r["n_nondecaying"] == 3 and r["n_nondecaying_late"] == 6 and r["loss_ratio"] == 0.3
    assert r["steps_per_epoch"] == 3 and r["records"] == 24
    for reading in ("censored", "dropped"):            # every number is a number or None with a reason
        for key in ("beta_hat", "kappa", "beta_env"):
            v = r[f"paper_{reading}_{key}"]
            assert v is None or math.isfinite(v)
        assert r[f"paper_{reading}_kappa"] is not None or r[f"paper_{reading}_kappa_reason"]
    assert r["check_beta_dynamics"] is None and r["check_beta_dynamics_flag"]
    assert r["check_phase"] is None and r["check_main_reason"] == r["check_failed_gates"][0]
    # a number the check does not identify is not reported as a measurement (kept as _raw)
    assert r["check_beta_tail_status"] == "not identified" and r["check_beta_tail"] is None
    assert r["check_beta_tail_raw"] is not None


def test_the_run_row_is_the_papers_estimator_on_tau(demo, demo_rows):
    run = load_run(str(demo / "runs" / "diaggate_s1.npz"))
    tau = np.exp(-np.asarray(run["zeta_window"]))
    rep = paper_estimates(tau, np.asarray(run["step"]) / 3.0, lags=V.profile_lags(run["config"]), n_boot_beta=50,
                          n_boot_kappa=20)
    row = next(r for r in demo_rows if r["run"] == "diaggate_s1.npz")
    assert row["paper_dropped_beta_hat"] == pytest.approx(rep.beta_hat["dropped"])
    lo = rep.beta_lo["censored"]
    assert row["paper_censored_beta_lo"] == (None if math.isnan(lo) else pytest.approx(lo))
    assert row["paper_censored_beta_env"] == pytest.approx(rep.seeds["censored"][0].envelope.beta_env)
    assert row["paper_censored_phase"] == rep.phase["censored"]


def test_table_aggregates_over_seeds_and_pools_the_papers_estimators(demo, demo_rows):
    table = V.verdict_table(demo_rows, n_boot_beta=50, n_boot_kappa=20, n_boot=20)
    assert [(t["label"], t["n_seeds"], t["seeds"]) for t in table] == [("sharedgate", 2, [1, 2]),
                                                                       ("diaggate", 2, [1, 2])]
    t = table[1]
    x = [r["check_beta_tail_censored"] for r in demo_rows if r["label"] == "diaggate"]
    x = [v for v in x if v is not None]          # not identified (too few tail neurons): not averaged
    got = t["numbers"]["check_beta_tail_censored"]
    assert got["n"] == len(x)
    if len(x) >= 2:
        assert got["mean"] == pytest.approx(np.mean(x)) and got["sd"] == pytest.approx(np.std(x, ddof=1))
    elif not x:
        assert got == {"mean": None, "sd": None, "n": 0}
    assert t["numbers"]["check_beta_tail"] == {"mean": None, "sd": None, "n": 0}
    assert sum(t["labels"]["paper_dropped_phase"].values()) == 2
    pooled = V.model_paper_estimates([str(demo / "runs" / f"diaggate_s{s}.npz") for s in (1, 2)], n_boot_beta=50,
                                     n_boot_kappa=20)
    assert t["pooled"]["paper_dropped_beta_hat"] == pytest.approx(pooled.beta_hat["dropped"])
    assert t["pooled"]["paper_dropped_kappa_n_tail"] == pooled.kappa["dropped"].n_tail
    assert V.verdict_table(demo_rows, pooled=False)[0]["pooled"] == {}
    with pytest.raises(ValueError, match="rows"):
        V.verdict_table([])


def test_the_pooled_check_sees_every_seeds_neurons(demo, demo_rows):
    """levysde's check on a model's seeds at once: S x H neurons side by side, the non-decaying
    units censored as for one run, the same fields as a row."""
    table = V.verdict_table(demo_rows, n_boot_beta=50, n_boot_kappa=20, n_boot=20)
    for t in table:
        p = t["pooled"]
        assert p["check_n_runs_pooled"] == 2 and p["check_n_neurons_pooled"] == 2 * 40 == p["check_n_neurons"]
        assert p["n_nondecaying"] == 2 * 3 and p["n_nondecaying_late"] == 2 * 6
        assert p["learned"] is True and p["loss_ratio_worst"] == pytest.approx(0.3)
        assert {k for k in demo_rows[0] if k.startswith("check_")} <= set(p)
        assert p["check_main_reason"] == p["check_failed_gates"][0] and len(p["check_withheld"]) >= 1
        assert p["check_independence_rho_hat"] is not None and p["check_independence_reason"]
    paths = [str(demo / "runs" / f"diaggate_s{s}.npz") for s in (1, 2)]
    d = CC.check_runs_pooled(paths, n_boot=20, closing_loop=False).as_json()
    z = np.concatenate([np.asarray(load_run(p)["zeta_window"]) for p in paths], axis=1)
    assert d["n_units"] == 80 and d["units_per_run"] == [40, 40] and d["pooled_runs"] == paths
    assert d["zeta_spread"]["std"] == pytest.approx(np.nanstd(z[-1], ddof=1), rel=1e-9)   # the pooled array
    assert table[1]["pooled"]["check_beta_tail_censored_raw"] == pytest.approx(d["beta_tail_censored"])
    assert table[1]["pooled"]["check_beta_tail_censored_status"] == d["beta_tail_censored_status"]
    assert table[1]["pooled"]["check_stationary"] == d["stationary"]


def test_the_pooled_learned_gate_is_the_worst_seeds(demo, tmp_path):
    run = load_run(str(demo / "runs" / "diaggate_s2.npz"))
    bad = tmp_path / "diaggate_s9.npz"
    save_run(str(bad), dict({k: v for k, v in run.items() if k != "config"}, loss=np.full(24, 0.8),
                            loss_ratio=np.full(24, 0.8)), dict(run["config"], seed=9))
    rep = CC.check_runs_pooled([demo / "runs" / "diaggate_s1.npz", bad], n_boot=20, closing_loop=False)
    assert rep.gates["learned"].passed is False and rep.extra["learned"] is False
    assert rep.extra["loss_ratio"] == pytest.approx(0.8) and rep.extra["loss_ratios"] == pytest.approx([0.3, 0.8])
    assert rep.gates["learned"].reason.startswith("diaggate_s9.npz, the worst of 2 runs: the network did not learn")


def test_the_pooled_check_refuses_seeds_recorded_at_other_steps(demo, demo_rows, tmp_path):
    run = load_run(str(demo / "runs" / "diaggate_s2.npz"))
    arrays = {k: v for k, v in run.items() if k != "config"}
    other = tmp_path / "runs" / "diaggate_s2.npz"
    other.parent.mkdir()
    step = np.asarray(arrays["step"]).copy()
    step[5] += 1                                           # one record at another step
    save_run(str(other), dict(arrays, step=step), run["config"])
    first = str(demo / "runs" / "diaggate_s1.npz")
    with pytest.raises(ValueError, match=r"diaggate_s2.npz records at other steps than .*diaggate_s1.npz.*same "
                                         r"record steps") as exc:
        CC.check_runs_pooled([first, other], n_boot=20, closing_loop=False)
    assert "\n" not in str(exc.value)
    short = tmp_path / "short.npz"                        # fewer records
    save_run(str(short), {k: (v[:-2] if getattr(v, "ndim", 0) and len(v) == 24 else v) for k, v in arrays.items()},
             run["config"])
    with pytest.raises(ValueError, match="22 records up to step .* against 24"):
        CC.check_runs_pooled([first, short], n_boot=20, closing_loop=False)
    rows = [dict(r, path=str(other)) if r["run"] == "diaggate_s2.npz" else r for r in demo_rows]
    with pytest.raises(ValueError, match="same record steps"):
        V.verdict_table(rows, n_boot_beta=50, n_boot_kappa=20, n_boot=20)
    with pytest.raises(ValueError, match="paths"):
        CC.check_runs_pooled([])


def test_far_left_drift_bins_and_censoring():
    rng = np.random.default_rng(3)
    R, H = 30, 200
    zeta = np.cumsum(0.25 + 0.05 * rng.standard_normal((R, H)), axis=0)
    epoch = np.arange(R) * 2.0                              # 0.125 per epoch
    tau = np.exp(-zeta)
    tau[-1, :7] = np.nan                                    # 7 transitions end non-decaying
    d = V.far_left_drift([tau], [epoch], n_bins=5)
    assert d["n_censored"] == 7 and d["n_transitions"] == (max(4, math.ceil(0.35 * R)) - 1) * H - 7
    assert np.allclose(d["mean"], 0.125, atol=0.01) and all(s > 0 for s in d["se"])
    assert sum(d["n"]) == d["n_transitions"] and d["zeta_cut"] < d["centers"][1]
    for bad, name in ((dict(late_fraction=0), "late_fraction"), (dict(n_bins=0), "n_bins"), (dict(q=1.0), "q")):
        with pytest.raises(ValueError, match=name):
            V.far_left_drift([tau], [epoch], **bad)
    with pytest.raises(ValueError, match="one length"):
        V.far_left_drift([tau], [])


def test_refusals_name_what_is_wrong(tmp_path, demo):
    with pytest.raises(ValueError, match="campaign_dir"):
        V.verdict_rows(tmp_path)
    with pytest.raises(ValueError, match="n_boot_beta"):
        V.verdict_rows(demo, n_boot_beta=5)
    with pytest.raises(ValueError, match="window_lags"):
        V.profile_lags({})
    with pytest.raises(ValueError, match="zeta_window"):
        V.run_time_scales({"step": np.zeros(1), "config": {"n_train": 3, "batch": 1}}, "r.npz")
    with pytest.raises(ValueError, match="n_train and batch"):
        V.run_time_scales({"zeta_window": np.zeros((1, 2)), "step": np.zeros(1), "config": {}})
    with pytest.raises(ValueError, match="paths"):
        V.model_paper_estimates([])


def test_figure_data_and_figures(demo_rows, tmp_path):
    data = V.verdict_figure_data(demo_rows, n_bins=4)
    d = data["diaggate"]
    assert d["n_seeds"] == 2 and d["spectrum"]["n_censored"] == 6 and d["spectrum"]["zeta"].size == 74
    assert set(d["envelope"]["f"]) == {"censored", "dropped"} and len(d["drift"]["mean"]) == 4
    f_c, f_d = d["envelope"]["f"]["censored"], d["envelope"]["f"]["dropped"]
    assert np.all(f_c >= f_d - 1e-12)                     # a censored unit adds exp(-l/inf) = 1
    pytest.importorskip("matplotlib")
    from levysde.plotting import plot_verdict_drift, plot_verdict_envelopes, plot_verdict_spectra

    for fn in (plot_verdict_spectra, plot_verdict_drift, plot_verdict_envelopes):
        out = fn(data, tmp_path / f"{fn.__name__}.png")
        assert pathlib.Path(out).stat().st_size > 5000
    with pytest.raises(ValueError, match="path"):
        plot_verdict_drift(data, tmp_path / "missing" / "x.png")


def test_example_on_a_quick_campaign(tmp_path):
    """examples/paper_verdict.py on the cpu-quick campaign of examples/paper_campaign.py."""
    pytest.importorskip("torch")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    camp = tmp_path / "c"
    p = subprocess.run([sys.executable, str(ROOT / "examples" / "paper_campaign.py"), "--quick", "--out", str(camp),
                        "--scheduler", "sequential"], capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    ex = [sys.executable, str(ROOT / "examples" / "paper_verdict.py"), "--campaign", str(camp), "--quick"]
    p = subprocess.run([*ex, "--json"], capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    d = json.loads(p.stdout)
    labels = ["constgate-pathB", "constgate-pathA", "sharedgate", "diaggate"]
    assert [(r["label"], r["seed"]) for r in d["rows"]] == [(lab, s) for lab in labels for s in (47, 83)]
    assert [t["label"] for t in d["table"]] == labels and d["skipped"] == []
    assert [t["pooled"]["check_n_neurons_pooled"] for t in d["table"]] == [2 * 16] * 4   # 2 seeds x H = 16
    md = tmp_path / "v.md"
    figs = tmp_path / "figs"
    p = subprocess.run([*ex, "--markdown", str(md), "--figures", str(figs)], capture_output=True, text=True,
                       timeout=600, cwd=ROOT, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    table = [ln for ln in p.stdout.splitlines() if ln.startswith("| ")]
    assert len(table) == 1 + 2 * 4 and [ln.split(" | ")[0][2:] for ln in table[1::2]] == labels
    assert [ln.split(" | ")[0][2:] for ln in table[2::2]] == [f"{lab} pooled" for lab in labels]
    assert all(ln.count(" | ") == table[0].count(" | ") for ln in table)
    assert all(" | 2 (47, 83) | " in ln for ln in table[1::2])
    assert all(" | 2 seeds, 32 neurons | " in ln for ln in table[2::2])
    assert sum(ln.startswith("note: levysde pooled, ") for ln in p.stdout.splitlines()) == 4
    assert "8 finished runs" in p.stdout and "0 unfinished skipped" in p.stdout
    assert md.read_text().count("\n| ") >= 4 + 8
    p = subprocess.run([*ex[:2], "--campaign", str(tmp_path / "none")], capture_output=True, text=True, timeout=600,
                       cwd=ROOT, env=env)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "--campaign" in p.stderr
    p = subprocess.run([*ex, "--json", "--figs", "x"], capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "--figs" in p.stderr
    pytest.importorskip("matplotlib")
    assert sorted(f.name for f in figs.iterdir()) == ["paper_verdict_drift.png", "paper_verdict_envelopes.png",
                                                     "paper_verdict_spectra.png"]


def test_example_checks_its_outputs_before_any_work(tmp_path):
    """--markdown and --figures that cannot be written: one line, exit 2, before the campaign is read."""
    (tmp_path / "c" / "runs").mkdir(parents=True)
    (tmp_path / "f").write_text("kept")
    ex = [sys.executable, str(ROOT / "examples" / "paper_verdict.py"), "--campaign", str(tmp_path / "c")]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    for args, words in ((["--markdown", str(tmp_path / "no" / "v.md")], "--markdown"),
                        (["--markdown", str(tmp_path)], "is a directory"),
                        (["--figures", str(tmp_path / "f")], "is a file, not a directory")):
        p = subprocess.run([*ex, *args], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and words in p.stderr, p.stderr
        assert "Traceback" not in p.stderr and not p.stdout
    assert (tmp_path / "f").read_text() == "kept"
