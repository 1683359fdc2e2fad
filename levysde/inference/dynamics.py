"""Model-free beta* from the dynamics: the Lundberg root of the far-left increments
(docs/specification.md §4, §8).

Far to the left the drift is the plateau kappa, so there zeta moves like a Levy process X with
``log E exp(-beta X_t) = t Phi(beta)``, ``Phi(beta) = eta_G beta^2 + Psi*(beta) - kappa beta``
(docs/specification.md §4). For increments dZ over one record interval Delta that start far left,
``E exp(-beta dZ) ~= exp(Delta Phi(beta))``, and the positive root of the empirical

    Phi_hat(beta) = (1/Delta) log mean exp(-beta dZ)

estimates beta* with no model for the noise: no eta_G, eta_J, alpha or lam is fitted
(:func:`beta_dynamics`). At the root Phi = 0, so the root solves ``mean exp(-beta dZ) = 1`` at
every lag: increments over unequal record intervals can be pooled (the Lundberg equation).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from levysde.core.jsonable import finite_or_none
from levysde.core.status import Estimate, Status, unavailable
from levysde.core.validate import check_array, check_int, check_real
from levysde.stats.jackknife import JACKKNIFE_BIAS_LIMIT, jackknife_bias, jackknife_se, neuron_groups
from levysde.theory.roots import chandrupatla

__all__ = ["DynamicsRoot", "CutEstimate", "beta_dynamics", "lundberg_root", "empirical_phi",
           "CUT_LEVELS", "DEFAULT_CUT", "MAX_DELTA_KAPPA", "MIN_INCREMENTS", "MIN_ESS", "STABLE_Z",
           "TRANSITION_CUT", "COMMON_SHOCK_F", "COMMON_SHOCK_RHO"]

#: quantile levels of the late zeta scanned for the far-left cut (the data-driven cut picks one)
CUT_LEVELS = (0.02, 0.03, 0.05, 0.075, 0.10, 0.15)
#: the default cut, and the largest the data-driven rule takes. On the independent generator
#: (benchmarks/_independent_sde.py, 6 parameter sets x 30 runs, Q = 512, R = 200) it gave bias -0.9 %,
#: rel. RMSE 0.070, coverage 0.69/0.93; the 10 % cut -2.4 %, 0.061, 0.59/0.88 (transition bias)
DEFAULT_CUT = 0.05
#: where the search for the cut starts when the drift falls between the default and the 15 % cut
#: (the transition is near). On the coverage study's positives (160 runs, see
#: benchmarks/calibrate_dynamics.py) those flagged so had coverage 0.40/0.68 at the 5 % cut and
#: 0.55/0.86 at the 3 % cut (0.52/0.88 at 2 %); those not flagged 0.64/0.91 at 5 %, 0.66/0.88 at 3 %
TRANSITION_CUT = 0.03
#: refuse when Delta * kappa_hat exceeds this. Measured with the cut scan and the cut's systematic
#: error on the independent generator (``benchmarks/gates_power.py --part interval --n 4``, 8 sets,
#: five drifts, Q 256-1024, R 100-400, 32 runs per Delta kappa; and 32 more with other seeds):
#: 1-sigma / 2-sigma coverage 0.79 / 0.96 (n 28; 0.59 / 0.96, n 27) at Delta kappa = 1,
#: 0.77 / 0.91 (n 22; 0.72 / 0.88, n 25) at 1.2, 0.61 / 0.89 (n 18; 0.55 / 0.95, n 20) at 1.5, bias
#: -2 % to +2.5 %; more runs are refused as Delta kappa grows (the root rests on < 100 effective
#: increments: 4, 10, 14 of 32). Before the cut scan (broad set, gamma = kappa = 1, 16 runs each,
#: 2 % / 5 % cuts): 0.62/0.75 at 1, 0.44/0.69 at 1.5, 0.44/0.44 at 2, 0.12/0.50 at 3 (bias +8 % at
#: the 5 % cut): over one record the drift carries zeta off its plateau
MAX_DELTA_KAPPA = 1.5
#: refuse a cut with fewer far-left increments than this. On exact Gaussian increments (Lundberg
#: root kappa/eta_G, 300 samples each) the small-sample bias at n = 200 is +2.5 % to +5 % (0.1-0.3 sd)
#: for Delta kappa beta* <= 1 and +9 % at n = 100 for Delta kappa beta* = 1
MIN_INCREMENTS = 200
#: refuse a cut whose root rests on fewer effective increments ``(sum w)^2 / sum w^2``,
#: ``w = exp(-beta_hat dZ)``, than this: in the Delta * kappa runs above, cuts with 21-82 effective
#: increments had 1-sigma coverage 0.12-0.50, those with >= 119 had >= 0.62
MIN_ESS = 100.0
#: a deeper cut sets the cut's systematic error only when at least this many neurons reach it
MIN_CUT_NEURONS = 32
#: two cuts agree when their beta_hat differ by at most this many jackknife errors of the difference.
#: On the generator's positive runs (6 sets x 30) the rule called 1.7 % unstable at 2.0, none at 2.5
#: and 3.0; where the 5 % cut lies inside the transition (2 sets x 30, drift at 76-84 % of kappa
#: there, bias -12 %) it moved deeper in 14 % / 2 % / 2 % of the runs and the bias stayed -11 % to
#: -12 %: a transition spanning every cut is not seen. (Testing kappa_hat as well refused 27 % of the
#: runs at Delta = 1 whose root was unbiased: over a long record the mean drift reacts to the
#: transition more than the root.)
STABLE_Z = 2.5
#: caveat when the between-record F of the late increments exceeds this (neurons not independent).
#: Independent neurons gave F in [0.75, 1.2] (14 runs on the generator); 1 % of the jump intensity
#: common to all neurons gave a median of 3.0
COMMON_SHOCK_F = 2.0
#: refuse (NOT_IDENTIFIED) when the neurons' increments at one record correlate more than this.
#: With a share p of the jumps common to all 512 neurons (broad set, 10 runs each): p = 0.1,
#: rho_hat 0.05: bias +2 %, coverage 0.70/1.00; p = 0.3, rho_hat 0.18: +4 %, 0.40/0.70; p = 1,
#: rho_hat 1.1: +37 %, 0.00/0.00
COMMON_SHOCK_RHO = 0.1


@dataclass(frozen=True)
class CutEstimate:
    """The Lundberg root at one far-left cut.

    An entry of :attr:`DynamicsRoot.scan`.

    Attributes
    ----------
    level : float
        Quantile level of the late zeta that defines the cut, in (0, 0.5].
    z_cut : float
        The cut in zeta; increments starting below it are used.
    n : int
        Far-left increments used.
    n_neurons : int
        Distinct neurons among them.
    beta : levysde.core.status.Estimate
        The root, its jackknife error and a flag (NaN and a reason when refused).
    bias : float
        Jackknife bias estimate of ``beta`` (NaN without an error).
    kappa : levysde.core.status.Estimate
        The mean far-left drift ``kappa_hat = sum dZ / sum dt`` (= -Phi_hat'(0)).
    ess : float
        Effective sample size of the root's weights ``w = exp(-beta_hat dZ)``,
        ``(sum w)^2 / sum w^2`` (NaN without a root).
    loo, kappa_loo : ndarray, shape (G,)
        Leave-one-group-out roots and drifts (for the scan's stability test).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> dz = rng.normal(0.1, np.sqrt(2 * 0.5 * 0.1), (200, 256))     # kappa 1, eta_G 0.5, Delta 0.1
    >>> r = beta_dynamics(np.cumsum(dz, axis=0), 0.1 * np.arange(200), cut=0.05)
    >>> c = r.scan[2]                            # the 5 % cut
    >>> c.level, c.n, c.n_neurons, c.loo.shape
    (0.05, 1280, 67, (16,))
    >>> round(c.beta.value, 2), round(c.kappa.value, 2)
    (2.1, 1.08)
    """

    level: float
    z_cut: float
    n: int
    n_neurons: int
    beta: Estimate
    bias: float
    kappa: Estimate
    ess: float
    loo: np.ndarray = field(repr=False, compare=False)
    kappa_loo: np.ndarray = field(repr=False, compare=False)


@dataclass(frozen=True)
class DynamicsRoot:
    """The model-free beta* of :func:`beta_dynamics`.

    Attributes
    ----------
    beta : levysde.core.status.Estimate
        beta* (value, error; NaN and a reason when refused; a caveat in ``flag`` otherwise).
        The error is ``sqrt(se_jackknife**2 + se_cut**2)``.
    status : levysde.core.status.Status
        OK, UNAVAILABLE or NOT_IDENTIFIED (``ok`` is True for OK).
    message : str
        Why (empty when OK without caveats).
    cut : float
        Quantile level of the cut used (NaN when no cut was usable).
    z_cut : float
        The cut in zeta.
    chosen_by : {"given", "scan", "default"}
        The ``cut`` argument, the data-driven rule, or the default cut.
    n_increments : int
        Far-left increments at the cut used.
    n_neurons : int
        Distinct neurons among them.
    delta : float
        Record interval Delta (the largest one when they differ).
    uniform : bool
        Whether every late record interval is the same (relative spread <= 1e-6).
    kappa : levysde.core.status.Estimate
        kappa_hat (mean far-left drift) at the cut used.
    delta_kappa : float
        Delta * kappa_hat.
    ess : float
        Effective sample size of the root's weights at the cut used.
    bias : float
        Jackknife bias of beta at the cut used.
    scan : tuple of CutEstimate
        The roots over :data:`CUT_LEVELS` (and the given cut).
    notes : list of str
        What the estimate noticed.
    record_f : float
        Between-record F statistic of all late increments (one-way ANOVA, records as groups):
        about 1 when neurons move independently, ~ 1 + (Q - 1) rho under a shock common to the
        neurons with correlation rho (NaN when not computable).
    shock_rho : float
        rho_hat = (record_f - 1)/(increments per record - 1), the correlation of neurons'
        increments at one record.
    se_jackknife : float
        The delete-a-group jackknife error of the root at the cut used.
    se_cut : float
        The cut's systematic error: the root at the deepest usable cut (reached by at least
        :data:`MIN_CUT_NEURONS` neurons) minus the root at the cut used, in absolute value (0
        when the cut used is the deepest such cut; Notes of :func:`beta_dynamics`).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> dz = rng.normal(0.1, np.sqrt(2 * 0.5 * 0.1), (200, 256))     # kappa 1, eta_G 0.5, Delta 0.1
    >>> r = beta_dynamics(np.cumsum(dz, axis=0), 0.1 * np.arange(200), cut=0.05)
    >>> r.status, r.chosen_by, r.cut, r.n_increments, r.uniform
    (<Status.OK: 'ok'>, 'given', 0.05, 1280, True)
    >>> j = r.as_json()
    >>> round(j["beta_dynamics"], 2), round(j["delta_kappa"], 3), len(j["scan"])
    (2.1, 0.108, 6)
    """

    beta: Estimate
    status: Status
    message: str
    cut: float
    z_cut: float
    chosen_by: str
    n_increments: int
    n_neurons: int
    delta: float
    uniform: bool
    kappa: Estimate
    delta_kappa: float
    ess: float
    bias: float
    scan: tuple
    notes: list = field(default_factory=list)
    record_f: float = float("nan")
    shock_rho: float = float("nan")
    se_jackknife: float = float("nan")
    se_cut: float = float("nan")

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    def as_json(self) -> dict:
        """A JSON-ready summary (NaN as None)."""
        num = finite_or_none
        out = {"status": str(self.status), "message": self.message, **self.beta.as_json("beta_dynamics"),
               "cut": num(self.cut), "z_cut": num(self.z_cut), "chosen_by": self.chosen_by,
               "n_increments": self.n_increments, "n_neurons": self.n_neurons, "delta": num(self.delta),
               "uniform": self.uniform, **self.kappa.as_json("kappa_hat"), "delta_kappa": num(self.delta_kappa),
               "ess": num(self.ess), "bias": num(self.bias), "record_f": num(self.record_f),
               "shock_rho": num(self.shock_rho), "se_jackknife": num(self.se_jackknife),
               "se_cut": num(self.se_cut), "notes": list(self.notes)}
        out["scan"] = [{"level": c.level, "z_cut": num(c.z_cut), "n": c.n, "beta": num(c.beta.value),
                        "se": num(c.beta.se), "kappa": num(c.kappa.value), "kappa_se": num(c.kappa.se),
                        "ess": num(c.ess), "flag": c.beta.flag} for c in self.scan]
        return out


# ----------------------------------------------------------------------------------------------
# the root


def _group_lse(x, dzs, starts):
    """log sum_{i in g} exp(-x_k dZ_i) for trial points x (K,) and the groups of the sorted
    increments ``dzs`` starting at ``starts`` (non-empty groups): (K, G) in log-sum-exp form."""
    a = -np.outer(x, dzs)
    m = np.maximum.reduceat(a, starts, axis=1)
    seg = np.repeat(np.arange(starts.size), np.diff(np.append(starts, dzs.size)))
    s = np.add.reduceat(np.exp(a - m[:, seg]), starts, axis=1)
    return m + np.log(s)


def _subset_stats(dz, lab, G):
    """Per equation e (0: all groups, g + 1: all but group g): count, mean dZ and max(-dZ)."""
    n_g = np.bincount(lab, minlength=G).astype(float)
    s_g = np.bincount(lab, weights=dz, minlength=G)
    mx_g = np.full(G, -np.inf)
    np.maximum.at(mx_g, lab, -dz)
    incl = np.vstack([np.ones(G, bool), ~np.eye(G, dtype=bool)])
    n_e = incl @ n_g
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_e = (incl @ s_g) / n_e
    mx_e = np.array([np.max(mx_g[row]) if row.any() else -np.inf for row in incl])
    return incl, n_e, mean_e, mx_e


def _roots(dz, lab, G):
    """The root of ``log mean exp(-beta dZ) = 0`` on beta > 0 for all increments and for each
    delete-a-group subset: (full, loo (G,)), NaN where there is no positive root."""
    order = np.argsort(lab, kind="stable")
    dzs, labs = dz[order], lab[order]
    present = np.unique(labs)
    starts = np.searchsorted(labs, present)
    col = np.full(G, -1)
    col[present] = np.arange(present.size)
    incl, n_e, mean_e, mx_e = _subset_stats(dz, lab, G)
    # a positive root exists iff the mean increment is > 0 (Phi_hat'(0) < 0) and some increment is
    # < 0 (Phi_hat -> +inf); then Phi_hat(b) >= b max(-dZ) - log n > 0 at b = (log n + 1)/max(-dZ)
    has = (n_e > 0) & (mean_e > 0) & (mx_e > 0)
    out = np.full(G + 1, np.nan)
    eq = np.flatnonzero(has)
    if eq.size:
        hi = (np.log(n_e[eq]) + 1.0) / mx_e[eq]
        mask = incl[eq][:, present]                  # equation x present group

        def f(x, sub):
            lg = _group_lse(x, dzs, starts)
            lg = np.where(mask[sub], lg, -np.inf)
            return (special.logsumexp(lg, axis=1) - np.log(n_e[eq][sub])) / x

        with np.errstate(over="ignore"):
            out[eq] = chandrupatla(f, 0.0, hi, fa=-mean_e[eq])
    return out[0], out[1:]


def lundberg_root(dz) -> float:
    r"""The positive root of ``Phi_hat(beta) = log mean exp(-beta dZ)`` (any positive multiple of it:
    the root does not depend on Delta), i.e. of the empirical Lundberg equation
    ``mean exp(-beta dZ) = 1``.

    Parameters
    ----------
    dz : array_like, shape (n,)
        Finite increments (n >= 1).

    Returns
    -------
    float
        The root, > 0, or NaN when there is no positive root (mean dZ <= 0, or no dZ < 0).

    Raises
    ------
    ValueError
        If dz is empty or not finite.

    Notes
    -----
    The root :math:`\hat\beta > 0` of

    .. math::

        \frac{1}{n} \sum_{i=1}^{n} e^{-\beta\, dZ_i} = 1

    is bracketed in :math:`(0, (\log n + 1)/\max(-dZ)]` and found by Chandrupatla's method in
    log-sum-exp form. For Gaussian increments of mean :math:`\kappa\Delta` and variance
    :math:`2\eta_G\Delta` it tends to :math:`\kappa/\eta_G`.

    References
    ----------
    * M. Csörgő, J. L. Teugels, "Empirical Laplace transform and approximation of compound
      distributions", *J. Appl. Probab.* 27 (1990) 88-101.
    * T. R. Chandrupatla, "A new hybrid quadratic/bisection algorithm for finding the zero of a
      nonlinear function without using derivatives", *Adv. Eng. Softw.* 28 (1997) 145-149.
    * The specification, §4.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> dz = rng.normal(0.1, np.sqrt(2 * 0.5 * 0.1), 100_000)   # kappa/eta_G = 1/0.5 = 2
    >>> round(lundberg_root(dz), 2)
    1.99
    >>> lundberg_root(-np.abs(dz))                             # mean dZ < 0: no root
    nan
    """
    d = np.asarray(dz, dtype=float).ravel()
    if d.size == 0 or not np.all(np.isfinite(d)):
        raise ValueError("dz must be a non-empty array of finite increments")
    return float(_roots(d, np.zeros(d.size, dtype=int), 1)[0])


def empirical_phi(beta, dz, delta):
    r"""``Phi_hat(beta) = (1/Delta) log mean exp(-beta dZ)`` (log-sum-exp: no overflow).

    Parameters
    ----------
    beta : array_like, any shape
        Real arguments.
    dz : array_like, shape (n,)
        Finite increments over one record interval.
    delta : float
        The record interval, > 0.

    Returns
    -------
    ndarray or float
        Shaped like beta (a float for a scalar).

    Raises
    ------
    ValueError
        For empty or non-finite dz, non-finite beta or delta <= 0.

    Notes
    -----
    .. math::

        \hat\Phi(\beta) = \frac{1}{\Delta} \log \frac{1}{n} \sum_{i=1}^n e^{-\beta\,dZ_i},

    the empirical counterpart of the Lévy exponent
    :math:`\Phi(\beta) = \eta_G\beta^2 + \Psi^*(\beta) - \kappa\beta` of the far-left
    dynamics (the specification, §4): convex, :math:`\hat\Phi(0) = 0`,
    :math:`\hat\Phi'(0) = -\overline{dZ}/\Delta`.

    References
    ----------
    * The specification, §4.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> dz = rng.normal(0.1, np.sqrt(2 * 0.5 * 0.1), 100_000)
    >>> print(np.round(empirical_phi([0.0, 1.0, 2.0], dz, 0.1), 3))  # 0.5 b^2 - b in truth
    [ 0.    -0.497  0.01 ]
    """
    b = np.asarray(beta, dtype=float)
    d = np.asarray(dz, dtype=float).ravel()
    if d.size == 0 or not np.all(np.isfinite(d)):
        raise ValueError("dz must be a non-empty array of finite increments")
    if not np.all(np.isfinite(b)):
        raise ValueError("beta must be finite")
    if not (math.isfinite(delta) and delta > 0):
        raise ValueError(f"delta must be > 0; got {delta!r}")
    val = (special.logsumexp(-np.multiply.outer(b.ravel(), d), axis=1) - math.log(d.size)) / delta
    return val.reshape(b.shape) if b.ndim else float(val[0])


def _ess(beta, dz):
    if not math.isfinite(beta):
        return float("nan")
    a = -beta * dz
    return float(math.exp(2.0 * special.logsumexp(a) - special.logsumexp(2.0 * a)))


def _cut_estimate(level, z_cut, z, dz, dt, neuron, lab, G) -> CutEstimate:
    far = z < z_cut
    n = int(far.sum())
    nn = int(np.unique(neuron[far]).size)
    d, w, lb = dz[far], dt[far], lab[far]
    if n == 0:
        none = unavailable("no increment starts below the cut")
        return CutEstimate(level, z_cut, 0, 0, none, float("nan"), none, float("nan"), np.full(G, np.nan),
                           np.full(G, np.nan))
    k_g = np.bincount(lb, weights=d, minlength=G)
    t_g = np.bincount(lb, weights=w, minlength=G)
    kap = float(k_g.sum() / t_g.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        k_loo = (k_g.sum() - k_g) / (t_g.sum() - t_g)
    kappa = Estimate(kap, jackknife_se(k_loo))
    full, loo = _roots(d, lb, G)
    if not math.isfinite(full):
        flag = ("no root: collapsed or no plateau (the mean far-left increment is <= 0)" if kap <= 0 else
                "no root: no far-left increment is negative")
        beta = unavailable(flag)
    else:
        se = jackknife_se(loo)
        beta = Estimate(float(full), se, None if math.isfinite(se) else
                        "no jackknife error: a delete-a-group replicate has no root")
    return CutEstimate(level, float(z_cut), n, nn, beta, jackknife_bias(loo, full), kappa, _ess(full, d), loo,
                       k_loo)


# ----------------------------------------------------------------------------------------------
# the data


def _check_args(zeta, step, late_fraction, cut, n_groups):
    zeta = check_array("zeta", zeta, ndim=2, allow_inf=True, allow_nan=True)
    if zeta.shape[0] < 3 or zeta.shape[1] < 2:
        raise ValueError(f"zeta must be 2-d (records, neurons) with >= 3 records and >= 2 neurons; "
                         f"got shape {zeta.shape}")
    step = check_array("step", step, shape=(zeta.shape[0],), increasing=True,
                       why="the record times, one per record")
    check_real("late_fraction", late_fraction, 0.0, 1.0, lo_open=True)
    if cut is not None:
        check_real("cut", cut, 0.0, 0.5, lo_open=True, why="None (data-driven) or a quantile level")
    check_int("n_groups", n_groups, 2, why="neuron groups of the jackknife")
    zeta = np.where(np.isinf(zeta), np.nan, zeta)
    return zeta, step


def _check_options(max_delta_kappa, min_increments, stable_z):
    check_real("max_delta_kappa", max_delta_kappa, 0.0, lo_open=True)
    check_int("min_increments", min_increments, 1)
    check_real("stable_z", stable_z, 0.0, lo_open=True)


def _late_increments(zeta, step, late_fraction):
    """Increments of the late part: (z, dz, dt, neuron, late finite values, Delta, uniform)."""
    R, Q = zeta.shape
    first = min(int(R * (1 - late_fraction)), R - 3)
    late, st = zeta[first:], step[first:]
    gaps = np.diff(st)
    delta = float(gaps.max())
    uniform = bool((gaps.max() - gaps.min()) <= 1e-6 * gaps.max())
    z0, z1 = late[:-1], late[1:]
    ok = np.isfinite(z0) & np.isfinite(z1)
    dt = np.broadcast_to(gaps[:, None], z0.shape)[ok]
    neuron = np.broadcast_to(np.arange(Q)[None, :], z0.shape)[ok]
    values = late[np.isfinite(late)]
    return z0[ok], (z1 - z0)[ok], dt, neuron, values, delta, uniform, _record_f(np.where(ok, z1 - z0, np.nan))


def _record_f(d):
    """One-way ANOVA F of the late increments (records x neurons, NaN = missing) between records:
    about 1 when the neurons move independently, ~ 1 + (Q - 1) rho for a common shock of correlation
    rho across neurons. Returns (F, rho_hat = (F - 1)/(mean increments per record - 1)); NaN with
    fewer than 2 records holding >= 2 increments."""
    ok = np.isfinite(d)
    n_r = ok.sum(axis=1)
    use = n_r >= 2
    if use.sum() < 2:
        return float("nan"), float("nan")
    d, ok, n_r = d[use], ok[use], n_r[use]
    x = np.where(ok, d, 0.0)
    mean_r = x.sum(axis=1) / n_r
    grand = x.sum() / n_r.sum()
    within = np.sum(np.where(ok, (x - mean_r[:, None]) ** 2, 0.0)) / (n_r.sum() - n_r.size)
    between = np.sum(n_r * (mean_r - grand) ** 2) / (n_r.size - 1)
    f = float(between / within) if within > 0 else float("nan")
    return f, (f - 1.0) / (n_r.mean() - 1.0) if n_r.mean() > 1 else float("nan")


# ----------------------------------------------------------------------------------------------
# the cut


def _usable(c: CutEstimate, min_increments: int) -> bool:
    return c.n >= min_increments and c.beta.ok and math.isfinite(c.beta.se) and c.ess >= MIN_ESS


def _diff_z(a: CutEstimate, b: CutEstimate, what: str) -> float:
    """(a - b)/se for beta or kappa at two cuts, se from the jackknife of the difference itself (the
    deeper sample is part of the other: their errors are correlated)."""
    if what == "beta":
        d, se = a.beta.value - b.beta.value, jackknife_se(a.loo - b.loo)
    else:
        d, se = a.kappa.value - b.kappa.value, jackknife_se(a.kappa_loo - b.kappa_loo)
    if not math.isfinite(se):
        return float("nan")
    return d / se if se > 0 else (0.0 if d == 0 else math.copysign(math.inf, d))


def _agrees(a, b, stable_z) -> bool:
    return abs(_diff_z(a, b, "beta")) <= stable_z


def _transition_z(c: CutEstimate, scan, min_increments) -> tuple:
    """(z, widest cut): kappa_hat at the widest scanned cut with enough increments minus kappa_hat at
    c, in jackknife errors of the difference (negative: the drift falls above c, the transition is
    near); (NaN, None) when no wider cut has enough increments."""
    wide = [s for s in scan if s.level > c.level and s.n >= min_increments and s.kappa.ok]
    if not wide or not c.kappa.ok:
        return float("nan"), None
    return _diff_z(wide[-1], c, "kappa"), wide[-1]


def _choose_cut(scan, min_increments, stable_z):
    """Index of the chosen cut in ``scan`` and a note; None when the scan is unstable.

    Start at :data:`DEFAULT_CUT`, or at :data:`TRANSITION_CUT` when the far-left drift falls
    significantly (``stable_z`` jackknife errors) between the default and the widest cut (the
    transition is near). From there downwards, take the first usable level whose beta_hat agrees
    (``stable_z`` jackknife errors of the difference) with those at every deeper usable level. When
    only the deepest usable level is left although others were usable, the scan is unstable (None)."""
    levels = [c.level for c in scan]
    start = DEFAULT_CUT
    moved = ""
    if DEFAULT_CUT in levels:
        z, w = _transition_z(scan[levels.index(DEFAULT_CUT)], scan, min_increments)
        if z < -stable_z:
            start = TRANSITION_CUT
            moved = (f"transition near the {DEFAULT_CUT:.0%} cut (kappa_hat falls by {z:+.1f} jackknife errors "
                     f"up to the {w.level:.0%} cut): the search starts at the {TRANSITION_CUT:.0%} cut")
    cand = [i for i, c in enumerate(scan) if c.level <= start + 1e-12 and _usable(c, min_increments)]
    if not cand and start < DEFAULT_CUT:          # nothing usable deeper: the default, with its caveat
        k = levels.index(DEFAULT_CUT)
        if _usable(scan[k], min_increments):
            return k, moved.split(":")[0] + f": no usable deeper cut, the {DEFAULT_CUT:.0%} cut is used"
    if not cand:
        return None, "no usable cut at or below the default (too few increments or no root)"
    for pos in range(len(cand) - 1, -1, -1):
        k = cand[pos]
        if all(_agrees(scan[k], scan[j], stable_z) for j in cand[:pos]):
            if pos == 0 and len(cand) > 1:
                return None, _unstable_note(scan, cand)
            note = moved if scan[k].level == start else (
                (moved + "; " if moved else "") + f"the {start:.0%} cut disagrees with deeper cuts (the root "
                f"changes by more than {stable_z:g} jackknife errors): the {scan[k].level:.1%} cut is used")
            return k, note
    return None, _unstable_note(scan, cand)


def _unstable_note(scan, cand):
    a, b = scan[cand[1]], scan[cand[0]]
    return (f"unstable cut scan: between the {b.level:.1%} and {a.level:.1%} cuts beta_hat moves by "
            f"{_diff_z(a, b, 'beta'):+.1f} and kappa_hat by {_diff_z(a, b, 'kappa'):+.1f} jackknife errors "
            f"(the far-left drift is not on a plateau there: no plateau, or the cut inside the drift's transition)")


def _refusal(c: CutEstimate, delta, max_delta_kappa, min_increments):
    """(status, message) refusing the estimate at cut c, or None when it stands."""
    if c.n < min_increments:
        return Status.UNAVAILABLE, (f"too few far-left increments: {c.n} start below the {c.level:.1%} cut "
                                    f"(need >= {min_increments})")
    if not c.beta.ok:
        return Status.UNAVAILABLE, c.beta.flag
    dk = delta * c.kappa.value
    if dk > max_delta_kappa:
        return Status.UNAVAILABLE, (f"Delta * kappa_hat = {dk:.3g} > {max_delta_kappa:g}: over one record the "
                                    f"far-left drift carries zeta off its plateau (record more often)")
    if c.ess < MIN_ESS:
        return Status.UNAVAILABLE, (f"the root rests on {c.ess:.0f} effective increments (< {MIN_ESS:g}): "
                                    f"mean exp(-beta dZ) is carried by a few large downward moves")
    if not math.isfinite(c.beta.se):
        return Status.NOT_IDENTIFIED, c.beta.flag
    return None


def _caveats(c: CutEstimate, scan, min_increments, stable_z):
    out = []
    if math.isfinite(c.bias) and abs(c.bias) > JACKKNIFE_BIAS_LIMIT * c.beta.se:
        out.append(f"jackknife bias {c.bias:+.2g} exceeds {JACKKNIFE_BIAS_LIMIT:g} standard errors")
    zk, w = _transition_z(c, scan, min_increments)
    if zk < -stable_z:
        out.append(f"transition near the cut: kappa_hat falls from {c.kappa.value:.3g} at the {c.level:.1%} cut "
                   f"to {w.kappa.value:.3g} at the {w.level:.1%} cut ({zk:+.1f} jackknife errors); a cut inside "
                   f"the drift's transition biases the root low, and a collapsed set (no root in (0, lam), "
                   f"a narrow spectrum) looks like this")
    return out


def beta_dynamics(zeta, step, *, late_fraction: float = 0.5, cut: float | None = None, n_groups: int = 16,
                  max_delta_kappa: float = MAX_DELTA_KAPPA, min_increments: int = MIN_INCREMENTS,
                  stable_z: float = STABLE_Z) -> DynamicsRoot:
    """Model-free beta*: the Lundberg root of the far-left increments (docs/specification.md §4, §8).

    Far to the left the drift is its plateau kappa and zeta moves like a Levy process with
    ``log E exp(-beta X_t) = t Phi(beta)``. For the increments dZ over one record interval Delta
    that start below a far-left cut, ``E exp(-beta dZ) ~= exp(Delta Phi(beta))``: the positive root
    of ``Phi_hat(beta) = (1/Delta) log mean exp(-beta dZ)`` estimates beta* without fitting the noise
    (the adjustment coefficient of ruin theory). ``Phi_hat`` is convex with ``Phi_hat(0) = 0`` and
    ``Phi_hat'(0) = -kappa_hat``, so the root exists iff the mean far-left increment is positive and
    some increment is negative; it is bracketed in ``(0, (log n + 1)/max(-dZ)]`` and found by
    Chandrupatla's method in log-sum-exp form (no overflow). Since Phi = 0 at the root, the root
    solves ``mean exp(-beta dZ) = 1`` at any lag: unequal record intervals are pooled.

    Parameters
    ----------
    zeta : array_like, shape (R, Q)
        zeta per record (R >= 3) and neuron (Q >= 2); NaN (and +-inf) = undefined, that entry's
        increments are dropped.
    step : array_like, shape (R,)
        Strictly increasing record times (the time of the SDE, e.g. training steps).
    late_fraction : float in (0, 1], default 0.5
        The last fraction of the records is used (the stationary part; at least 3 records).
    cut : float in (0, 0.5] or None, default None
        Quantile level of the late zeta below which an increment must start. None: the
        data-driven cut (Notes).
    n_groups : int >= 2, default 16
        Groups of whole neurons of the delete-a-group jackknife (neuron q in group q mod G,
        G = min(n_groups, Q)).
    max_delta_kappa : float, default :data:`MAX_DELTA_KAPPA` (1.5)
        Refuse when Delta * kappa_hat exceeds it.
    min_increments : int, default :data:`MIN_INCREMENTS` (200)
        Refuse a cut with fewer far-left increments.
    stable_z : float, default :data:`STABLE_Z`
        Two cuts agree when beta_hat and kappa_hat differ by at most this many jackknife errors
        of the difference.

    Returns
    -------
    DynamicsRoot
        ``beta`` (value, jackknife se, flag), ``status``, ``message``, the cut used, the counts,
        Delta, kappa_hat, Delta * kappa_hat, the effective sample size and the cut scan.
        Refusals (``beta.value`` NaN, numbers kept in ``scan``): UNAVAILABLE for too few
        far-left increments, no positive root ("no root: collapsed or no plateau"),
        Delta * kappa_hat > max_delta_kappa, or a root carried by < :data:`MIN_ESS` effective
        increments; NOT_IDENTIFIED for an unstable cut scan, no jackknife error, or common shocks
        (increments of different neurons at one record correlated by more than
        :data:`COMMON_SHOCK_RHO`). Caveats in ``beta.flag`` (status OK): a jackknife bias above
        0.25 se, the far-left drift falling significantly between the cut and the 15 % cut
        ("transition near the cut"), a record F above :data:`COMMON_SHOCK_F`.

    Raises
    ------
    ValueError
        Naming the parameter: zeta not 2-d real with >= 3 records and >= 2 neurons, step not of
        shape (R,) or not finite and strictly increasing, late_fraction outside (0, 1], cut
        outside (0, 0.5], n_groups not an integer >= 2, max_delta_kappa or min_increments <= 0.

    Notes
    -----
    kappa_hat = sum dZ / sum dt over the far-left increments (= -Phi_hat'(0); Phi'(0) = -kappa).
    Errors: delete-a-group jackknife over groups of whole neurons (a neuron's increments are
    correlated in time), with the cut held at its full-data value, combined in quadrature with
    the cut's systematic error ``se_cut``, the distance from the root at the cut used to the
    root at the deepest usable cut reached by at least :data:`MIN_CUT_NEURONS` neurons. A cut
    that has not quite reached the plateau biases the root
    by an amount that varies from dataset to dataset and does not shrink with more data; the
    deepest cut is the least biased and the noisiest, and their distance measures that bias
    (the usual systematic error of a choice of analysis window). On the 200 far positives of
    the calibration study the jackknife alone covered 0.57 / 0.88 at 1 / 2 errors (sd of the
    standardized error 1.30, growing with the records: 1.00 at R = 100, 1.41 at R = 400); with
    ``se_cut`` 0.69 / 0.91 (sd 1.07; 0.86 at R = 100, 1.21 at R = 400).

    The data-driven cut (``cut=None``) scans :data:`CUT_LEVELS` (2-15 % quantiles of the late
    zeta). It starts at :data:`DEFAULT_CUT` (5 %), or at :data:`TRANSITION_CUT` (3 %) when
    kappa_hat at the widest cut is more than ``stable_z`` jackknife errors below kappa_hat at 5 %
    (the drift's transition is near: a cut inside it biases the root low); from there it moves
    deeper to the first level whose beta_hat agrees with those at every deeper level within
    ``stable_z`` jackknife errors of the difference (the deeper sample is part of the wider one,
    so the difference is jackknifed itself). It never moves to a cut wider than 5 %: on the
    independent generator, taking the widest "stable" cut took the coverage from 0.69/0.93 to
    0.58/0.87 (the stability test cannot see a bias of about one error). When no level above the
    deepest agrees with all deeper ones, the scan is unstable (NOT_IDENTIFIED); when the transition
    is near but no deeper cut is usable, the 5 % cut is used with its caveat.

    Known limits: the root cannot tell a collapsed set (no root in (0, lam): the empirical root
    then lies beyond lam, where E exp(-beta dZ) is infinite) from a concentrated one, nor an OU
    drift, except through the drift changing across the scan (the "transition" caveat, the
    unstable scan) or a root on few effective increments; a transition that spans every scanned
    cut biases it low unseen; jumps common to many neurons bias it and make the jackknife errors
    too small (seen through the record F, the one-way ANOVA of the late increments by record).

    Sources: the estimator is the empirical adjustment (Lundberg) coefficient of ruin theory.
    Herkenrath (1986, Insurance Math. Econom. 5, 305) introduced estimating it by stochastic
    approximation; Csorgo & Teugels (1990, J. Appl. Probab. 27, 763) gave the estimator from the
    empirical moment generating function of i.i.d. claim surpluses and its consistency and
    asymptotic normality; Pitts, Grubel & Embrechts (1996, Scand. Actuar. J., 117) extended these
    limits to the compound Poisson model from observed claims (functional delta method) and gave
    confidence intervals. Here the i.i.d. "surpluses" are far-left increments, and the i.i.d.
    errors are replaced by the neuron-group jackknife.

    References
    ----------
    * U. Herkenrath, "On the estimation of the adjustment coefficient in risk theory by means
      of stochastic approximation procedures", *Insurance Math. Econom.* 5 (1986) 305-313.
    * M. Csörgő, J. L. Teugels, "Empirical Laplace transform and approximation of compound
      distributions", *J. Appl. Probab.* 27 (1990) 88-101.
    * S. M. Pitts, R. Grübel, P. Embrechts, "Confidence bounds for the adjustment coefficient",
      *Adv. Appl. Probab.* 28 (1996) 802-827.
    * The specification, §4 and §8.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> dz = rng.normal(0.1, np.sqrt(2 * 0.5 * 0.1), (400, 512))     # kappa 1, eta_G 0.5, Delta 0.1
    >>> zeta = np.cumsum(dz, axis=0)                                  # beta* = kappa/eta_G = 2
    >>> r = beta_dynamics(zeta, 0.1 * np.arange(400), cut=0.05)
    >>> r.status.value, abs(r.beta.value - 2) < 3 * r.beta.se
    ('ok', True)
    """
    zeta, step = _check_args(zeta, step, late_fraction, cut, n_groups)
    _check_options(max_delta_kappa, min_increments, stable_z)
    z, dz, dt, neuron, values, delta, uniform, record_f = _late_increments(zeta, step, late_fraction)
    notes = [] if uniform else [f"record intervals differ (largest {delta:.4g}): the root pools them (the "
                                f"Lundberg equation holds at every lag); Delta * kappa_hat uses the largest"]
    Q = zeta.shape[1]
    G = min(int(n_groups), Q)
    if values.size == 0 or dz.size == 0:
        msg = "no late increments: every late record pair has an undefined (NaN) zeta"
        none = unavailable(msg)
        return DynamicsRoot(none, Status.UNAVAILABLE, msg, float("nan"), float("nan"), "given" if cut else "scan",
                            0, 0, delta, uniform, none, float("nan"), float("nan"), float("nan"), (), notes)
    lab = neuron_groups(Q, G)[neuron]
    levels = sorted(set(CUT_LEVELS) | ({float(cut)} if cut is not None else set()))
    scan = tuple(_cut_estimate(p, float(np.quantile(values, p)), z, dz, dt, neuron, lab, G) for p in levels)
    return _verdict(scan, cut, delta, uniform, notes, record_f, max_delta_kappa, min_increments, stable_z)


def _verdict(scan, cut, delta, uniform, notes, record_f, max_delta_kappa, min_increments, stable_z):
    levels = [c.level for c in scan]
    unstable = None
    if cut is not None:
        k, chosen_by = levels.index(float(cut)), "given"
    else:
        k, note = _choose_cut(scan, min_increments, stable_z)
        chosen_by = "scan"
        if k is None:
            k, chosen_by = levels.index(DEFAULT_CUT), "default"
            unstable = note
        elif note:
            notes.append(note)
    c = scan[k]
    f, rho = record_f
    refused = _refusal(c, delta, max_delta_kappa, min_increments)
    if refused is None and unstable is not None:
        refused = (Status.NOT_IDENTIFIED, unstable)
    if refused is None and rho > COMMON_SHOCK_RHO:
        refused = (Status.NOT_IDENTIFIED, f"common shocks: the neurons' increments at one record correlate "
                   f"(rho_hat = {rho:.2f} > {COMMON_SHOCK_RHO:g}, record F = {f:.3g}): the neurons are not "
                   f"independent, the root is biased and the neuron-group jackknife too small")
    if refused is not None:
        status, message = refused
        beta = unavailable(message)
    else:
        cav = _caveats(c, scan, min_increments, stable_z)
        if f > COMMON_SHOCK_F:
            cav.append(f"neurons not independent: record F = {f:.3g} > {COMMON_SHOCK_F:g} (rho_hat = {rho:.3f}); "
                       f"the jackknife errors may be too small")
        status, message = Status.OK, "; ".join(cav)
    se_cut = _cut_error(c, scan, min_increments)
    if refused is None:
        beta = Estimate(c.beta.value, math.hypot(c.beta.se, se_cut), message or None)
    return DynamicsRoot(beta=beta, status=status, message=message, cut=c.level, z_cut=c.z_cut,
                        chosen_by=chosen_by, n_increments=c.n, n_neurons=c.n_neurons, delta=delta,
                        uniform=uniform, kappa=c.kappa, delta_kappa=delta * c.kappa.value, ess=c.ess,
                        bias=c.bias, scan=scan, notes=notes, record_f=record_f[0], shock_rho=record_f[1],
                        se_jackknife=c.beta.se, se_cut=se_cut)


def _cut_error(c: CutEstimate, scan, min_increments) -> float:
    """|root at the deepest usable cut - root at c| (0 when c is the deepest usable cut; NaN when c
    has no root). A cut reached by fewer than MIN_CUT_NEURONS neurons does not count: its
    jackknife over neuron groups is not reliable (a few neurons frozen far left reach it alone)."""
    if not (c.beta.ok and math.isfinite(c.beta.value)):
        return float("nan")
    deeper = [s for s in scan if s.level < c.level and _usable(s, min_increments) and s.n_neurons >= MIN_CUT_NEURONS]
    return abs(deeper[0].beta.value - c.beta.value) if deeper else 0.0
