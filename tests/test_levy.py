"""The CTS symbol against independent truth: mpmath quadrature of the Levy
measure, the closed forms of docs/specification.md §2 transcribed here in mpmath, and the
cumulants as derivatives of the symbol."""
import math

import mpmath as mp
import numpy as np
import pytest

from levysde.theory import levy

ALPHAS = [0.05, 0.3, 0.7, 1 - 1e-6, 1 - 1e-9, 1.0, 1 + 1e-9, 1 + 1e-6, 1.3, 1.7, 1.95]
XS = [1e-8, 1e-5, 1e-2, 0.2, 0.25, 0.2500001, 0.4, 0.8, 1 - 1e-9, 1.0]


def c_alpha_ref(alpha):
    with mp.workdps(50):
        alpha = mp.mpf(alpha)
        if alpha == 1:
            return 1 / mp.pi
        return -1 / (2 * mp.gamma(-alpha) * mp.cos(mp.pi * alpha / 2))


def psi_closed_ref(beta, alpha, lam, eta_j=1):
    """docs/specification.md §2 closed form, at 60 digits (enough for |alpha-1| >= 1e-9, beta >= 1e-8 lam)."""
    with mp.workdps(60):
        a, l, b, e = (mp.mpf(v) for v in (alpha, lam, beta, eta_j))
        if a == 1:

            def xl(t):
                return t * mp.log(t) if t > 0 else mp.mpf(0)
            return e * (xl(l + b) + xl(l - b) - 2 * xl(l)) / mp.pi
        return -e * ((l - b) ** a + (l + b) ** a - 2 * l ** a) / (2 * mp.cos(mp.pi * a / 2))


def psi_quad_ref(beta, alpha, lam, eta_j=1):
    """int (e^{bz} - 1 - bz) nu(dz) = 2 eta c int_0^inf (cosh(bz) - 1) e^{-lam z} z^{-1-a} dz.

    [0, z0]: cosh series term by term, each term a lower incomplete gamma (exact);
    [z0, Z]: tanh-sinh quadrature in s = log z; [Z, inf): exponentials written out,
    each an upper incomplete gamma."""
    with mp.workdps(30):
        a, l, b, e = (mp.mpf(v) for v in (alpha, lam, beta, eta_j))
        z0 = min(mp.mpf(1) / (4 * max(b, l)), mp.mpf("0.5"))
        small = mp.mpf(0)
        k = 1
        while True:
            term = b ** (2 * k) / mp.factorial(2 * k) * mp.gammainc(2 * k - a, 0, l * z0) * l ** (a - 2 * k)
            small += term
            if abs(term) < mp.mpf(10) ** -40 * abs(small):
                break
            k += 1
        Z = mp.mpf(40) / l
        mid = mp.quad(lambda s: (mp.cosh(b * mp.exp(s)) - 1) * mp.exp(-l * mp.exp(s) - a * s),
                      mp.linspace(mp.log(z0), mp.log(Z), 8))

        def upper(rate):  # int_Z^inf e^{-rate z} z^{-1-a} dz
            if rate == 0:
                return Z ** (-a) / a
            return rate ** a * mp.gammainc(-a, rate * Z)

        tail = (upper(l - b) + upper(l + b)) / 2 - upper(l)
        return 2 * e * c_alpha_ref(a) * (small + mid + tail)


def rel(x, ref):
    ref = float(ref)
    return abs(float(x) - ref) / abs(ref)


def test_c_alpha_against_definition():
    for a in [0.05, 0.5, 0.999, 1.0, 1.001, 1.5, 1.95]:
        assert rel(levy.c_alpha(a), c_alpha_ref(a)) < 1e-14
    assert levy.c_alpha(np.array([0.5, 1.5])).shape == (2,)


@pytest.mark.parametrize("alpha", [0.05, 0.5, 1.0, 1.5, 1.95])
@pytest.mark.parametrize("x", [1e-6, 0.1, 0.3, 0.9, 1.0])
def test_psi_against_quadrature_of_levy_measure(alpha, x):
    lam, eta = 1.7, 2.3
    ref = psi_quad_ref(x * lam, alpha, lam, eta)
    assert rel(levy.psi(x * lam, alpha=alpha, lam=lam, eta_j=eta), ref) < 1e-12


