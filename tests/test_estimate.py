"""SDE-fitting estimators (docs/specification.md §8) recover the parameters of trajectories simulated
with levysde's own simulator, and flag what they cannot estimate."""
import math

import numpy as np
import pytest

import levysde
from levysde.inference.drift_fit import increments
from levysde.inference.noise_fit import estimate_noise
from levysde.inference.sde_fit import fit_sde, predict
from levysde.inference.spectrum import spread
from levysde.simulation import SaturatingDrift, simulate

# Gaussian core resolvable at the record step (dt = 0.01): eta_G dominates the small scales
P = dict(eta_g=0.5, kappa=1.0, alpha=0.8, lam=1.0)
#: the same model for simulate(), whose drift carries the plateau kappa
SIM = dict(eta_g=0.5, alpha=0.8, lam=1.0, drift=SaturatingDrift(kappa=1.0))


def trajectories(eta_j, seed=1):
    res = simulate(eta_j, particles=600, t_end=150.0, burn_in=30.0, dt=0.01, seed=seed,
                   traj_particles=600, traj_every=1, **SIM)
    return res.traj_zeta.T, res.traj_t


@pytest.fixture(scope="module")
def anti_collapse():
    zeta, t = trajectories(3.0)
    fit = fit_sde(zeta, t, late_fraction=1.0)
    return fit, predict(fit, n_boot=300, seed=0)


@pytest.fixture(scope="module")
def collapsed():
    zeta, t = trajectories(0.5)
    fit = fit_sde(zeta, t, late_fraction=1.0)
    return fit, predict(fit, n_boot=300, seed=0)


def within(est, truth, n_se=4.0, rel=0.0):
    assert est.ok, est.flag
    assert abs(est.value - truth) <= n_se * est.se + rel * abs(truth), (est, truth)


def test_anti_collapse_parameters_recovered(anti_collapse):
    fit, pred = anti_collapse
    n = fit.noise
    within(n.eta_g, 0.5)
    within(n.eta_j, 3.0)
    within(n.alpha, 0.8)
    within(n.lam, 1.0)
    # the plateau is reached only far left: allow the residual tanh bias (documented flag otherwise)
    within(fit.kappa, 1.0, n_se=3, rel=0.03)
    beta_true = float(levysde.beta_star(3.0, **P))
    assert pred.phase == "broad" and pred.phase_probabilities.get("broad", 0) > 0.9
    within(pred.beta, beta_true, n_se=3, rel=0.03)


def test_collapsed_case(collapsed):
    fit, pred = collapsed
    n = fit.noise
    within(n.eta_g, 0.5)
    within(n.eta_j, 0.5)
    within(n.alpha, 0.8)
    assert pred.phase == "collapsed"
    assert not pred.beta.ok and "collapsed" in pred.beta.flag
    # the true parameters are collapsed too
    assert levysde.classify(0.5, **P).phase == "collapsed"


def test_no_jumps_reported_for_gaussian_noise():
    res = simulate(0.0, particles=300, t_end=80.0, burn_in=20.0, dt=0.01, seed=4,
                   traj_particles=300, traj_every=1, **SIM)
    fit = fit_sde(res.traj_zeta.T, res.traj_t, late_fraction=1.0)
    n = fit.noise
    assert n.eta_j.value == 0.0 and "no jumps detected" in n.eta_j.flag
    assert not n.alpha.ok and not n.lam.ok
    within(n.eta_g, 0.5)
    # Gaussian tail rate kappa/eta_G
    pred = predict(fit, n_boot=100)
    assert pred.beta.ok and abs(pred.beta.value - fit.kappa.value / n.eta_g.value) < 1e-9


