"""`levysde check` on tiny saved runs (written by the test: no torch needed)."""
import json

import numpy as np
import pytest

from levysde.simulation import simulate
from tests.helpers import run_cli


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
    return run_cli("check", *args)


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
    assert d["phase"] is None and d["beta_theory"] is None and d["beta_theory_flag"]


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
    for bad in ("/nonexistent/dir/x.png", str(tmp_path), str(tmp_path / "x.xyz")):
        p = run(str(tmp_path / "missing.npz"), "--plot", bad)
        assert p.returncode == 2 and "--plot" in p.stderr and len(p.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------- issue 11: gates, stationarity, errors

def contracting_transient(H=256, R=100, seed=0):
    """Broad spectrum contracting linearly toward its median: spread x (1 - 0.6 t/T), tiny noise,
    no jumps (issue 11): no stationary state anywhere in the file."""
    rng = np.random.default_rng(seed)
    z0 = -2.0 - rng.exponential(2.0, H) + rng.normal(0.0, 0.5, H)
    med = np.median(z0)
    step = np.arange(R) * 10.0
    shrink = 1 - 0.6 * step / step[-1]
    return med + (z0 - med)[None, :] * shrink[:, None] + 1e-3 * rng.standard_normal((R, H)), step


def test_contracting_transient_is_not_stationary_and_gets_no_phase(tmp_path):
    zeta, step = contracting_transient()
    path = tmp_path / "contract.npz"
    write_run(path, zeta, step)
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["loss"] = np.geomspace(1.0, 1e-2, zeta.shape[0])          # loss falling
    np.savez(path, **arrays)
    p = run(str(path), "--json", "--n-boot", "20")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["stationary"] is False and d["phase"] is None and d["beta_theory"] is None
    assert any(w.startswith("not stationary") for w in d["phase_withheld"])
    # the spread shrinks by 0.6 * 0.5 / (1 - 0.3) of its mid value over the late half: far beyond errors
    assert d["stationarity"]["stats"]["std"]["t"] > d["stationarity"]["critical_t"]
    assert d["stationarity"]["stats"]["std"]["change"] < 0


def test_stationarity_test_numbers():
    from levysde.inference.check import stationarity_test

    rng = np.random.default_rng(1)
    R, Q = 40, 200
    step = np.arange(R, dtype=float)
    # i.i.d. N(0, 1) in every record: stationary; the change of the std has mean 0
    iid = rng.standard_normal((R, Q))
    s = stationarity_test(iid, step)
    assert s.stationary is True and s.n_windows == 4
    from scipy import stats
    assert s.critical_t == pytest.approx(stats.t.ppf(1 - 0.05 / 14, 63), rel=1e-12)   # 64 groups, 7 statistics
    # a location trend of 1.0 over the records: the median's change is the trend over the windows' centres
    trend = iid + np.linspace(0, 1, R)[:, None]
    s = stationarity_test(trend, step)
    assert s.stationary is False
    c = s.stats["q50"].change
    assert abs(c - 1.0 * 30 / 39) < 4 * s.stats["q50"].se + 0.05
    # too few records for 4 windows
    assert stationarity_test(iid[:7], step[:7]).stationary is False


def test_stationarity_increment_scale_closed_form():
    """dz_log_iqr: the log IQR of the one-record increments. An AR(1) chain whose innovation scale
    grows by a factor g over the records has increments N(0, s_r^2 (2 - 2 phi) ...) only when
    stationary; here the innovations are i.i.d. N(0, s_r^2) on top of a fixed AR(1) position
    (increment = innovation - (1 - phi) z), and a scale factor s_r = 1 + g r/(R - 1): the change of
    the log IQR across 4 windows is log of the ratio of the scales at the outer windows' centres
    (up to the small AR term), and the test rejects."""
    from levysde.inference.check import stationarity_test

    rng = np.random.default_rng(3)
    R, Q, phi, g = 200, 512, 0.5, 0.2
    sc = 1.0 + g * np.arange(R) / (R - 1)
    z = np.zeros((R, Q))
    z[0] = rng.standard_normal(Q) / np.sqrt(1 - phi ** 2)
    for r in range(1, R):
        z[r] = phi * z[r - 1] + sc[r] * rng.standard_normal(Q)
    step = np.arange(R, dtype=float)
    s = stationarity_test(z, step)
    st = s.stats["dz_log_iqr"]
    # increments z_r - z_{r-1}: a sum of two scaled normals, scale ~ s_r (to first order in g)
    centres = (np.arange(4) + 0.5) * R / 4
    want = np.log((1 + g * centres[-1] / R) / (1 + g * centres[0] / R))
    assert abs(st.change - want) < 4 * st.se
    assert st.t > s.critical_t and s.stationary is False
    # the same chain with a constant scale passes, and its statistic has no change within 4 se
    z0 = np.zeros((R, Q))
    z0[0] = rng.standard_normal(Q) / np.sqrt(1 - phi ** 2)
    for r in range(1, R):
        z0[r] = phi * z0[r - 1] + rng.standard_normal(Q)
    s0 = stationarity_test(z0, step)
    assert abs(s0.stats["dz_log_iqr"].change) < 4 * s0.stats["dz_log_iqr"].se
    # increments over another record interval are left out: a random walk (increment sd sqrt(dt))
    # recorded at interval 1, except every other interval of the late half at interval 2
    dt = np.ones(R - 1)
    dt[R // 2::2] = 2.0
    step3 = np.concatenate([[0.0], np.cumsum(dt)])
    walk = np.concatenate([np.zeros((1, Q)), np.cumsum(np.sqrt(dt)[:, None] * rng.standard_normal((R - 1, Q)), axis=0)])
    s3 = stationarity_test(walk, step3)
    assert abs(s3.stats["dz_log_iqr"].change) < 4 * s3.stats["dz_log_iqr"].se
    # counted, the sqrt(2)-larger increments would raise the late windows' log IQR by ~ log(1.2)
    assert all(abs(v) < 0.05 + np.log(1.349) for v in s3.stats["dz_log_iqr"].per_window)


def test_jackknife_se_of_a_mean_equals_the_group_formula():
    from levysde.stats.jackknife import jackknife_se, neuron_groups

    rng = np.random.default_rng(2)
    x = rng.standard_normal(160)
    lab = neuron_groups(160, 16)
    means = np.array([x[lab == g].mean() for g in range(16)])
    loo = np.array([x[lab != g].mean() for g in range(16)])
    # equal groups: the delete-a-group jackknife of the mean is sd(group means)/sqrt(G) exactly
    assert jackknife_se(loo) == pytest.approx(means.std(ddof=1) / 4, rel=1e-12)
    assert np.isnan(jackknife_se([1.0, np.nan, 2.0])) and np.isnan(jackknife_se([1.0]))


def test_fit_saturating_recovers_a_known_drift():
    from levysde import SaturatingDrift
    from levysde.inference.drift_fit import fit_saturating

    rng = np.random.default_rng(3)
    c = np.linspace(-6, 0.5, 40)
    F = SaturatingDrift(kappa=0.7, gamma=1.4, z0=-0.3)(c)
    se = np.full(c.size, 0.02)
    r = fit_saturating(c, F + se * rng.standard_normal(c.size), se)
    # chi2 with 37 dof: mean 37, sd sqrt(74); parameters within a few fit errors (0.02 noise)
    assert abs(r["kappa"] - 0.7) < 0.02 and abs(r["gamma"] - 1.4) < 0.15 and abs(r["z0"] + 0.3) < 0.05
    assert r["dof"] == 37 and 1e-3 < r["p_value"] and r["plateau_fraction"] > 0.99
    # a linear drift (OU, no plateau): the fitted form does not reach a plateau within the data
    lin = fit_saturating(c, -0.2 * (c - 0.4) + se * rng.standard_normal(c.size), se)
    assert lin["plateau_fraction"] < 0.8


def test_resolved_lag_max_is_the_tenth_longest_time_scale():
    from levysde.inference.spectrum import resolved_lag_max

    z = np.array([np.nan] + list(np.linspace(-5, 0, 30)))
    assert resolved_lag_max(z) == pytest.approx(np.exp(5 - 9 * 5 / 29), rel=1e-12)
    assert resolved_lag_max(z[:5]) == pytest.approx(np.exp(-z[4]), rel=1e-12)      # fewer than 10: the shortest
    with pytest.raises(ValueError, match="finite"):
        resolved_lag_max([np.nan])


def test_too_few_records_or_neurons_get_no_phase(sim_run):
    from levysde.inference.check import check_trajectories

    with np.load(sim_run) as z:
        zeta, step = z["zeta"], z["step"]
    few_rec = check_trajectories(zeta[-6:], step[-6:], closing_loop=False, n_boot=20)
    assert few_rec.phase is None and few_rec.gates["records"].passed is False
    few_neu = check_trajectories(zeta[:, :16], step, closing_loop=False, n_boot=20)
    assert few_neu.phase is None and few_neu.gates["neurons"].passed is False
    assert any("too few independent neurons" in w for w in few_neu.withheld)


def test_stationary_sde_passes_every_gate(sim_run):
    p = run(str(sim_run), "--json", "--n-boot", "50")
    d = json.loads(p.stdout)
    assert d["stationary"] is True and all(d["gates"].values()), d["phase_withheld"]
    # kappa_hat's error is multiplicative: log scale, se its delta-method size
    assert d["kappa_hat_log_se"] == pytest.approx(d["kappa_hat_se"] / d["kappa_hat"], rel=1e-9)
    # every standard error is the neuron jackknife: finite and positive
    for key in ("kappa_hat", "eta_g_hat", "eta_j_hat", "alpha_hat", "lam_hat", "beta_tail", "beta_envelope"):
        assert d[f"{key}_se"] is not None and d[f"{key}_se"] > 0, key
    # the envelope stops at the 10th longest time scale of the last record
    with np.load(sim_run) as z:
        assert d["envelope_lag_max"] == pytest.approx(np.exp(-np.sort(z["zeta"][-1])[9]), rel=1e-12)


def test_beta_tail_error_counts_neurons_not_records():
    """beta_tail's delete-one-neuron jackknife: for independent exponential X per record its error is
    the closed form beta/sqrt(k) (k exceedances); when each neuron keeps its X over all records
    (perfectly correlated in time) only the k_q neurons beyond u count: beta/sqrt(k_q)."""
    from levysde.inference.check import _beta_tail

    rng = np.random.default_rng(11)
    iid, loo = _beta_tail(-rng.exponential(1 / 0.8, size=(100, 400)), 16)
    k = 800                                             # 2 % of the 100 x 400 samples lie beyond u
    assert abs(iid.value - 0.8) < 4 * iid.se
    assert iid.se == pytest.approx(iid.value / np.sqrt(k), rel=0.15)
    assert loo.shape == (16,) and np.all(loo > 0)       # the group replicates of the joint closure
    frozen = np.tile(-rng.exponential(1 / 0.8, size=(1, 5000)), (50, 1))
    rep, _ = _beta_tail(frozen, 16)
    k_q = 100                                           # 2 % of the 5000 neurons
    assert rep.se == pytest.approx(rep.value / np.sqrt(k_q), rel=0.25)
    assert abs(rep.value - 0.8) < 4 * rep.se


def _iid_tail_zeta(R, Q, seed, beta=0.8):
    """zeta = -X with X ~ Exp(beta), independent over records and neurons: the left tail's rate is beta
    and the delete-one-neuron jackknife error is beta/sqrt(k) (k exceedances; closed form)."""
    return -np.random.default_rng(seed).exponential(1 / beta, size=(R, Q)), np.arange(float(R))


@pytest.mark.parametrize("copy", ["tile", "repeat"])
def test_duplicate_neurons_are_merged_and_counted_once(copy):
    """issue 11 review: np.tile(z[:, :24], (1, 8)) passed the 32-neuron gate with a beta_tail error
    sqrt(8) too small; np.repeat gave kappa +- 0. Exact copies are merged: the neuron gate sees 24,
    and beta_tail's error is the closed form beta/sqrt(k) of the 24 distinct neurons."""
    from levysde.inference.check import check_trajectories

    zeta, step = _iid_tail_zeta(400, 24, 3)
    dup = np.tile(zeta, (1, 8)) if copy == "tile" else np.repeat(zeta, 8, axis=1)
    rep = check_trajectories(dup, step, closing_loop=False, n_boot=20)
    d = rep.as_json()
    assert d["n_neurons"] == 24 and rep.gates["neurons"].passed is False and rep.phase is None
    assert any("168 neuron(s) are exact copies" in n for n in d["notes"])
    k = 0.02 * 200 * 24                                 # late half: 200 records, 2 % beyond u
    assert d["beta_tail_se"] == pytest.approx(d["beta_tail"] / np.sqrt(k), rel=0.3)
    assert abs(d["beta_tail"] - 0.8) < 3 * d["beta_tail_se"]
    assert d["kappa_hat_se"] is None or d["kappa_hat_se"] > 0


def test_clean_columns_keeps_the_envelope_and_masked_columns():
    """Merged copies carry the sum of their Lambda weights (the envelope sum is unchanged); all-NaN
    columns and a shared zeta are left alone."""
    from levysde.inference.check import clean_columns

    z = np.array([[1.0, 2.0, 1.0, np.nan, np.nan, 3.0], [1.5, 2.5, 1.5, np.nan, np.nan, np.nan]])
    w = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0])
    zc, wc, notes = clean_columns(z, w)
    assert zc.shape == (2, 5) and wc.tolist() == [5.0, 2.0, 8.0, 16.0, 32.0] and len(notes) == 1
    lag = 3.0
    env = lambda zz, ww: np.nansum(ww * np.exp(-lag * np.exp(zz[-1]))) / ww.sum()   # noqa: E731
    assert env(zc, wc) == pytest.approx(env(z, w), rel=1e-14)
    shared = np.tile(np.arange(5.0)[:, None], (1, 4))
    assert clean_columns(shared)[0].shape == (5, 4)


