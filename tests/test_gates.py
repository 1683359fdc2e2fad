"""The gates of `levysde check` that decide a phase from data-identified estimates: independence of
the neurons, stationarity, the joint closure of beta_tail and beta_dynamics, the admissibility of the
root (levysde.inference.independence, levysde.inference.phase_call, levysde.inference.check;
docs/calibration.md)."""
import math
import os
import sys

import numpy as np
import pytest
from scipy import stats

from levysde.core.status import Estimate, Status, unavailable
from levysde.inference.check import check_trajectories, stationarity_test
from levysde.inference.independence import independence_test
from levysde.inference.phase_call import ADMISSIBLE_Z, admissibility_test, closure_test, phase_odds
from levysde.stats.jackknife import jackknife_se
from levysde.theory import classify

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import _independent_sde as gen  # noqa: E402


def _walks(rng, R, Q, rho=0.0, df=None):
    """R x Q random walks whose increments at one record have correlation rho across neurons
    (Student-t_df increments when df is given, Gaussian otherwise)."""
    e = rng.standard_t(df, (R, Q)) / math.sqrt(df / (df - 2)) if df else rng.standard_normal((R, Q))
    c = rng.standard_normal((R, 1))
    return np.cumsum(math.sqrt(1 - rho) * e + math.sqrt(rho) * c, axis=0)


@pytest.mark.parametrize("df", [None, 3])
def test_independence_test_has_its_level(df):
    """Independent neurons (Gaussian or Student-t_3 increments, Q = 300, 60 records): the rejection rate
    at level 0.01 over 300 data sets is within the binomial 99.9 % band, and the variance ratio's mean
    is 1 within 4 of its standard errors (chi2_df/df has variance 2/df)."""
    rng = np.random.default_rng(5)
    res = [independence_test(_walks(rng, 60, 300, df=df)) for _ in range(300)]
    rej = sum(not r.independent for r in res)
    assert rej <= stats.binom.ppf(0.999, 300, 0.01), rej
    ratio = np.array([r.ratio for r in res])
    assert abs(ratio.mean() - 1) < 4 * math.sqrt(2 / res[0].df / ratio.size), ratio.mean()
    assert all(r.status is Status.OK for r in res if r.independent)


def test_independence_test_finds_a_small_common_shock():
    """A correlation of 0.01 between neurons' increments at one record (Q = 300): ratio ~ 1 + 299 rho,
    rejected in every data set, and rho_hat within 4 of its standard errors of 0.01."""
    rng = np.random.default_rng(6)
    res = [independence_test(_walks(rng, 60, 300, rho=0.01)) for _ in range(20)]
    assert not any(r.independent for r in res) and all(r.status is Status.FAILED for r in res)
    rho = np.array([r.rho_hat for r in res])
    se = (1 + 299 * 0.01) * math.sqrt(2 / 58) / 299           # sd of (ratio - 1)/(Q - 1) from chi2_58
    assert abs(rho.mean() - 0.01) < 4 * se / math.sqrt(rho.size), rho.mean()
    assert "not independent" in res[0].reason and res[0].as_json()["p_value"] < 0.01


def test_independence_test_ignores_a_common_trend_and_refuses_too_little():
    rng = np.random.default_rng(7)
    z = _walks(rng, 60, 300) + 0.3 * np.arange(60)[:, None]      # a common straight trend of the mean
    assert independence_test(z).independent
    few = independence_test(_walks(rng, 60, 8))
    assert few.status is Status.UNAVAILABLE and not few.independent and "too few neurons" in few.reason
    with pytest.raises(ValueError, match="level"):
        independence_test(z, level=1.0)


def _ar1(rng, R, Q, phi=0.9):
    x = np.empty((R, Q))
    x[0] = rng.standard_normal(Q)
    for r in range(1, R):
        x[r] = phi * x[r - 1] + math.sqrt(1 - phi * phi) * rng.standard_normal(Q)
    return x