def test_ecf_fit_on_exact_increments():
    """Independent of the drift code: i.i.d. increments from the exact sampler. The cut is a tenth
    of default_eps: at the default cut the Gaussian stand-in for the small jumps is a visible
    share of J_dt (docs/simulate.md "Bias"), so the sample is not the CTS law the ECF fit assumes
    (measured at the default cut over 10 seeds: eta_G_hat biased by about +2 SE, alpha_hat low)."""
    from levysde.simulation import default_eps, sample_increments

    dt = 0.01
    eps = 0.1 * default_eps(dt, eta_j=2.0, alpha=1.3)
    x = sample_increments(1_000_000, dt, alpha=1.3, lam=2.0, eta_j=2.0, eta_g=0.4, seed=7, eps=eps)
    n = estimate_noise(x, dt)
    within(n.eta_g, 0.4)
    within(n.eta_j, 2.0)
    within(n.alpha, 1.3)
    within(n.lam, 2.0)


def test_constant_and_short_input_are_flagged_not_crashing():
    # ConstGate: zeta constant in time
    zeta = np.tile(np.linspace(-2, -1, 16), (50, 1))
    step = np.arange(50.0)
    fit = fit_sde(zeta, step)
    assert not fit.kappa.ok and "does not move" in fit.kappa.flag
    assert fit.noise.eta_g.value == 0.0 and "does not move" in fit.noise.eta_g.flag
    pred = predict(fit)
    assert pred.phase == "unavailable" and not pred.beta.ok and pred.beta.flag
    assert pred.status is levysde.Status.UNAVAILABLE and fit.kappa.status is levysde.Status.UNAVAILABLE
    with pytest.raises(ValueError, match="records"):
        fit_sde(zeta[:2], step[:2])
    with pytest.raises(ValueError, match="strictly increasing"):
        increments(zeta, np.zeros(50))
    n = estimate_noise(np.zeros(100), 1.0)
    assert n.eta_g.value == 0.0 and "does not move" in n.eta_g.flag
    s = spread(np.full((3, 4), np.nan))
    assert s.n == 0 and math.isnan(s.std)


def test_spread_of_known_sample():
    z = np.random.default_rng(0).standard_normal(200_000)
    s = spread(z)
    assert abs(s.std - 1) < 0.01 and abs(s.iqr - 1.3489795) < 0.02
    assert abs(s.decades - 2 * 2.3263479 / math.log(10)) < 0.02


def test_saturating_one_step_is_a_gauss_newton_step():
    """The linear jackknife's replicate fit: one Gauss-Newton step converges quadratically to the
    known parameters on noise-free data, and leaves the least-squares optimum where it is."""
    from levysde.inference.drift_fit import fit_saturating, saturating_form

    c = np.linspace(-6.0, 0.5, 36)
    truth = np.array([0.7, math.log(0.5), -0.3])                  # kappa, log width, z0
    F = saturating_form(c, truth[0], math.exp(truth[1]), truth[2])
    se = np.full(c.size, 0.05)
    errs = []
    for h in (1.0, 0.5):
        start = truth + h * np.array([0.02, 0.05, -0.03])
        r = fit_saturating(c, F, se, start=tuple(start), one_step=True)
        errs.append((np.linalg.norm(start - truth), np.linalg.norm(np.array(r["x"]) - truth)))
    assert errs[0][1] < 0.1 * errs[0][0], errs
    assert errs[1][1] / errs[0][1] < 0.35, errs                   # quadratic: half the start error, ~1/4 after
    rng = np.random.default_rng(5)
    noisy = F + se * rng.standard_normal(c.size)
    full = fit_saturating(c, noisy, se)
    again = fit_saturating(c, noisy, se, start=full["x"], one_step=True)
    assert np.allclose(again["x"], full["x"], rtol=0, atol=1e-6) and again["chi2"] == pytest.approx(full["chi2"])
    with pytest.raises(ValueError, match="start"):
        fit_saturating(c, F, se, one_step=True)


def test_step_drift_is_flagged_at_the_edge_without_an_error():
    """A step (width -> 0) does not identify the saturating form's plateau: flagged, no error."""
    from levysde.core.status import Status
    from levysde.inference.drift_fit import fit_saturating, kappa_flag

    c = np.linspace(-6.0, 0.5, 36)
    se = np.full(c.size, 0.01)
    r = fit_saturating(c, 0.7 * np.sign(-0.27 - c) + se * np.random.default_rng(2).standard_normal(c.size), se)
    flag = kappa_flag(r, 0.01)
    assert r["width_at_edge"] and flag.status is Status.AT_BOUND and not flag.status.identified