def test_infinite_cells_are_treated_like_nan_without_warnings():
    """issue 11 review: one -inf cell gave "too few increments" and "no spread". It must give exactly the
    report of the same data with NaN in that cell, with a note and no RuntimeWarning."""
    import warnings

    from levysde.inference.check import check_trajectories

    zeta, step = _iid_tail_zeta(120, 64, 5)
    bad, nan = zeta.copy(), zeta.copy()
    bad[100, 7], bad[110, 9] = -np.inf, np.inf
    nan[100, 7] = nan[110, 9] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = check_trajectories(bad, step, closing_loop=False, n_boot=20).as_json()
    b = check_trajectories(nan, step, closing_loop=False, n_boot=20).as_json()
    assert any("2 infinite zeta value(s)" in n for n in a["notes"])
    for key in ("kappa_hat", "kappa_hat_se", "eta_g_hat", "beta_tail", "beta_tail_se", "stationary"):
        assert a[key] == b[key], key
    assert a["beta_tail"] is not None and abs(a["beta_tail"] - 0.8) < 4 * a["beta_tail_se"]


@pytest.mark.parametrize("g", [2, 3, 7])
def test_n_groups_below_8_is_refused(g, tmp_path):
    """issue 11 review: --n-groups 2 or 3 made the contracting transient 'stationary' (critical t 318 / 22)."""
    from levysde.inference.check import check_trajectories, stationarity_test

    zeta, step = _iid_tail_zeta(40, 64, 1)
    for call in (lambda: check_trajectories(zeta, step, n_groups=g, closing_loop=False),
                 lambda: stationarity_test(zeta, step, n_groups=g)):
        with pytest.raises(ValueError, match=r"n_groups must be an integer >= 8"):
            call()
    p = run(str(tmp_path / "r.npz"), "--n-groups", str(g))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "--n-groups" in p.stderr


