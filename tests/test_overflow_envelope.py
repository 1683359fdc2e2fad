"""Issue 14, items 1 and 6: heavy-tailed time-scale densities and narrow/extreme bins in the
envelope, against mpmath (closed forms and incomplete gamma / E1 at 50 digits)."""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from levysde.theory.envelope_map import envelope, envelope_hist, envelope_samples
from tests.helpers import run_cli


def pareto_f(l, beta):
    """Pareto p(tau) = beta tau^(-1-beta), tau >= 1: f(l) = beta l^-beta gamma_lower(beta, l)
    (docs/specification.md §5)."""
    with mp.workdps(40):
        b = mp.mpf(beta)
        return float(b * mp.mpf(l) ** (-b) * mp.gammainc(b, 0, l))


def test_issue_pareto_values():
    # the issue's numbers, which were [0.0579, nan, nan] before
    p = lambda t: np.where(t >= 1, 0.2 * t ** -1.2, 0.0)           # noqa: E731
    got = envelope([1e6, 1e10, 1e12], tau_pdf=p)
    assert np.allclose(got, [0.0579325, 0.00918169, 0.00365530], rtol=2e-6, atol=0)


@pytest.mark.parametrize("beta", [0.2, 0.15, 0.05, 0.03])
def test_heavy_pareto_tails_as_tau_pdf(beta):
    lags = np.array([1.0, 1e6, 1e10, 1e12, 1e100])
    p = lambda t: np.where(t >= 1, beta * t ** (-1.0 - beta), 0.0)  # noqa: E731
    got = envelope(lags, tau_pdf=p)
    ref = np.array([pareto_f(l, beta) for l in lags])
    # p(tau) cannot be evaluated beyond tau = 1.8e308 (zeta < -709.78): the mass lost there,
    # e^(-709.78 beta) (6e-10 at beta = 0.03, 5e-16 at 0.05), bounds the error
    lost = math.exp(-beta * 709.78)
    assert np.all(np.abs(got / ref - 1) < 1e-9 + 1.01 * lost / ref), (got, ref)
    # the same law as zeta_pdf agrees
    rho = lambda z: np.where(z <= 0, beta * np.exp(beta * np.minimum(z, 0.0)), 0.0)  # noqa: E731
    assert np.allclose(envelope(lags, zeta_pdf=rho), ref, rtol=1e-9, atol=0)
    if beta >= 0.05:
        assert np.all(np.abs(got / ref - 1) < 1e-9)


def test_mass_beyond_the_double_range_is_named():
    # beta = 0.01 puts e^(-7.1) = 8e-4 of the mass at tau > 1.8e308, out of reach of p(tau)
    p = lambda t: np.where(t >= 1, 0.01 * t ** -1.01, 0.0)          # noqa: E731
    with pytest.raises(ValueError, match="zeta_pdf"):
        envelope([10.0], tau_pdf=p)


def _bin_ref(l, a, b):
    with mp.workdps(50):
        l = mp.mpf(l)
        return mp.e1(l * mp.exp(mp.mpf(a))) - mp.e1(l * mp.exp(mp.mpf(b)))


@pytest.mark.parametrize("hw", [1e-12, 1e-6])
def test_narrow_bin_keeps_digits(hw):
    # issue 14.6: relative error 9.4e-5 (hw 1e-12) and 1.1e-10 (1e-6) at l e^z0 = 100 before
    a, b = -hw, hw
    got = envelope_hist([100.0], [a, b], [1.0])[0]
    with mp.workdps(50):
        ref = _bin_ref(100.0, a, b) / (mp.mpf(b) - mp.mpf(a))
    assert abs(got / float(ref) - 1) < 2e-15


