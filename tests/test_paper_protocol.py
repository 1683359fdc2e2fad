"""The anti-collapse paper's estimators (levysde.inference.paper_protocol) against closed forms, the
censored tail estimators of levysde.stats.tails, the checkpoint_taus reader and `levysde check --from`."""
from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
from scipy import special

from levysde.inference import checkpoint_check as CC
from levysde.inference import paper_protocol as P
from levysde.io.checkpoint_taus import MAX_UNITS, read_checkpoint_taus
from levysde.stats import tails as T
from tests.helpers import call, one_line_error


def pareto_quantiles(beta, n, x_m=1.0):
    """Exact Pareto quantiles at the mid-probabilities (i - 1/2)/n: P(tau > x) = (x/x_m)^-beta."""
    p = (np.arange(1, n + 1) - 0.5) / n
    return x_m * (1.0 - p) ** (-1.0 / beta)


# --- beta_hat_tail: CCDF least squares ------------------------------------------------------------

@pytest.mark.parametrize("beta", [0.42, 1.0, 1.6])
def test_ccdf_fit_exact_pareto_quantiles(beta):
    """On exact Pareto quantiles the empirical CCDF is (x/x_m)^-beta up to the 1/(2n) offset:
    log P_hat = log(P - 1/(2n)), so the slope is -beta to O(1/(n P)) over the window."""
    n = 20000
    f = P.ccdf_tail_fit(pareto_quantiles(beta, n, x_m=3.0))
    assert f.ok and f.n_censored == 0 and f.n_units == n
    # the offset 1/(2n) in P >= 0.005 moves the slope by < 1/(n 0.005) = 1 % of beta
    assert f.beta_hat == pytest.approx(beta, rel=0.01)
    assert f.r2 > 0.999
    assert f.x_lo == pytest.approx(np.quantile(pareto_quantiles(beta, n, 3.0), 0.75))


@pytest.mark.parametrize("beta", [0.5, 1.3])
def test_ccdf_bootstrap_covers_pareto(beta):
    """Random Pareto samples: beta_hat within 4 bootstrap standard deviations of beta, and the 90 %
    interval covers beta in most of 20 samples (binomial: >= 13 of 20 has probability > 0.99 at 0.9)."""
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(20):
        tau = 2.0 * (rng.pareto(beta, size=512) + 1.0)
        b = P.ccdf_tail_bootstrap(tau, n_boot=300, seed=int(rng.integers(1 << 30)))
        assert abs(b.fit.beta_hat - beta) < 4 * b.std
        hits += b.lo <= beta <= b.hi
    assert hits >= 13


def test_ccdf_censored_reading_keeps_the_tail_dropped_reading_steepens():
    """Censor the top 4 % of an exact Pareto spectrum (tau = NaN, as the paper's files mark non-decaying
    units): the censored reading keeps P_hat(tau > x) exact at every resolved x, so it recovers beta;
    dropping them makes the CCDF fall to 0 at the largest resolved tau, a steeper fit."""
    beta, n = 0.8, 8000
    tau = pareto_quantiles(beta, n)
    tau[-int(0.04 * n):] = np.nan
    c = P.ccdf_tail_fit(tau, reading="censored")
    d = P.ccdf_tail_fit(tau, reading="dropped")
    assert c.n_censored == d.n_censored == int(0.04 * n)
    assert c.n_units == n and d.n_units == n - int(0.04 * n)
    assert math.isinf(c.x_hi)                        # the 0.995 quantile lies among the censored
    assert c.beta_hat == pytest.approx(beta, rel=0.01)
    assert d.beta_hat > 1.2 * beta


def test_ccdf_fit_refuses_and_reports():
    with pytest.raises(ValueError, match="tau must be > 0"):
        P.ccdf_tail_fit([1.0, -2.0] * 10)
    with pytest.raises(ValueError, match="reading"):
        P.ccdf_tail_fit(np.arange(1.0, 40.0), reading="ignored")
    with pytest.raises(ValueError, match="q_lo"):
        P.ccdf_tail_fit(np.arange(1.0, 40.0), q_lo=0.9, q_hi=0.5)
    f = P.ccdf_tail_fit(np.arange(1.0, 10.0))
    assert not f.ok and "need >= 16" in f.reason
    f = P.ccdf_tail_fit(np.r_[np.arange(1.0, 12.0), [np.nan] * 10], reading="dropped")
    assert not f.ok and f.n_censored == 10
    # a spectrum that is all one value has no points with P_hat > 0 in the window
    assert not P.ccdf_tail_fit(np.full(100, 5.0)).ok