def test_beta_theory_reported_only_against_its_own_odds():
    """The fitted parameters' phase odds are a check of the fitted SDE (``theory_odds``): it passes only
    when their own phase has the largest probability (draws with the jackknife covariance) and >= 0.5,
    with the probabilities in the reason otherwise. The phase_odds gate (the combined beta's odds) is
    present, and fails, without a combined beta."""
    from types import SimpleNamespace

    from levysde.core.status import Estimate
    from levysde.inference.check import CheckReport, _gates
    from levysde.inference.sde_fit import Prediction

    u = Estimate(float("nan"))
    noise = SimpleNamespace(mode="jumps", eta_g=Estimate(0.1, 0.01), eta_j=Estimate(3.0, 0.5),
                            alpha=Estimate(0.8, 0.1), lam=Estimate(1.0, 0.2))
    fit = SimpleNamespace(kappa=Estimate(0.9, 0.1), noise=noise, n_neurons=64, replicates=np.zeros((0, 5)),
                          drift=SimpleNamespace(form={}), values=lambda: np.array([0.9, 0.1, 3.0, 0.8, 1.0]))
    for probs, passed in (({"broad": 0.34, "collapsed": 0.44, "concentrated": 0.22}, False),
                          ({"broad": 0.45, "collapsed": 0.3, "concentrated": 0.25}, False),
                          ({"broad": 0.5, "collapsed": 0.5}, True),
                          ({"broad": 0.8, "concentrated": 0.2}, True), ({}, False)):
        pred = Prediction(Estimate(0.7, 0.1), u, "broad", probs, 0.7, {})
        rep = CheckReport("gate", fit, pred, u, u, None, None, unavailable_ks(), u)
        _gates(rep, 100, 64)
        g = rep.model_checks["theory_odds"]
        assert g.passed is passed, probs
        if not passed:
            assert g.reason.startswith("theory odds") and "'broad'" in g.reason
        assert not rep.beta_theory.ok                     # the record interval is unknown here: not reported
        assert "phase_odds" in rep.gates and rep.gates["phase_odds"].passed is False and rep.phase is None


