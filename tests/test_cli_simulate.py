"""Issue 14, items 13, 15, 19 for the simulator: conflicting arguments are errors, errors name
the argument at fault (library ValueErrors, one-line CLI errors), and valid extreme input
emits no numpy warning."""
import json
import math
import os
import warnings

import numpy as np
import pytest

from levysde.simulation import OUDrift, SaturatingDrift, SimulationResult, beta_model, simulate
from levysde.theory.phases import classify
from tests.helpers import run_cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = dict(particles=16, n_groups=2, t_end=0.5, burn_in=0.1)
SMALL = ["--particles", "256", "--groups", "8", "--t-end", "5", "--burn-in", "1"]


def cli(*args):
    return run_cli("simulate", *args, timeout=300)


# ----------------------------------------------------------------------------- item 13

@pytest.mark.parametrize("drift,kw,names", [
    (None, {"kappa": 5}, "got kappa:"),
    (SaturatingDrift(1, 1, 0), {"gamma": 2.0, "z0": 1.0}, "got gamma, z0:"),
    (OUDrift(1.0, 0.0), {"kappa": 1.0}, "got kappa:"),          # even equal to the default
])
def test_kappa_gamma_z0_belong_to_the_drift(drift, kw, names):
    """simulate() has no kappa/gamma/z0 (the drift carries them): a TypeError that names the
    keywords and says where they went, before any step."""
    with pytest.raises(TypeError, match=names) as info:
        simulate(3, drift=drift, **kw, **TINY)
    assert "drift=SaturatingDrift(kappa=" in str(info.value)


def test_the_drift_sets_kappa_gamma_z0():
    """The drift's kappa/gamma/z0 reach the run (the plateau reaches the theory: beta* of
    kappa = 2 is recorded, not that of the default kappa = 1); the default drift is
    SaturatingDrift() = (kappa 1, gamma 1, z0 0)."""
    res = simulate(3, drift=SaturatingDrift(kappa=2.0, gamma=3.0, z0=0.5), **TINY)
    assert (res.meta["kappa"], res.meta["gamma"], res.meta["z0"]) == (2.0, 3.0, 0.5)
    default = simulate(3, **TINY).meta
    assert (default["drift"], default["kappa"], default["gamma"], default["z0"]) == ("saturating", 1.0, 1.0, 0.0)
    assert res.meta["beta_theory"] == pytest.approx(float(classify(3, 0.1, 2.0, 1.5, 2.0).beta_star), rel=1e-12)
    with pytest.raises(ValueError, match="traj_every applies only with traj_particles"):
        simulate(3, traj_every=5, **TINY)


# ----------------------------------------------------------------------------- item 15

@pytest.mark.parametrize("kw,name", [
    ({"eta_j": [1, 2]}, "eta_j must be a single real number"),
    ({"eta_j": 3, "eta_g": np.array([0.1, 0.2])}, "eta_g must be a single real number"),
    ({"eta_j": None}, "eta_j must be a real number"),
    ({"eta_j": "3"}, "eta_j must be a real number"),
])
def test_simulate_bad_parameter_is_a_value_error_naming_it(kw, name):
    with pytest.raises(ValueError, match=name):
        simulate(**kw, **TINY)


@pytest.mark.parametrize("value", [None, "x", [1, None]])
def test_classify_bad_input_names_the_parameter(value):
    with pytest.raises(ValueError, match=r"eta_j must be (a real number|an array of real numbers) in \[0, inf\); got"):
        classify(value)


def test_load_of_a_non_run_names_the_file_and_what_is_expected(tmp_path):
    png = tmp_path / "x.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    np.save(tmp_path / "a.npy", np.zeros(3))
    np.savez(tmp_path / "rnn.npz", config=np.array(json.dumps({"kind": "rnn"})))
    for path in (png, tmp_path / "missing.npz", tmp_path, tmp_path / "a.npy", tmp_path / "rnn.npz"):
        with pytest.raises(ValueError, match="SimulationResult.load") as info:
            SimulationResult.load(path)
        msg = str(info.value)
        assert str(path) in msg and "simulation run" in msg and "\n" not in msg


def test_huge_eta_g_names_eta_g():
    with pytest.raises(ValueError, match=r"eta_g = 1e\+308 is too large") as info:
        simulate(3, eta_g=1e308, **TINY)
    assert "sigma_eps^2 = " not in str(info.value).split("(")[0]
    p = cli("--eta-j", "3", "--eta-g", "1e308", *SMALL)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert p.stderr.startswith("levysde simulate: error: --eta-g = 1e+308 is too large"), p.stderr


# ----------------------------------------------------------------------------- item 19