def test_ccdf_bootstrap_is_reproducible_and_matches_the_single_fit():
    tau = np.random.default_rng(3).pareto(1.0, 300) + 1
    a = P.ccdf_tail_bootstrap(tau, n_boot=50, seed=5)
    b = P.ccdf_tail_bootstrap(tau, n_boot=50, seed=5)
    assert a == b
    # the vectorized rows agree with the one-row fit on every replicate: refit one replicate by hand
    rng = np.random.default_rng(5)
    rows = np.sort(np.sort(tau)[rng.integers(0, tau.size, size=(50, tau.size))], axis=1)
    assert P.ccdf_tail_fit(rows[0]).beta_hat == pytest.approx(float(P._ccdf_rows(rows[:1], 0.75, 0.995)[0][0]))


def test_ccdf_fit_matches_polyfit_on_the_window():
    """The fit equals an ordinary least-squares line through (log x, log P_hat) at the distinct tau
    in the quantile window (an independent computation with numpy.polyfit)."""
    tau = np.round(np.random.default_rng(11).pareto(0.9, 700) + 1, 2)      # ties
    f = P.ccdf_tail_fit(tau)
    s = np.sort(tau)
    lo, hi = np.quantile(s, 0.75), np.quantile(s, 0.995)
    xs = np.unique(s[(s >= lo) & (s <= hi)])
    surv = np.array([(s > x).mean() for x in xs])
    xs, surv = xs[surv > 0], surv[surv > 0]
    slope = np.polyfit(np.log(xs), np.log(surv), 1)[0]
    assert f.beta_hat == pytest.approx(-slope, rel=1e-9)


# --- kappa_tail --------------------------------------------------------------------------------

def drift_runs(kappa, n_seeds=3, R=40, H=300, sd=0.2, seed=0):
    """Unit trajectories with a constant drift kappa per epoch and Gaussian noise, checkpoints 10 epochs
    apart: every increment per epoch has mean kappa exactly."""
    rng = np.random.default_rng(seed)
    taus, eps = [], []
    for _ in range(n_seeds):
        z = rng.normal(-3.0, 1.0, H) + np.cumsum(10 * kappa + math.sqrt(10) * sd * rng.standard_normal((R, H)), axis=0)
        taus.append(np.exp(-z))
        eps.append(np.arange(R) * 10.0)
    return taus, eps


@pytest.mark.parametrize("kappa", [0.05, -0.03])
def test_kappa_tail_known_drift(kappa):
    """A known constant drift: kappa_tail within 4 of its bootstrap standard errors (interval / 3.29)."""
    taus, eps = drift_runs(kappa)
    k = P.kappa_tail(taus, eps, n_boot=300)
    se = (k.hi - k.lo) / (2 * 1.645)
    assert abs(k.kappa - kappa) < 4 * se
    assert k.restoring is (kappa > 0)
    assert k.n_censored == 0 and k.n_blocks == 3 * (math.ceil(0.35 * 40) - 1)
    # the iid error of a trimmed mean of n Gaussian increments is about sd/sqrt(n) / 0.94 (efficiency)
    assert 0.5 < se / (0.2 / math.sqrt(10) / math.sqrt(k.n_tail)) < 3.0


def test_kappa_tail_sweep_and_censoring():
    """Censored units (tau = NaN) lie in the far-left slice of the censored reading: their increments are
    unknown and counted, not averaged; the dropped reading forms its pool without them."""
    taus, eps = drift_runs(0.05, R=30, H=400, seed=1)
    cens = [t.copy() for t in taus]
    for t in cens:
        t[t > np.quantile(t, 0.97)] = np.nan          # the slowest 3 %
    kc = P.kappa_tail(cens, eps, reading="censored", n_boot=100)
    kd = P.kappa_tail(cens, eps, reading="dropped", n_boot=100)
    assert kc.n_censored > 0 and kd.n_censored == 0
    assert kc.zeta_cut < kd.zeta_cut                   # the censored units move the cut left
    sweep = P.kappa_tail_sweep(cens, eps, n_boot=50)
    assert [k.q for k in sweep] == list(P.PAPER_KAPPA_SWEEP)
    # a slice made only of censored units gives no estimate, with the reason
    allc = [np.where(np.arange(400) < 100, np.nan, t) for t in taus]
    k = P.kappa_tail(allc, eps, q=0.1, n_boot=50)
    assert math.isnan(k.kappa) and k.zeta_cut == -math.inf and "censored" in k.reason