def unavailable_ks():
    from levysde.core.status import Status, unavailable

    return unavailable("closing loop not run", Status.NOT_RUN)


def test_anticollapse_checker_hash_covers_every_module_the_check_imports():
    """examples/anticollapse.py reuses cached check rows only when the checking code's hash matches: the hash
    must cover every levysde module that inference/check.py reaches through its imports (module-level or
    lazy, and the packages whose __init__ runs on the way), found here by walking the import statements
    (ast), independently of the example's list."""
    import ast
    import fnmatch
    import importlib.util
    import pathlib

    import levysde

    root = pathlib.Path(levysde.__file__).parent
    spec = importlib.util.spec_from_file_location("anticollapse_ex", root.parent / "examples" / "anticollapse.py")
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)

    def files_of(dotted):
        """The file of module ``dotted`` and the __init__ files of the packages above it."""
        parts = dotted.split(".")[1:]
        out = [root / "__init__.py"]
        for k in range(1, len(parts) + 1):
            p = root.joinpath(*parts[:k])
            if p.is_dir():
                out.append(p / "__init__.py")
            elif p.with_suffix(".py").exists():
                out.append(p.with_suffix(".py"))
        return out

    def lazy_home(package, name):
        """The module a package's lazy_loader.attach(submod_attrs=...) loads ``name`` from, or None."""
        init = root.joinpath(*package.split(".")[1:], "__init__.py")
        if not init.exists():
            return None
        for call in ast.walk(ast.parse(init.read_text())):
            if isinstance(call, ast.Call) and ast.unparse(call.func).endswith("attach"):
                for kw in call.keywords:
                    if kw.arg == "submod_attrs" and isinstance(kw.value, ast.Dict):
                        for k, v in zip(kw.value.keys, kw.value.values, strict=True):
                            if name in ast.literal_eval(v):
                                return f"{package}.{k.value}"
        return None

    seen, todo = set(), files_of("levysde.inference.check")
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        tree = ast.parse(f.read_text())
        typing_only = {id(n) for b in ast.walk(tree) if isinstance(b, ast.If) and "TYPE_CHECKING" in ast.unparse(b.test)
                       for n in ast.walk(b)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("levysde")
                    and id(node) not in typing_only):
                todo += files_of(node.module) + [g for a in node.names for g in files_of(f"{node.module}.{a.name}")]
                todo += [g for a in node.names if (home := lazy_home(node.module, a.name)) for g in files_of(home)]
    reached = {f.relative_to(root).as_posix() for f in seen}
    assert {"inference/check.py", "inference/sde_fit.py", "stats/tails.py", "theory/phases.py",
            "simulation/_kernels.py"} <= reached
    missing = [r for r in reached if not any(fnmatch.fnmatch(r, pat) for pat in ex.CHECKER_MODULES)]
    assert not missing, missing