def test_quadrature_reference_agrees_with_closed_form():
    # the two references are independent: one from nu, one from THEORY's closed form
    for a, x in [(0.7, 0.5), (1.3, 1.0), (1.9, 1e-3)]:
        assert rel(psi_quad_ref(x, a, 1.0), psi_closed_ref(x, a, 1.0)) < 1e-20


@pytest.mark.parametrize("alpha", ALPHAS)
def test_psi_relative_accuracy_grid(alpha):
    lam = 2.0
    beta = np.array(XS) * lam
    got = levy.psi(beta, alpha=alpha, lam=lam)
    for b, g in zip(beta, got, strict=True):
        assert rel(g, psi_closed_ref(b, alpha, lam)) < 1e-12, (alpha, b)


def test_psi_continuous_in_alpha_at_one():
    b = np.array([1e-6, 0.3, 1.2, 2.0])
    at1 = levy.psi(b, alpha=1.0, lam=2.0)
    for d in [1e-12, 1e-9, 1e-7]:
        for s in (-1, 1):
            near = levy.psi(b, alpha=1.0 + s * d, lam=2.0)
            # d Psi/d alpha is O(1): relative change must be O(d)
            assert np.all(np.abs(near / at1 - 1) < 20 * d + 1e-14)


def test_psi_alpha_one_formula():
    lam, b, eta = 2.0, 0.7, 1.5
    ref = eta * ((lam + b) * math.log(lam + b) + (lam - b) * math.log(lam - b) - 2 * lam * math.log(lam)) / math.pi
    assert rel(levy.psi(b, alpha=1.0, lam=lam, eta_j=eta), ref) < 1e-14
    assert rel(levy.psi(lam, alpha=1.0, lam=lam, eta_j=1.0), 2 * lam * math.log(2) / math.pi) < 1e-14


def test_psi_domain_and_degenerate_cases():
    assert levy.psi(2.0000001, alpha=1.5, lam=2.0) == math.inf
    assert levy.psi(-3.0, alpha=0.5, lam=2.0) == math.inf
    assert levy.psi(0.3, alpha=1.5, lam=0.0) == math.inf
    assert levy.psi(0.0, alpha=1.5, lam=0.0) == 0.0
    assert levy.psi(0.0, alpha=1.5, lam=2.0) == 0.0
    assert levy.psi(5.0, alpha=1.5, lam=2.0, eta_j=0.0) == 0.0   # no jumps at all
    # symmetric, linear in eta_J, adjoint equals psi
    assert levy.psi(-0.7, alpha=1.2, lam=1.0) == levy.psi(0.7, alpha=1.2, lam=1.0)
    assert rel(levy.psi(0.7, alpha=1.2, lam=1.0, eta_j=3.0), 3 * levy.psi(0.7, alpha=1.2, lam=1.0)) < 1e-15
    assert levy.psi_adjoint(0.4, alpha=1.2, lam=1.0) == levy.psi(-0.4, alpha=1.2, lam=1.0)


def test_psi_broadcasting():
    beta = np.linspace(0, 1, 5)[:, None, None]
    alpha = np.array([0.5, 1.0, 1.5])[None, :, None]
    lam = np.array([1.0, 2.0])[None, None, :]
    out = levy.psi(beta, alpha=alpha, lam=lam, eta_j=2.0)
    assert out.shape == (5, 3, 2)
    assert rel(out[3, 2, 1], psi_closed_ref(0.75, 1.5, 2.0, 2.0)) < 1e-13
    assert isinstance(levy.psi(0.5, alpha=1.5, lam=2.0), float)


