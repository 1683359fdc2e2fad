"""Euler-Maruyama simulation of ``dzeta = F(zeta) dt + sqrt(2 eta_G) dW + dJ`` (docs/specification.md §3, §7).

One module per concept; the entry point :func:`simulate` only wires them together:

* :mod:`levysde.simulation.drift`: the drifts F, each a :class:`Drift` (:class:`SaturatingDrift`,
  :class:`OUDrift`, :class:`TabulatedDrift`, or a subclass of one's own) that gives the compiled
  drift its :class:`KernelArgs`;
* :mod:`levysde.simulation.scheme`: the jump law of the scheme (cut eps, big-jump rate,
  small-jump variance and symbol, the simulated model's tail rate :func:`beta_model`);
* :mod:`levysde.simulation.result`: :class:`SimulationResult` (``.npz`` save/load, tail estimates)
  and its metadata :class:`SimulationMeta`;
* ``levysde.simulation._kernels``: the compiled (Numba) samplers and time stepper;
* ``levysde.simulation._step``: drift and big-jump rejection, written once for both backends;
* ``levysde.simulation._backend``, ``levysde.simulation._cuda``: the backend choice and the CUDA
  kernel (numba-cuda, imported only for ``backend="cuda"``);
* ``levysde.simulation._checks``: the simulator's own checks (the generic ones are
  :mod:`levysde.core.validate`'s) and the errors (:class:`DivergenceError`,
  :class:`SimulationInputError`, :class:`StepSizeError`);
* ``levysde.simulation._simulate``: :func:`simulate` and :func:`sample_increments`.

Random numbers: one xoshiro256++ stream per particle, seeded from one
``numpy.random.SeedSequence`` (:mod:`levysde.simulation._rng`), so a seed gives bit-identical output
for any thread count (``NUMBA_NUM_THREADS``). Euler's drift discretisation adds an O(dt)
error to the bulk; with exact jump counts the tail rate does not depend on dt (docs/specification.md §7).

``levysde.simulate`` is :func:`simulate`; ``levysde.simulation.X`` is the home of every name below.

Names load on first use (:mod:`lazy_loader`, SPEC 1 of Scientific Python).
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach(
    __name__,
    submod_attrs={
        "_backend": ["BACKENDS", "CudaUnavailableError", "load_cuda"],
        "_checks": ["MAX_SLOPE_DT", "MAX_STEPS", "DivergenceError", "SimulationInputError", "StepSizeError"],
        "_simulate": ["DEFAULT_RECORD_EVERY", "group_starts", "sample_increments", "simulate"],
        "drift": [
            "Drift",
            "KernelArgs",
            "OUDrift",
            "SaturatingDrift",
            "TabulatedDrift",
            "DRIFT_SATURATING",
            "DRIFT_OU",
            "DRIFT_TABULATED",
        ],
        "result": ["SimulationResult", "SimulationMeta"],
        "scheme": [
            "DEFAULT_EPS_FACTOR",
            "MAX_JUMPS_PER_STEP",
            "MAX_SERIES_BETA_EPS",
            "beta_model",
            "big_jump_rate",
            "default_eps",
            "poisson_table",
            "simulation_eps",
            "small_jump_symbol",
            "small_jump_variance",
        ],
    },
)