def test_check_help_says_what_the_flags_do():
    """--seed seeds the phase-probability draws (no bootstrap); --no-simulate drops the closing_loop check."""
    p = run("--help")
    text = " ".join(p.stdout.split())
    assert p.returncode == 0 and "bootstrap" not in text
    assert "closing_loop check" in text and "not applied" in text and "at least 8" in text


def test_jump_fit_bias_names_the_biased_estimates():
    """jump_fit_bias lists the jump-fit estimates whose jackknife bias (G - 1)(mean replicate - value)
    exceeds 0.25 of the reported error (Efron & Tibshirani 1993, §10.6), and only those."""
    from types import SimpleNamespace

    from levysde.core.status import Estimate
    from levysde.inference.check import jump_fit_bias

    G = 16
    v = np.array([1.0, 0.1, 3.0, 0.8, 1.0])
    reps = np.tile(v, (G, 1))
    reps[:, 2] += 0.4 * 0.5 / (G - 1)            # eta_J: bias 0.4 se (se 0.5)
    reps[:, 3] += 0.1 * 0.2 / (G - 1)            # alpha: bias 0.1 se (se 0.2)
    noise = SimpleNamespace(eta_g=Estimate(0.1, 0.05), eta_j=Estimate(3.0, 0.5), alpha=Estimate(0.8, 0.2),
                            lam=Estimate(1.0, 0.3))
    fit = SimpleNamespace(noise=noise, replicates=reps, values=lambda: v)
    out = jump_fit_bias(fit)
    assert len(out) == 1 and out[0].startswith("eta_j_hat: bias +0.40 se")
    fit.replicates = np.zeros((0, 5))
    assert jump_fit_bias(fit) == []


def test_step_must_increase():
    from levysde.inference.check import check_trajectories

    zeta = np.random.default_rng(0).normal(size=(30, 40))
    for step in (np.r_[np.arange(29.0), 5.0], np.r_[np.arange(29.0), 28.0], np.r_[np.arange(29.0), np.nan]):
        with pytest.raises(ValueError, match="strictly increasing"):
            check_trajectories(zeta, step, closing_loop=False)