@pytest.mark.parametrize("alpha", [0.3, 1.0, 1.6])
def test_second_and_fourth_derivative_of_psi_are_the_cumulants(alpha):
    """Psi''(0) = Var and Psi''''(0) = k4, by central differences of the closed form at 60 digits."""
    lam, eta = 1.3, 0.7
    with mp.workdps(60):
        f = lambda b: psi_closed_ref(b, alpha, lam, eta)  # noqa: E731
        h2, h4 = mp.mpf("1e-12"), mp.mpf("1e-6")
        d2 = (f(h2) + f(-h2) - 2 * f(0)) / h2 ** 2
        d4 = (f(2 * h4) - 4 * f(h4) + 6 * f(0) - 4 * f(-h4) + f(-2 * h4)) / h4 ** 4
    assert rel(levy.variance(alpha=alpha, lam=lam, eta_j=eta), d2) < 1e-13
    assert rel(levy.cumulant4(alpha=alpha, lam=lam, eta_j=eta), d4) < 1e-9
    if alpha == 1:
        assert rel(levy.variance(alpha=1.0, lam=lam, eta_j=eta), 2 * eta / (math.pi * lam)) < 1e-14
        assert rel(levy.cumulant4(alpha=1.0, lam=lam, eta_j=eta), 4 * eta / (math.pi * lam ** 3)) < 1e-14


def test_cumulants_match_theory_closed_forms():
    for a in [0.2, 0.9, 1.1, 1.8]:
        lam, eta = 2.5, 1.4
        v = -eta * a * (a - 1) * lam ** (a - 2) / math.cos(math.pi * a / 2)
        k4 = -eta * a * (a - 1) * (a - 2) * (a - 3) * lam ** (a - 4) / math.cos(math.pi * a / 2)
        assert rel(levy.variance(alpha=a, lam=lam, eta_j=eta), v) < 1e-13
        assert rel(levy.cumulant4(alpha=a, lam=lam, eta_j=eta), k4) < 1e-13
    assert levy.cumulant(3, alpha=1.5, lam=1.0) == 0.0
    assert levy.variance(alpha=1.5, lam=0.0) == math.inf
    assert levy.variance(alpha=1.5, lam=1.0, eta_j=0.0) == 0.0
    with pytest.raises(ValueError, match="n must"):
        levy.cumulant(0, alpha=1.5, lam=1.0)


def char_ref(xi, alpha, lam, eta=1):
    with mp.workdps(50):
        a, l, x, e = (mp.mpf(v) for v in (alpha, lam, xi, eta))
        if a == 1:
            return -e * (2 * x * mp.atan(x / l) - l * mp.log(1 + x ** 2 / l ** 2)) / mp.pi
        return mp.re(-e * ((l - 1j * x) ** a + (l + 1j * x) ** a - 2 * l ** a) / (2 * mp.cos(mp.pi * a / 2)))


@pytest.mark.parametrize("alpha", ALPHAS)
def test_char_exponent_against_closed_form(alpha):
    lam = 1.5
    for u in [1e-7, 1e-3, 0.2, 0.3, 1.0, 7.0, 1e3, 1e6]:
        got = levy.char_exponent(u * lam, alpha=alpha, lam=lam, eta_j=0.8)
        assert rel(got, char_ref(u * lam, alpha, lam, 0.8)) < 1e-12, (alpha, u)


def test_char_exponent_against_quadrature_and_stable_limit():
    # int (cos(xi z) - 1) nu(dz), by quadrature on the Levy measure
    a, lam, xi = 1.4, 0.9, 2.2
    with mp.workdps(25):
        q = 2 * c_alpha_ref(a) * mp.quad(
            lambda z: -2 * mp.sin(xi * z / 2) ** 2 * mp.exp(-lam * z) * z ** (-1 - a),
            [0, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, mp.inf])
    assert rel(levy.char_exponent(xi, alpha=a, lam=lam), q) < 1e-10
    # lam = 0: the symmetric stable normalisation E exp(i xi J_1) = exp(-eta |xi|^alpha)
    assert rel(levy.char_exponent(-2.0, alpha=1.3, lam=0.0, eta_j=0.5), -0.5 * 2 ** 1.3) < 1e-15
    # tempering -> 0 recovers the stable law
    assert rel(levy.char_exponent(1.0, alpha=1.3, lam=1e-9), -1.0) < 1e-7