def test_alpha_not_identified_when_lam_unresolved_or_eta_g_at_zero():
    from levysde.core.status import Status
    from levysde.inference.noise_fit import edge_flags

    rng_l = (math.log(0.01), math.log(1e3))
    assert edge_flags(1.2, 2.0, 0.5, rng_l, 0.1) == (None, None)
    a, lf = edge_flags(1.2, 2.0, 1.5, rng_l, 0.1)                 # lam < 2 se: cut-off unresolved
    assert lf.status is Status.AT_BOUND and a.status is Status.NOT_IDENTIFIED
    a, lf = edge_flags(1.2, 2.0, 0.5, rng_l, 0.0)                 # eta_G at its bound 0
    assert lf is None and a.status is Status.NOT_IDENTIFIED and "eta_G" in a.message
    assert edge_flags(0.05, 2.0, 0.5, rng_l, 0.1)[0].status is Status.AT_BOUND


def test_jump_law_not_identified_when_eta_j_unresolved_or_alpha_interval_leaves_the_range():
    """issue 11 review: alpha_hat 0.22 +- 0.45 with eta_J_hat 13.9 +- 52 got a phase. The rule: the
    jump law is identified only when eta_J_hat > 2 se and alpha_hat +- 2 se lies inside ALPHA_RANGE."""
    from levysde.core.status import Status
    from levysde.inference.noise_fit import ALPHA_RANGE, edge_flags

    rng_l = (math.log(0.01), math.log(1e3))
    kw = dict(alpha_se=0.2, eta_j=3.0, eta_j_se=0.5)
    assert edge_flags(1.0, 2.0, 0.5, rng_l, 0.1, **kw) == (None, None)
    a, lf = edge_flags(0.2176, 2.0, 0.5, rng_l, 0.1, alpha_se=0.45, eta_j=13.87, eta_j_se=52.0)
    assert lf is None and a.status is Status.NOT_IDENTIFIED and "eta_J" in a.message
    a, _ = edge_flags(1.0, 2.0, 0.5, rng_l, 0.1, alpha_se=0.2, eta_j=1.0, eta_j_se=0.5)    # eta_J exactly 2 se
    assert a.status is Status.NOT_IDENTIFIED
    lo, hi = ALPHA_RANGE
    for alpha, se in ((0.32, 1.21), (lo + 0.1, 0.051), (hi - 0.1, 0.051)):           # interval crosses an end
        a, _ = edge_flags(alpha, 2.0, 0.5, rng_l, 0.1, alpha_se=se, eta_j=3.0, eta_j_se=0.5)
        assert a.status is Status.NOT_IDENTIFIED and "leaves the fitted range" in a.message, (alpha, se)
    for alpha, se in ((lo + 0.1, 0.049), (hi - 0.1, 0.049)):                         # just inside
        assert edge_flags(alpha, 2.0, 0.5, rng_l, 0.1, alpha_se=se, eta_j=3.0, eta_j_se=0.5)[0] is None
    # NaN errors skip the tests (the gate then fails on the missing error instead)
    assert edge_flags(0.3, 2.0, 0.5, rng_l, 0.1)[0] is None


def _euler_saturating(Q, R, seed, kappa=1.0, width=1.0, eta_g=1.0, dt=0.1, burn=300):
    """Euler chain dZ = kappa tanh(-Z/width) dt + sqrt(2 eta_G dt) N(0,1) (neurons independent):
    E[dZ | Z]/dt is exactly the saturating drift, so kappa is known without approximation."""
    rng = np.random.default_rng(seed)
    z = rng.normal(0.0, 2.0, Q)
    out = np.empty((R, Q))
    for r in range(burn + R):
        z = z + kappa * np.tanh(-z / width) * dt + math.sqrt(2 * eta_g * dt) * rng.standard_normal(Q)
        if r >= burn:
            out[r - burn] = z
    return out, np.arange(R) * dt