def test_stationarity_test_catches_a_growing_spread_and_keeps_its_level():
    """Stationary AR(1) neurons (Q = 512, 100 records): no rejection in 10 data sets; the same data with
    the spread growing by 20 % over the records: rejected in all of them, on the spread statistics."""
    rng = np.random.default_rng(8)
    s = np.linspace(0, 1, 100)[:, None]
    step = np.arange(100.0)
    for _ in range(10):
        x = _ar1(rng, 100, 512)
        assert stationarity_test(x, step).stationary
        grown = stationarity_test(x * (1 + 0.2 * s), step)
        assert not grown.stationary and ("std changes" in grown.reason or "iqr changes" in grown.reason)
    # Bonferroni over the seven statistics, two-sided; 64 neuron groups
    assert grown.critical_t == pytest.approx(stats.t.ppf(1 - 0.05 / (2 * 7), 63))


def test_joint_closure_by_hand():
    """The joint form: z from the jackknife of the difference, the least-variance weight, the error of
    the combination from its own replicates, Student-t odds with G - 1 degrees of freedom."""
    rng = np.random.default_rng(9)
    common = rng.normal(0, 0.03, 16)
    lt = 1.40 + common + rng.normal(0, 0.01, 16)
    ld = 1.45 + common + rng.normal(0, 0.02, 16)
    bt, bd = Estimate(1.41, jackknife_se(lt)), Estimate(1.46, jackknife_se(ld))
    c = closure_test(bt, bd, tail_loo=lt, dyn_loo=ld)
    assert c.joint and c.status is Status.OK
    assert c.z == pytest.approx((1.41 - 1.46) / jackknife_se(lt - ld), rel=1e-12)
    dev = np.vstack([lt - lt.mean(), ld - ld.mean()])
    V = 15 / 16 * dev @ dev.T
    w = (V[1, 1] - V[0, 1]) / (V[0, 0] + V[1, 1] - 2 * V[0, 1])
    assert c.weight == pytest.approx(min(max(w, 0), 1), rel=1e-12) and c.correlation > 0.5
    assert c.combined.value == pytest.approx(c.weight * 1.41 + (1 - c.weight) * 1.46, rel=1e-12)
    assert c.combined.se == pytest.approx(jackknife_se(c.weight * lt + (1 - c.weight) * ld) * max(1.0, abs(c.z)),
                                          rel=1e-12)
    assert c.probabilities["concentrated"] == pytest.approx(stats.t(15).cdf((c.combined.value - 1) / c.combined.se))
    # the independent form would have called the difference smaller relative to its error
    assert abs(closure_test(bt, bd).z) < abs(c.z)
    assert phase_odds(0.8, 0.1) == pytest.approx({"concentrated": stats.norm.sf(2.0), "broad": stats.norm.cdf(2.0)})
    assert phase_odds(0.8, float("nan")) == {}


def test_admissibility_by_hand():
    b = Estimate(1.5, 0.1)
    ok = admissibility_test(b, Estimate(2.5, 0.2))
    assert ok.status is Status.OK and ok.evidence == "root_below_lambda"
    assert ok.z == pytest.approx(1.0 / math.hypot(0.1, 0.2))
    beyond = admissibility_test(Estimate(3.0, 0.1), Estimate(2.0, 0.2))
    assert beyond.status is Status.FAILED and beyond.evidence == "root_beyond_lambda" and beyond.z < -ADMISSIBLE_Z
    near = admissibility_test(b, Estimate(1.7, 0.2))
    assert near.status is Status.NOT_IDENTIFIED and near.evidence == "lambda_not_identified"
    none = admissibility_test(b, unavailable("lam not resolved", Status.NOT_IDENTIFIED))
    assert none.status is Status.NOT_IDENTIFIED and "lam not resolved" in none.reason
    # with replicates over the same groups, the error is that of the difference
    bl, ll = np.full(16, 1.5) + np.linspace(-0.1, 0.1, 16), np.full(16, 2.5) + np.linspace(-0.1, 0.1, 16)
    same = admissibility_test(b, Estimate(2.5, 0.2), beta_loo=bl, lam_loo=ll + 1e-3 * np.arange(16))
    assert same.z == pytest.approx(1.0 / jackknife_se(ll + 1e-3 * np.arange(16) - bl))