def test_kappa_tail_refuses():
    taus, eps = drift_runs(0.05, n_seeds=1, R=5, H=50)
    with pytest.raises(ValueError, match="epoch"):
        P.kappa_tail(taus, [np.arange(4.0)])
    with pytest.raises(ValueError, match="q"):
        P.kappa_tail(taus, eps, q=0.7)
    with pytest.raises(ValueError, match="R >= 2"):
        P.kappa_tail([np.ones((1, 5))], [np.zeros(1)])
    k = P.kappa_tail(taus, eps, n_boot=10)
    assert math.isnan(k.kappa) and "< 200" in k.reason


# --- envelope, window, phase -------------------------------------------------------------------

def test_tau_envelope_closed_forms():
    lags = np.array([1.0, 10.0, 100.0])
    _, f = P.tau_envelope([20.0] * 5, lags)
    assert f == pytest.approx(np.exp(-lags / 20.0), rel=1e-14)         # a point mass: exp(-l/tau0)
    _, f = P.tau_envelope([20.0, 20.0, np.nan], lags)                    # a censored unit adds 1/3
    assert f == pytest.approx(2 / 3 * np.exp(-lags / 20.0) + 1 / 3, rel=1e-14)
    _, f = P.tau_envelope([20.0, 20.0, np.nan], lags, reading="dropped")
    assert f == pytest.approx(np.exp(-lags / 20.0), rel=1e-14)
    # Pareto p(tau) = b tau^(-1-b) on tau >= 1: f(l) = b l^-b gamma_lower(b, l) (docs/specification.md §5)
    b = 0.7
    lag, f = P.tau_envelope(pareto_quantiles(b, 200_000), np.array([5.0, 50.0]))
    exact = b * lag ** -b * special.gamma(b) * special.gammainc(b, lag)
    assert f == pytest.approx(exact, rel=2e-3)
    assert P.PAPER_LAGS[0] == 4 and P.PAPER_LAGS[-1] == 384 and P.PAPER_LAGS.size == 128
    with pytest.raises(ValueError, match="no unit left"):
        P.tau_envelope([np.nan], reading="dropped")


def test_envelope_models_recover_exact_forms():
    lags = P.PAPER_LAGS
    m = P.envelope_models(lags, 2.0 * lags ** -0.45 * np.exp(-lags / 150.0))
    assert m.winner == "tempered"
    assert m.beta_env == pytest.approx(0.45, abs=1e-9) and m.tau_max == pytest.approx(150.0, rel=1e-9)
    assert m.ell_star == pytest.approx(0.45 * 150.0, rel=1e-9)
    m = P.envelope_models(lags, np.exp(-lags / 40.0))
    assert m.exp_tau == pytest.approx(40.0, rel=1e-9) and m.winner in ("exponential", "tempered")
    assert not P.power_law_window(m).passed
    m = P.envelope_models(lags, lags ** -0.8)
    assert m.beta_power == pytest.approx(0.8, abs=1e-9)
    w = P.power_law_window(m)
    assert w.passed and w.runs_p == 1.0                 # an exact fit: no residual structure
    with pytest.raises(ValueError, match="lags"):
        P.envelope_models(lags[:5], lags[:5] ** -1.0)


def test_runs_test_closed_form():
    # 10 + and 10 - alternating: R = 20, E R = 11, Var R = 2*100*(200-20)/(400*19) = 4.7368...
    runs, z, p = P.runs_test([1, -1] * 10)
    assert runs == 20 and z == pytest.approx((20 - 11) / math.sqrt(36000 / 7600))
    assert p == pytest.approx(math.erfc(abs(z) / math.sqrt(2)))
    runs, z, _ = P.runs_test([1] * 10 + [-1] * 10)
    assert runs == 2 and z < -3
    assert all(math.isnan(v) for v in P.runs_test([1.0] * 12))
    assert all(math.isnan(v) for v in P.runs_test([1.0, -1.0]))


