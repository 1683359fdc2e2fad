"""beta*, eta_J*, eta_J^crit and the phases against independent truth: the
40-digit reference cases, docs/specification.md §4's numbers, closed forms and invariants."""
import dataclasses
import json
import math
import pathlib
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import levysde
from levysde.theory import phases as theory
from levysde.theory.params import SDEParams
from levysde.theory.roots import chandrupatla

CASES = json.loads((pathlib.Path(__file__).parent / "data" / "phase_cases.json").read_text())


def close(a, b, tol=1e-12):
    return abs(a - b) <= tol * max(1.0, abs(b))


def test_theory_section4_default_numbers():
    assert close(theory.eta_j_star(), 0.96568542494924, 1e-13)
    assert close(theory.eta_j_critical(), 2.36008996386890, 1e-13)
    assert close(theory.beta_star(3.0), 0.808357146473768, 1e-13)
    r = theory.classify([0.5, 1.2, 3.0, 6.0])
    assert list(r.phase) == ["collapsed", "concentrated", "broad", "broad"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"ej{c['eta_j']}-a{c['alpha']}-l{c['lam']}")
@pytest.mark.parametrize("precision", ["double", "mp"])
def test_reference_cases(case, precision):
    r = theory.classify(case["eta_j"], case["eta_g"], case["kappa"], case["alpha"], case["lam"],
                        precision=precision).records()[0]
    assert r["phase"] == case["phase"]
    for key in ("beta", "eta_j_star", "eta_j_critical"):
        if case[key] is None:
            assert r[key] is None
        else:
            assert close(r[key], case[key], 1e-13 if precision == "double" else 4e-16), key


def test_closed_form_threshold_alpha_one():
    # Psi_1(lam) = 2 lam ln 2 / pi at alpha = 1
    lam, k, g = 1.5, 0.5, 0.0
    assert close(theory.eta_j_star(g, k, 1.0, lam), lam * (k - g * lam) / (2 * lam * math.log(2) / math.pi), 1e-14)


def test_phi_vanishes_at_beta_star_and_changes_sign():
    ej = np.array([1.0, 1.2, 2.0, 3.0, 6.0, 50.0])
    b = theory.beta_star(ej)
    val = theory.phi(b, ej)
    assert np.all(np.abs(val) <= 1e-14 * ej * 2)
    assert np.all(theory.phi(b * (1 - 1e-9), ej) < 0)
    assert np.all(theory.phi(b * (1 + 1e-9), ej) > 0)


def test_beta_star_decreasing_in_eta_j_and_tends_to_lam_at_threshold():
    ej = np.linspace(0.97, 40, 400)
    b = theory.beta_star(ej)
    assert np.all(np.diff(b) < 0)
    star = theory.eta_j_star()
    near = theory.beta_star(star * (1 + np.array([1e-2, 1e-4, 1e-6, 1e-8])), precision="mp")
    gaps = 2.0 - near
    assert np.all(gaps > 0) and np.all(np.diff(gaps) < 0) and gaps[-1] < 1e-6
    assert math.isnan(theory.beta_star(star * (1 - 1e-12)))


def test_gaussian_only_root_is_kappa_over_eta_g():
    for k, g, lam in [(1.0, 0.5, 3.0), (0.3, 0.2, 2.0), (2.0, 1.9, 5.0)]:
        r = theory.classify(0.0, g, k, 1.5, lam)
        assert close(float(r.beta_star), k / g, 1e-14)
    # kappa/eta_G beyond lam: collapsed, tail kappa/eta_G (docs/specification.md §4 table)
    r = theory.classify(0.0, 0.5, 1.0, 1.5, 1.0)
    assert r.phase == "collapsed" and math.isnan(r.beta_star) and r.tail_rate == 2.0


def test_tail_rates_in_every_phase():
    r = theory.classify([0.5, 3.0])
    assert r.tail_rate[0] == 2.0                      # tempering-limited: lam
    assert r.tail_rate[1] == r.beta_star[1]
    assert theory.classify(0.0, 0.0).tail_rate == math.inf          # no noise: point mass
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = theory.classify(1.0, lam=0.0, alpha=1.5)
    assert r.phase == "logarithmic" and r.tail_rate == 0.0 and math.isnan(r.eta_j_star)
    with pytest.warns(RuntimeWarning, match="alpha <= 1"):
        theory.classify(1.0, lam=0.0, alpha=0.8)