@pytest.mark.slow
def test_kappa_jackknife_error_matches_its_sampling_spread():
    """Over 40 independent data sets with known kappa = 1: the neuron jackknife error of kappa_hat
    has the size of kappa_hat's actual spread, and +-1, +-2 se cover the truth about as a t_15 law
    says (0.667, 0.936); the plateau fit's errors are a little conservative (docs/calibration.md)."""
    ks, ses, z = [], [], []
    for seed in range(40):
        zeta, t = _euler_saturating(96, 120, 100 + seed)
        fit = fit_sde(zeta, t, late_fraction=1.0)
        k = fit.kappa
        assert k.ok
        if math.isfinite(k.se):
            ks.append(k.value)
            ses.append(k.se)
            # the interval is kappa_hat exp(+-log_se): the standardized error is on the log scale
            assert k.se == pytest.approx(k.value * k.log_se, rel=1e-12)
            lo, hi = k.interval(1.0)
            assert lo == pytest.approx(k.value * math.exp(-k.log_se))
            assert hi == pytest.approx(k.value * math.exp(k.log_se))
            z.append(math.log(k.value) / k.log_se)
    ks, ses, z = np.array(ks), np.array(ses), np.array(z)
    assert ks.size >= 35
    # kappa_hat's sampling law has heavy tails (the kappa-width ridge): compare robust sizes; the
    # median of 40 errors and the MAD of 40 estimates are each known to ~ +-15 % (1 sd)
    ratio = np.median(ses) / (1.4826 * np.median(np.abs(ks - np.median(ks))))
    assert 0.7 < ratio < 1.8, ratio
    # binomial sd over 40 sets: 0.075 (1 sigma), 0.04 (2 sigma)
    assert np.mean(np.abs(z) <= 1) >= 0.5 and np.mean(np.abs(z) <= 2) >= 0.83, z


def test_predict_without_error_when_a_replicate_has_no_plateau():
    """A neuron-group replicate with kappa <= 0 has no beta*: the prediction keeps its value but
    reports no error, with the reason (it used to raise from classify)."""
    from dataclasses import replace

    zeta, t = _euler_saturating(64, 80, 7)
    fit = fit_sde(zeta, t, late_fraction=1.0)
    reps = fit.replicates.copy()
    reps[0, 0] = -0.5
    pred = predict(replace(fit, replicates=reps), n_boot=50, seed=0)
    ok = predict(fit, n_boot=50, seed=0)
    assert pred.beta.value == ok.beta.value and math.isfinite(ok.beta.se)
    assert math.isnan(pred.beta.se) and "no restoring plateau" in pred.beta.flag


def test_ecf_model_se_is_the_fits_sampling_spread():
    """ecf_model_se (the sandwich of the characteristic-function fit) against the actual spread of
    the fit over 40 independent exact-law samples (Monte Carlo truth). With 40 samples a standard
    deviation has a relative standard error of 1/sqrt(78) = 0.11: alpha and lam must agree within
    3 of them (0.35); eta_G and eta_J have skewed laws (a bound at 0, a long right tail), so their
    robust spread (IQR / 1.349, relative error ~0.17) is compared within 0.5."""
    from scipy import stats

    from levysde.simulation import sample_increments

    dt, truth = 0.1, dict(alpha=0.8, lam=1.0, eta_j=3.0, eta_g=0.1)
    eps = 0.02 * (truth["eta_j"] * dt) ** (1 / truth["alpha"])       # exact law (docs/simulate.md "Bias")
    fits, model = [], []
    for seed in range(40):
        x = sample_increments(20_000, dt, seed=seed, eps=eps, **truth)
        n = estimate_noise(x, dt, errors=False)
        fits.append([n.eta_g.value, n.eta_j.value, n.alpha.value, n.lam.value])
        model.append(n.model_se)
    fits, model = np.array(fits), np.nanmedian(np.array(model), axis=0)
    assert np.all(np.isfinite(model)) and np.all(model > 0)
    sd = fits.std(axis=0, ddof=1)
    assert abs(sd[2] / model[2] - 1) < 0.35 and abs(sd[3] / model[3] - 1) < 0.35, (sd, model)
    robust = stats.iqr(fits, axis=0) / 1.349
    assert np.all(np.abs(robust[:2] / model[:2] - 1) < 0.5), (robust, model)


