"""Phase diagrams: the threshold and critical curves sit where the closed forms put them."""
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from levysde.studies.diagram import phase_diagram
from levysde.theory.phases import PHASES
from tests.helpers import one_line_error, run_cli


def psi1_closed(beta, alpha, lam):
    """docs/specification.md §2 closed form of Psi with eta_J = 1 (alpha != 1)."""
    return -((lam - beta) ** alpha + (lam + beta) ** alpha - 2 * lam ** alpha) / (2 * math.cos(math.pi * alpha / 2))


def test_threshold_and_critical_lines_in_eta_j_kappa_plane():
    d = phase_diagram("eta_j", "kappa", x_range=(0.0, 8.0), y_range=(0.2, 2.5), nx=401, ny=41)
    eg, a, lam = 0.1, 1.5, 2.0
    collapsed = PHASES.index("collapsed")
    for j, kappa in enumerate(d.y):
        star = lam * (kappa - eg * lam) / psi1_closed(lam, a, lam)
        crit = (kappa - eg) / psi1_closed(1.0, a, lam)
        row = d.phase_code[j]
        # collapsed exactly for eta_J <= eta_J*
        assert np.all((row == collapsed) == (d.x <= star))
        b = d.beta_star[j]
        assert np.all(b[d.x > crit] < 1) and np.all(b[(d.x > star) & (d.x < crit)] > 1)


def test_defaults_reproduce_theory_numbers_on_the_grid():
    d = phase_diagram("eta_j", "kappa", x_range=(0.5, 6.0), y_range=(0.5, 1.5), nx=12, ny=3)
    j = int(np.argmin(np.abs(d.y - 1.0)))
    gap = d.threshold_gap[j]
    assert np.allclose(d.x - gap, 0.96568542494924, rtol=1e-12)
    assert d.fixed == {"eta_g": 0.1, "alpha": 1.5, "lam": 2.0}


def test_any_pair_of_axes_and_data_file(tmp_path):
    d = phase_diagram("alpha", "lam", nx=30, ny=20, eta_j=2.0)
    assert d.beta_star.shape == (20, 30)
    assert set(np.unique(d.phase_code)) <= set(range(len(PHASES)))
    d.save(tmp_path / "g.npz")
    z = np.load(tmp_path / "g.npz", allow_pickle=False)
    assert np.array_equal(z["beta_star"], d.beta_star, equal_nan=True)
    assert json.loads(str(z["meta"]))["fixed"]["eta_j"] == 2.0