@pytest.mark.parametrize("args,label", [
    ((False, 0.99, 0.2, 0.5), "collapsed"),
    ((True, 0.85, 0.2, 0.5), "anti-collapsed (unresolved beta)"),
    ((True, 0.95, math.nan, 0.5), "anti-collapsed (unresolved beta)"),
    ((True, 0.95, 1.1, 1.9), "concentrated anti-collapse"),
    ((True, 0.95, 0.2, 0.9), "broad anti-collapse"),
    ((True, 0.95, 0.8, 1.2), "boundary (soft classification)"),
])
def test_phase_label_rule(args, label):
    assert P.phase_label(*args) == label and label in P.PHASE_LABELS


def test_paper_estimates_both_readings():
    rng = np.random.default_rng(2)
    taus = []
    for _ in range(2):
        t = 5.0 * (rng.pareto(0.6, size=(8, 512)) + 1.0)
        t[:, :10] = np.nan                          # 10 non-decaying units per checkpoint
        taus.append(t)
    rep = P.paper_estimates(taus, [np.arange(0.0, 320.0, 40.0)] * 2, n_boot_beta=100, n_boot_kappa=50)
    assert rep.n_censored_final == [10, 10]
    assert set(rep.seeds) == set(P.READINGS)
    assert rep.beta_hat["dropped"] > rep.beta_hat["censored"]
    assert all(s.n_censored == 10 for s in rep.seeds["censored"])
    j = rep.as_json()
    assert j["readings"]["censored"]["phase"] in (*P.PHASE_LABELS, "mixed")


# --- levysde's tail estimators with right-censoring -------------------------------------------------

def test_censored_hill_is_the_einmahl_estimator_and_recovers_the_rate():
    """Exponential X (rate b) right-censored by an independent exponential C (rate c): observed
    Z = min(X, C). The censored MLE #uncensored / sum(Z - u) estimates b; the Hill rate of the uncensored
    alone estimates b + c (min of exponentials); and it equals Einmahl et al.'s Hill / p_hat exactly."""
    rng = np.random.default_rng(4)
    b, c, n = 0.8, 0.3, 200_000
    X, C = rng.exponential(1 / b, n), rng.exponential(1 / c, n)
    Z, cens = np.minimum(X, C), C < X
    u = 0.5
    est = T.hill_rate(Z, u, censored=cens)
    k_unc = int(((Z > u) & ~cens).sum())
    assert abs(est - b) < 4 * b / math.sqrt(k_unc)
    gamma_hill = np.mean(Z[Z > u] - u)
    p_hat = np.mean(~cens[Z > u])
    assert est == pytest.approx(p_hat / gamma_hill, rel=1e-12)
    drop = T.hill_rate(Z[~cens], u)
    assert abs(drop - (b + c)) < 4 * (b + c) / math.sqrt(k_unc)
    t = T.tail_from_samples(Z, u, groups=np.arange(n) % 20, censored=cens)
    assert t.beta_hat == pytest.approx(est, rel=1e-12) and t.n_censored == int((cens & (Z > u)).sum())
    assert abs(t.beta_hat - b) < 4 * t.se
    f = T.tail_fit(-Z, u=u, censored=cens)
    assert f.beta == pytest.approx(est, rel=1e-12) and f.n_censored == t.n_censored
    # P(Z > u) = e^{-(b + c) u}: the amplitude uses all exceedances, A = beta p e^{beta u}
    assert f.A == pytest.approx(est * np.mean(Z > u) * math.exp(est * u), rel=1e-12)
    with pytest.raises(ValueError, match="boolean"):
        T.hill_rate(Z, u, censored=cens.astype(int))


def test_tail_readings_of_a_censored_spectrum():
    rng = np.random.default_rng(6)
    tau = rng.pareto(0.9, size=(6, 4000)) + 1.0
    cut = np.quantile(tau, 0.97)
    cens = tau > cut
    r = CC.tail_readings(tau, cens, tau_censor=cut)
    # censored at the true censoring point: the censored MLE is consistent for beta
    assert abs(r["censored"].value - 0.9) < 4 * r["censored"].se
    assert r["dropped"].value > r["censored"].value + 4 * r["dropped"].se
    assert "censored entries beyond u" in r["censored"].flag