def test_closing_loop_histogram_is_bounded_for_a_narrow_spectrum(monkeypatch):
    """A spectrum 1e-4 wide gives drift bins ~1e-6 wide; a quarter of that over the simulator's
    histogram (half-width <= 400) would be ~3e9 bins (a reviewer saw 8-25 GiB requested). The
    closing loop's bin width is bounded below so that at most CLOSING_LOOP_MAX_BINS bins are used."""
    from types import SimpleNamespace

    from levysde.core.status import Estimate
    from levysde.inference.check import CLOSING_LOOP_MAX_BINS, _closing_loop

    seen = {}

    def fake_simulate(eta_j, **kw):
        seen.update(kw)
        raise ValueError("stop here")

    monkeypatch.setattr("levysde.inference.check.simulate", fake_simulate)
    edges = np.linspace(-1e-4, 1e-4, 61)
    centers = 0.5 * (edges[1:] + edges[:-1])
    drift = SimpleNamespace(edges=edges, centers=centers, F=-centers * 1e2)
    noise = SimpleNamespace(eta_g=Estimate(1e-6, 1e-7), mode="gauss", alpha=Estimate(float("nan")),
                            eta_j=Estimate(0.0), lam=Estimate(float("nan")))
    fit = SimpleNamespace(drift=drift, kappa=Estimate(1e-2, 1e-3), noise=noise, n_neurons=64)
    ks, _ = _closing_loop(fit, np.zeros((10, 64)), 0)
    assert not ks.ok and "stop here" in ks.flag
    assert 2 * 400 / seen["bin_width"] <= CLOSING_LOOP_MAX_BINS * (1 + 1e-12)


def test_a_run_file_without_records_is_refused(tmp_path):
    from levysde.inference.envelope_fit import rnn_envelope
    from levysde.io.runfile import load_run, save_run

    path = str(tmp_path / "empty.npz")
    save_run(path, {"zeta": np.zeros((0, 8)), "zeta_jac": np.zeros((0, 8)), "step": np.zeros(0),
                    "Lambda": np.ones(8), "loss": np.zeros(0), "lags": np.arange(1, 4),
                    "envelope": np.zeros((0, 3))}, {"kind": "rnn", "model": "diaggate"})
    with pytest.raises(ValueError, match="no records"):
        load_run(path)
    with pytest.raises(ValueError, match="no records"):
        rnn_envelope({"zeta": np.zeros((0, 8)), "Lambda": np.ones(8), "config": {}})


def test_non_real_input_is_refused_and_notes_are_specific():
    """Complex zeta would silently lose its imaginary part, text is no number: both refused with the
    array named. n_groups above the neuron count says what it does; an all-NaN late part says so."""
    from levysde.inference.check import check_trajectories

    rng = np.random.default_rng(1)
    zeta, step = rng.normal(size=(30, 40)), np.arange(30.0)
    with pytest.raises(ValueError, match="zeta must be an array of real numbers"):
        check_trajectories(zeta + 1j, step, closing_loop=False)
    with pytest.raises(ValueError, match="step must be an array of real numbers"):
        check_trajectories(zeta, step.astype(str), closing_loop=False)
    rep = check_trajectories(zeta[:, :20], step, n_groups=32, closing_loop=False)
    assert any("n_groups = 32 exceeds the 20 neurons" in n for n in rep.notes)
    z = zeta.copy()
    z[15:] = np.nan
    rep = check_trajectories(z, step, closing_loop=False)
    assert "no finite zeta in the late part" in rep.beta_tail.flag


@pytest.mark.parametrize("kw, name", [
    (dict(variant="gat"), "variant"), (dict(lags=[0.0]), "lags"), (dict(lags=[np.inf]), "lags"),
    (dict(lags=[]), "lags"), (dict(lags=[[1.0]]), "lags"), (dict(n_boot=0), "n_boot"),
    (dict(n_boot=True), "n_boot"), (dict(seed=None), "seed"), (dict(seed=-1), "seed"),
    (dict(seed=True), "seed"), (dict(closing_loop=1), "closing_loop"), (dict(config=[1]), "config"),
])
def test_check_trajectories_options_are_validated(kw, name):
    from levysde.inference.check import check_trajectories
    zeta = np.random.default_rng(0).normal(size=(6, 10))
    with pytest.raises(ValueError, match=f"^{name} must"):
        check_trajectories(zeta, np.arange(6.0), closing_loop=False, **kw) if "closing_loop" not in kw \
            else check_trajectories(zeta, np.arange(6.0), **kw)