def _gen(p, seed, Q=512, R=200, delta=0.3):
    ej, eg, k, a, lam = p
    z, t, _ = gen.simulate(gen.Drift("saturating", kappa=k, gamma=1.5 * k, z0=0.5), eta_j=ej, eta_g=eg,
                           alpha=a, lam=lam, n_neurons=Q, n_records=R, record_dt=delta, burn_in=40.0, seed=seed)
    return z, t


def test_broad_set_is_called_broad_and_collapsed_set_is_not_called_concentrated():
    """On the independent generator: a broad set (beta* = 0.610) is called broad at odds >= 0.95, from the
    closure; a collapsed set (eta_J = 0.5 < eta_J* = 0.966: no root in (0, lam = 2); its tail rate and
    empirical root read about 3) is not called concentrated (lam is not identified there)."""
    z, t = _gen((4.0, 0.5, 1.0, 0.8, 1.0), 21)
    rep = check_trajectories(z, t, seed=1, n_boot=30, closing_loop=False)
    d = rep.as_json()
    assert d["phase"] == "broad", d["phase_withheld"]
    assert d["phase_probabilities"]["broad"] >= 0.95 and d["phase_evidence"].startswith("closure")
    assert abs(d["beta_combined"] - 0.610) < 3 * d["beta_combined_se"]
    assert d["closure_joint"] and d["gates"]["independent"] and d["independence"]["p_value"] >= 0.01
    z, t = _gen((0.5, 0.1, 1.0, 1.5, 2.0), 22)
    rep = check_trajectories(z, t, seed=1, n_boot=30, closing_loop=False)
    assert rep.phase != "concentrated" and rep.phase != "broad"
    assert rep.beta_dynamics.ok and rep.beta_dynamics.value > 2.0          # an empirical root beyond lam
    assert rep.as_json()["admissibility"]["evidence"] in ("lambda_not_identified", "root_beyond_lambda")


@pytest.mark.slow
def test_root_at_or_beyond_an_identified_lam_is_not_called_broad():
    """A collapsed set with lam = 0.7 < 1 (eta_J = 0.85 eta_J*: no root in (0, lam)) reads a rate below 1,
    like a broad set. Where lam_hat is identified (the characteristic-function fit) and the dynamics'
    root is at or beyond it, broad is not called: the call is "collapsed" (root significantly beyond
    lam_hat) or none (tempering). Independent generator, saturating drift gamma = 1.5 kappa."""
    eg, k, a, lam = 0.2, 1.0, 1.2, 0.7
    ej = 0.85 * classify(1.0, eta_g=eg, kappa=k, alpha=a, lam=lam).eta_j_star
    assert str(classify(ej, eta_g=eg, kappa=k, alpha=a, lam=lam).phase) == "collapsed"
    z, t, _ = gen.simulate(gen.Drift("saturating", kappa=k, gamma=1.5 * k, z0=0.5), eta_j=ej, eta_g=eg, alpha=a,
                           lam=lam, n_neurons=1024, n_records=400, record_dt=0.3, burn_in=60.0, seed=31)
    d = check_trajectories(z, t, seed=1, n_boot=30, closing_loop=False).as_json()
    adm = d["admissibility"]
    assert adm["lam_hat"] is not None and adm["lam_hat_source"].startswith("characteristic-function")
    assert d["beta_dynamics"] >= adm["lam_hat"]
    assert d["phase"] in (None, "collapsed")
    if d["phase"] is None:
        assert "tempering" in " ".join(d["phase_withheld"])
