"""The simulator's own checks and errors (the generic ones are :mod:`levysde.core.validate`'s).

Each check raises ``ValueError`` naming the parameter and its allowed range; the errors
that :func:`levysde.simulation.simulate` raises before or during a run are defined here.
"""
from __future__ import annotations

from levysde.core.memory import available_memory
from levysde.core.validate import check_real
from levysde.theory.params import check_param

__all__ = ["DivergenceError", "SimulationInputError", "StepSizeError", "MAX_SLOPE_DT", "MAX_STEPS"]

#: Euler accuracy/stability bound checked before a run: |F'| dt at the equilibrium (gamma dt for the
#: saturating and Ornstein-Uhlenbeck drifts, max |dF/dz| dt for a tabulated one) must be <= this
MAX_SLOPE_DT = 0.5
#: cap on the number of time steps round(t_end / dt)
MAX_STEPS = 10**12


class DivergenceError(RuntimeError):
    """Particles left the simulation window or became non-finite during a run.

    Raised by :func:`levysde.simulation.simulate` after the first chunk of steps in which a
    particle diverged; the message counts them, gives the time and names the likely cause (a
    drift that does not restore, too large a dt, untempered jumps, noise comparable to the
    window). A :class:`RuntimeError`.

    Parameters
    ----------
    *args
        The message, as for any exception.

    Examples
    --------
    A window far narrower than the noise of one step:

    >>> try:
    ...     levysde.simulate(3.0, particles=64, t_end=1.0, burn_in=0.0, window=(-0.5, 0.5), seed=0)
    ... except DivergenceError as exc:
    ...     print(exc)
    56 of 64 particles left the window [-0.5, 0.5] or became non-finite by t = ...; likely cause:
    the noise per step (0.126) is comparable to the window [-0.5, 0.5] (eta_J, eta_G or eps too large)
    """


class _Names(dict):
    def __missing__(self, key):
        return key


class SimulationInputError(ValueError):
    """A bad argument of :func:`levysde.simulation.simulate`, found before any step (a ValueError).

    ``str(exc)`` names the Python parameters; :meth:`render` substitutes other names (the CLI
    passes its flags, so that ``levysde simulate`` names ``--threshold`` where Python names
    ``threshold_u``).

    Parameters
    ----------
    template : str
        The message, with parameter names in braces (``"{dt} too large ..."``); names without
        a substitute are kept as they are.

    Attributes
    ----------
    template : str
        The message template.

    Examples
    --------
    >>> try:
    ...     levysde.simulate(3.0, threshold_u=1000.0)
    ... except SimulationInputError as exc:
    ...     print(exc)
    ...     print(exc.render({"threshold_u": "--threshold"}))
    threshold_u must be in (0, 55.7): a depth beyond the equilibrium inside the histogram of zeta
    (half-width 55.7); got 1000
    --threshold must be in (0, 55.7): a depth beyond the equilibrium inside the histogram of zeta
    (half-width 55.7); got 1000
    """

    def __init__(self, template: str):
        self.template = template
        super().__init__(self.render())

    def render(self, names=None) -> str:
        """The message with each ``{name}`` replaced by ``names[name]`` (kept when absent).

        Parameters
        ----------
        names : dict of str to str, optional
            Replacement of each parameter name, e.g. ``{"dt": "--dt"}``.

        Returns
        -------
        str
            The one-line message.
        """
        return self.template.format_map(_Names(names or {}))


class StepSizeError(SimulationInputError, DivergenceError):
    r"""dt is too large for the drift (:math:`|F'|\,dt >` :data:`MAX_SLOPE_DT`), detected before any step.

    Both a ValueError (bad ``dt``) and a :class:`DivergenceError` (the Euler run would diverge,
    or be biased: e.g. ``dt = 5`` with the saturating drift gives beta_hat 0.44 for
    beta* 0.81). The message gives the largest dt allowed.

    Parameters
    ----------
    template : str
        The message template, as for :class:`SimulationInputError`.

    Notes
    -----
    Euler's step of the linearised drift, :math:`\zeta \mapsto (1 - \gamma\,dt)\zeta`, is
    stable for :math:`\gamma\,dt < 2` and accurate for :math:`\gamma\,dt \ll 1`; the check asks
    :math:`\gamma\,dt \le 0.5` (:math:`\max|dF/d\zeta|\,dt` for a tabulated drift).

    Examples
    --------
    >>> try:
    ...     levysde.simulate(3.0, dt=1.0)
    ... except StepSizeError as exc:
    ...     print(exc)
    ...     print(isinstance(exc, ValueError), isinstance(exc, DivergenceError))
    dt too large for gamma: gamma*dt = 1 > 0.5 (Euler would be biased or unstable); use dt <= 0.5/gamma = 0.5
    True True
    """