def test_report_prints_not_identified_estimates_as_such_and_the_better_kappa():
    from levysde.cli.check import _kappa_line, _line

    d = {"alpha_hat": 1.234, "alpha_hat_se": None, "alpha_hat_flag": "not identified: lam unresolved",
         "alpha_hat_status": "not identified", "beta_tail": 0.61, "beta_tail_se": 0.03, "beta_tail_status": "ok",
         "beta_tail_flag": "300 neurons reach the tail", "lam_hat": None, "lam_hat_status": "at bound",
         "kappa_hat": 0.9, "kappa_hat_se": 3.8e3, "kappa_hat_flag": None,
         "dynamics": {"kappa_hat": 1.02, "kappa_hat_se": 0.05, "n_increments": 900, "n_neurons": 64}}
    a = _line("alpha", d, "alpha_hat")
    assert "not identified" in a and "1.234" not in a
    assert "at bound" in _line("lam", d, "lam_hat")
    assert "0.61 +- 0.03" in _line("beta (tail)", d, "beta_tail")
    k = _kappa_line(d)
    assert "1.02 +- 0.05" in k and "far-left drift" in k and "3.8e+03" not in k
    d["kappa_hat_se"] = 0.01
    assert "0.9 +- 0.01" in _kappa_line(d)


def test_kappa_from_a_cut_too_small_for_the_dynamics_root_gets_no_error_bar():
    """new-user trial: kappa -0.003893 +- 0.00038 was printed from a cut of 2 neurons, 3 increments."""
    from levysde.cli.check import _kappa_line

    d = {"kappa_hat": None, "kappa_hat_se": None, "kappa_hat_flag": "plateau not reached",
         "dynamics": {"kappa_hat": -0.003893, "kappa_hat_se": 0.00038, "n_increments": 3, "n_neurons": 2}}
    k = _kappa_line(d)
    assert "not identified" in k and "+-" not in k and "0.003893" not in k
    assert "3 increments of 2 neurons" in k and ">= 200" in k and ">= 32" in k and "plateau not reached" in k
    d["dynamics"].update(n_increments=5000, n_neurons=20)            # enough increments, too few neurons
    assert "not identified" in _kappa_line(d)
    d.update(kappa_hat=0.9, kappa_hat_se=0.5)                         # the fit has an error: it is shown
    assert "0.9 +- 0.5" in _kappa_line(d)
    d["dynamics"].update(n_neurons=64)                                # the cut qualifies and is better
    assert "-0.003893 +- 0.00038" in _kappa_line(d)


def test_phase_candidates_name_what_the_gates_leave_open():
    """A call: its phase alone; withheld only by the tempering gate on beta > 1: concentrated or
    collapsed; withheld by any other gate: None."""
    from levysde.core.status import Estimate
    from levysde.inference.check import CheckReport

    u = Estimate(float("nan"))

    def report(call, failed):
        rep = CheckReport("gate", None, None, u, u, None, None, unavailable_ks(), u)
        for g in ("records", "neurons", "stationary", "closure", "phase_odds", "tempering"):
            rep.add_gate(g, g not in failed, f"{g}: failed")
        rep.call = call
        return rep

    assert report("broad", ()).phase_candidates == ["broad"]
    assert report("concentrated", ("tempering",)).phase_candidates == ["concentrated", "collapsed"]
    assert report("concentrated", ("tempering", "stationary")).phase_candidates is None
    assert report("broad", ("tempering",)).phase_candidates is None
    assert report("concentrated", ("tempering",)).as_json()["phase_candidates"] == ["concentrated", "collapsed"]


def test_dynamics_json_gives_both_parts_of_the_roots_error(sim_run):
    """docs/calibration.md promises dynamics.se_jackknife and dynamics.se_cut in --json."""
    import math

    from levysde.inference.check import check_trajectories, dynamics_json

    with np.load(sim_run) as z:
        rep = check_trajectories(z["zeta"], z["step"], closing_loop=False, n_boot=20)
    d, j = rep.dynamics, rep.as_json()["dynamics"]
    for key in ("se_jackknife", "se_cut"):
        v = getattr(d, key)
        assert j[key] == (pytest.approx(v, rel=1e-12) if math.isfinite(v) else None), key
    if d.ok and math.isfinite(d.se_cut):
        assert j["se_jackknife"] is not None
        assert math.hypot(j["se_jackknife"], j["se_cut"]) == pytest.approx(d.beta.se, rel=1e-9)
    from dataclasses import replace
    nan = dynamics_json(replace(d, se_cut=float("nan"), se_jackknife=float("nan")))
    assert nan["se_cut"] is None and nan["se_jackknife"] is None
    json.dumps(nan, allow_nan=False)


def test_a_saturated_run_gives_the_fits_failure_as_the_parameters_reason():
    """new-user trial: every neuron masked (--variant jac), the parameters said 'n_groups = 16 exceeds
    the 8 neurons' (the first note) instead of the fit's failure, too few increments (0)."""
    from levysde.inference.check import check_trajectories

    rep = check_trajectories(np.full((40, 8), np.nan), np.arange(40.0), closing_loop=False, n_boot=20)
    assert rep.notes[0].startswith("n_groups = 16 exceeds")
    j = rep.as_json()
    for key in ("kappa_hat", "eta_g_hat", "eta_j_hat", "alpha_hat", "lam_hat"):
        assert j[key] is None and j[f"{key}_flag"].startswith("unavailable: too few increments (0)"), key