# --- the checkpoint_taus reader ---------------------------------------------------------------------

def write_taus(d, tau, epochs, width=4):
    os.makedirs(d, exist_ok=True)
    for e, t in zip(epochs, tau, strict=True):
        np.save(os.path.join(d, f"ckpt_{int(e):0{width}d}_taus.npy"), np.asarray(t))
    return d


def test_reader_roundtrip_and_censoring(tmp_path):
    tau = np.abs(np.random.default_rng(0).normal(50, 10, size=(3, 8)))
    tau[1, 2] = np.nan
    tau[2, 5] = np.inf
    d = write_taus(tmp_path / "m" / "checkpoint_taus", tau, [1, 40, 80])
    (tmp_path / "m" / "checkpoint_taus" / "ckpt_0040_taus.csv").write_text("unit_id,tau\n")
    for path in (d, tmp_path / "m"):
        ct = read_checkpoint_taus(path)
        assert ct.epoch.tolist() == [1, 40, 80] and ct.n_censored.tolist() == [0, 1, 1]
        assert np.isinf(ct.tau[1, 2]) and np.isnan(ct.zeta[2, 5])
        fin = ~ct.censored
        assert np.array_equal(ct.zeta[fin], -np.log(tau[fin]))
    # the paper's estimators take what the reader returns
    k = P.kappa_tail(ct, n_boot=10, min_tail=1)
    assert k.n_blocks == 2 and k.n_censored >= 1
    with pytest.raises(ValueError, match="epoch is required"):
        P.kappa_tail(tau)
    write_taus(tmp_path / "f32", tau.astype(np.float32), [1, 2, 3])
    assert read_checkpoint_taus(tmp_path / "f32").tau.dtype == np.float64


@pytest.mark.parametrize("case,match", [
    ("missing", "no such directory"),
    ("file", "not a directory"),
    ("empty", "0 ckpt_"),
    ("int", "dtype"),
    ("object", "dtype object"),
    ("2d", "1-d"),
    ("sizes", "one network per directory"),
    ("negative", r"1 of 2 tau values are <= 0 \(the first: unit 1, tau = -2\); a time scale must be in \(0, inf\)"),
    ("duplicate", "two files for epoch 40"),
    ("garbage", "not a .npy file"),
    ("truncated", "cannot read"),
    ("huge", f"1 to {MAX_UNITS}"),
])
def test_reader_refuses(tmp_path, case, match):
    d = tmp_path / "c"
    d.mkdir()
    ok = np.array([1.0, 2.0, 3.0])
    if case == "missing":
        d = tmp_path / "nope"
    elif case == "file":
        d = tmp_path / "f.npy"
        np.save(d, ok)
    elif case == "int":
        np.save(d / "ckpt_0001_taus.npy", np.array([1, 2, 3]))
    elif case == "object":
        np.save(d / "ckpt_0001_taus.npy", np.array([1.0, None], dtype=object), allow_pickle=True)
    elif case == "2d":
        np.save(d / "ckpt_0001_taus.npy", np.ones((2, 3)))
    elif case == "sizes":
        np.save(d / "ckpt_0001_taus.npy", ok)
        np.save(d / "ckpt_0002_taus.npy", np.ones(4))
    elif case == "negative":
        np.save(d / "ckpt_0001_taus.npy", np.array([1.0, -2.0]))
    elif case == "duplicate":
        np.save(d / "ckpt_0040_taus.npy", ok)
        np.save(d / "ckpt_040_taus.npy", ok)
    elif case == "garbage":
        (d / "ckpt_0001_taus.npy").write_bytes(b"not numpy at all")
    elif case == "truncated":
        np.save(d / "ckpt_0001_taus.npy", np.ones(1000))
        raw = (d / "ckpt_0001_taus.npy").read_bytes()
        (d / "ckpt_0001_taus.npy").write_bytes(raw[:300])
    elif case == "huge":
        # a header that claims 10^12 units and no data: refused from the header, nothing allocated
        with open(d / "ckpt_0001_taus.npy", "wb") as fh:
            np.lib.format.write_array_header_1_0(fh, {"descr": "<f8", "fortran_order": False,
                                                      "shape": (10**12,)})
    with pytest.raises(ValueError, match=match):
        read_checkpoint_taus(d)


