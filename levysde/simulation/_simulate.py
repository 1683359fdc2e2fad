"""The simulator's entry points: :func:`simulate` (Euler-Maruyama of docs/specification.md §3) and
:func:`sample_increments` (the scheme's increments J_dt, docs/specification.md §7).

:func:`simulate` wires the steps together: check the arguments (:mod:`._checks`), the theory
of the model (beta*, beta_model), the histogram layout, the jump law
(:mod:`levysde.simulation.scheme`), the initial state, the compiled time stepper run in chunks
(:mod:`levysde.simulation._kernels`) and the result (:class:`SimulationResult`).
"""
from __future__ import annotations

import functools
import math
import numbers
import time
from dataclasses import dataclass, fields, replace

import numba
import numpy as np

from levysde import __version__
from levysde.core.jsonable import finite_or_none
from levysde.core.validate import check_array, check_bool, check_int, check_real
from levysde.simulation import _checks, _rng
from levysde.simulation._backend import check_backend, cpu_name, load_cuda
from levysde.simulation._checks import DivergenceError, jump_params, step_size, time_grid
from levysde.simulation._jumptable import jump_table
from levysde.simulation._kernels import BLOCK, WINDOW, increments_kernel, run_chunk
from levysde.simulation.bias import bias_budget, default_threshold
from levysde.simulation.drift import Drift, KernelArgs, SaturatingDrift
from levysde.simulation.result import SimulationMeta, SimulationResult
from levysde.simulation.scheme import beta_model, default_eps, jump_scheme, poisson_table, simulation_eps
from levysde.theory.params import DEFAULTS, check_param
from levysde.theory.phases import classify

__all__ = ["simulate", "sample_increments", "DEFAULT_RECORD_EVERY", "group_starts", "chunk_bounds"]

#: default recording stride of :func:`simulate` (docs/simulate.md "Recording stride")
DEFAULT_RECORD_EVERY = 20
MAX_PARTICLES = 2**40            # particles per run (int64 indices; about 88 TB of state)


#: particle-steps per call of the compiled stepper (at most 200 calls): each call ends in a
#: barrier of all threads, which costs up to a scheduler time slice on a shared machine
CHUNK_PARTICLE_STEPS = 30_000_000


