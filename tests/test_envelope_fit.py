"""The library functions behind ``levysde envelope`` (levysde.inference.envelope_fit,
levysde.theory.envelope_map_asymptotics) against closed forms, exact finite sums and a
replication study of the jackknife."""
import math
import warnings

import numpy as np
import pytest

from levysde.inference import envelope_fit as EF
from levysde.inference import envelope_grid
from levysde.theory import envelope_asymptotics as AS
from levysde.theory.envelope_decay import fit_slope


def test_unit_crossing_closed_forms():
    b = 0.8
    assert AS.unit_crossing(lambda l: math.gamma(b) * l ** -b) == pytest.approx(math.gamma(b) ** (1 / b),
                                                                                 rel=1e-13)
    assert AS.unit_crossing(lambda l: 0.5 / l, 1.0) == 1.0                    # <= 1 on its whole domain
    assert AS.unit_crossing(lambda l: 2.0 + 0 * l) == math.inf                # never
    # NaN counts as above 1 (outside the form's domain)
    assert AS.unit_crossing(lambda l: np.where(l < 3.0, np.nan, 1.5 / l)) == pytest.approx(3.0, rel=1e-12)


def test_asymptotic_envelope_phases():
    a = AS.asymptotic_envelope(3.0)
    b = 0.808357146473768
    assert a.phase == "broad" and a.decay_class == "polynomial"
    assert a.beta_theory == pytest.approx(b, rel=1e-12) and a.slope == pytest.approx(-b, rel=1e-12)
    l_star = math.gamma(b) ** (1 / b)
    assert a.valid_from == pytest.approx(l_star, rel=1e-12)
    l = np.array([0.5, 1.0, 2.0, 100.0])
    v = a.values(l)
    assert np.isnan(v[:2]).all()
    np.testing.assert_allclose(v[2:], math.gamma(b) * l[2:] ** -b, rtol=1e-12)
    np.testing.assert_allclose(a.capped(l), np.minimum(1.0, math.gamma(b) * l ** -b), rtol=1e-12)
    # amplitude scales the form
    np.testing.assert_allclose(AS.asymptotic_envelope(3.0, amplitude=0.5).raw(l), 0.5 * a.raw(l), rtol=1e-14)
    # tempering-limited collapsed: the slowly varying (ln l)^-(1+alpha) factor is included
    c = AS.asymptotic_envelope(0.5)
    assert c.phase == "collapsed" and c.beta_theory is None and c.slope == -2.0
    np.testing.assert_allclose(c.raw([10.0, 1e4]), np.array([10.0, 1e4]) ** -2.0 * np.log([10.0, 1e4]) ** -2.5,
                               rtol=1e-12)
    assert np.isnan(c.raw([0.5])[0]) and c.domain_lo == 1.0
    # logarithmic (lam = 0): A/(alpha-1) (ln l)^-(alpha-1)
    g = AS.asymptotic_envelope(3.0, lam=0.0)
    assert g.decay_class == "logarithmic" and g.gamma == pytest.approx(0.5)
    np.testing.assert_allclose(g.raw([1e3]), [2.0 * math.log(1e3) ** -0.5], rtol=1e-12)
    assert g.valid_from == pytest.approx(math.exp(4.0), rel=1e-12)          # 2 (ln l)^-1/2 = 1
    # no stationary law / no noise: no form
    with pytest.warns(RuntimeWarning, match="no stationary law"):
        no_law = AS.asymptotic_envelope(3.0, lam=0.0, alpha=0.8)
    assert "no stationary law" in no_law.note
    for e in (no_law, AS.asymptotic_envelope(0.0, eta_g=0.0)):
        assert e.form is None and e.valid_from is None
        with pytest.raises(ValueError, match="no asymptotic"):
            e.values([1.0])
    with pytest.raises(ValueError, match="amplitude"):
        AS.asymptotic_envelope(3.0, amplitude=0.0)
    with pytest.raises(ValueError, match="eta_j"):
        AS.asymptotic_envelope(-1.0)


def test_sampling_floor_and_lag_grid():
    assert EF.sampling_floor(1e6) == pytest.approx(1e-4)                   # 100 / n
    assert EF.sampling_floor(100.0) == pytest.approx(0.1)                  # sqrt(n) / n
    with pytest.raises(ValueError, match="n_indep"):
        EF.sampling_floor(0)
    np.testing.assert_allclose(envelope_grid.lag_grid(1e3, n_lags=4), [1.0, 10.0, 100.0, 1e3], rtol=1e-14)
    np.testing.assert_array_equal(envelope_grid.lag_grid(1.0, lags=[3.0, 1.0, 3.0]), [1.0, 3.0])
    for kw, name in ((dict(lag_min=10.0), "lag_max"), (dict(n_lags=1), "n_lags"), (dict(lags=[0.0]), "lags")):
        with pytest.raises(ValueError, match=name):
            envelope_grid.lag_grid(5.0, **kw)