# --- levysde check --from ---------------------------------------------------------------------------

def sde_checkpoints(R=40, H=96, seed=0):
    """zeta of independent OU-like units with heavy-ish noise, tau = e^-zeta, some units censored."""
    rng = np.random.default_rng(seed)
    z = np.empty((R, H))
    z[0] = rng.normal(-4, 0.5, H)
    for r in range(1, R):
        z[r] = z[r - 1] - 0.3 * (z[r - 1] + 4) + 0.4 * rng.standard_t(3, H)
    tau = np.exp(-z)
    tau[-5:, :3] = np.nan
    return tau


def test_check_from_checkpoint_taus(tmp_path, capsys):
    d = write_taus(tmp_path / "checkpoint_taus", sde_checkpoints(), np.r_[1, np.arange(1, 40) * 40])
    rep = CC.check_checkpoint_taus(d, closing_loop=False, n_boot=20)
    assert rep.extra["n_censored_final"] == 3 and rep.extra["n_units"] == 96
    assert rep.extra["n_censored_late"] == 15 and rep.extra["record_interval_epochs"] == 40
    assert rep.phase is None and any("hold no loss" in w for w in rep.withheld)
    assert "beta_tail_censored" in rep.as_json()
    rc, out, err = call(capsys, "check", "--from", str(d), "--no-simulate", "--n-boot", "20")
    assert rc == 0, err
    assert "checkpoint_taus: 96 units" in out and "beta (tail, cens)" in out and "censored" in out
    # no loss in the files: whether it learned is unknown, not "no" (the gate still withholds the phase)
    assert rep.extra["learned"] is None and rep.gates["learned"].status.value == "unavailable"
    assert "learned          unknown" in out and "learned          no" not in out
    rc, out, err = call(capsys, "check", "--from", str(d), "--no-simulate", "--n-boot", "20", "--json")
    j = json.loads(out)
    assert j["learned"] is None and j["gates"]["learned"] is False and j["phase"] is None
    rc, out, err = call(capsys, "check", "--from", str(tmp_path), "--no-simulate", "--n-boot", "20",
                        "--loss-ratio", "0.2", "--json")
    assert rc == 0, err
    assert '"n_censored_final": 3' in out and '"learned": true' in out
    pytest.importorskip("matplotlib")
    rc, out, err = call(capsys, "check", "--from", str(d), "--no-simulate", "--n-boot", "20", "--plot",
                        tmp_path / "c.png")
    assert rc == 0, err
    assert (tmp_path / "c.png").stat().st_size > 1000


def test_check_from_refuses(tmp_path, capsys):
    d = write_taus(tmp_path / "checkpoint_taus", sde_checkpoints(R=3), [1, 40, 80])
    rc, _, err = call(capsys, "check")
    one_line_error(rc, err, "--from")
    rc, _, err = call(capsys, "check", "x.npz", "--from", str(d))
    one_line_error(rc, err, "one of them")
    rc, _, err = call(capsys, "check", "--from", str(tmp_path / "none"))
    one_line_error(rc, err, "no such directory")
    rc, _, err = call(capsys, "check", "--from", str(d), "--variant", "jac")
    one_line_error(rc, err, "--variant")
    one = write_taus(tmp_path / "one", sde_checkpoints(R=1), [1])
    rc, _, err = call(capsys, "check", "--from", str(one))
    one_line_error(rc, err, "need at least 3")


def test_check_from_two_checkpoints_is_refused_up_front(tmp_path, capsys):
    """Two records give one increment per unit: the SDE fit needs 3 records, so the directory is
    refused before any work, in one line naming it and the count required."""
    d = write_taus(tmp_path / "checkpoint_taus", sde_checkpoints(R=2), [1, 40])
    rc, out, err = call(capsys, "check", "--from", str(d), "--no-simulate")
    one_line_error(rc, err, f"{d}: 2 ckpt_<epoch>_taus.npy file(s); need at least 3")
    assert out == ""
    with pytest.raises(ValueError, match="need at least 3"):
        CC.check_checkpoint_taus(d, closing_loop=False)
    # a final file without an epoch is not a record, and the error says so
    np.save(d / "ckpt_final_taus.npy", sde_checkpoints(R=3)[-1])
    rc, out, err = call(capsys, "check", "--from", str(d), "--no-simulate")
    one_line_error(rc, err, "2 ckpt_<epoch>_taus.npy file(s) (ckpt_final_taus.npy not counted: no epoch in the name)")