def chunk_bounds(n_steps, particles):
    """Step boundaries [0, ..., n_steps] of the stepper's calls: at most 200, each of >=
    CHUNK_PARTICLE_STEPS particle-steps where the run allows (they serve the progress bar and
    the divergence check)."""
    n_chunks = max(1, min(n_steps, 200, (n_steps * particles) // CHUNK_PARTICLE_STEPS))
    return [(i * n_steps) // n_chunks for i in range(n_chunks + 1)]


def group_starts(particles, n_groups):
    """First particle of each group and the end: the particle groups of a run.

    Near-equal groups whose boundaries are multiples of 8 particles (one 64-byte cache line of
    float64) when that leaves no group empty (in practice ``particles >= 8 n_groups``), so that
    threads working on different groups never write to the same cache line.

    Parameters
    ----------
    particles : int
        Number of particles, >= 1.
    n_groups : int
        Number of groups, in [1, particles].

    Returns
    -------
    ndarray of int64, shape (n_groups + 1,)
        ``starts[g]`` is the first particle of group g, ``starts[-1] == particles``; group g is
        ``range(starts[g], starts[g + 1])``.

    Examples
    --------
    >>> print(group_starts(100, 4))      # aligned to multiples of 8
    [  0  24  48  72 100]
    >>> print(group_starts(10, 4))       # too few particles to align: near-equal
    [ 0  2  5  7 10]
    """
    even = (np.arange(n_groups + 1, dtype=np.int64) * particles) // n_groups
    aligned = 8 * ((even + 4) // 8)
    aligned[-1] = particles
    return aligned if np.all(np.diff(aligned) > 0) else even


def _jump_args(rate, eps, alpha, lam):
    """(table, alpha, lam, x_tail, tail_pareto): the CPU big-jump sampler's arguments
    (:mod:`levysde.simulation._jumptable`); a placeholder table when there are no big jumps."""
    if rate > 0.0:
        jt = jump_table(eps, alpha, lam)
        return jt.packed(), alpha, lam, jt.x_tail, jt.tail_pareto
    return np.zeros((6, 1)), alpha, lam, 1.0, True


def sample_increments(n, dt, *, alpha, lam, eta_j, eps=None, seed=0, eta_g=0.0):
    r"""n i.i.d. increments J_dt of the simulated jump process (the specification, §7), for checks.

    Exactly the law used by :func:`simulate`: a Poisson number of big jumps
    (:math:`|z| > \epsilon`, exact rejection sampling) plus :math:`N(0, \sigma_\epsilon^2 dt)`;
    with ``eta_g > 0`` also the Brownian part :math:`\sqrt{2\eta_G}\,dW_{dt}`.

    Bias of the default eps (:func:`default_eps`, docs/simulate.md): the Gaussian
    stand-in for the small jumps is visible in the shape of J_dt at the default cut
    (lam = 0, alpha = 1.5: KS p ~ 7e-4 against ``scipy.stats.levy_stable`` for 20,000
    increments); pass ``eps`` :math:`= 0.02\, (\eta_J\, dt)^{1/\alpha}` or smaller to check the
    increment law itself. The stationary tail rate is barely affected (:func:`beta_model`).

    Parameters
    ----------
    n : int
        Number of increments, >= 1.
    dt : float
        Time step, > 0 (time units).
    alpha, lam, eta_j : float
        Jump parameters (keyword only): alpha in (0, 2), lam >= 0, eta_j >= 0 (ranges as in
        :func:`levysde.theory.levy.psi`).
    eps : float, optional
        Jump cut > 0; default :func:`levysde.simulation.scheme.default_eps`.
    seed : int, optional
        ``numpy.random.SeedSequence`` entropy, >= 0 (default 0); the result is independent of
        the thread count.
    eta_g : float, optional
        Brownian noise eta_G >= 0 (default 0: the jumps alone).

    Returns
    -------
    ndarray, shape (n,)
        The increments (float64), independent of the thread count.

    Raises
    ------
    ValueError
        Naming a bad argument (n < 1, dt <= 0, a parameter outside its range, eps <= 0, a
        negative seed).

    Notes
    -----
    Over a step dt the jumps of size above eps form a compound Poisson process of rate
    :math:`\Lambda_\epsilon` (:func:`levysde.simulation.scheme.big_jump_rate`), drawn exactly; the
    small ones are replaced by :math:`N(0, \sigma_\epsilon^2\,dt)`
    (:func:`levysde.simulation.scheme.small_jump_variance`), the Asmussen-Rosiński
    approximation (the specification, §7).

    References
    ----------
    S. Asmussen and J. Rosiński (2001), "Approximations of small jumps of Lévy processes with a
    view towards simulation", J. Appl. Probab. 38, 482-493. The specification, §7
    (:doc:`/specification`).

    Examples
    --------
    >>> x = sample_increments(200_000, 0.1, alpha=1.5, lam=2.0, eta_j=3.0, seed=0)
    >>> print(x.shape)
    (200000,)
    >>> print(abs(x.var() / (0.1 * levysde.variance(alpha=1.5, lam=2.0, eta_j=3.0)) - 1) < 0.05)   # Var = dt Psi''(0)
    True
    """
    n = check_int("n", n, 1)
    dt = check_real("dt", dt, 0.0, lo_open=True)
    a, lm, ej = jump_params(alpha, lam, eta_j)
    eg = check_param("eta_g", eta_g, scalar=True)
    eps = default_eps(dt, eta_j=ej, alpha=a) if eps is None else check_real("eps", eps, 0.0, lo_open=True)
    rate, sig2, exp_prop = jump_scheme(dt, eps, a, lm, ej, eg)
    tile = 4096
    n_tiles = (n + tile - 1) // tile
    states = _rng.seed_states(seed, n_tiles * BLOCK)
    out = np.empty(n)
    increments_kernel(states, n, tile, math.sqrt((2 * eg + sig2) * dt), rate, poisson_table(rate * dt),
                       *_jump_args(rate, eps, a, lm), out)
    return out


@dataclass(frozen=True)
class _Config:
    """The checked arguments of :func:`simulate` (floats and ints; n_traj <= particles)."""

    eta_j: float
    eta_g: float
    alpha: float
    lam: float
    drift: object
    dt: float
    eps: float
    particles: int
    n_groups: int
    n_steps: int
    rec_start: int
    bin_width: float
    n_traj: int
    traj_every: int
    threshold_u: float
    record_every: int


@dataclass(frozen=True)
class _Theory:
    """beta*, beta_model, the tail rate and the phase of the simulated model (NaN without a plateau)."""

    beta: float
    beta_model: float
    tail_rate: float
    phase: str
    notes: list


@dataclass(frozen=True)
class _Layout:
    """Histogram bins ``hist_lo + bin_width * [0, n_bins]`` around the equilibrium zeq, and the
    divergence window (win_lo, win_hi)."""

    zeq: float
    hist_lo: float
    bin_width: float
    n_bins: int
    edges: np.ndarray
    win_lo: float
    win_hi: float


@dataclass
class _State:
    """Everything the compiled stepper updates in place (one row/entry per particle or group)."""

    states: np.ndarray       # (particles, 4) uint64 xoshiro256++ states
    z: np.ndarray            # (particles,) zeta
    exc_min: np.ndarray      # (particles,) minimum of the open excursion, inf if none
    diverged: np.ndarray     # (particles,) int64: step at which the particle left the window, 0 if not
    gstart: np.ndarray       # (n_groups + 1,) first particle of each group
    acc: np.ndarray          # (n_groups, n_bins, 2) occupation counts and zeta sums
    outside: np.ndarray      # (n_groups, 4) below/above the histogram range
    exc_counts: np.ndarray   # (n_groups, n_bins) excursion depths
    traj: np.ndarray         # (n_traj, n_traj_rec) thinned paths


#: the SimulationMeta fields that a drift's meta() supplies (the others are simulate's own)
DRIFT_META_KEYS = ("drift", "kappa", "gamma", "z0", "drift_grid", "drift_values")
_RESERVED_META_KEYS = frozenset(f.name for f in fields(SimulationMeta)) - set(DRIFT_META_KEYS)


def _json_value(v) -> bool:
    """Whether ``v`` is a string, None, a bool, a finite number, or a list/tuple of them."""
    if isinstance(v, (list, tuple)):
        return all(_json_value(x) for x in v)
    if v is None or isinstance(v, (str, bool)):
        return True
    return isinstance(v, numbers.Real) and math.isfinite(v)


def _check_drift_meta(drift: Drift) -> dict:
    """``drift.meta()`` when it can be stored in the run's :class:`SimulationMeta`: a dict with
    string keys holding drift, kappa, gamma and z0, none of simulate's own fields, and values
    that are strings, None, bools, finite numbers or lists of them (other keys go to ``extra``).
    ValueError naming ``drift.meta()`` otherwise, before any step."""
    meta = drift.meta()
    if not isinstance(meta, dict) or not all(isinstance(k, str) for k in meta):
        raise ValueError(f"drift.meta() must return a dict with string keys; got {type(meta).__name__} "
                         f"from {drift!r}")
    missing = [k for k in DRIFT_META_KEYS[:4] if k not in meta]
    if missing:
        raise ValueError(f"drift.meta() must hold the keys {', '.join(DRIFT_META_KEYS[:4])}; "
                         f"lacks {', '.join(missing)}")
    clash = sorted(_RESERVED_META_KEYS & set(meta))
    if clash:
        raise ValueError(f"drift.meta() must not set simulate's own fields; got {', '.join(clash)}")
    bad = [k for k, v in meta.items() if not _json_value(v)]
    if bad:
        raise ValueError(f"drift.meta() values must be strings, None, bools, finite numbers or lists of them "
                         f"(JSON); got {bad[0]} = {meta[bad[0]]!r}"[:300])
    return meta


def _check_drift(drift) -> Drift:
    """``drift`` (default ``SaturatingDrift()``) when it is a :class:`Drift` that the simulator
    accepts (``check_restoring``) and whose ``kernel_args()`` is a :class:`KernelArgs`."""
    if drift is None:
        return SaturatingDrift()
    if not isinstance(drift, Drift):
        raise ValueError(f"drift must be a levysde.simulation.Drift (SaturatingDrift, OUDrift, "
                         f"TabulatedDrift or a subclass of Drift); got {drift!r}")
    drift.check_restoring()
    check_real("drift.slope", drift.slope, 0.0, why="|dF/dz| that bounds the Euler step; 0 for no drift")
    check_real("drift.equilibrium", drift.equilibrium, why="the stable equilibrium, the histogram's centre")
    if drift.plateau is not None:
        check_real("drift.plateau", drift.plateau, 0.0, lo_open=True, why="kappa, the limit of F far left; or None")
    _check_drift_meta(drift)
    args = drift.kernel_args()
    if not isinstance(args, KernelArgs):
        raise ValueError(f"drift.kernel_args() must return a levysde.simulation.KernelArgs; got "
                         f"{type(args).__name__} from {drift!r}")
    return drift


def _check_arguments(eta_j, eta_g, alpha, lam, drift, particles, t_end, burn_in,
                     dt, eps, n_groups, bin_width, traj_particles, traj_every, threshold_u,
                     record_every) -> _Config:
    """The checks of :func:`simulate` that need no theory, in the order of its signature
    (ValueError naming the argument; StepSizeError for ``|F'| dt > MAX_SLOPE_DT``)."""
    a, lm, ej = jump_params(alpha, lam, eta_j)
    eg = check_param("eta_g", eta_g, scalar=True)
    drift = _check_drift(drift)
    dt = check_real("dt", dt, 0.0, lo_open=True)
    particles = check_int("particles", particles, 1, MAX_PARTICLES)
    n_groups = check_int("n_groups", n_groups, 1, particles, why="at most particles")
    n_steps, rec_start = time_grid(t_end, burn_in, dt)
    step_size(drift, dt)
    eps = None if eps is None else check_real("eps", eps, 0.0, lo_open=True)   # None: simulation_eps later
    bin_width = check_real("bin_width", bin_width, 0.0, lo_open=True)
    traj_particles = check_int("traj_particles", traj_particles, 0, particles, why="at most particles")
    if traj_every is not None and traj_particles == 0:
        raise ValueError("traj_every applies only with traj_particles >= 1 (no trajectories are kept "
                         "with traj_particles = 0)")
    traj_every = check_int("traj_every", 100 if traj_every is None else traj_every, 1)
    if threshold_u is not None:
        threshold_u = check_real("threshold_u", threshold_u)
    n_rec_steps = n_steps - rec_start
    if record_every is None:
        record_every = min(DEFAULT_RECORD_EVERY, n_rec_steps)
    record_every = check_int("record_every", record_every, 1, n_rec_steps, why="the steps after burn-in")
    return _Config(ej, eg, a, lm, drift, dt, eps, particles, n_groups, n_steps, rec_start, bin_width,
                   min(traj_particles, particles), traj_every, threshold_u, record_every)


def _theory(cfg: _Config) -> _Theory:
    """beta*, tail rate and phase (docs/specification.md §4, plateau = kappa) and beta_model (§7) of the model."""

    notes = []
    plateau = cfg.drift.plateau
    if plateau is None:
        nan = float("nan")
        return _Theory(nan, nan, nan, "collapsed", notes)
    cl = classify(cfg.eta_j, cfg.eta_g, plateau, cfg.alpha, cfg.lam)
    beta_th = float(cl.beta_star)
    phase = str(cl.phase)
    beta_m = (beta_model(cfg.eta_j, cfg.eta_g, plateau, cfg.alpha, cfg.lam, eps=cfg.eps)
              if cfg.eta_j > 0 else beta_th)
    if phase != "collapsed" and not math.isfinite(beta_m):
        notes.append("beta_model (root of Phi_eps) is undefined without tempering (lam = 0: the "
                     "tail is a power law); reported as null" if cfg.lam == 0 else
                     "beta_model (root of Phi_eps) could not be resolved in float64 for these "
                     "parameters; reported as null")
    return _Theory(beta_th, beta_m, float(cl.tail_rate), phase, notes)


def _threshold_and_layout(cfg: _Config, th: _Theory, hist_halfwidth, window) -> tuple[_Config, _Layout]:
    """The histogram layout, and the default threshold when none was given
    (:func:`levysde.simulation.bias.default_threshold`); a default beyond the histogram (a drift whose
    plateau sets in only far out) becomes the deepest half-step inside 90 % of its half-width."""
    auto = cfg.threshold_u is None
    if auto:
        cfg = replace(cfg, threshold_u=default_threshold(cfg.drift, cfg.eta_j, cfg.eta_g, cfg.alpha,
                                                         cfg.lam, th.beta))
    lay = _layout(cfg, th.tail_rate, hist_halfwidth, window)
    if auto and cfg.threshold_u >= lay.zeq - lay.hist_lo:
        cfg = replace(cfg, threshold_u=0.5 * math.floor(1.8 * (lay.zeq - lay.hist_lo)))
    return cfg, lay


def _layout(cfg: _Config, tail_rate, hist_halfwidth, window) -> _Layout:
    """Histogram bins (half-width default max(25, 45/tail rate) capped at 400, zeq an edge) and the
    divergence window (default zeq -/+ max(1e3, 2 H); 1e12 when lam = 0), checked."""
    zeq = cfg.drift.equilibrium
    bin_width = cfg.bin_width
    if hist_halfwidth is None:
        r = tail_rate if (math.isfinite(tail_rate) and tail_rate > 0) else 0.0
        hist_halfwidth = 400.0 if r == 0 else min(400.0, max(25.0, 45.0 / r))
    hist_halfwidth = check_real("hist_halfwidth", hist_halfwidth, 0.0, lo_open=True)
    half_bins = max(1, int(math.ceil(hist_halfwidth / bin_width)))
    n_bins = 2 * half_bins
    hist_lo = zeq - half_bins * bin_width
    edges = hist_lo + bin_width * np.arange(n_bins + 1)
    if window is None:
        wh = 1e3 if cfg.lam > 0 else 1e12
        window = (zeq - max(wh, 2 * hist_halfwidth), zeq + max(wh, 2 * hist_halfwidth))
    # float64 must resolve the bins around the equilibrium
    z_max = bin_width * 1e-6 / np.finfo(float).eps
    if not abs(zeq) + hist_halfwidth <= z_max:
        raise _checks.SimulationInputError(
            f"the equilibrium {{z0}} = {zeq:.3g} is too far from 0: float64 cannot resolve bins of "
            f"width {bin_width:g} there; use |z0| <= {z_max - hist_halfwidth:.3g} (the tail rate "
            f"does not depend on z0)")
    win_lo, win_hi = (float(w) for w in check_array("window", window, shape=(2,)))
    if not win_lo < win_hi:
        raise ValueError(f"window must be (lo, hi) with lo < hi; got {window!r}")
    return _Layout(zeq, hist_lo, bin_width, n_bins, edges, win_lo, win_hi)


def _initial_state(cfg: _Config, lay: _Layout, seed, z_init, streams=True) -> _State:
    """One stream per particle from ``seed``; zeta at z_init (default the equilibrium); empty
    accumulators. With ``streams=False`` (the CUDA backend, which keys its own generator by the
    seed) no streams are drawn."""
    particles, n_groups = cfg.particles, cfg.n_groups
    states = _rng.seed_states(seed, particles if streams else 0)
    if z_init is None:
        z = np.full(particles, lay.zeq)
    else:
        z = check_array("z_init", z_init)
        try:
            z = np.array(np.broadcast_to(z, (particles,)))
        except ValueError:
            raise ValueError(f"z_init must be a scalar or have length particles = {particles}") from None
        if not np.all((z > lay.win_lo) & (z < lay.win_hi)):
            raise ValueError(f"z_init must lie inside the divergence window ({lay.win_lo:g}, "
                             f"{lay.win_hi:g}); got values in [{z.min():g}, {z.max():g}]")
    n_traj_rec = cfg.n_steps // cfg.traj_every if cfg.n_traj else 0
    return _State(states=states, z=z, exc_min=np.full(particles, np.inf),
                  diverged=np.zeros(particles, dtype=np.int64),
                  gstart=group_starts(particles, n_groups),
                  acc=np.zeros((n_groups, lay.n_bins, 2)), outside=np.zeros((n_groups, 4)),
                  exc_counts=np.zeros((n_groups, lay.n_bins)), traj=np.zeros((cfg.n_traj, n_traj_rec)))


def _progress_bar(cfg: _Config, progress):
    """A tqdm bar over the particle-steps on stderr (silent off a terminal), or None."""
    if not progress:
        return None
    try:
        from tqdm import tqdm
    except ImportError:                  # no [progress] extra: no bar
        return None

    return tqdm(total=cfg.n_steps * cfg.particles, unit="step", unit_scale=True, desc="simulate",
                leave=False, dynamic_ncols=True, disable=None)


def _check_diverged(cfg: _Config, lay: _Layout, st: _State, s_gauss):
    """DivergenceError (with the likely cause) if a particle left the window or became non-finite."""
    if st.diverged.any():
        bad = np.flatnonzero(st.diverged)
        t_bad = st.diverged[bad].min() * cfg.dt
        raise DivergenceError(
            f"{bad.size} of {cfg.particles} particles left the window [{lay.win_lo:g}, "
            f"{lay.win_hi:g}] or became non-finite by t = {t_bad:g}; likely cause: "
            + _divergence_cause(cfg.drift, cfg.dt, cfg.alpha, cfg.lam, cfg.eta_j, s_gauss,
                                (lay.win_lo, lay.win_hi)))


def _advance(cfg: _Config, lay: _Layout, st: _State, rate, exp_prop, s_gauss, progress) -> float:
    """Run the compiled stepper over all steps, in the chunks of :func:`chunk_bounds`; returns
    (wall time, CPU time of this process, time to compile or load the stepper before the run)
    in seconds.

    Raises DivergenceError (with the likely cause) after the first chunk in which a particle
    left the window or became non-finite."""
    n_steps, particles = cfg.n_steps, cfg.particles
    kind, dpar, grid, vals = cfg.drift.kernel_args()
    bounds = chunk_bounds(n_steps, particles)
    n_chunks = len(bounds) - 1
    jargs = _jump_args(rate, cfg.eps, cfg.alpha, cfg.lam)
    cdf_full = poisson_table(rate * cfg.dt * WINDOW)
    def chunk_args(i):
        s, e_ = bounds[i], bounds[i + 1]
        n_last = (e_ - s) % WINDOW                     # the chunk's last, shorter window
        return (st.z, st.states, st.exc_min, st.diverged, st.gstart, s, e_ - s,
                cfg.rec_start, cfg.record_every, cfg.dt, kind, dpar, grid, vals, s_gauss, rate,
                cdf_full, poisson_table(rate * cfg.dt * n_last), *jargs, lay.hist_lo,
                1.0 / lay.bin_width, lay.n_bins,
                st.acc, st.outside, st.exc_counts, lay.zeq, lay.win_lo, lay.win_hi,
                st.traj, cfg.traj_every)

    # compile (or load from Numba's cache) before the clock starts: the run's speed is the
    # stepper's alone, the compilation is reported apart (compile_time_s)
    tc = time.perf_counter()
    run_chunk.compile(tuple(numba.typeof(a) for a in chunk_args(0)))
    compile_s = time.perf_counter() - tc
    bar = _progress_bar(cfg, progress)
    t0, c0 = time.perf_counter(), time.process_time()
    # dynamic scheduling of the groups (chunks of one group): keeps both cores busy when
    # the machine is shared; results do not depend on it (one stream per particle)
    old_chunk = numba.set_parallel_chunksize(1)
    try:
        for i in range(n_chunks):
            s, e_ = bounds[i], bounds[i + 1]
            run_chunk(*chunk_args(i))
            _check_diverged(cfg, lay, st, s_gauss)
            if bar is not None:
                bar.update((e_ - s) * particles)
    finally:
        numba.set_parallel_chunksize(old_chunk)
        if bar is not None:
            bar.close()
    return time.perf_counter() - t0, time.process_time() - c0, compile_s


def _advance_cuda(cu, cfg: _Config, lay: _Layout, st: _State, seed, rate, exp_prop, s_gauss,
                  progress) -> tuple[float, int]:
    """The same run on the GPU (``levysde.simulation._cuda``, module ``cu``): fills ``st`` in
    place like :func:`_advance` (``st.states`` unused: the kernel keys Philox by
    the seed). Returns (wall time in seconds, threads per block). Raises DivergenceError
    after the first launch in which a particle diverged."""
    bar = _progress_bar(cfg, progress)
    try:
        out = cu.run(st.z, seed=seed, gstart=st.gstart, n_steps=cfg.n_steps, rec_start=cfg.rec_start,
                     dt=cfg.dt, drift_args=cfg.drift.kernel_args(), s_gauss=s_gauss, rate=rate,
                     eps=cfg.eps, alpha=cfg.alpha, lam=cfg.lam, exp_prop=exp_prop,
                     hist_lo=lay.hist_lo, bin_width=lay.bin_width, n_bins=lay.n_bins,
                     exc_level=lay.zeq, win_lo=lay.win_lo, win_hi=lay.win_hi, n_traj=cfg.n_traj,
                     traj_every=cfg.traj_every, progress=None if bar is None else bar.update)
    finally:
        if bar is not None:
            bar.close()
    st.z[:], st.exc_min[:], st.diverged[:] = out["z"], out["exc_min"], out["diverged"]
    st.acc[...], st.outside[...], st.exc_counts[...] = out["acc"], out["outside"], out["exc_counts"]
    st.traj[...] = out["traj"]
    _check_diverged(cfg, lay, st, s_gauss)
    return out["wall_s"], out["threads_per_block"]


def _close_open_excursions(lay: _Layout, st: _State):
    """Excursions still open at the end count with their current minimum (in place)."""
    open_ = np.flatnonzero(np.isfinite(st.exc_min))
    if open_.size:
        grp = np.searchsorted(st.gstart, open_, side="right") - 1
        ib = np.clip(np.floor((st.exc_min[open_] - lay.hist_lo) / lay.bin_width), 0,
                     lay.n_bins - 1).astype(np.int64)
        np.add.at(st.exc_counts, (grp, ib), 1.0)


def _result(cfg: _Config, th: _Theory, lay: _Layout, st: _State, seed, rate, sig2, exp_prop,
            wall, backend, cpu, compile_s=None) -> SimulationResult:
    """Averages per recorded step and the metadata (:class:`SimulationMeta`, the fields listed in
    :func:`simulate`); ``backend`` is (name, device name, threads), ``cpu`` the stepper's CPU
    seconds (None on cuda)."""

    n_steps, dt = cfg.n_steps, cfg.dt
    n_rec = (n_steps - cfg.rec_start) // cfg.record_every
    dmeta = cfg.drift.meta()
    meta = SimulationMeta(
        version=__version__, eta_j=cfg.eta_j, eta_g=cfg.eta_g, alpha=cfg.alpha, lam=cfg.lam,
        **{k: v for k, v in dmeta.items() if k in DRIFT_META_KEYS}, dt=dt, eps=cfg.eps,
        seed=int(seed) if isinstance(seed, (int, np.integer)) else str(seed),
        t_end=n_steps * dt, burn_in=cfg.rec_start * dt, particles=cfg.particles,
        n_groups=cfg.n_groups, steps=n_steps, record_steps=n_rec, record_every=cfg.record_every,
        big_jump_rate=rate, sigma_eps2=sig2, exp_proposal=exp_prop,
        window=(lay.win_lo, lay.win_hi), backend=backend[0], device=backend[1], threads=int(backend[2]),
        wall_time_s=wall, particle_steps_per_s=cfg.particles * n_steps / wall,
        beta_theory=finite_or_none(th.beta), beta_model=finite_or_none(th.beta_model),
        tail_rate_theory=finite_or_none(th.tail_rate), phase=th.phase,
        threshold_u=cfg.threshold_u - lay.zeq, equilibrium=lay.zeq, notes=tuple(th.notes), cpu_time_s=cpu,
        compile_time_s=None if compile_s is None else float(compile_s),
        bias_budget=bias_budget(cfg.threshold_u, cfg.drift, cfg.eta_j, cfg.eta_g, cfg.alpha, cfg.lam, th.beta,
                                th.beta_model),
        extra={k: v for k, v in dmeta.items() if k not in DRIFT_META_KEYS})
    n_traj_rec = st.traj.shape[1]
    traj_t = (np.arange(1, n_traj_rec + 1) * cfg.traj_every * dt) if cfg.n_traj else None
    return SimulationResult(hist_edges=lay.edges, hist_counts=st.acc[:, :, 0] / n_rec,
                            hist_sums=st.acc[:, :, 1] / n_rec, hist_outside=st.outside / n_rec,
                            excursion_counts=st.exc_counts, final_zeta=st.z, meta=meta,
                            traj_t=traj_t, traj_zeta=st.traj if cfg.n_traj else None)


def _drift_keywords_moved(func):
    """A TypeError with the way forward for ``kappa``, ``gamma`` and ``z0``, which :func:`simulate`
    took before its drift carried them (Python's own error would not say where they went)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        moved = [k for k in ("kappa", "gamma", "z0") if k in kwargs]
        if moved:
            raise TypeError(f"simulate() got {', '.join(moved)}: the drift carries its plateau kappa, "
                            f"slope gamma and equilibrium z0; pass drift=SaturatingDrift(kappa=..., "
                            f"gamma=..., z0=...) (or OUDrift(gamma, z0), TabulatedDrift(grid, values))")
        return func(*args, **kwargs)

    return wrapper


@_drift_keywords_moved
def simulate(eta_j, *, eta_g=DEFAULTS["eta_g"], alpha=DEFAULTS["alpha"], lam=DEFAULTS["lam"], drift=None,
             particles=16384, t_end=800.0, burn_in=50.0, dt=0.01, seed=0, eps=None,
             n_groups=64, bin_width=0.05, hist_halfwidth=None, window=None,
             z_init=None, traj_particles=0, traj_every=None, threshold_u=None, progress=False,
             backend="cpu", record_every=None):
    r"""Simulate N particles of :math:`d\zeta = F\, dt + \sqrt{2 \eta_G}\, dW + dJ` by Euler-Maruyama.

    Parameters
    ----------
    eta_j, eta_g, alpha, lam : float
        The model (the specification, §2-§4): eta_J >= 0, eta_G >= 0, alpha in (0, 2),
        lam >= 0; defaults of all but eta_j: :data:`levysde.theory.params.DEFAULTS`.
    drift : Drift, optional
        Default ``SaturatingDrift()`` (kappa = 1, gamma = 1, z0 = 0); or ``OUDrift(gamma, z0)``,
        ``TabulatedDrift(grid, values)``, a subclass of :class:`Drift`. It carries kappa, gamma
        and z0: passing those to simulate is a TypeError.
    particles, t_end, burn_in, dt : int, float, float, float, optional
        Particles in [1, 2**40] (16384); simulated time > 0, burn-in included (800); time
        before recording, in [0, t_end) (50); time step > 0 (0.01).
    seed : int, optional
        ``numpy.random.SeedSequence`` entropy >= 0 (0; None, bools, sequences refused). Same
        seed, same bits for any thread count.
    eps : float, optional
        Jump cut > 0; default :func:`levysde.simulation.scheme.simulation_eps` (1, 1.5 or 2
        times ``default_eps``: the largest whose bias beta_model - beta* is <= 2.5e-4 beta*).
    n_groups : int, optional
        Independent particle groups of the jackknife, in [1, particles] (64); G groups give
        G - 1 degrees of freedom, so use at least 8 when the errors matter (the CLI refuses
        fewer).
    bin_width, hist_halfwidth : float, optional
        The histogram of zeta on [zeq - H, zeq + H], bins of ``bin_width`` (0.05); H default
        max(25, 45/tail rate) capped at 400, rounded so that zeq is an edge.
    window : tuple of float, optional
        ``(lo, hi)`` divergence window; default zeq -/+ max(1e3, 2 H) (1e12 when lam = 0).
    z_init : float or array_like, optional
        Initial state(s); default the drift's equilibrium.
    traj_particles, traj_every : int, optional
        Keep every ``traj_every``-th step (100) of the first ``traj_particles`` paths (0, in
        [0, particles]); ``traj_every`` without trajectories is a ValueError.
    threshold_u : float, optional
        Default tail threshold as a depth beyond zeq, in (0, H) (the tail X > -zeq + u on
        X = -zeta; ``meta.threshold_u`` stores that absolute u, the default of
        :meth:`SimulationResult.tail`); default :func:`levysde.simulation.bias.default_threshold`.
    progress : bool, optional
        A tqdm bar on stderr (False).
    backend : {"cpu", "cuda"}, optional
        Numba on all host threads (default), or an NVIDIA GPU through numba-cuda (Philox
        random numbers keyed by seed and particle: the backends agree in law, not bit for bit;
        :doc:`/simulate`, "GPU backend").
    record_every : int, optional
        Record zeta every ``record_every``-th step after burn-in, >= 1 (default
        :data:`DEFAULT_RECORD_EVERY`, capped at the recorded steps; cuda records every step).

    Returns
    -------
    SimulationResult
        Histograms, final states and ``meta`` (:class:`SimulationMeta`: the settings as
        simulated, t_end and burn_in rounded to whole steps; timings, with the stepper's compile
        or cache-load time ``compile_time_s`` apart; beta_theory, beta_model, phase, notes and
        the bias budget).

    Raises
    ------
    TypeError
        For the keywords kappa, gamma, z0 (they belong to the drift).
    ValueError
        Naming a bad argument, before any step (:class:`SimulationInputError`; the list:
        :doc:`/simulate`, "Input checks before the run"), e.g. gamma <= 0, ``threshold_u``
        outside (0, H), ``gamma * dt`` > MAX_SLOPE_DT = 0.5 (:class:`StepSizeError`),
        ``Lambda_eps dt`` > 1e3, ``t_end/dt`` > 1e12, too little memory for ``particles``.
    DivergenceError
        When particles leave the window or become non-finite (the message names the cause).
    CudaUnavailableError
        One line, when ``backend="cuda"`` finds no usable GPU, no numba-cuda or too little memory.

    Notes
    -----
    One step: :math:`\zeta_{n+1} = \zeta_n + F(\zeta_n)\,dt + \sqrt{(2\eta_G +
    \sigma_\epsilon^2)\,dt}\,\xi_n + \sum_{k \le N_n} Z_{n,k}`, :math:`\xi_n \sim N(0, 1)`,
    :math:`N_n` Poisson of mean :math:`\Lambda_\epsilon dt`, :math:`Z_{n,k}` the jumps above
    the cut :math:`\epsilon`, drawn exactly (the specification, §3, §7, :doc:`/specification`;
    Euler-Maruyama: Kloeden & Platen 1992; small jumps: Asmussen & Rosiński 2001).

    Examples
    --------
    >>> t = simulate(3.0, particles=2048, t_end=100.0, burn_in=20.0, seed=1).tail()   # u = 3
    >>> print(abs(t.beta_hat - 0.8083571) < 4 * t.se)   # beta* = 0.8084
    True
    """
    backend = check_backend(backend)
    cfg = _check_arguments(eta_j, eta_g, alpha, lam, drift, particles, t_end, burn_in, dt, eps, n_groups,
                           bin_width, traj_particles, traj_every, threshold_u,
                           1 if backend == "cuda" else record_every)
    seed = check_int("seed", seed, 0, why="a fixed seed makes the run reproducible; None is refused")
    progress = check_bool("progress", progress)
    cu = load_cuda() if backend == "cuda" else None
    if cfg.eps is None:
        cfg = replace(cfg, eps=simulation_eps(cfg.dt, eta_j=cfg.eta_j, eta_g=cfg.eta_g,
                                              kappa=cfg.drift.plateau, alpha=cfg.alpha, lam=cfg.lam))
    th = _theory(cfg)
    cfg, lay = _threshold_and_layout(cfg, th, hist_halfwidth, window)
    _checks.threshold_depth(cfg.threshold_u, lay.zeq - lay.hist_lo)
    rate, sig2, exp_prop = jump_scheme(cfg.dt, cfg.eps, cfg.alpha, cfg.lam, cfg.eta_j, cfg.eta_g)
    _checks.memory(cfg.particles, cfg.n_groups, lay.n_bins, cfg.n_traj,
                   cfg.n_steps // cfg.traj_every if cfg.n_traj else 0)
    s_gauss = math.sqrt((2.0 * cfg.eta_g + sig2) * cfg.dt)
    st = _initial_state(cfg, lay, seed, z_init, streams=cu is None)
    if cu is None:
        wall, cpu, compile_s = _advance(cfg, lay, st, rate, exp_prop, s_gauss, progress)
        run_on = ("cpu", cpu_name(), numba.get_num_threads())
    else:
        wall, block = _advance_cuda(cu, cfg, lay, st, seed, rate, exp_prop, s_gauss, progress)
        cpu = compile_s = None
        run_on = ("cuda", cu.device_name(), block)
    _close_open_excursions(lay, st)
    return _result(cfg, th, lay, st, seed, rate, sig2, exp_prop, wall, run_on, cpu, compile_s)


def _divergence_cause(drift, dt, alpha, lam, eta_j, noise, win):
    causes = []
    f_lo, f_hi = (float(f) for f in np.asarray(drift(np.array(win, dtype=float)), dtype=float))
    if not (f_lo > 0 and f_hi < 0):
        causes.append(f"the {drift.name} drift does not restore at both ends of the window "
                      f"(F({win[0]:g}) = {f_lo:g}, F({win[1]:g}) = {f_hi:g})")
    if drift.slope * dt >= 2:
        causes.append(f"dt too large for the drift slope (slope*dt = {drift.slope * dt:g} >= 2: Euler is unstable)")
    if lam == 0 and eta_j > 0:
        causes.append("untempered jumps (lam = 0) reach huge sizes"
                      + (" and have no stationary law for alpha <= 1" if alpha <= 1 else ""))
    if noise > 0.1 * (win[1] - win[0]):
        causes.append(f"the noise per step ({noise:.3g}) is comparable to the window "
                      f"[{win[0]:g}, {win[1]:g}] (eta_J, eta_G or eps too large)")
    if not causes:
        causes.append("the window is too narrow for this model's excursions (widen it)")
    return "; ".join(causes)