def test_huge_eps_is_valid_and_silent():
    """eps = 1e308: every jump is carried by the Gaussian stand-in; beta_model is the root of
    eta_G b^2 + sigma^2 b^2 / 2 - kappa b (Gaussian only): b = kappa / (eta_G + sigma^2/2),
    with sigma^2 the whole tempered jump variance 2 eta_J c_alpha Gamma(2 - alpha) lam^(alpha-2)
    (levysde.theory.levy.variance). No RuntimeWarning on the way."""
    from levysde.theory.levy import variance

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = beta_model(3.0, 0.1, 1.0, 1.5, 2.0, eps=1e308)
        res = simulate(3.0, eps=1e308, **TINY)
    s2 = float(variance(alpha=1.5, lam=2.0, eta_j=3.0))
    assert b == pytest.approx(1.0 / (0.1 + s2 / 2), rel=1e-9)
    assert res.meta["sigma_eps2"] == pytest.approx(s2, rel=1e-9)


@pytest.mark.parametrize("args,err", [
    (["--eps", "1e308"], None),
    (["--drift", "ou", "--gamma", "-1"], "--gamma must be in (0, inf)"),
])
def test_cli_no_leaked_warnings(args, err):
    p = cli("--eta-j", "3", *SMALL, "--json", *args)
    if err is None:
        assert p.returncode == 0 and p.stderr == "", p.stderr
    else:
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and err in p.stderr, p.stderr


# ----------------------------------------------------------------------------- fresh-user defects

@pytest.mark.parametrize("args,needle", [
    (["--threshold", "1e308"], "--threshold must be in (0, "),
    (["--threshold", "100"], "--threshold must be in (0, "),
    (["--drift", "ou", "--gamma", "-1"], "--gamma must be in (0, inf) for the ou drift (gamma <= 0 is no restoring"),
    (["--gamma", "0"], "--gamma must be in (0, inf) for the saturating drift (gamma <= 0 is no restoring"),
])
def test_cli_threshold_and_gamma_rejected_before_the_run(args, needle):
    """A threshold beyond the histogram (eta_J = 3: half-width 45/tail rate ~ 55.7) or a drift
    with no stable equilibrium: one line, exit 2, no warning, no simulation (a 1e6-time-unit
    run would time out the test otherwise)."""
    p = cli("--eta-j", "3", "--particles", "256", "--t-end", "1e6", "--burn-in", "2", "--json", *args)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and needle in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and "warning" not in p.stderr and p.stdout == ""


def test_api_threshold_and_gamma_rejected():
    """simulate() refuses threshold_u outside (0, half-width) and an OU drift with gamma <= 0
    (the CLI's wording); tail/tail_scan refuse u outside threshold_range (no clamp, no NaN)."""
    for u in (1e308, 100.0, 0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="threshold_u must be"):
            simulate(3.0, threshold_u=u, **TINY)
    with pytest.raises(ValueError, match=r"gamma must be in \(0, inf\) for the ou drift \(gamma <= 0 is no"):
        simulate(3.0, drift=OUDrift(gamma=-1.0), **TINY)
    res = simulate(3.0, **TINY)
    lo, hi = res.threshold_range()
    assert lo == 0.0 and hi == -res.hist_edges[0] and hi > 25      # half-width >= 25 by default
    for u in (1e308, hi, float("nan"), -1.0, 0.0, "x"):
        with pytest.raises(ValueError, match=r"u must be (finite and|a real number) in \(0, "):
            res.tail(u)
        with pytest.raises(ValueError, match=r"u must be (finite and|a real number) in \(0, "):
            res.tail_scan([1.0, u])
    assert res.tail(hi - 1).u == pytest.approx(hi - 1)              # inside: no clamp
    assert all(lo < e.u < hi for e in res.tail_scan(min_excursions=0))


def test_cli_eps_help_names_the_real_default():
    p = cli("--help")
    assert p.returncode == 0 and "simulation_eps" in " ".join(p.stdout.split())