def test_check_from_nonpositive_tau_names_the_file_and_the_count(tmp_path, capsys):
    tau = sde_checkpoints(R=4, H=10)
    tau[2, [3, 7]] = [-1.5, 0.0]
    tau[3, 1] = -4.0
    d = write_taus(tmp_path / "checkpoint_taus", tau, [1, 2, 3, 4])
    rc, _, err = call(capsys, "check", "--from", str(d), "--no-simulate")
    one_line_error(rc, err, f"{d / 'ckpt_0003_taus.npy'}: 2 of 10 tau values are <= 0 (the first: unit 3, tau = "
                            f"-1.5); 1 other file(s) have such values too; a time scale must be in (0, inf) steps")
    assert "np.float64" not in err and "array(" not in err


def test_check_from_does_not_use_a_final_file_without_epoch_and_says_so(tmp_path, capsys):
    """ckpt_final_taus.npy has no epoch, so no place on the time axis: it is not a record (the
    records are exactly the ckpt_<epoch> files) and a note names it."""
    tau = sde_checkpoints(R=12, H=64)
    epochs = np.arange(12) * 40 + 1
    d = write_taus(tmp_path / "checkpoint_taus", tau, epochs)
    np.save(d / "ckpt_final_taus.npy", 2 * tau[-1])
    ct = read_checkpoint_taus(d)
    assert ct.epoch.tolist() == epochs.tolist() and ct.ignored == ("ckpt_final_taus.npy",)
    fin = np.isfinite(tau)
    assert np.array_equal(ct.tau[fin], tau[fin])
    rep = CC.check_checkpoint_taus(d, closing_loop=False, n_boot=20)
    assert any("not used: ckpt_final_taus.npy" in n for n in rep.notes)
    rc, out, err = call(capsys, "check", "--from", str(d), "--no-simulate", "--n-boot", "20")
    assert rc == 0, err
    assert "note: not used: ckpt_final_taus.npy" in out and "epochs 1..441" in out
    (d / "ckpt_final_taus.npy").unlink()
    assert read_checkpoint_taus(d).ignored == ()


