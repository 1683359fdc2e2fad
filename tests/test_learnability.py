"""Learnability window (docs/specification.md §6): kappa_alpha, N(l), H_N from tabulated and
closed-form envelopes, against the three closed-form scaling laws."""
from __future__ import annotations

import math

import numpy as np
import pytest

from levysde.theory.learnability import kappa_alpha, learnability_window, sample_complexity, window_scaling_law


def test_kappa_alpha():
    assert kappa_alpha(2.0) == 2.0
    assert kappa_alpha(1.5) == pytest.approx(3.0, rel=1e-15)
    np.testing.assert_allclose(kappa_alpha([1.25, 2.0]), [5.0, 2.0])
    for bad in (1.0, 0.5, 2.0000001, float("nan"), float("inf"), -3.0):
        with pytest.raises(ValueError, match="alpha_g"):
            kappa_alpha(bad)
    with pytest.raises(ValueError, match="alpha_g"):
        kappa_alpha([1.5, 1.0])


def test_sample_complexity():
    assert sample_complexity(0.1, alpha_g=2.0, C=3.0) == pytest.approx(300.0, rel=1e-14)
    assert sample_complexity(0.5, alpha_g=1.5) == pytest.approx(8.0, rel=1e-14)
    with pytest.raises(ValueError, match="f"):
        sample_complexity(0.0)
    with pytest.raises(ValueError, match="C"):
        sample_complexity(0.5, C=0.0)
    with pytest.raises(ValueError, match="alpha_g"):
        sample_complexity(0.5, alpha_g=2.5)


TAU, BETA, GAMMA = 5.0, 0.5, 1.0
CLASS_TABLES = {
    "exponential": (np.geomspace(1e-3, 1e4, 1500), lambda l: np.exp(-l / TAU), {"tau": TAU}),
    "polynomial": (np.geomspace(1.0, 1e14, 1500), lambda l: l ** (-BETA), {"beta": BETA}),
    "logarithmic": (np.geomspace(math.e, 1e300, 3000), lambda l: np.log(l) ** (-GAMMA), {"gamma": GAMMA}),
}


@pytest.mark.parametrize("cls", sorted(CLASS_TABLES))
@pytest.mark.parametrize("alpha_g", [2.0, 1.5, 1.2])
@pytest.mark.parametrize("N_over_C", [10.0, 300.0])
def test_scaling_laws_from_tables_within_2pct(cls, alpha_g, N_over_C):
    lags, f, par = CLASS_TABLES[cls]
    C = 2.0
    N = N_over_C * C
    law = window_scaling_law(cls, N, C=C, alpha_g=alpha_g, **par)
    # independent evaluation of the closed forms of docs/specification.md §6
    k = alpha_g / (alpha_g - 1)
    expect = {"exponential": TAU / k * math.log(N_over_C),
              "polynomial": N_over_C ** (1 / (BETA * k)),
              "logarithmic": math.exp(N_over_C ** (1 / (GAMMA * k)))}[cls]
    assert law == pytest.approx(expect, rel=1e-12)
    H_tab = learnability_window(N, lags=lags, f=f(lags), alpha_g=alpha_g, C=C)
    assert H_tab == pytest.approx(law, rel=0.02)
    H_fun = learnability_window(N, f_func=f, alpha_g=alpha_g, C=C)
    assert H_fun == pytest.approx(law, rel=1e-9)
    # definition: N(l) <= N just below H_N, > N just above
    assert sample_complexity(f(H_fun * (1 - 1e-6)), alpha_g=alpha_g, C=C) <= N
    assert sample_complexity(f(H_fun * (1 + 1e-6)), alpha_g=alpha_g, C=C) > N


def test_table_interpolation_exact_for_power_law():
    lags = np.geomspace(1, 1e6, 7)                 # coarse: one node per decade
    H = learnability_window(1e3, lags=lags, f=lags ** -0.7, alpha_g=2.0)
    assert H == pytest.approx(1e3 ** (1 / 1.4), rel=1e-12)


def test_window_edge_cases_and_errors():
    lags = np.geomspace(1, 100, 50)
    f = lags ** -1.0
    assert learnability_window(0.5, lags=lags, f=f) == 0.0            # N < C: nothing learnable
    with pytest.raises(ValueError, match="extend the lags"):
        learnability_window(1e6, lags=lags, f=f)                      # H = 1e3 beyond the table
    with pytest.raises(ValueError, match="smaller lags"):
        learnability_window(1.1, lags=lags[10:], f=f[10:])
    with pytest.raises(ValueError, match="lags"):
        learnability_window(10.0, lags=lags[::-1], f=f)
    with pytest.raises(ValueError, match="exactly one"):
        learnability_window(10.0)
    with pytest.raises(ValueError, match="N"):
        learnability_window(-1.0, lags=lags, f=f)
    with pytest.raises(ValueError, match="alpha_g"):
        learnability_window(10.0, lags=lags, f=f, alpha_g=1.0)
    with pytest.raises(ValueError, match="f_func"):
        learnability_window(1e300, f_func=lambda l: np.ones_like(l) * 0.9)
    with pytest.raises(ValueError, match="decay_class"):
        window_scaling_law("stretched", 10.0, tau=1.0)
    with pytest.raises(ValueError, match="beta"):
        window_scaling_law("polynomial", 10.0)
    with pytest.raises(ValueError, match="tau"):
        window_scaling_law("exponential", 10.0, tau=-1.0)
    with pytest.raises(ValueError, match="N"):
        window_scaling_law("exponential", 0.5, tau=1.0)


@pytest.mark.parametrize("alpha_g", [np.array([1.5, 2.0]), [1.5, 2.0], True, "2", np.nan, 1.0, 2.5])
def test_learnability_window_alpha_g_is_one_real(alpha_g):
    lags = np.arange(1.0, 50.0)
    with pytest.raises(ValueError, match="^alpha_g must"):
        learnability_window(1e3, lags=lags, f=lags ** -0.7, alpha_g=alpha_g)