def test_floor_se_and_floored_replicates():
    """The model error replaces the jackknife only below sqrt(chi2_(G-1)(2.5 %)/(G-1)) of it (0.6461
    for G = 16, scipy-independent value: chi2_15 2.5 % point 6.2621); a NaN jackknife stays NaN; the
    floored replicates have exactly the reported error and keep the replicates' correlations."""
    from levysde.inference.noise_fit import floor_se
    from levysde.inference.sde_fit import floored_replicates
    from levysde.stats.jackknife import jackknife_se

    q = math.sqrt(6.262138 / 15)
    out = floor_se([0.1, 0.5, np.nan, 0.2, 0.99 * q, 1.01 * q], [0.3, 0.2, 0.4, np.nan, 1.0, 1.0], 16)
    assert np.allclose(out[[0, 1, 3, 4, 5]], [0.3, 0.5, 0.2, 1.0, 1.01 * q]) and math.isnan(out[2])
    rng = np.random.default_rng(3)
    reps = rng.normal(size=(16, 5)) * 0.01 + np.array([1.0, 0.2, 3.0, 0.8, 1.0])
    model = np.array([10 * jackknife_se(reps[:, 1]), 1.2 * jackknife_se(reps[:, 2]), np.nan, 0.0])
    f = floored_replicates(reps, model)
    assert math.isclose(jackknife_se(f[:, 1]), model[0], rel_tol=1e-12)
    assert np.array_equal(f[:, [0, 2, 3, 4]], reps[:, [0, 2, 3, 4]])      # 1.2 x: not significant, kept
    assert math.isclose(np.corrcoef(f[:, 1], f[:, 2])[0, 1], np.corrcoef(reps[:, 1], reps[:, 2])[0, 1])
    assert math.isclose(f[:, 1].mean(), reps[:, 1].mean())


def test_eta_g_at_its_bound_is_flagged_without_an_error():
    """Pure jumps (eta_G = 0): the non-negative fit puts eta_G_hat at its bound 0 (seed 1); a
    jackknife there is 0 +- 0, which would read as an exact zero. It must be flagged, without error."""
    from levysde.simulation import sample_increments

    x = sample_increments(20_000, 0.1, alpha=1.2, lam=1.0, eta_j=3.0, eta_g=0.0, seed=1,
                          eps=0.02 * 0.3 ** (1 / 1.2))
    n = estimate_noise(x, 0.1)
    assert n.eta_g.value == 0.0 and n.eta_g.status is levysde.Status.AT_BOUND and math.isnan(n.eta_g.se)
    assert n.eta_g.flag.startswith("at the edge")


def test_jackknife_bias_of_the_plug_in_variance():
    """Closed form: for the plug-in variance (1/n) sum (x - mean)^2 of n values, deleting one value at
    a time, the jackknife bias estimate is exactly -s^2/n (s^2 the unbiased variance; Efron &
    Tibshirani 1993, §10.5: the bias-corrected jackknife estimate is s^2)."""
    from levysde.stats.jackknife import jackknife_bias

    x = np.random.default_rng(5).standard_normal(16)
    loo = [np.var(np.delete(x, i)) for i in range(x.size)]
    assert math.isclose(jackknife_bias(loo, np.var(x)), -np.var(x, ddof=1) / x.size, rel_tol=1e-12)
    assert math.isnan(jackknife_bias([1.0, np.nan], 1.0)) and math.isnan(jackknife_bias([1.0], 1.0))


def test_resolved_lag_max_refuses_time_scales_beyond_the_largest_double():
    from levysde.inference.spectrum import resolved_lag_max

    with pytest.raises(ValueError, match="largest double"):
        resolved_lag_max(np.full(20, -720.0))
    assert resolved_lag_max(np.full(20, -709.0)) == pytest.approx(math.exp(709.0))
    assert resolved_lag_max(np.r_[np.full(9, -720.0), np.full(11, -2.0)]) == pytest.approx(math.exp(2.0))