def test_cli_paper(tmp_path, capsys):
    """`levysde paper`: one checkpoint_taus directory per seed; both readings, beside levysde's tail rate."""
    dirs = []
    for s in range(2):
        tau = sde_checkpoints(R=12, H=128, seed=s)
        dirs.append(str(write_taus(tmp_path / f"seed_{s}" / "checkpoint_taus", tau, np.arange(12) * 40 + 1)))
    rc, out, err = call(capsys, "paper", *dirs, "--n-boot-beta", "50", "--n-boot-kappa", "20")
    assert rc == 0, err
    assert out.count("censored  beta_hat") == 3 and out.count("dropped   beta_hat") == 3
    assert "levysde beta_tail" in out and "kappa_tail" in out and "6 unit(s) did not decay" in out
    rc, out, err = call(capsys, "paper", str(tmp_path / "seed_0"), "--n-boot-beta", "50", "--n-boot-kappa", "20",
                        "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["n_censored_final"] == [3] and set(d["readings"]) == {"censored", "dropped"}
    assert d["levysde_beta_tail"][0]["censored"]["beta_tail_status"] == "ok"
    rc, _, err = call(capsys, "paper", dirs[0], "--q-lo", "0.9", "--q-hi", "0.8")
    one_line_error(rc, err, "--q-lo")
    rc, _, err = call(capsys, "paper", str(tmp_path / "none"))
    one_line_error(rc, err, "no such directory")


def test_check_run_jac_variant_reports_the_censored_reading(tmp_path, capsys):
    """A run file's first-order zeta_jac has NaN where a neuron was masked as expanding (no finite decay
    time): `levysde check --variant jac` counts them as censored and adds the censored tail reading."""
    from levysde.io.runfile import save_run

    tau = sde_checkpoints(R=40, H=96)
    zeta = -np.log(tau)                       # NaN where censored
    R, H = zeta.shape
    path = str(tmp_path / "run.npz")
    save_run(path, {"zeta": np.nan_to_num(zeta, nan=-9.0), "zeta_jac": zeta, "step": np.arange(R) * 10,
                    "Lambda": np.ones((R, H)), "loss": np.full(R, 0.1), "lags": np.arange(1.0, 4.0),
                    "envelope": np.full((R, 3), 0.5), "trivial_loss": np.array(1.0)},
             {"kind": "rnn", "model": "diaggate"})
    rep = CC.check_run_censored(path, variant="jac", closing_loop=False, n_boot=20)
    assert rep.extra["n_censored_final"] == 3 and rep.extra["n_censored_late"] == 15
    assert rep.extra["beta_tail_censored_status"] == "ok"
    rep = CC.check_run_censored(path, variant="gate", closing_loop=False, n_boot=20)
    assert rep.extra["n_censored_final"] == 0
    rc, out, err = call(capsys, "check", path, "--variant", "jac", "--no-simulate", "--n-boot", "20")
    assert rc == 0, err
    assert "beta (tail, cens)" in out and "masked as expanding" in out


@pytest.fixture(scope="module")
def window_run(tmp_path_factory):
    """A tiny real run of the cpu-quick profile (DiagGate, 12 AdamW steps, zeta_window recorded)."""
    pytest.importorskip("torch")
    from levysde.rnn.presets import preset_config
    from levysde.rnn.trainer import TrainConfig, train

    path = tmp_path_factory.mktemp("window") / "diaggate_s47.npz"
    train(TrainConfig(**preset_config("cpu-quick", "diaggate", 47)), str(path))
    return path


def test_check_run_window_variant_on_a_real_run(window_run, tmp_path, capsys):
    """`--variant window` checks zeta_window (the paper's time scale); its NaN entries (non-decaying
    units) are right-censored like the masked entries of the jac variant."""
    from levysde.io.runfile import load_run, save_run

    run = load_run(str(window_run))
    zw = np.asarray(run["zeta_window"], float)
    rep = CC.check_run_censored(window_run, variant="window", closing_loop=False, n_boot=20)
    d = rep.as_json()
    assert d["variant"] == "window" and d["phase"] is None
    assert d["n_censored_final"] == int(np.isnan(zw[-1]).sum())
    assert d["zeta_spread"]["std"] == pytest.approx(np.nanstd(zw[-1], ddof=1), rel=1e-9)  # zeta_window
    assert "beta_tail_censored" in d
    # non-decaying units in the late records: counted as censored, with the note
    arrays = {k: v for k, v in run.items() if k != "config"}
    arrays["zeta_window"] = zw.copy()
    arrays["zeta_window"][-2:, :3] = np.nan
    cens = tmp_path / "censored.npz"
    save_run(str(cens), arrays, run["config"])
    rep = CC.check_run_censored(cens, variant="window", closing_loop=False, n_boot=20)
    assert rep.extra["n_censored_final"] == 3 and rep.extra["n_censored_late"] == 6
    assert any("transport slope b_q >= 0" in n for n in rep.notes)
    rc, out, err = call(capsys, "check", str(cens), "--variant", "window", "--no-simulate", "--n-boot", "20")
    assert rc == 0, err
    assert "variant=window" in out and "beta (tail, cens)" in out


def test_check_run_window_variant_refuses_a_run_without_zeta_window(window_run, tmp_path, capsys):
    from levysde.inference.check import check_run
    from levysde.io.runfile import load_run, save_run

    run = load_run(str(window_run))
    path = tmp_path / "no_window.npz"
    save_run(str(path), {k: v for k, v in run.items() if k not in ("config", "zeta_window")}, run["config"])
    for fn in (check_run, CC.check_run_censored):
        with pytest.raises(ValueError, match=r"^variant='window' needs the run file's 'zeta_window'") as exc:
            fn(path, variant="window", closing_loop=False, n_boot=20)
        assert "\n" not in str(exc.value) and str(path) in str(exc.value)
    rc, _, err = call(capsys, "check", str(path), "--variant", "window", "--no-simulate")
    one_line_error(rc, err, "variant='window'")
    rc, _, err = call(capsys, "check", str(path), "--variant", "windows")
    one_line_error(rc, err, "--variant")