def test_critical_phase_and_its_tolerance():
    crit = theory.eta_j_critical()
    assert theory.classify(crit).phase == "critical"
    assert close(float(theory.beta_star(crit)), 1.0, 1e-14)
    assert theory.classify(crit * (1 + 1e-6)).phase == "broad"
    assert theory.classify(crit * (1 - 1e-6)).phase == "concentrated"
    assert theory.classify(crit * (1 + 1e-6), critical_tol=1e-3).phase == "critical"
    # no critical manifold when lam <= 1
    assert math.isnan(theory.eta_j_critical(lam=1.0))


def test_vectorised_broadcasting_and_params_object():
    ej = np.array([0.5, 3.0, 6.0])[:, None]
    alpha = np.array([0.5, 1.0, 1.5, 1.9])[None, :]
    r = theory.classify(ej, alpha=alpha)
    assert r.beta_star.shape == (3, 4) and r.phase.shape == (3, 4)
    assert r.eta_j_star.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            one = theory.beta_star(float(ej[i, 0]), alpha=float(alpha[0, j]))
            assert (math.isnan(one) and math.isnan(r.beta_star[i, j])) or one == r.beta_star[i, j]
    p = SDEParams(eta_j=3.0)
    assert theory.beta_star(p) == theory.beta_star(3.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.eta_j = 4.0


def _beta_star_independent(ej, eg, k, a, lam):
    """Bisection in mpmath on THEORY's closed form: an independent solver."""
    with mp.workdps(40):
        ej, eg, k, a, lam = (mp.mpf(v) for v in (ej, eg, k, a, lam))

        def h(b):
            if a == 1:
                psi = ej * ((lam + b) * mp.log(lam + b) + (lam - b) * mp.log(lam - b) - 2 * lam * mp.log(lam)) / mp.pi
            else:
                psi = -ej * ((lam - b) ** a + (lam + b) ** a - 2 * lam ** a) / (2 * mp.cos(mp.pi * a / 2))
            return eg * b + psi / b - k

        lo, hi = lam * mp.mpf(10) ** -12, lam * (1 - mp.mpf(10) ** -30)
        if h(hi) <= 0:
            return math.nan
        for _ in range(70):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if h(mid) < 0 else (lo, mid)
        return float((lo + hi) / 2)


@settings(max_examples=40, deadline=None)
@given(ej=st.floats(0.05, 20), eg=st.floats(0.0, 1.0, allow_subnormal=False), k=st.floats(0.1, 3.0),
       a=st.floats(0.1, 1.9), lam=st.floats(0.3, 5.0))
def test_beta_star_against_independent_bisection(ej, eg, k, a, lam):
    ref = _beta_star_independent(ej, eg, k, a, lam)
    got = float(theory.beta_star(ej, eg, k, a, lam))
    if math.isnan(ref):
        # bisection finds no root below lam(1 - 1e-30): only possible as collapsed
        assert math.isnan(got) or got > lam * (1 - 1e-9)
    else:
        assert close(got, ref, 1e-9)   # bisection stops at 2^-70 of the bracket


def test_mp_and_double_agree_and_mp_is_robust_near_boundaries():
    ej = np.array([0.97, 1.5, 3.0, 500.0])
    d = theory.beta_star(ej)
    m = theory.beta_star(ej, precision="mp")
    assert np.allclose(d, m, rtol=1e-13, atol=0)
    # beta* -> 0 as eta_J -> inf
    assert 0 < theory.beta_star(1e8, eta_g=0.0) < 1e-3
    with pytest.raises(ValueError, match="precision"):
        theory.beta_star(1.0, precision="quad")


@pytest.mark.parametrize("kwargs,name", [
    (dict(eta_j=1.0, alpha=2.5), "alpha"), (dict(eta_j=1.0, alpha=0.0), "alpha"),
    (dict(eta_j=-1.0), "eta_j"), (dict(eta_j=1.0, eta_g=-0.1), "eta_g"),
    (dict(eta_j=1.0, kappa=0.0), "kappa"), (dict(eta_j=1.0, lam=-2.0), "lam"),
    (dict(eta_j=float("nan")), "eta_j"), (dict(eta_j=1.0, kappa=float("inf")), "kappa"),
    (dict(eta_j=[1.0, float("nan")]), "eta_j"), (dict(eta_j="abc"), "eta_j"),
])
def test_bad_input_raises_value_error_naming_parameter(kwargs, name):
    for fn in (theory.beta_star, theory.classify):
        with pytest.raises(ValueError, match=name):
            fn(**kwargs)
    with pytest.raises(ValueError, match=name):
        SDEParams(**kwargs)


def test_chandrupatla_on_known_roots():
    a = np.array([0.0, 1.0, 0.0])
    b = np.array([2.0, 2.0, 1.0])
    funcs = [lambda x: x ** 3 - 2, lambda x: np.log(x) - 0.5, lambda x: np.cos(x) - x]

    def f(x, idx):
        return np.array([funcs[i](xx) for xx, i in zip(x, idx, strict=True)])

    root = chandrupatla(f, a, b)
    assert np.allclose(root, [2 ** (1 / 3), math.exp(0.5), 0.7390851332151607], rtol=1e-15, atol=0)
    with pytest.raises(ValueError, match="sign change"):
        chandrupatla(lambda x, i: x ** 2 + 1, np.array([0.0]), np.array([1.0]))


def test_public_namespace():
    assert levysde.beta_star is theory.beta_star
    assert close(levysde.classify(3.0).beta_star, 0.808357146473768, 1e-13)


def test_extreme_but_representable_parameters():
    # beta* ~ kappa/(eta_J Var_1/2) when eta_J is huge: far below the 0+ end, still found
    b = theory.beta_star(1e300)
    var1 = levysde.variance(alpha=1.5, lam=2.0)
    assert close(float(b), 1.0 / (1e300 * var1 / 2 + 0.1), 1e-6)
    assert close(float(theory.beta_star(3.0, lam=1e300)), 10.0, 1e-12)   # Gaussian-dominated: kappa/eta_G
    assert close(float(theory.eta_j_star(lam=1e300)), (1 - 0.1e300) / float(
        levysde.theory.levy.psi_unit_over_beta(1e300, alpha=1.5, lam=1e300)), 1e-12)
    with pytest.raises(ValueError, match="floating-point range"):
        theory.beta_star(1e300, lam=1e300)


def test_dps_is_validated():
    for bad in (-5, 0, 2.5, 19):
        with pytest.raises(ValueError, match="dps"):
            theory.beta_star(3.0, precision="mp", dps=bad)


def test_mp_bisection_when_root_is_extremely_close_to_lam():
    star = float(theory.eta_j_star(alpha=0.1))
    b = theory.beta_star(star * (1 + 1e-6), alpha=0.1, precision="mp")
    assert b == 2.0 or 2.0 - b < 1e-15


def test_phi_and_beta_star_at_overflowing_arguments():
    # issue 14.10: Phi = eta_G beta^2 - kappa beta + Psi with both products overflowing was
    # inf - inf = NaN; the value beta (eta_G beta - kappa) is -inf (true value ~ -5e599)
    assert theory.phi(5e299, 0.0, 0.1, 1e300, 1.5, 1e300) == -math.inf
    with mp.workdps(30):
        ref = 0.1 * mp.mpf(5e150) ** 2 - mp.mpf(1e155) * mp.mpf(5e150)
    assert close(float(theory.phi(5e150, 0.0, 0.1, 1e155, 1.5, 1e151)), float(ref), 1e-13)
    # outside [-lam, lam] Phi is +inf whatever the polynomial part does
    assert theory.phi(3.0, 1.0, 1e300, 1e300, 1.5, 2.0) == math.inf
    # beta* = kappa/eta_G = 1e-600 is below the double range: the documented error, not a NaN
    # raised from inside the root finder
    with pytest.raises(ValueError, match="floating-point range"):
        theory.beta_star(0.0, 1e300, 1e-300, 1.5, 2.0)
    with pytest.raises(ValueError, match="floating-point range"):
        theory.beta_star(1.0, 1e300, 1e-300, 0.5, 1e-300)


@pytest.mark.parametrize("fn", [lambda p, **kw: theory.beta_star(p, **kw), lambda p, **kw: theory.classify(p, **kw),
                                lambda p, **kw: theory.phi(0.5, p, **kw), lambda p, **kw: theory.tail_rate(p, **kw)])
def test_sdeparams_with_explicit_parameters_is_a_type_error(fn):
    p = SDEParams(eta_j=3.0, lam=1.0)
    fn(p)                                     # the SDEParams alone is fine
    with pytest.raises(TypeError, match="^lam cannot be passed with an SDEParams"):
        fn(p, lam=2.0)
    with pytest.raises(TypeError, match="^eta_g, alpha cannot"):
        fn(p, eta_g=0.3, alpha=1.2)
