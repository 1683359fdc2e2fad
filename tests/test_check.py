"""`levysde check` on tiny saved runs (written by the test: no torch needed)."""
import json
import subprocess
import sys

import numpy as np
import pytest

from levysde.simulate import simulate


def write_run(path, zeta, step, *, model="diaggate"):
    R, H = zeta.shape
    lags = np.geomspace(1, 1e4, 30)
    mu = np.exp(zeta)
    env = np.exp(-lags[None, :, None] * mu[:, None, :]).mean(axis=2)
    np.savez(path, zeta=zeta, zeta_jac=zeta + 0.1, step=step, Lambda=np.ones_like(zeta),
             loss=np.ones(R), trivial_loss=np.float64(10.0), lags=lags, envelope=env,  # learned: ratio 0.1
             config=np.array(json.dumps({"kind": "rnn", "model": model, "optimizer": "adamw",
                                         "task": "synthetic", "hidden": H})))


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory):
    res = simulate(3.0, eta_g=0.5, alpha=0.8, lam=1.0, particles=200, t_end=60.0, burn_in=10.0,
                   dt=0.01, seed=2, traj_particles=200, traj_every=2)
    path = tmp_path_factory.mktemp("runs") / "run.npz"
    write_run(path, res.traj_zeta.T, res.traj_t)
    return path


def run(*args):
    return subprocess.run([sys.executable, "-m", "levysde", "check", *args], capture_output=True, text=True)


def test_check_json_report(sim_run, tmp_path):
    p = run(str(sim_run), "--json", "--n-boot", "50", "--plot", str(tmp_path / "c.png"))
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    for key in ("kappa_hat", "eta_g_hat", "eta_j_hat", "alpha_hat", "lam_hat", "beta_theory", "phase",
                "beta_tail", "beta_envelope", "zeta_spread", "kappa_hat_se", "beta_tail_se"):
        assert key in d
    assert d["eta_j_hat"] > 0 and d["alpha_hat"] is not None
    # closing the loop: the fitted SDE's stationary law is close to the trajectories' (KS)
    assert d["ks_distance"] is not None and d["ks_distance"] < 0.1, d.get("ks_distance_flag")
    assert d["phase"] in ("broad", "concentrated", "critical", "collapsed")
    assert (tmp_path / "c.png").stat().st_size > 10_000
    t = run(str(sim_run), "--variant", "jac", "--no-simulate", "--n-boot", "20")
    assert t.returncode == 0 and "beta* (theory)" in t.stdout


def test_check_constant_run_is_flagged(tmp_path):
    path = tmp_path / "const.npz"
    write_run(path, np.tile(np.linspace(-2.5, -2.0, 8), (30, 1)), np.arange(30.0) * 10, model="constgate")
    p = run(str(path), "--json", "--n-boot", "20")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["kappa_hat"] is None and "does not move" in d["kappa_hat_flag"]
    assert d["phase"] == "unavailable" and d["beta_theory"] is None and d["beta_theory_flag"]


@pytest.mark.parametrize("args", [["/nonexistent.npz"], ["--variant", "x", "r.npz"], ["--late-fraction", "0", "r.npz"]])
def test_bad_input(args, tmp_path):
    p = run(*args)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


def test_not_a_run_file(tmp_path):
    bad = tmp_path / "x.npz"
    np.savez(bad, a=np.zeros(3))
    p = run(str(bad))
    assert p.returncode == 2 and "no 'meta' or 'config' entry" in p.stderr
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    p = run(str(junk))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1


def test_fully_masked_jac_and_shared_zeta_give_valid_json(tmp_path):
    rng = np.random.default_rng(0)
    zeta = np.cumsum(rng.standard_normal((400, 1)) * 0.01, axis=0) + np.zeros((400, 16))   # one shared zeta
    path = tmp_path / "shared.npz"
    write_run(path, zeta, np.arange(400.0), model="sharedgate")
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["zeta_jac"] = np.full_like(arrays["zeta"], np.nan)
    np.savez(path, **arrays)
    for variant in ("gate", "jac"):
        p = run(str(path), "--json", "--variant", variant, "--n-boot", "20", "--no-simulate")
        assert p.returncode == 0 and p.stderr == "", p.stderr
        d = json.loads(p.stdout)
        assert d["beta_tail"] is None and d["beta_tail_flag"]
    assert any("share one zeta" in n for n in json.loads(run(str(path), "--json", "--no-simulate").stdout)["notes"])


def test_plot_path_checked_before_work(tmp_path):
    for bad in ("/nonexistent/dir/x.png", str(tmp_path), str(tmp_path / "x.jpg")):
        p = run(str(tmp_path / "missing.npz"), "--plot", bad)
        assert p.returncode == 2 and "--plot" in p.stderr and len(p.stderr.strip().splitlines()) == 1