@pytest.mark.parametrize("name,kwargs", [
    ("alpha", dict(alpha=2.0, lam=1.0)), ("alpha", dict(alpha=0.0, lam=1.0)),
    ("alpha", dict(alpha=float("nan"), lam=1.0)), ("lam", dict(alpha=1.5, lam=-1.0)),
    ("lam", dict(alpha=1.5, lam=float("inf"))), ("eta_j", dict(alpha=1.5, lam=1.0, eta_j=-0.1)),
])
def test_bad_parameters_raise_naming_them(name, kwargs):
    for fn in (levy.psi, levy.char_exponent):
        with pytest.raises(ValueError, match=name):
            fn(0.5, **kwargs)
    with pytest.raises(ValueError, match="beta"):
        levy.psi(float("nan"), alpha=1.5, lam=1.0)
    with pytest.raises(ValueError, match="alpha"):
        levy.c_alpha(2.5)


# --- issue 14.2: alpha -> 2 (sin(pi alpha/2) near pi); 14.10: extreme arguments ---------------

ALPHAS_NEAR_2 = [1.5, 1.95, 2 - 1e-6, 2 - 1e-10, 2 - 1e-13]


@pytest.mark.parametrize("alpha", ALPHAS_NEAR_2 + [1e-13, 1e-6])
def test_c_alpha_and_moments_keep_digits_at_the_ends_of_alpha_range(alpha):
    lam, eta = 2.0, 1.3
    with mp.workdps(50):
        a = mp.mpf(alpha)
        c = c_alpha_ref(a)
        var = 2 * eta * c * mp.gamma(2 - a) * mp.mpf(lam) ** (a - 2)
        k4 = 2 * eta * c * mp.gamma(4 - a) * mp.mpf(lam) ** (a - 4)
    assert rel(levy.c_alpha(alpha), c) < 1e-14
    assert rel(levy.variance(alpha=alpha, lam=lam, eta_j=eta), var) < 1e-13
    assert rel(levy.cumulant4(alpha=alpha, lam=lam, eta_j=eta), k4) < 1e-13


def test_variance_near_two_issue_numbers():
    # issue 14 item 2: 1.99999999999956 at alpha = 2 - 1e-13, 1.99999999956 at 2 - 1e-10
    assert abs(levy.variance(alpha=2 - 1e-13, lam=2) - 1.99999999999956) < 1e-13
    assert abs(levy.variance(alpha=2 - 1e-10, lam=2) - 1.99999999956) < 1e-11


@pytest.mark.parametrize("alpha", [2 - 1e-13, 2 - 1e-10, 1.999])
def test_psi_and_char_exponent_near_alpha_two(alpha):
    lam = 2.0
    for b in (1e-3, 0.7, 2.0):
        assert rel(levy.psi(b, alpha=alpha, lam=lam, eta_j=1.3), psi_closed_ref(b, alpha, lam, 1.3)) < 1e-12
    for xi in (1e-3, 0.7, 30.0, 1e6):
        assert rel(levy.char_exponent(xi, alpha=alpha, lam=lam, eta_j=1.3), char_ref(xi, alpha, lam, 1.3)) < 1e-12


def _char_ref_hp(xi, alpha, lam, eta):
    """docs/specification.md §2 closed form at 100 digits (no overflow in mpmath), alpha = 1 by its limit."""
    with mp.workdps(100):
        xi, a, lam, eta = (mp.mpf(v) for v in (xi, alpha, lam, eta))
        if a == 1:
            return -eta * (2 * xi * mp.atan(xi / lam) - lam * mp.log(1 + (xi / lam) ** 2)) / mp.pi
        return -eta * (2 * mp.re((lam + 1j * xi) ** a) - 2 * lam ** a) / (2 * mp.cos(mp.pi * a / 2))


def test_char_exponent_issue_case_1e160():
    # issue 14 item 10: NaN (alpha 1.5), +inf (1), +6 (0.5) before; -3e240 for alpha = 1.5
    for a in (1.5, 1.0, 0.5):
        got = levy.char_exponent(1e160, alpha=a, lam=2, eta_j=3)
        ref = _char_ref_hp(1e160, a, 2, 3)
        assert got < 0 and rel(got, ref) < 1e-13, (a, got, ref)
    assert rel(levy.char_exponent(1e160, alpha=1.5, lam=2, eta_j=3), -3e240) < 1e-9