@pytest.mark.parametrize("z0", [0.0, math.log(100.0), -3.0, 5.0, -800.0, 700.0])
def test_bin_integrals_over_the_double_range(z0):
    # one bin of every width, at every scale of x = l e^z0: error <= a few eps (1 + x)
    for hw in (1e-12, 1e-6, 1e-3, 0.1, 0.5, 0.7, 2.0, 30.0):
        a, b = z0 - hw, z0 + hw
        for l in (1e-300, 1e-10, 1e-3, 1.0, 100.0, 1e4, 1e300):
            got = envelope_hist([l], [a, b], [1.0])[0]
            with mp.workdps(50):
                ref = _bin_ref(l, a, b) / (mp.mpf(b) - mp.mpf(a))
                x = float(mp.mpf(l) * mp.exp(z0))
            assert math.isfinite(got)
            if ref > 1e-290:
                assert abs(got / float(ref) - 1) < 1e-15 * (1 + min(x, 1e6)), (hw, l, got, ref)
            else:
                assert got < 1e-280


def test_samples_far_out_in_zeta():
    # zeta = 400 and -600 with lags down to 1e-250: l^2 e^(2 zeta) overflowed (NaN) in the
    # binned path; exact truth by mpmath on the same samples
    rng = np.random.default_rng(1)
    z = np.concatenate([rng.normal(400.0, 1.0, 300), rng.normal(-600.0, 1.0, 300), [705.0, 709.9, 720.0]])
    lags = np.array([1e-310, 1e-306, 1e-250, 1e-180, 1.0, 1e250])
    with mp.workdps(30):
        ref = [float(mp.fsum(mp.exp(-mp.mpf(l) * mp.exp(mp.mpf(v))) for v in z) / z.size) for l in lags]
    for kw in (dict(exact_limit=0), dict(bin_width=0)):
        r = envelope_samples(lags, z, **kw)
        assert np.all(np.isfinite(r.f)) and np.all(np.isfinite(r.stderr)) and np.all(np.isfinite(r.bias_bound))
        assert np.allclose(r.f, ref, rtol=1e-7 if kw.get("exact_limit") == 0 else 1e-13, atol=0), (kw, r.f, ref)


def test_public_helpers_at_extreme_arguments():
    from scipy import special

    from levysde.theory.envelope_map import tauberian_prediction, valid_lag_max
    from levysde.theory.learnability import sample_complexity

    assert valid_lag_max(-800.0) == math.inf                     # was OverflowError
    assert valid_lag_max(-3.0) == pytest.approx(math.exp(3.0), rel=1e-15)
    # Gamma(200) = 3.9e372 overflows, l^-200 underflows: the product is taken from logs
    with mp.workdps(30):
        ref = mp.gamma(200) * mp.mpf(1e3) ** -200
    got = tauberian_prediction([1e3], A=1.0, beta=200.0)[0]
    assert got == pytest.approx(float(ref), rel=1e-12)
    assert tauberian_prediction([1.0], A=1.0, beta=200.0)[0] == math.inf
    assert tauberian_prediction([2.0], A=0.3, beta=0.5)[0] == pytest.approx(0.3 * special.gamma(0.5) / math.sqrt(2),
                                                                            rel=1e-15)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sample_complexity(1e-300, alpha_g=1.01) == math.inf


def test_cli_model_prediction_with_a_rate_beyond_gamma_overflow():
    # kappa/eta_G = 1000: Gamma(1000) overflows a double; A Gamma(beta) l^-beta is formed in logs
    import json

    p = run_cli("envelope", "--eta-j", "0", "--eta-g", "0.001", "--lags", "400", "500", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    with mp.workdps(30):
        ref = [float(mp.gamma(1000) * mp.mpf(l) ** -1000) for l in (400, 500)]
    assert np.allclose(out["f"], ref, rtol=1e-10, atol=0)
    with mp.workdps(30):
        unit = float(mp.gamma(1000) ** (mp.mpf(1) / 1000))          # where the form drops to 1
    assert out["asymptote_valid_from"] == pytest.approx(unit, rel=1e-9)
