r"""Laplace-Tauberian map: time-scale spectrum -> forgetting envelope f(l) (docs/specification.md §1, §5, §8).

With :math:`\zeta = \log \bar\mu` the log decay rate and :math:`\tau = e^{-\zeta}` the time scale
(docs/specification.md §1), the envelope is

.. math::

    f(l) = \int_0^\infty e^{-l/\tau} p(\tau)\, d\tau = E_\rho\big[e^{-l e^\zeta}\big],
    \qquad f(0) = 1,

for lags :math:`l \ge 0` in steps (docs/specification.md §5). Three ways in, one entry point
:func:`envelope`:

(a) samples of :math:`\zeta` (optionally weighted): a Monte-Carlo mean, computed by
    binning in :math:`\zeta` with a second-order moment correction and a rigorous,
    reported bias bound (:func:`envelope_samples`);
(b) a :math:`\zeta` histogram (edges, counts): the density is constant on each bin and
    each bin's piece is integrated exactly,
    :math:`\int_a^b e^{-l e^z} dz = E_1(l e^a) - E_1(l e^b)` (:func:`envelope_hist`);
(c) a density :math:`p(\tau)` or :math:`\rho(\zeta)` as a callable: adaptive quadrature in
    :math:`\zeta` on windows where the mass (times the kernel) was located first on a grid
    (:func:`envelope_density`). Never a blind quadrature over :math:`\tau \in [0, \infty)`.

The Tauberian prediction :math:`f \sim A\, \Gamma(\beta)\, l^{-\beta}` for
:math:`p(\tau) \sim A \tau^{-1-\beta}` (docs/specification.md §5) is :func:`tauberian_prediction`.
The asymptotics of :math:`f` for the model's spectrum are
:mod:`levysde.theory.envelope_asymptotics`; the slopes and decay classes of an envelope curve are
:mod:`levysde.theory.envelope_decay`.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import integrate, special

from levysde.core.validate import check_array, check_real, check_samples

if TYPE_CHECKING:
    from levysde.theory.phases import PhaseResult

__all__ = [
    'envelope', 'envelope_samples', 'envelope_hist', 'envelope_density', 'SampleEnvelope',
    'tauberian_prediction', 'valid_lag_max',
]


#: sup over s of |d^3/ds^3 exp(-e^s)| = sup_x |x^3 - 3x^2 + x| e^{-x} (computed on a fine grid)
_SUP_D3 = 0.42962


#: kernel values exp(-x) with x = l e^zeta below this are 1 - x to double precision
_X_SMALL = 1e-18


#: kernel values with x above this underflow to 0 in double precision (exp(-745) is the last subnormal)
_X_LARGE = 760.0


_GL_X, _GL_W = np.polynomial.legendre.leggauss(8)

#: a density given as a callable: p(tau) or rho(zeta), vectorised (array in, array out) or scalar
Density = Callable[[NDArray[np.float64]], ArrayLike] | Callable[[float], float]


def _check_hist(edges, counts):
    e = check_array("hist edges", edges, ndim=1, min_size=2, increasing=True)
    c = check_array("hist counts", counts, lo=0.0)
    if c.ndim == 2:
        c = c.sum(axis=0)
    if c.ndim != 1 or c.size != e.size - 1:
        raise ValueError(f"hist counts must have shape (n_bins,) or (n_groups, n_bins) with "
                         f"n_bins = len(edges) - 1 = {e.size - 1}; got {np.shape(counts)}")
    if not c.sum() > 0:
        raise ValueError("hist counts must have a positive total")
    return e, c


@dataclass(frozen=True)
class SampleEnvelope:
    r"""Envelope of an empirical zeta measure (docs/specification.md §5, method (a)).

    Made by :func:`envelope_samples` (and :func:`envelope` with samples); each array
    attribute is shaped like ``lags``.

    Attributes
    ----------
    f : ndarray
        The envelope :math:`\sum_i w_i e^{-\ell e^{\zeta_i}} / \sum_i w_i`, in [0, 1].
    stderr : ndarray
        Monte-Carlo standard error of f for independent samples,
        :math:`\sqrt{\sum_i w_i^2 (g_i - f)^2} / \sum_i w_i` with
        :math:`g_i = e^{-\ell e^{\zeta_i}}` (too small for correlated samples,
        docs/specification.md §8); NaN when not computed (``errors=False``).
    bias_bound : ndarray
        Rigorous bound on :math:`|f - \text{exact empirical mean}|` due to binning (0 when
        computed exactly); NaN when not computed.
    n_eff : float
        Effective sample size :math:`(\sum w)^2 / \sum w^2`.
    bin_width : float
        zeta bin width used (0: exact direct sum).

    Examples
    --------
    >>> r = envelope_samples([1.0, 10.0], [-1.0, 0.0, -3.0])
    >>> print(r.f.round(6), r.n_eff, r.bin_width)
    [0.670504 0.211041] 3.0 0.0
    >>> print(round(float(r.f[0]), 6) == round(float(np.mean(np.exp(-np.exp([-1.0, 0.0, -3.0])))), 6))
    True
    """

    f: np.ndarray
    stderr: np.ndarray
    bias_bound: np.ndarray
    n_eff: float
    bin_width: float


def _bin_moments(z, w, lo, h, nb):
    """Per-bin weight, weighted mean (absolute zeta) and central second moment sum."""
    idx = np.minimum(((z - lo) / h).astype(np.int64), nb - 1)
    t = z - (lo + idx * h)                       # offset inside the bin, in [0, h]
    W = np.bincount(idx, weights=w, minlength=nb)
    S1 = np.bincount(idx, weights=t if w is None else w * t, minlength=nb)
    S2 = np.bincount(idx, weights=t * t if w is None else w * t * t, minlength=nb)
    keep = W > 0
    W, S1, S2 = W[keep], S1[keep], S2[keep]
    left = lo + np.flatnonzero(keep) * h
    mt = S1 / W
    m = left + mt
    V = np.maximum(S2 - W * mt * mt, 0.0)       # sum w (zeta - m)^2
    return W, m, V


def _lag_exp(lag, z, s=None):
    """x = l e^z for every pair (lag_i, z_j), shape (len(lag), len(z)).

    The product l * e^z where e^z is a normal double, ``exp(log l + z)`` where e^z
    overflows or underflows (no cap on z, no inf * 0): the kernel exp(-x) of docs/specification.md §5
    is then right for every finite zeta and lag. ``s`` may pass e^z precomputed.
    """
    with np.errstate(over="ignore", under="ignore"):
        s = np.exp(z) if s is None else s
        x = lag[:, None] * s[None, :]
        odd = ~np.isfinite(s) | (s < 1e-300)
        if np.any(odd):
            x[:, odd] = np.exp(np.log(lag)[:, None] + z[None, odd])
    return x


def _kernel_sums(lags, W, m, V, h, want_bound):
    """sum_b W_b [g(m_b) + g''(m_b) V_b / (2 W_b)] with g(z) = exp(-l e^z), per lag, and
    the third-order remainder bound sum_b W_b h^3/6 sup_bin |g'''|.

    g'' = (x^2 - x) g with x = l e^m; x is clipped at 800 (where g = 0 exactly), so
    x^2 never overflows into inf * 0."""
    with np.errstate(over="ignore", under="ignore"):
        s = np.exp(m)
    out = np.empty(lags.size)
    bound = np.zeros(lags.size)
    chunk = max(1, int(4_000_000 // max(s.size, 1)))
    # fast form (three matrix-vector products) where no product can overflow
    fast = float(s.max()) < 1e150 and float(lags.max()) < 1e150 and float(lags.max() * s.max()) < 1e150 \
        and float(s.min()) > 1e-300
    cols = np.stack([W, V * s * s, V * s], axis=1) if fast else None
    for i in range(0, lags.size, chunk):
        L = lags[i:i + chunk]
        X = np.minimum(_lag_exp(L, m, s), 800.0)
        E = np.exp(-X)
        if fast:
            r = E @ cols
            out[i:i + chunk] = r[:, 0] + 0.5 * (L * L * r[:, 1] - L * r[:, 2])
        else:
            out[i:i + chunk] = E @ W + 0.5 * ((E * (X * X - X)) @ V)
        if want_bound:
            xh = X * math.exp(h)
            d3 = np.minimum((xh * xh * xh + 3 * xh * xh + xh) * np.exp(-X * math.exp(-h)), _SUP_D3)
            bound[i:i + chunk] = d3 @ W * (h ** 3 / 6.0)
    return out, bound


def envelope_samples(lags: ArrayLike, zeta: ArrayLike, weights: ArrayLike | None = None, *,
                     bin_width: float | None = 0.01,
                     exact_limit: float = 2e7, errors: bool = True) -> SampleEnvelope:
    r"""Envelope of an empirical (weighted) zeta measure, with error figures (docs/specification.md §5 (a)).

    Parameters
    ----------
    lags : array_like of float
        Lags l >= 0 in steps, any shape.
    zeta : array_like
        Samples of zeta = log(mu_bar), finite (flattened).
    weights : array_like, optional
        Same size as ``zeta``, >= 0 with a positive sum (e.g. the ELR amplitudes Lambda_q of
        docs/specification.md §9); equal weights when None.
    bin_width : float or None, optional
        zeta bin width h of the fast path (default 0.01); 0 or None forces the exact direct
        sum.
    exact_limit : float, optional
        Use the exact direct sum when n_samples * n_lags <= this (default 2e7).
    errors : bool, optional
        Compute ``stderr`` and ``bias_bound`` (about doubles the cost); when False both are
        returned as NaN arrays.

    Returns
    -------
    SampleEnvelope
        ``f``, ``stderr`` and ``bias_bound`` shaped like ``lags``; f(0) = 1 exactly.

    Raises
    ------
    ValueError
        For negative/non-finite lags, non-finite zeta, bad weights or a
        negative bin_width.

    Notes
    -----
    Method and error of the fast path. Samples are binned in :math:`\zeta`; within a bin of
    weight :math:`W`, weighted mean :math:`m` and central second moment :math:`V/W` the kernel
    :math:`g(z) = e^{-l e^z}` is expanded to second order about :math:`m` (the first-order term
    vanishes), so the only bias is the third-order remainder, bounded rigorously per lag by

    .. math::

        \frac{\sum_b W_b\, h^3/6\, \sup_{\mathrm{bin}} |g^{(3)}|}{\sum W} \le 0.0716\, h^3

    (:math:`7.2 \cdot 10^{-8}` at :math:`h = 0.01`), returned as ``bias_bound``. Samples with
    :math:`l_{\max} e^\zeta < 10^{-18}` are summed exactly as :math:`1 - l e^\zeta`; those with
    :math:`l_{\min} e^\zeta > 760` contribute exactly 0 in double precision. Cost:
    :math:`O(n)` binning + :math:`O(n_{\mathrm{bins}} n_{\mathrm{lags}})` exponentials
    (:math:`10^7` samples x :math:`10^3` lags: about 0.2 s warm on 2 cores, ``python benchmarks/bench_envelope.py``).

    References
    ----------
    .. [1] W. Feller, An Introduction to Probability Theory and Its Applications, Vol. II, 2nd ed.,
       Wiley (1971), §XIII.5 (Tauberian theorems).
    .. [2] L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790.

    Examples
    --------
    >>> print(envelope_samples([1.0, 10.0], [-3.0, -1.0, 0.0], bin_width=None, errors=False).f)
    [0.67050402 0.21104078]
    """
    lag = check_array("lags", lags, min_size=1, lo=0.0)
    z, w = check_samples(zeta, weights)
    if bin_width is not None:
        check_real("bin_width", bin_width, 0.0)
    flat = lag.ravel()
    w2 = None if w is None else w * w
    wsum = float(z.size if w is None else w.sum())
    w2sum = float(z.size if w2 is None else w2.sum())
    f = np.ones(flat.size)
    nan = np.full(flat.size, np.nan)
    se = np.zeros(flat.size) if errors else nan
    bb = np.zeros(flat.size) if errors else nan.copy()
    pos = flat > 0
    lp = flat[pos]
    h = 0.0 if (not bin_width or z.size * max(lp.size, 1) <= exact_limit) else float(bin_width)
    if lp.size:
        g1, bnd = _sample_kernel_sum(lp, z, w, h, errors)
        fp = np.clip(g1 / wsum, 0.0, 1.0)
        f[pos] = fp
        if errors:
            # Var of g = exp(-l e^zeta): g^2 at lag l is g at lag 2l
            q1 = g1 if w is None else _sample_kernel_sum(lp, z, w2, h, False)[0]
            q2 = _sample_kernel_sum(2 * lp, z, w2, h, False)[0]
            se[pos] = np.sqrt(np.maximum(q2 - 2 * fp * q1 + fp * fp * w2sum, 0.0)) / wsum
            bb[pos] = bnd / wsum
    return SampleEnvelope(f=f.reshape(lag.shape), stderr=se.reshape(lag.shape),
                          bias_bound=bb.reshape(lag.shape), n_eff=wsum * wsum / w2sum, bin_width=h)


def _sample_kernel_sum(lp, z, w, h, want_bound):
    """sum_i w_i exp(-l e^{z_i}) for lags lp > 0: exact (h = 0) or binned with width h,
    and the binning bias bound (zeros when exact or not wanted)."""
    ww = np.ones_like(z) if w is None else w
    if h == 0:
        with np.errstate(over="ignore", under="ignore"):
            s = np.exp(z)
        out = np.empty(lp.size)
        chunk = max(1, int(4_000_000 // z.size))
        for i in range(0, lp.size, chunk):
            with np.errstate(over="ignore"):
                out[i:i + chunk] = np.exp(-_lag_exp(lp[i:i + chunk], z, s)) @ ww
        return out, np.zeros(lp.size)
    # far left (l_max e^z < 1e-18): exp(-x) = 1 - x exactly in double; far right
    # (l_min e^z > 760): exp(-x) underflows to 0 for every lag
    z_lo = math.log(_X_SMALL / float(lp.max()))
    z_hi = math.log(_X_LARGE / float(lp.min()))
    left = z < z_lo
    mid = (~left) & (z <= z_hi)
    out = float(ww[left].sum()) - lp * float((ww[left] * np.exp(z[left])).sum())
    bound = np.zeros(lp.size)
    if np.any(mid):
        zm = z[mid]
        lo = float(zm.min())
        nb = max(1, int(math.ceil((float(zm.max()) - lo) / h)) + 1)
        W, m, V = _bin_moments(zm, None if w is None else w[mid], lo, h, nb)
        s_mid, bound = _kernel_sums(lp, W, m, V, h, want_bound)
        out = out + s_mid
    return out, bound


def _ein(x):
    """Ein(x) = int_0^x (1 - e^-t)/t dt = sum_k (-1)^(k+1) x^k/(k k!) for 0 <= x <= 1 (20 terms:
    the truncation is below 1/(21 21!) < 1e-21)."""
    k = np.arange(20, 0, -1, dtype=float)
    acc = np.zeros_like(x)
    for kk in k:                                 # Horner in x: x (1/1!1 - x (1/2!2 - x (...)))
        acc = 1.0 / (kk * special.factorial(kk)) - x * acc
    return x * acc


def _e1_from_log(logx, x):
    """E1(x) with x = e^logx; where x underflows, E1 = -gamma - log x + Ein(x) ~ -gamma - logx."""
    with np.errstate(over="ignore", under="ignore"):
        return np.where(logx < -700.0, -np.euler_gamma - logx, special.exp1(x))


def _bin_integrals(lag, a, b):
    """I[i, j] = int_{a_j}^{b_j} exp(-lag_i e^z) dz for lag_i > 0 (docs/specification.md §5), exact to rounding.

    With x = l e^z (x_a, x_c, x_b at the lower edge, the midpoint c and the upper edge,
    half-width hw), four cancellation-free forms:

    * x_b <= 1 and b - a <= 1: ``(b - a) - int_a^b (1 - exp(-l e^z)) dz``, the small second
      integral by 8-point Gauss-Legendre (integrand entire, bounded by x_b);
    * x_b <= 1, b - a > 1: ``(b - a) - [Ein(x_b) - Ein(x_a)]`` (Ein by its series; the
      bracket is < 0.8 while b - a > 1);
    * narrow bins, hw <= 1/2 and ``x_c expm1(hw) <= 1``:
      ``hw e^(-x_c) sum_k w_k exp(-x_c expm1(hw t_k))`` (Gauss-Legendre in the offset from
      the midpoint: no difference of nearly equal numbers, relative error ~(1 + x) eps
      where 1 + x is the conditioning of the kernel itself);
    * otherwise ``E1(x_a) - E1(x_b)`` (scipy.special.exp1), where x_b - x_a > 1 or
      x_a < x_b/e, so E1(x_b) < E1(x_a)/e: at most one digit cancels. E1 of an underflowed
      x_a is taken from log x_a.

    x = l e^z is formed as a product where it is a normal double and from log l + z
    beyond (no overflow to inf times 0).
    """
    logl = np.log(lag)[:, None]
    c = 0.5 * (a + b)
    hw = 0.5 * (b - a)
    w = np.broadcast_to((b - a)[None, :], (lag.size, a.size))
    with np.errstate(over="ignore", under="ignore"):
        xa, xb, xc = _lag_exp(lag, a), _lag_exp(lag, b), _lag_exp(lag, c)
        la = logl + a[None, :]
        small = xb <= 1.0
        narrow = ~small & (hw[None, :] <= 0.5) & (xc * np.expm1(hw)[None, :] <= 1.0)
        out = np.empty(xb.shape)
        gen = ~small & ~narrow
        if np.any(gen):
            out[gen] = _e1_from_log(la[gen], xa[gen]) - special.exp1(xb[gen])
        wide = small & (w > 1.0)
        if np.any(wide):
            out[wide] = w[wide] - (_ein(xb[wide]) - _ein(xa[wide]))
        ii, jj = np.nonzero(small & ~wide)
        if ii.size:
            en = np.exp(c[jj, None] + hw[jj, None] * _GL_X[None, :])           # (k, 8)
            J = (-np.expm1(-lag[ii, None] * en)) @ _GL_W * hw[jj]
            out[ii, jj] = w[ii, jj] - J
        ii, jj = np.nonzero(narrow)
        if ii.size:
            x0 = xc[ii, jj]
            g = np.exp(-x0[:, None] * np.expm1(hw[jj, None] * _GL_X[None, :])) @ _GL_W
            out[ii, jj] = hw[jj] * np.exp(-x0) * g
    return out


def envelope_hist(lags: ArrayLike, edges: ArrayLike, counts: ArrayLike) -> np.ndarray:
    r"""Envelope of a zeta histogram, each bin integrated exactly (docs/specification.md §5 (b)).

    The density is taken constant on each bin, :math:`\rho = c_j / \sum_k c_k (b_k - a_k)` on
    :math:`[a_j, b_j)`, and

    .. math::

        f(l) = \sum_j \frac{c_j}{\sum_k c_k (b_k - a_k)} \big[E_1(l e^{a_j}) - E_1(l e^{b_j})\big]

    (scipy.special.exp1), each bin's integral in a form without cancellation (small
    l e^b, narrow bins, wide bins: see ``_bin_integrals``), so a bin of half-width
    1e-12 at l e^z = 100 keeps a relative error ~1e-16 times (1 + l e^z). Mass outside
    [edges[0], edges[-1]] is not known to the histogram: the result is the envelope of the
    histogram's own measure.

    Parameters
    ----------
    lags : array_like of float
        Lags l >= 0 in steps, any shape.
    edges : array_like, shape (n_bins + 1,)
        Strictly increasing zeta bin edges.
    counts : array_like, shape (n_bins,) or (n_groups, n_bins)
        Non-negative counts per bin (groups are summed).

    Returns
    -------
    ndarray
        f(l), shaped like ``lags``; f(0) = 1.

    Raises
    ------
    ValueError
        For bad lags, edges or counts.

    Notes
    -----
    With the density :math:`\rho_j = c_j / \sum_k c_k (b_k - a_k)` on bin :math:`[a_j, b_j]`
    and :math:`\int_a^b \exp(-\ell e^{z})\,dz = E_1(\ell e^{a}) - E_1(\ell e^{b})`
    (substitute :math:`x = \ell e^z`),

    .. math::

       f(\ell) = \sum_j \rho_j\,\big[E_1(\ell e^{a_j}) - E_1(\ell e^{b_j})\big]

    (the specification, §5 (b)); :math:`E_1` is the exponential integral.

    References
    ----------
    .. [1] W. Feller, An Introduction to Probability Theory and Its Applications, Vol. II, 2nd ed.,
       Wiley (1971), §XIII.5 (Tauberian theorems).
    .. [2] L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790.

    Examples
    --------
    >>> edges = np.array([-2.0, -1.0, 0.0]); counts = np.array([1.0, 1.0])
    >>> print(envelope_hist([0.0, 1.0], edges, counts))
    [1.         0.66714553]
    """
    lag = check_array("lags", lags, min_size=1, lo=0.0)
    e, c = _check_hist(edges, counts)
    keep = c > 0
    a, b, c = e[:-1][keep], e[1:][keep], c[keep]
    dens = c / (c.sum() * (b - a))
    flat = lag.ravel()
    f = np.ones(flat.size)
    pos = np.flatnonzero(flat > 0)
    chunk = max(1, int(250_000 // a.size))      # bounds the (lags x bins x 8) temporaries
    for i in range(0, pos.size, chunk):
        sel = pos[i:i + chunk]
        f[sel] = _bin_integrals(flat[sel], a, b) @ dens
    return np.clip(f, 0.0, 1.0).reshape(lag.shape)


#: locating grid for callable densities: zeta in [-_GRID_L, _GRID_L] with step _GRID_H
_GRID_L = 300.0


_GRID_H = 0.005


#: relative level (natural log) below which integrand values are treated as no mass
_LOG_NEGLIGIBLE = 55.0


#: zeta range where tau = e^-zeta is a positive finite double: beyond it p(tau) cannot be evaluated
_ZETA_TAU_MIN = -math.log(np.finfo(float).max)            # -709.78: tau = 1.8e308


_ZETA_TAU_MAX = -math.log(np.finfo(float).smallest_subnormal)   # 744.44: tau = 4.9e-324


def _tau_str(z: float) -> str:
    """'tau = e^-zeta' for the message of a bad density value, also beyond the double range."""
    return f"tau = {math.exp(-z):.6g}" if abs(z) < 700 else f"tau = exp({-z:.6g})"


def _zeta_density(tau_pdf, zeta_pdf):
    if (tau_pdf is None) == (zeta_pdf is None):
        raise ValueError("give exactly one of tau_pdf, zeta_pdf")
    if zeta_pdf is not None:
        if not callable(zeta_pdf):
            raise ValueError("zeta_pdf must be callable rho(zeta)")
        return zeta_pdf, "zeta_pdf"
    if not callable(tau_pdf):
        raise ValueError("tau_pdf must be callable p(tau)")

    def rho(z):
        """p(tau) |dtau/dzeta| = p(e^-zeta) e^-zeta, evaluated only where tau is a positive
        finite double (0 beyond: e^-zeta overflows for zeta < -709.78, and p(inf) * inf or
        p(0) * 0 would be NaN); the mass beyond is reported by the normalisation check."""
        z = np.asarray(z, dtype=float)
        inside = (z >= _ZETA_TAU_MIN) & (z <= _ZETA_TAU_MAX)
        tau = np.exp(-np.where(inside, z, 0.0))
        p = np.asarray(tau_pdf(tau), dtype=float)
        with np.errstate(invalid="ignore"):
            return np.where(inside, p * tau, 0.0)

    return rho, "tau_pdf"


def _eval_grid(rho, name, z):
    with np.errstate(all="ignore"):
        try:
            v = np.asarray(rho(z), dtype=float)
            if v.shape != z.shape:
                raise TypeError
        except Exception:
            v = np.array([float(rho(float(t))) for t in z])
    if np.any(np.isnan(v)) or np.any(v < 0) or np.any(np.isinf(v)):
        bad = np.flatnonzero(np.isnan(v) | (v < 0) | np.isinf(v))[0]
        where = _tau_str(float(z[bad])) if name == "tau_pdf" else f"zeta = {z[bad]:.6g}"
        raise ValueError(f"{name} must return finite values >= 0; got {v[bad]!r} at {where}")
    return v


def _log_kernel(lag: float, z: float) -> float:
    """log exp(-l e^z) = -e^(z + log l), without OverflowError (-inf beyond the double range)."""
    if lag <= 0:
        return 0.0
    t = z + math.log(lag)
    return -math.exp(t) if t < 709.0 else -math.inf


def _scalar(rho):
    """rho as a scalar function, for vectorised or scalar-only callables."""
    def scalar_rho(z):
        try:
            v = np.asarray(rho(np.asarray([z])), dtype=float).ravel()
            if v.size == 1:
                return float(v[0])
        except Exception:
            pass
        return float(rho(float(z)))          # a scalar-only callable
    return scalar_rho


def _support_edges(scalar_rho, Z, support, name):
    """Edges of the support of rho located on the grid Z, bisected to full precision
    (quad's error estimate misses a jump that lies inside a panel near its end)."""
    changes = np.flatnonzero(support[1:] != support[:-1])
    if changes.size > 200:
        raise ValueError(f"{name}: the support has {changes.size} edges on the locating grid; "
                         f"at most 200 are supported")
    breaks = []
    for i in changes:
        a, b = float(Z[i]), float(Z[i + 1])
        in_a = support[i]
        for _ in range(80):
            m = 0.5 * (a + b)
            if m in (a, b):
                break
            if (scalar_rho(m) > 0) == in_a:
                a = m
            else:
                b = m
        breaks.append(0.5 * (a + b))
    return np.asarray(breaks)


def envelope_density(lags: ArrayLike, *, tau_pdf: Density | None = None, zeta_pdf: Density | None = None,
                     rtol: float = 1e-12,
                     mass_tol: float = 1e-6) -> np.ndarray:
    r"""Envelope of a density given as a callable, by quadrature in zeta (docs/specification.md §5 (c)).

    ``tau_pdf(tau)`` (:math:`p(\tau)`, :math:`\tau > 0`) is turned into
    :math:`\rho(\zeta) = p(e^{-\zeta}) e^{-\zeta}`, evaluated only where :math:`\tau` is a positive
    finite double (:math:`\zeta \in [-709.78, 744.44]`; 0 beyond, never
    :math:`e^{-\zeta} = \infty` times :math:`p = 0`): a tail whose mass beyond
    :math:`\tau = 1.8 \cdot 10^{308}` exceeds ``mass_tol`` (Pareto :math:`\beta \lesssim 0.02`)
    fails the normalisation check with a message that asks for ``zeta_pdf``; below that, the lost
    mass :math:`e^{-709.78 \beta}` bounds the error. The kernel :math:`e^{-l e^\zeta}` is taken as
    :math:`\exp(-e^{\zeta + \log l})` (no overflow). The mass is located first: :math:`\rho` is
    evaluated on the grid :math:`\zeta \in [-300, 300]` (``zeta_pdf``) or
    :math:`[-709.78, 744.44]` (``tau_pdf``), step 0.005, and, per lag, the
    integrand :math:`\rho(\zeta) e^{-l e^\zeta}` is
    integrated with adaptive Gauss-Kronrod (scipy quad, relative tolerance
    ``rtol``) over the window where its grid values exceed e^-55 times their
    maximum, with the edges of rho's support as break points; tails still
    carrying mass at the grid ends are added by quad on the infinite rest.
    So a narrow mass at large l gives its tiny true value, never a silent 0.

    Parameters
    ----------
    lags : array_like of float
        Lags l >= 0, any shape.
    tau_pdf, zeta_pdf : callable
        Exactly one: the density p(tau) or rho(zeta), vectorised or scalar, normalised.
    rtol : float, optional
        Relative tolerance of each quadrature (default 1e-12).
    mass_tol : float, optional
        Allowed |integral of rho - 1| (default 1e-6).

    Returns
    -------
    ndarray
        f(l), shaped like ``lags``; f(0) = 1.

    Raises
    ------
    ValueError
        If both or neither density is given, the callable returns
        negative/non-finite values, or the located mass is not 1 within mass_tol
        (unnormalised density, or a mass narrower than the 0.005 locating grid).

    Notes
    -----
    .. math::

       f(\ell) = \int_{-\infty}^{\infty} \rho(\zeta)\,\exp\!\big(-e^{\zeta + \log\ell}\big)\,d\zeta,
       \qquad \rho(\zeta) = p(e^{-\zeta})\,e^{-\zeta}

    (the specification, §1 and §5 (c)); each window by adaptive Gauss-Kronrod quadrature
    (:func:`scipy.integrate.quad`, QUADPACK).

    References
    ----------
    .. [1] W. Feller, An Introduction to Probability Theory and Its Applications, Vol. II, 2nd ed.,
       Wiley (1971), §XIII.5 (Tauberian theorems).
    .. [2] L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790.

    Examples
    --------
    >>> from scipy import stats
    >>> f = envelope_density([1.0, 10.0], zeta_pdf=stats.norm(-2.0, 1.0).pdf)
    >>> print(f)
    [0.82385948 0.30541526]
    """
    lag = check_array("lags", lags, min_size=1, lo=0.0)
    rho, name = _zeta_density(tau_pdf, zeta_pdf)
    if name == "tau_pdf":                 # the whole range where tau is a double
        Z = np.arange(_ZETA_TAU_MIN, _ZETA_TAU_MAX, _GRID_H)
    else:
        Z = np.arange(-_GRID_L, _GRID_L + _GRID_H / 2, _GRID_H)
    R = _eval_grid(rho, name, Z)
    if not np.any(R > 0):
        raise ValueError(f"{name}: no mass found on the locating grid zeta in [-300, 300] "
                         f"(step 0.005); the density is zero there or narrower than the grid")
    with np.errstate(divide="ignore"):
        logR = np.log(R)
    support = R > 0

    scalar_rho = _scalar(rho)
    breaks = _support_edges(scalar_rho, Z, support, name)

    def one(l):
        with np.errstate(over="ignore"):
            logh = logR - (np.exp(Z + math.log(l)) if l > 0 else 0.0)
        top = logh.max()
        ok = np.flatnonzero(logh >= top - _LOG_NEGLIGIBLE)
        i0, i1 = max(ok[0] - 1, 0), min(ok[-1] + 1, Z.size - 1)
        lo, hi = Z[i0], Z[i1]
        shift = top   # scale the integrand near 1 at its peak: relative accuracy at tiny f

        def g(z):
            with np.errstate(under="ignore", over="ignore"):
                r = scalar_rho(z)
                if r <= 0:
                    return 0.0
                return math.exp(math.log(r) + _log_kernel(l, z) - shift)

        pts = breaks[(breaks > lo) & (breaks < hi)]
        peak = Z[np.argmax(logh)]
        pts = np.unique(np.append(pts, peak if lo < peak < hi else []))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", integrate.IntegrationWarning)
            val = integrate.quad(g, lo, hi, points=pts if pts.size else None, limit=500,
                                 epsabs=0.0, epsrel=rtol)[0]
            if i0 == 0 and logh[0] >= top - _LOG_NEGLIGIBLE:
                val += integrate.quad(g, -np.inf, lo, limit=500, epsabs=0.0, epsrel=rtol)[0]
            if i1 == Z.size - 1 and logh[-1] >= top - _LOG_NEGLIGIBLE:
                val += integrate.quad(g, hi, np.inf, limit=500, epsabs=0.0, epsrel=rtol)[0]
        return val * math.exp(shift)

    mass = one(0.0)
    if not abs(mass - 1.0) <= mass_tol:
        beyond = ""
        if name == "tau_pdf" and (logR[0] > logR.max() - _LOG_NEGLIGIBLE or
                                  logR[-1] > logR.max() - _LOG_NEGLIGIBLE):
            beyond = ("; p(tau) still carries mass at the ends of the double range (tau = 1.8e308 or "
                      "4.9e-324), which tau_pdf cannot reach: give the density as zeta_pdf")
        raise ValueError(f"{name}: the density integrates to {mass:.12g}, not 1 (normalise it; a "
                         f"mass narrower than the 0.005 locating grid in zeta is missed{beyond})")
    flat = lag.ravel()
    f = np.ones(flat.size)
    for i, l in enumerate(flat):
        if l > 0:
            f[i] = one(float(l)) / mass
    return np.clip(f, 0.0, 1.0).reshape(lag.shape)


def envelope(lags: ArrayLike, *, zeta: ArrayLike | None = None, weights: ArrayLike | None = None,
             hist: tuple[ArrayLike, ArrayLike] | None = None, tau_pdf: Density | None = None,
             zeta_pdf: Density | None = None, bin_width: float | None = 0.01) -> np.ndarray:
    r"""Forgetting envelope :math:`f(l) = E[e^{-l e^\zeta}]` of a time-scale spectrum (docs/specification.md §5).

    Give exactly one source:

    * ``zeta`` (samples, optionally ``weights``): :func:`envelope_samples`
      (binned, bias :math:`\le 0.0716\, h^3 \le 7.2 \cdot 10^{-8}` by default, :math:`h` = ``bin_width``);
    * ``hist = (edges, counts)``: :func:`envelope_hist` (exact per bin);
    * ``tau_pdf`` (:math:`p(\tau)`) or ``zeta_pdf`` (:math:`\rho(\zeta)`): :func:`envelope_density`.

    Parameters
    ----------
    lags : array_like of float
        Lags l >= 0 in steps, any shape.
    zeta, weights, hist, tau_pdf, zeta_pdf
        The source, exactly one of them (above).
    bin_width : float or None, optional
        Bin width of the sample path (default 0.01; None: exact direct sum).

    Returns
    -------
    ndarray of float
        f(l), shaped like ``lags``, values in [0, 1], f(0) = 1.

    Raises
    ------
    ValueError
        If not exactly one source is given, ``weights`` without ``zeta``,
        or bad input to the chosen method.

    Notes
    -----
    .. math::

       f(\ell) = \int_0^\infty e^{-\ell/\tau}\,p(\tau)\,d\tau
                = \mathbb{E}_\rho\big[\exp(-\ell e^{\zeta})\big], \qquad f(0) = 1,

    the Laplace transform of :math:`p` at :math:`1/\ell`, written in the variable
    :math:`\zeta = -\log\tau` (the specification, §5); for samples,
    :math:`f(\ell) = \sum_i w_i e^{-\ell e^{\zeta_i}} / \sum_i w_i`.

    References
    ----------
    .. [1] W. Feller, An Introduction to Probability Theory and Its Applications, Vol. II, 2nd ed.,
       Wiley (1971), §XIII.5 (Tauberian theorems).
    .. [2] L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790.

    Examples
    --------
    >>> zeta = np.array([-3.0, -1.0, 0.0])
    >>> print(envelope([0.0, 1.0, 10.0], zeta=zeta, bin_width=None))
    [1.         0.67050402 0.21104078]
    >>> print(np.exp(-10.0 * np.exp(zeta)).mean())   # the same, by hand
    0.2110407776496714
    """
    given = [n for n, v in (("zeta", zeta), ("hist", hist), ("tau_pdf", tau_pdf),
                            ("zeta_pdf", zeta_pdf)) if v is not None]
    if len(given) != 1:
        raise ValueError("envelope needs exactly one of zeta, hist, tau_pdf, zeta_pdf; got "
                         + (", ".join(given) if given else "none"))
    if weights is not None and zeta is None:
        raise ValueError("weights are only allowed with zeta samples")
    if zeta is not None:
        return envelope_samples(lags, zeta, weights, bin_width=bin_width, errors=False).f
    if hist is not None:
        try:
            edges, counts = hist
        except (TypeError, ValueError):
            raise ValueError("hist must be a pair (edges, counts)") from None
        return envelope_hist(lags, edges, counts)
    return envelope_density(lags, tau_pdf=tau_pdf, zeta_pdf=zeta_pdf)


def _phase_beta(phase):
    arr = np.asarray(phase.beta_star, dtype=float)
    if arr.size != 1:
        raise ValueError(f"phase must describe one parameter set; got {arr.size}")
    b = float(arr.ravel()[0])
    if not np.isfinite(b):
        name = str(np.asarray(phase.phase).ravel()[0])
        raise ValueError(f"phase: no admissible root beta* (phase {name!r}); the Tauberian power "
                         f"law needs beta* in (0, lam) (docs/specification.md §4)")
    return b


def tauberian_prediction(lags: ArrayLike, *, A: float, beta: float | None = None,
                         phase: PhaseResult | None = None) -> np.ndarray:
    r"""Tauberian asymptote :math:`f(l) \sim A \Gamma(\beta) l^{-\beta}` of :math:`p(\tau) \sim A \tau^{-1-\beta}`.

    The asymptote is that of docs/specification.md §5. Equivalently
    :math:`\rho(\zeta) \sim A e^{\beta \zeta}` as :math:`\zeta \to -\infty` (docs/specification.md §1).
    Karamata's Tauberian theorem: the tail implies the asymptote for every beta > 0; the
    converse needs a monotone (ultimately) density.

    Parameters
    ----------
    lags : array_like of float
        Lags l > 0, any shape.
    A : float
        Tail amplitude > 0 of :math:`\rho(\zeta) \sim A e^{\beta \zeta}` (e.g. from
        :func:`levysde.stats.tails.tail_fit`; the theory gives beta*, not A).
    beta : float, optional
        Tail rate > 0; or
    phase : PhaseResult, optional
        A :class:`levysde.theory.phases.PhaseResult` of one parameter set, whose beta* is used.

    Returns
    -------
    ndarray
        :math:`A\,\Gamma(\beta)\,\ell^{-\beta}`, shaped like ``lags`` (valid for large lags only:
        it exceeds 1 at small ones).

    Raises
    ------
    ValueError
        For lags <= 0, A <= 0, not exactly one of beta/phase, beta <= 0,
        or a phase without a Cramer root (collapsed, logarithmic).

    Notes
    -----
    If :math:`p(\tau) \sim A\,\tau^{-1-\beta}` as :math:`\tau \to \infty` (equivalently
    :math:`\rho(\zeta) \sim A e^{\beta\zeta}` as :math:`\zeta \to -\infty`), then

    .. math::

       f(\ell) \sim A\,\Gamma(\beta)\,\ell^{-\beta}, \qquad \ell \to \infty

    (Karamata's Tauberian theorem, Feller §XIII.5 under References; the specification, §5).

    References
    ----------
    .. [1] W. Feller, An Introduction to Probability Theory and Its Applications, Vol. II, 2nd ed.,
       Wiley (1971), §XIII.5 (Tauberian theorems).
    .. [2] L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790.

    Examples
    --------
    >>> print(tauberian_prediction([100.0, 1000.0], A=1.0, beta=0.8))
    [0.02924413 0.00463488]
    """
    lag = check_array("lags", lags, min_size=1, lo=0.0, lo_open=True, why="the asymptotic power law")
    if (beta is None) == (phase is None):
        raise ValueError("give exactly one of beta, phase")
    A = check_real("A", A, 0.0, lo_open=True)
    b = check_real("beta", _phase_beta(phase) if phase is not None else beta, 0.0, lo_open=True)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        direct = A * special.gamma(b) * lag ** (-b)
        # Gamma(beta) or lag^-beta out of the double range while the product is not: log space
        logv = math.log(A) + special.gammaln(b) - b * np.log(lag)
        return np.where(np.isfinite(direct) & (direct > 0), direct, np.exp(logv))


def valid_lag_max(zeta_min: float, factor: float = 1.0) -> float:
    r"""Largest lag at which an envelope built from data whose smallest zeta is
    ``zeta_min`` still reflects the data rather than its left cut-off:
    :math:`\mathrm{factor} \cdot e^{-\zeta_{\min}}` (the longest time scale present); +inf beyond the
    double range (zeta_min < -709.78), never OverflowError.

    Parameters
    ----------
    zeta_min : float
        The smallest zeta of the data (log of the smallest decay rate).
    factor : float, optional
        Multiple of the longest time scale to allow, finite and > 0 (default 1).

    Returns
    -------
    float
        :math:`\ell_{\max} = \text{factor}\cdot e^{-\zeta_{\min}} = \text{factor}\cdot\tau_{\max}`
        in steps; +inf beyond the double range.

    Raises
    ------
    ValueError
        If ``zeta_min`` is not a finite real or ``factor`` is not a finite real > 0.

    Notes
    -----
    Beyond :math:`\ell \gg \tau_{\max}` every term of :math:`f(\ell) = \mathbb{E}\,e^{-\ell/\tau}`
    is exponentially small and the empirical envelope decays like
    :math:`e^{-\ell/\tau_{\max}}` whatever the tail of the law; the Tauberian asymptotics
    (the specification, §5) apply only below.

    References
    ----------
    .. [1] W. Feller, An Introduction to Probability Theory and Its Applications, Vol. II, 2nd ed.,
       Wiley (1971), §XIII.5 (Tauberian theorems).
    .. [2] L. Livi, "Learnability Window in Gated Recurrent Neural Networks", arXiv:2512.05790.

    Examples
    --------
    >>> print(valid_lag_max(-5.0))
    148.4131591025766
    """
    zeta_min = check_real("zeta_min", zeta_min)
    factor = check_real("factor", factor, 0.0, lo_open=True)
    with np.errstate(over="ignore"):
        return float(factor * np.exp(-zeta_min))
