"""The tempered Pareto law above a threshold (levysde.stats.tempered_pareto): the normaliser against
mpmath's generalised exponential integral, the density against its definition by quadrature, exact
samples against the law (KS), and the MLE against the truth within its stated errors."""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import integrate, stats

from levysde.stats import tempered_pareto as tp


@pytest.mark.parametrize("alpha", [-1.0, -0.5, 0.0, 0.8, 1.0, 1.5, 2.0, 3.5])
@pytest.mark.parametrize("theta", [1e-6, 0.01, 0.3, 1.0, 4.0, 30.0, 150.0])
def test_log_norm_is_the_generalised_exponential_integral(alpha, theta):
    ref = float(mpmath.log(mpmath.expint(1 + alpha, theta)))
    assert tp.log_norm(alpha, theta) == pytest.approx(ref, rel=1e-11, abs=1e-11)


def test_log_norm_closed_forms_and_bad_input():
    assert tp.log_norm(1.5, 0.0) == pytest.approx(-math.log(1.5))              # Pareto: 1/alpha
    assert tp.log_norm(-1.0, 2.0) == pytest.approx(-2.0 - math.log(2.0))       # E_0(z) = e^-z / z
    assert tp.log_norm(0.0, 0.7) == pytest.approx(math.log(mpmath.e1(0.7)))    # E_1
    with pytest.raises(ValueError, match="alpha"):
        tp.log_norm(-0.5, 0.0)
    with pytest.raises(ValueError, match="alpha"):
        tp.log_norm(5.0, 1.0)
    with pytest.raises(ValueError, match="theta"):
        tp.log_norm(1.0, -1.0)


@pytest.mark.parametrize("alpha,lam,u", [(0.8, 2.5, 0.5), (1.8, 3.0, 0.2), (-0.5, 1.0, 1.0), (1.2, 0.0, 0.3)])
def test_density_integrates_to_one_and_has_the_tempered_shape(alpha, lam, u):
    f = lambda x: math.exp(tp.logpdf(x, alpha, lam, u))            # noqa: E731
    total = integrate.quad(f, u, math.inf, limit=200)[0]
    assert total == pytest.approx(1.0, rel=1e-8)
    x = np.array([1.5 * u, 2.0 * u, 4.0 * u])
    lp = tp.logpdf(x, alpha, lam, u)
    shape = -(1 + alpha) * np.log(x) - lam * x
    assert np.allclose(lp - shape, (lp - shape)[0], rtol=0, atol=1e-12)
    assert tp.logpdf(0.5 * u, alpha, lam, u) == -np.inf


@pytest.mark.parametrize("alpha,lam,u", [(0.8, 2.5, 0.5), (1.8, 3.0, 0.2), (-0.5, 1.0, 1.0), (1.5, 0.0, 1.0)])
def test_samples_follow_the_law(alpha, lam, u):
    """Both rejection envelopes (Pareto for alpha > lam u, exponential otherwise) give the law: KS
    against the CDF by quadrature of the density."""
    x = np.sort(tp.sample(np.random.default_rng(11), 1000, alpha, lam, u))
    # closed form: 1 - F(t) = (t/u)^-alpha E_{1+alpha}(lam t) / E_{1+alpha}(lam u) (mpmath)
    if lam > 0:
        den = mpmath.expint(1 + alpha, lam * u)
        cdf = np.array([1 - float((t / u) ** -alpha * mpmath.expint(1 + alpha, lam * t) / den) for t in x])
    else:
        cdf = 1 - (x / u) ** -alpha
    assert x.min() > u
    n = x.size
    d = max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))
    assert stats.kstwo(n).sf(d) > 0.001


def test_sums_are_per_group_sufficient_statistics():
    x = np.array([0.5, 2.0, 4.0, 3.0])
    s = tp.sums(x, 1.0, groups=[0, 0, 1, 1], n_groups=3)
    assert np.allclose(s, [[1, math.log(2), 2], [2, math.log(12), 7], [0, 0, 0]], rtol=1e-14, atol=0)


@pytest.mark.parametrize("alpha,lam,u", [(0.8, 2.0, 0.5), (1.5, 1.0, 1.0), (-0.5, 1.5, 0.5)])
@pytest.mark.slow
def test_mle_recovers_the_truth_within_its_errors(alpha, lam, u):
    """Over 20 exact samples the standardized errors of (alpha, lam) have mean ~ 0 and sd ~ 1 (the
    inverse Fisher information is the MLE's asymptotic covariance)."""
    rng = np.random.default_rng(5)
    za, zl = [], []
    for _ in range(20):
        f = tp.fit(tp.sample(rng, 2000, alpha, lam, u), u)
        assert f.converged and not f.at_bound
        za.append((f.alpha - alpha) / math.sqrt(f.cov[0, 0]))
        zl.append((f.lam - lam) / f.lam_se)
    for z in (np.array(za), np.array(zl)):
        assert abs(z.mean()) < 3 / math.sqrt(20) + 0.1
        assert 0.6 < z.std() < 1.45


def test_lam_given_alpha_is_decreasing_in_alpha_and_exact_at_the_true_alpha():
    """lam_hat(alpha) decreases strictly in alpha (the profile bounds), and at the true alpha it is
    the one-parameter MLE: within its error of the truth."""
    rng = np.random.default_rng(7)
    s = tp.sums(tp.sample(rng, 20000, 1.0, 2.0, 0.5), 0.5)
    lams = [tp.fit_lam_given_alpha(s, 0.5, a)[0] for a in (0.0, 0.5, 1.0, 1.5, 2.0)]
    assert all(a > b for a, b in zip(lams, lams[1:], strict=False))
    lam, se = tp.fit_lam_given_alpha(s, 0.5, 1.0)
    assert abs(lam - 2.0) < 3 * se
    # the score equation: E[y] at the fit equals the sample mean of y = x/u
    mean_x = integrate.quad(lambda x: x * math.exp(tp.logpdf(x, 1.0, lam, 0.5)), 0.5, math.inf, limit=200)[0]
    assert mean_x / 0.5 == pytest.approx(s[0, 2] / s[0, 0], rel=1e-8)
    # a mean exceedance at least the Pareto law's: lam_hat = 0
    assert tp.fit_lam_given_alpha(np.array([100.0, 0.0, 100.0 * 5.0]), 1.0, 1.5)[0] == 0.0