def jump_params(alpha, lam, eta_j):
    """(alpha, lam, eta_j) as floats, each a single number in its range
    (:func:`levysde.theory.params.check_param` with ``scalar=True``)."""
    return (check_param("alpha", alpha, scalar=True), check_param("lam", lam, scalar=True),
            check_param("eta_j", eta_j, scalar=True))


def time_grid(t_end, burn_in, dt):
    """(n_steps, rec_start) = (round(t_end/dt), round(burn_in/dt)) for checked ``dt``.

    ValueError unless t_end > 0 and 0 <= burn_in < t_end; SimulationInputError when
    t_end/dt > MAX_STEPS or fewer than one step is recorded."""
    t_end = check_real("t_end", t_end, 0.0, lo_open=True)
    burn_in = check_real("burn_in", burn_in, 0.0, t_end, hi_open=True, why=f"t_end = {t_end:g}")
    if not t_end / dt <= MAX_STEPS:
        raise SimulationInputError(
            f"{{t_end}} / {{dt}} = {t_end / dt:.3g} steps exceeds the cap of {MAX_STEPS:.0e}; "
            f"use a larger {{dt}} or a smaller {{t_end}}")
    n_steps = int(round(t_end / dt))
    rec_start = int(round(burn_in / dt))
    if n_steps - rec_start < 1:
        raise SimulationInputError(
            f"{{t_end}} - {{burn_in}} must be at least one step {{dt}}: t_end = {t_end:g} and "
            f"burn_in = {burn_in:g} round to {n_steps} and {rec_start} steps of dt = {dt:g}")
    return n_steps, rec_start


def step_size(drift, dt):
    """StepSizeError when ``drift.slope * dt > MAX_SLOPE_DT`` (Euler accuracy/stability of the drift
    step, docs/simulate.md "Bias"); the message names the drift's ``slope_name`` (a parameter
    such as gamma, or the slope of a table)."""
    slope, name = drift.slope, drift.slope_name
    if slope * dt > MAX_SLOPE_DT:
        if name.isidentifier():
            what = f"{{{name}}}: {name}*dt"
        else:
            what = f"the {drift.name} drift's slope: {name}*dt"
        raise StepSizeError(
            f"{{dt}} too large for {what} = {slope * dt:.3g} > {MAX_SLOPE_DT:g} (Euler would be "
            f"biased or unstable); use dt <= {MAX_SLOPE_DT:g}/{name} = {MAX_SLOPE_DT / slope:.3g}")


def restoring_gamma(gamma, drift_name):
    """SimulationInputError naming gamma unless gamma > 0: a saturating or Ornstein-Uhlenbeck drift
    with gamma <= 0 has no stable equilibrium, so no stationary law (docs/specification.md §3). One wording for
    :func:`levysde.simulation.simulate`, :class:`SaturatingDrift` and ``levysde simulate``."""
    if not gamma > 0:
        raise SimulationInputError(
            f"{{gamma}} must be in (0, inf) for the {drift_name} drift (gamma <= 0 is no restoring "
            f"drift, so there is no stationary law whose tail could be estimated); got {gamma:g}")


def threshold_depth(depth, halfwidth):
    """SimulationInputError naming threshold_u unless the tail threshold ``depth`` (on X = -zeta,
    beyond the equilibrium) is in (0, halfwidth), the histogram's half-width: beyond it the
    estimator has no bins (docs/simulate.md, "Input checks before the run")."""
    if not 0 < depth < halfwidth:
        raise SimulationInputError(
            f"{{threshold_u}} must be in (0, {halfwidth:g}): a depth beyond the equilibrium inside the "
            f"histogram of zeta (half-width {halfwidth:g}); got {depth:g}")


def memory(particles, n_groups, n_bins, n_traj, n_traj_rec):
    """SimulationInputError naming particles when the run needs more than 80% of the available memory:
    states (32 B), z, wait, exc_min, diverged, start-up temporaries (8 B each) per particle, plus
    histograms and trajectories."""
    need = 80 * particles + 8 * 4 * n_groups * n_bins + 8 * n_traj * n_traj_rec
    avail = available_memory()
    if avail is not None and need > 0.8 * avail:
        raise SimulationInputError(
            f"{{particles}} = {particles} needs about {need / 2**30:.3g} GiB of memory but only "
            f"{avail / 2**30:.3g} GiB is available (about 80 bytes per particle); use "
            f"{{particles}} <= {max(1, int(0.8 * avail / 80))}"
            + (" or fewer {traj_particles}" if n_traj else ""))