def test_cli_null_se_has_a_note():
    """8 particles in 8 groups (the fewest the CLI allows), seed 6: the short run leaves every
    exceedance beyond u = 1.5 in one group (checked below from the histogram), so the
    leave-one-group-out rate is 0/0 and the jackknife error is null; a note says why. A long
    run with 64 groups has an SE and no note."""
    kw = dict(particles=8, n_groups=8, t_end=5.0, burn_in=1.0, threshold_u=1.5, seed=6)
    res = simulate(3.0, **kw)
    k = int(np.argmin(np.abs(res.hist_edges + 1.5)))
    per_group = res.hist_counts[:, :k].sum(axis=1) + res.hist_outside[:, 0]
    assert sorted(per_group > 0) == [False] * 7 + [True]            # one group holds them all
    p = cli("--eta-j", "3", "--particles", "8", "--groups", "8", "--t-end", "5", "--burn-in", "1",
            "--threshold", "1.5", "--seed", "6", "--json")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    d = json.loads(p.stdout)
    assert d["beta_hat"] is not None and d["beta_hat_se"] is None
    assert any("beta_hat_se is null" in n and "at least two groups" in n for n in d["notes"]), d["notes"]
    p = cli("--eta-j", "3", *SMALL, "--threshold", "0.5", "--json")
    d = json.loads(p.stdout)
    assert d["beta_hat_se"] is not None and not any("beta_hat_se" in n for n in d["notes"])


def test_threshold_dependence_flags_a_tail_not_yet_exponential():
    """alpha = 0.3, lam = 0.5 (beta* = 0.4623): the tail is not exponential yet at u = 3
    (beta_hat(u) falls towards beta* as u grows), which the bias budget does not model; the
    scan-based check flags it and the CLI prints a note. The defaults' flat scan is not flagged."""
    from types import SimpleNamespace as NS

    from levysde.simulation.bias import threshold_dependence

    est = NS(u=3.0, beta_hat=0.50, se=0.002)
    flat = [NS(u=u, beta_hat=0.50 + 0.001 * (-1) ** i, se=0.002 + 0.001 * i) for i, u in enumerate((4, 5, 6))]
    assert threshold_dependence(est, flat) is None
    falling = flat + [NS(u=8.0, beta_hat=0.46, se=0.006)]
    u, b, z = threshold_dependence(est, falling)
    assert u == 8.0 and b == 0.46 and z == pytest.approx(-0.04 / math.sqrt(0.006 ** 2 - 0.002 ** 2))
    p = cli("--eta-j", "3", "--alpha", "0.3", "--lam", "0.5", "--particles", "8192", "--t-end", "400",
            "--json")
    d = json.loads(p.stdout)
    assert d["beta_hat"] - d["beta_theory"] > 5 * d["beta_hat_se"]          # the bias is real
    assert any(n.startswith("beta_hat depends on the threshold") for n in d["notes"]), d["notes"]
    p = cli("--eta-j", "3", *SMALL, "--json")
    assert not any("depends on the threshold" in n for n in json.loads(p.stdout)["notes"])


def test_cli_threshold_is_a_depth_and_both_conventions_are_printed():
    """--threshold is a depth beyond the equilibrium z0; the tail is X > u of X = -zeta, whose
    equilibrium is X = -z0, so u = depth - z0 (z0 = 2, depth 3: u = 1). The JSON and the text
    name both, and every scan entry's depth - u is z0."""
    args = ["--eta-j", "3", "--z0", "2", "--threshold", "3", *SMALL]
    p = cli(*args, "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["threshold_depth"] == 3.0 and d["threshold_u"] == pytest.approx(1.0, abs=1e-12)
    assert d["equilibrium"] == 2.0
    assert d["scan"] and all(e["depth"] - e["u"] == pytest.approx(2.0, abs=1e-9) for e in d["scan"])
    assert d["scan"][0]["depth"] == 0.5                              # the scan starts 0.5 deep
    text = cli(*args).stdout
    assert "u = 1 = depth 3 (--threshold)" in text and "beyond the equilibrium X = -2" in text
    help_text = " ".join(cli("--help").stdout.split())
    assert "u = DEPTH - z0" in help_text


def test_cli_groups_below_8_are_refused_with_the_reason():
    """The jackknife error over G groups has G - 1 degrees of freedom (Student t quantiles:
    12.7 for G = 2, 2.36 for G = 8 at 95 %); like levysde check's --n-groups (MIN_GROUPS), the
    CLI refuses fewer than 8 groups, before any work, in one line that says why."""
    from scipy import stats

    from levysde.inference.check import MIN_GROUPS

    assert MIN_GROUPS == 8
    assert round(stats.t.ppf(0.975, 1), 1) == 12.7 and round(stats.t.ppf(0.975, 7), 2) == 2.36
    for g in ("2", "7"):
        p = cli("--eta-j", "3", "--groups", g, "--t-end", "1e6", "--json")
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and p.stdout == "", p.stderr
        assert "--groups" in p.stderr and "[8, 4096]" in p.stderr and "degrees of freedom" in p.stderr
    p = cli("--eta-j", "3", *SMALL, "--json")                       # SMALL has --groups 8
    assert p.returncode == 0 and json.loads(p.stdout)["beta_hat_se"] is not None