@pytest.mark.parametrize("kwargs,msg", [
    (dict(x="eta_j", y="eta_j"), "differ"), (dict(x="beta"), "x must be one of 'eta_j'"),
    (dict(x_range=(2.0, 1.0)), "lo < hi"), (dict(nx=1), "nx"), (dict(kappa=1.0, y="kappa"), "axis"),
    (dict(x="alpha", x_range=(0.0, 1.0)), "alpha"), (dict(alpha=3.0), "alpha"),
])
def test_bad_arguments(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        phase_diagram(**kwargs)


def test_cli_writes_figure_and_data(tmp_path):
    out, data = tmp_path / "d.png", tmp_path / "d.npz"
    p = run_cli("diagram", "--resolution", "60", "40", "--out", out, "--data", data, "--json")
    assert p.returncode == 0, p.stderr
    assert out.stat().st_size > 10_000 and data.exists()
    summary = json.loads(p.stdout)
    assert summary["phase_counts"]["collapsed"] > 0 and summary["phase_counts"]["broad"] > 0
    for args in (["--x", "kappa"], ["--out", "x.xyz"], ["--x-range", "3", "1"], ["--x", "alpha", "--x-range", "0", "1"],
                 ["--resolution", "1", "5"]):
        p = run_cli("diagram", *args, *([] if "--out" in args else ["--out", tmp_path / "e.png"]))
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


def test_simulated_overlay_matches_theory_and_is_worker_independent(tmp_path):
    """Two grid points simulated through Dask (2-worker LocalCluster) agree with beta* within
    4 jackknife errors, and bit for bit with a sequential run of the same sweep."""
    from levysde.studies.overlay import simulated_overlay

    d = phase_diagram("eta_j", "kappa", x_range=(2.0, 4.0), y_range=(0.8, 1.2), nx=5, ny=5)
    small = {"particles": 1024, "t_end": 150.0, "burn_in": 30.0}
    par = simulated_overlay(d, nx=2, ny=1, quick=True, master_seed=5, scheduler="local", n_workers=2,
                            store=tmp_path / "store", progress=False, settings=small)
    seq = simulated_overlay(d, nx=2, ny=1, quick=True, master_seed=5, scheduler="sequential",
                            progress=False, settings=small)
    assert par["x"].size == 2
    assert np.array_equal(par["beta_hat"], seq["beta_hat"]) and np.array_equal(par["se"], seq["se"])
    dev = np.abs(par["beta_hat"] - par["beta_theory"]) / par["se"]
    assert np.all(dev < 4), dev
    # resuming from the store re-runs nothing and returns the same numbers
    again = simulated_overlay(d, nx=2, ny=1, quick=True, master_seed=5, scheduler="sequential",
                              store=tmp_path / "store", progress=False, settings=small)
    assert np.array_equal(again["beta_hat"], par["beta_hat"])


def _cli(*args, cwd=None):
    return run_cli("diagram", *args, cwd=cwd)


def _one_line_error(p, *words):
    one_line_error(p.returncode, p.stderr, *words)


@pytest.mark.parametrize("args,words", [
    # 1. --out in a missing directory: refused before computing
    (["--out", "/nonexistent-dir/d.png"], ["--out", "does not exist"]),
    # 2. --data in a missing directory: refused before the figure is written
    (["--data", "/nonexistent-dir/d.npz"], ["--data", "does not exist"]),
    # 3. --data without the .npz suffix (numpy would silently write x.txt.npz)
    (["--data", "x.txt"], ["--data", ".npz"]),
    # 4. --store naming an existing file
    (["--simulate", "--store", "FILE"], ["--store", "not a directory"]),
    # 6. sweep flags without --simulate
    (["--scheduler", "foo"], ["--scheduler", "needs --simulate"]),
    (["--store", "s"], ["--store", "needs --simulate"]),
    (["--workers", "3"], ["--workers", "needs --simulate"]),
    (["--sim-grid", "2", "2"], ["--sim-grid", "needs --simulate"]),
    (["--quick"], ["--quick", "needs --simulate"]),
    (["--seed", "3"], ["--seed", "needs --simulate"]),
    (["--simulate", "--scheduler", "foo"], ["--scheduler"]),
    (["--simulate", "--scheduler", "sequential", "--workers", "3"], ["--workers"]),
    # 7. a log axis over the default range, which includes 0
    (["--log-x"], ["--log-x", "--x-range"]),
    (["--x", "eta_g", "--y", "eta_j", "--log-y"], ["--log-y", "--y-range"]),
])
def test_cli_bad_paths_and_flags_are_one_line_before_any_work(tmp_path, args, words):
    (tmp_path / "FILE").write_text("keep me")
    args = [str(tmp_path / "FILE") if a == "FILE" else a for a in args]
    p = _cli(*args, "--out", "d.png", cwd=tmp_path) if "--out" not in args else _cli(*args, cwd=tmp_path)
    _one_line_error(p, *words)
    # nothing was written, and the user's file is untouched
    assert sorted(f.name for f in tmp_path.iterdir()) == ["FILE"]
    assert (tmp_path / "FILE").read_text() == "keep me"


def test_cli_unreachable_scheduler_is_one_line(tmp_path):
    """5. an unreachable tcp:// scheduler: one line naming --scheduler after the 10 s connect timeout."""
    p = _cli("--simulate", "--quick", "--scheduler", "tcp://127.0.0.1:1", "--resolution", "10", "10",
             "--out", "d.png", cwd=tmp_path)
    _one_line_error(p, "--scheduler", "tcp://127.0.0.1:1")
    assert not (tmp_path / "d.png").exists()


def test_save_writes_exactly_the_given_name(tmp_path):
    """3. PhaseDiagram.save does not append .npz behind the caller's back."""
    d = phase_diagram(nx=3, ny=3)
    d.save(tmp_path / "grid.dat")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["grid.dat"]
    assert np.load(tmp_path / "grid.dat", allow_pickle=False)["x"].size == 3


def test_quick_help_matches_settings_and_api_exports():
    """8. the --quick help is derived from SIM_SETTINGS; 9. the overlay API is exported."""
    import levysde.studies.diagram as mod
    import levysde.studies.overlay as overlay

    p = run_cli("diagram", "--help")
    text = " ".join(p.stdout.split())
    q = mod.SIM_SETTINGS["quick"]
    assert f"{q['particles']} particles, t_end {q['t_end']:g}" in text
    assert "200 time units" not in text and "a minute or two" not in text
    assert {"simulated_overlay", "simulate_point"} <= set(overlay.__all__)
    assert all(hasattr(m, name) for m in (mod, overlay) for name in m.__all__)


def test_bad_argument_types_are_value_errors_naming_them():
    """Issue 14 item 15: wrong types name the argument (ValueError), and an unknown
    simulation setting is an error instead of being silently ignored."""
    from levysde.studies.overlay import simulated_overlay

    with pytest.raises(ValueError, match="nx must be an integer >= 2; got None"):
        phase_diagram(nx=None)
    with pytest.raises(ValueError, match="diagram must be a PhaseDiagram"):
        simulated_overlay(None)
    d = phase_diagram(nx=3, ny=3)
    with pytest.raises(ValueError, match=r"unknown settings \['particle'\]"):
        simulated_overlay(d, settings={"particle": 100})
    with pytest.raises(ValueError, match="n_workers applies only to scheduler='local'"):
        simulated_overlay(d, nx=1, ny=1, scheduler="sequential", n_workers=2)


@pytest.mark.slow
def test_ctrl_c_during_simulated_sweep_is_one_line(tmp_path):
    """Issue 14 item 14: Ctrl-C (SIGINT to the process group) on `diagram --simulate --store`
    while the Dask workers simulate prints exactly `levysde diagram: interrupted`, exit 130; no
    worker tracebacks or Dask log lines, no lock left behind."""
    import os
    import signal
    import time

    store = tmp_path / "st"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = subprocess.Popen([sys.executable, "-m", "levysde", "diagram", "--simulate", "--store", str(store),
                          "--json", "--resolution", "10", "10", "--sim-grid", "2", "1", "--out", "d.png"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                         start_new_session=True, env=dict(os.environ, PYTHONPATH=root))
    t0 = time.time()
    while not list(store.glob("*.lock")) and time.time() - t0 < 120 and p.poll() is None:
        time.sleep(0.1)
    assert list(store.glob("*.lock")), p.communicate()
    time.sleep(1.0)
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130 and err == "levysde diagram: interrupted\n", err
    assert not list(store.glob("*.lock")) and not (tmp_path / "d.png").exists()