@pytest.mark.parametrize("alpha", [1e-13, 0.05, 0.5, 1 - 1e-9, 1.0, 1 + 1e-7, 1.5, 1.95, 2 - 1e-13])
@pytest.mark.parametrize("lam", [1e-200, 2.0, 1e200])
def test_char_exponent_over_the_whole_double_range(alpha, lam):
    for u in (0.3, 3.0, 9.9e3, 1.01e4, 1e10, 1e100, 1e300):
        xi = u * lam
        if not math.isfinite(xi):
            continue
        got = levy.char_exponent(xi, alpha=alpha, lam=lam, eta_j=3.0)
        ref = _char_ref_hp(xi, alpha, lam, 3.0)
        if abs(ref) > 1.7e308:
            assert got == -math.inf
        elif abs(ref) > 1e-300:
            assert got <= 0 and rel(got, ref) < 1e-12, (u, got, ref)


def test_extreme_parameters_give_no_nan():
    # products like eta_J lam^alpha taken in log space where they would overflow/underflow
    assert rel(levy.psi(1e300, alpha=1.5, lam=1e300, eta_j=1e-300), psi_closed_ref(1e300, 1.5, 1e300, 1e-300)) < 1e-12
    assert levy.variance(alpha=1e-300, lam=0.0, eta_j=1e-300) == math.inf
    with mp.workdps(40):
        ref = 2 * mp.mpf(1e-300) * c_alpha_ref(1.5) * mp.gamma(mp.mpf(0.5)) * mp.mpf(1e-200) ** mp.mpf(-0.5)
    assert rel(levy.variance(alpha=1.5, lam=1e-200, eta_j=1e-300), ref) < 1e-12
    for a in (1e-300, 1e-13, 0.5, 1.0, 1.5, 2 - 1e-13):
        for lam in (1e-300, 1.0, 1e300):
            for xi in (1e-300, 1.0, 1e300):
                v = levy.char_exponent(xi, alpha=a, lam=lam, eta_j=1.0)
                assert not math.isnan(v) and v <= 0, (a, lam, xi, v)


@pytest.mark.parametrize("alpha", [1e-13, 1e-6, 0.01])
def test_psi_keeps_digits_as_alpha_goes_to_zero(alpha):
    lam = 2.0
    for x in XS:
        assert rel(levy.psi(x * lam, alpha=alpha, lam=lam), psi_closed_ref(x * lam, alpha, lam)) < 1e-12, x
    for u in (0.3, 3.0, 1e3, 1e6, 1e100):
        assert rel(levy.char_exponent(u * lam, alpha=alpha, lam=lam), _char_ref_hp(u * lam, alpha, lam, 1)) < 1e-12


@pytest.mark.parametrize("alpha", ALPHAS_NEAR_2 + [1e-6, 0.5, 1.0])
def test_jump_scheme_rates_keep_digits_near_alpha_two(alpha):
    # Lambda_eps and sigma_eps^2 of docs/specification.md §7 take c_alpha from levy.c_alpha (reflected sine)
    try:
        from levysde.simulation.scheme import big_jump_rate, small_jump_variance
    except ImportError:
        from levysde.simulation import big_jump_rate, small_jump_variance
    lam, eta, eps = 2.0, 1.3, 0.05
    with mp.workdps(50):
        a = mp.mpf(alpha)
        c = c_alpha_ref(a)
        big = 2 * eta * c * mp.quad(lambda z: mp.exp(-lam * z) * z ** (-1 - a), [eps, 1, mp.inf])
        small = 2 * eta * c * mp.mpf(lam) ** (a - 2) * mp.gammainc(2 - a, 0, lam * eps)
    assert rel(big_jump_rate(eps, alpha=alpha, lam=lam, eta_j=eta), big) < 1e-12
    assert rel(small_jump_variance(eps, alpha=alpha, lam=lam, eta_j=eta), small) < 1e-12