def test_untested_stationarity_and_independence_are_null_not_false(sim_run):
    """new-user trial: too few records made `stationary` False, as if the test had rejected."""
    from levysde.inference.check import check_trajectories

    with np.load(sim_run) as z:
        zeta, step = z["zeta"], z["step"]
    few = check_trajectories(zeta[-6:, :40], step[-6:], closing_loop=False, n_boot=20).as_json()
    assert few["stationary"] is None and few["stationarity"]["tested"] is False
    assert few["stationarity"]["stationary"] is None and "too few late records" in few["stationarity"]["reason"]
    assert few["gates"]["stationary"] is False and few["gate_status"]["stationary"] == "unavailable"
    full = check_trajectories(zeta, step, closing_loop=False, n_boot=20).as_json()
    assert full["stationary"] is True and full["stationarity"]["tested"] is True
    assert full["independent"] is True and full["independence"]["tested"] is True
    one = check_trajectories(zeta[:, :1], step, closing_loop=False, n_boot=20).as_json()
    assert one["independent"] is None and one["independence"]["tested"] is False
    assert one["independence"]["independent"] is None and one["independence"]["reason"]
    assert one["stationary"] is None and one["gates"]["independent"] is False


def test_text_report_says_untested(tmp_path, sim_run):
    with np.load(sim_run) as z:
        zeta, step = z["zeta"][-6:], z["step"][-6:]
    path = tmp_path / "few.npz"
    write_run(path, zeta, step)
    p = run(str(path), "--no-simulate", "--n-boot", "20")
    assert p.returncode == 0, p.stderr
    line = next(ln for ln in p.stdout.splitlines() if ln.strip().startswith("stationary"))
    assert "untested" in line and "too few late records" in line and "False" not in line


def test_a_loss_that_cannot_be_read_leaves_learned_unknown():
    from levysde.inference.check import add_run_checks, check_trajectories

    rng = np.random.default_rng(0)
    ok = {"config": {"kind": "rnn"}, "loss": np.full(8, 0.1), "trivial_loss": np.array(1.0)}
    bad = {"config": {"kind": "rnn"}, "loss": np.full(8, 0.9), "trivial_loss": np.array(1.0)}
    unreadable = {"config": {"kind": "rnn"}, "loss": np.full(8, 0.1), "trivial_loss": np.array(0.0)}
    for runs, want in (([ok], True), ([ok, unreadable], None), ([bad, unreadable], False)):
        rep = check_trajectories(rng.normal(size=(30, 40)), np.arange(30.0), n_boot=20, closing_loop=False)
        add_run_checks(rep, runs)
        assert rep.extra["learned"] is want and rep.gates["learned"].passed is (want is True), runs
        assert rep.gates["learned"].status.value == {True: "ok", False: "failed", None: "unavailable"}[want]


def test_censored_tail_without_censored_entries_equals_beta_tail():
    """beta_tail_censored follows beta_tail's rules: its threshold, >= 20 neurons, the threshold error."""
    from levysde.inference.check import check_trajectories
    from levysde.inference.checkpoint_check import add_censored_tail

    zeta = _iid_tail_zeta(40, 400, 3)[0]
    rep = check_trajectories(zeta, np.arange(40.0), closing_loop=False, n_boot=20)
    add_censored_tail(rep, np.exp(-zeta), np.zeros(zeta.shape, bool))
    bt, j = rep.beta_tail, rep.as_json()
    assert bt.ok and np.isfinite(bt.se) and rep.extra["beta_tail_se_threshold"] is not None
    assert j["beta_tail_censored"] == pytest.approx(bt.value, rel=1e-9)
    assert j["beta_tail_censored_se"] == pytest.approx(bt.se, rel=1e-9)
    assert j["beta_tail_censored_status"] == j["beta_tail_status"]
    # fewer than 20 neurons beyond the threshold: not identified, no error bar (as beta_tail)
    small = _iid_tail_zeta(400, 12, 4)[0]
    rep = check_trajectories(small, np.arange(400.0), closing_loop=False, n_boot=20)
    add_censored_tail(rep, np.exp(-small), np.zeros(small.shape, bool))
    j = rep.as_json()
    assert j["beta_tail_status"] == j["beta_tail_censored_status"] == "not identified"
    assert j["beta_tail_censored_se"] is None and "fewer than 20" in j["beta_tail_censored_flag"]