def test_rnn_envelope_is_the_exact_elr_sum():
    rng = np.random.default_rng(0)
    zeta = rng.normal(-2.0, 1.5, size=(2, 50))
    lam = rng.uniform(0.5, 1.5, size=(2, 50))
    run = dict(kind="rnn", zeta=zeta, Lambda=lam, step=np.array([0, 10]), meta={})
    tau_10 = math.exp(-np.sort(zeta[-1])[9])              # the 10th longest time scale
    lags = np.array([1.0, 3.0, 0.99 * tau_10, 1.01 * tau_10, 1e6])
    env = EF.run_envelope(run, lags=lags)
    assert env.lag_max == pytest.approx(tau_10, rel=1e-14)
    lags = lags[:3]                                          # the table stops at tau_(10)
    np.testing.assert_array_equal(env.lags, lags)
    direct = (lam[-1] * np.exp(-lags[:, None] * np.exp(zeta[-1]))).sum(1) / lam[-1].sum()
    np.testing.assert_allclose(env.f, direct, rtol=1e-12)
    assert env.kind == "rnn" and env.f_floor == EF.RNN_F_FLOOR and "step 10" in env.source
    with pytest.raises(ValueError, match="tau_"):
        EF.rnn_envelope(run, lags=[2 * tau_10, 3 * tau_10])
    plain = EF.rnn_envelope(run, lags=lags, weighted=False)
    np.testing.assert_allclose(plain.f, np.exp(-lags[:, None] * np.exp(zeta[-1])).mean(1), rtol=1e-12)
    with pytest.raises(ValueError, match="Lambda"):
        EF.rnn_envelope(dict(run, Lambda=lam[:, :10]), lags=lags)


def test_simulation_envelope_outside_mass_closed_form():
    # half the mass at zeta = 0 (one narrow bin), half below the range at zeta = -40
    edges = np.array([-30.0, -1e-7, 1e-7, 5.0])
    counts = np.array([[0.0, 2.0, 0.0], [0.0, 2.0, 0.0]])
    outside = np.array([[2.0, -80.0, 0.0, 0.0], [2.0, -80.0, 0.0, 0.0]])
    run = dict(kind="simulation", hist_edges=edges, hist_counts=counts, hist_outside=outside,
               final_zeta=np.zeros(4), meta={"beta_theory": None})
    l = np.array([0.5, 3.0, 1e3, 1e17])
    env = EF.simulation_envelope(run, lags=l, f_floor=0.01)
    np.testing.assert_allclose(env.f, 0.5 * np.exp(-l) + 0.5 * np.exp(-l * math.exp(-40.0)), rtol=1e-9)
    assert env.outside_mass_fraction == pytest.approx(0.5) and env.f_floor == 0.01
    with pytest.raises(ValueError, match="f_floor"):
        EF.simulation_envelope(run, lags=l, f_floor=1.0)
    with pytest.raises(ValueError, match="source"):
        EF.simulation_envelope(run, source="trajectories")
    with pytest.raises(ValueError, match="empty"):
        EF.simulation_envelope(dict(run, hist_counts=0 * counts))


def _laplace_groups(rng, beta, groups, n, edges):
    """Histograms of an asymmetric Laplace zeta with left tail 0.5 beta e^(beta zeta)."""
    z = np.where(rng.uniform(size=(groups, n)) < 0.5, -rng.exponential(1 / beta, (groups, n)),
                 rng.exponential(0.3, (groups, n)))
    return np.stack([np.histogram(z[g], edges)[0] for g in range(groups)]).astype(float)


def test_jackknife_slope_se_matches_the_spread_of_replicates():
    """The jackknife SE of the slope agrees with the standard deviation of the slope over
    independent replicate data sets. With R = 60 replicates the SD has relative error
    1/sqrt(2(R-1)) = 9.2% and the mean SE (spread 26% per replicate) 26%/sqrt(R) = 3.4%, so the
    ratio is 1 within 4 x 9.8% ~ 40%."""
    rng = np.random.default_rng(7)
    edges = np.linspace(-30, 5, 701)
    lags = np.geomspace(1.0, 1e4, 60)
    lo, hi = 30.0, 3e3
    from levysde.theory.envelope_map import envelope_hist

    slopes, ses = [], []
    for _ in range(60):
        counts = _laplace_groups(rng, 0.8, 10, 2000, edges)
        sel = (lags >= lo) & (lags <= hi)
        f = envelope_hist(lags[sel], edges, counts.sum(axis=0))
        slopes.append(fit_slope(lags[sel], f, lag_range=(lo, hi), min_points=2).slope)
        ses.append(EF.jackknife_slope_se(lags, edges, counts, lo, hi))
    sd = float(np.std(slopes, ddof=1))
    assert 0.6 < float(np.mean(ses)) / sd < 1.4, (np.mean(ses), sd)
    assert EF.jackknife_slope_se(lags, edges, counts[:1], lo, hi) is None
    same = np.repeat(counts[:1], 4, axis=0)                  # identical groups: no spread
    assert EF.jackknife_slope_se(lags, edges, same, lo, hi) == pytest.approx(0.0, abs=1e-12)


def test_fit_run_envelope_reports_what_it_could_not_fit():
    lags = np.geomspace(1, 1e3, 30)
    env = EF.RunEnvelope(lags=lags, f=np.exp(-lags / 5.0), f_floor=0.5, floor_reason="given",
                         source="test", kind="rnn")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fits = EF.fit_run_envelope(env)
    assert fits.slope is None and fits.decay_class is None
    assert any("slope not determined" in str(x.message) for x in w)
    env = EF.RunEnvelope(lags=lags, f=np.minimum(1.0, 2.0 * lags ** -0.7), f_floor=1e-12,
                         floor_reason="given", source="test", kind="rnn")
    fits = EF.fit_run_envelope(env)
    assert fits.decay_class == "polynomial" and fits.slope == pytest.approx(-0.7, rel=1e-6)
    assert fits.slope_se_method.startswith("OLS")
