"""levysde: why trained recurrent networks forget slowly (a power law) or fast.

The per-neuron log decay rate zeta_q of a trained RNN moves during training like
the 1-d SDE ``dzeta = F(zeta) dt + sqrt(2 eta_G) dW + dJ`` with J a symmetric
tempered alpha-stable Levy process. This package computes the theory (the
spectral exponent beta*, threshold, phases), simulates the SDE, maps time-scale
spectra to forgetting envelopes and checks all of it against trained networks.
See docs/theory.md and the specification THEORY.md.

Quick use::

    import levysde
    r = levysde.classify(3.0)                 # defaults kappa=1, eta_G=0.1, alpha=1.5, lam=2
    r.beta_star, r.phase                      # 0.80835714647..., 'broad'
"""
import sys as _sys

from ._interrupt import cli_interrupt_guard as _cli_interrupt_guard

# Ctrl-C during this (slow) import: one line and exit 130 for the command line, a plain
# KeyboardInterrupt for library users (levysde._interrupt)
with _cli_interrupt_guard():
    from .levy import c_alpha, char_exponent, cumulant, cumulant4, psi, psi_adjoint, variance
    from .params import DEFAULTS, SDEParams
    from .theory import (CRITICAL_TOL, PHASES, PhaseResult, beta_star, classify, eta_j_critical,
                         eta_j_star, phi, tail_rate)
    from .tauberian import classify_decay, envelope, tauberian_prediction
    from .learnability import kappa_alpha, learnability_window, window_scaling_law
    # simulation and tail estimation (THEORY.md §7, §8). levysde.simulate is the function
    # levysde.simulation.simulate; it also answers the names of the former module levysde.simulate
    # (deprecated, one release), which is why it is registered in sys.modules.
    from .simulation import (DivergenceError, OUDrift, SaturatingDrift, SimulationResult, TabulatedDrift,
                             beta_model, default_eps, sample_increments)
    from .simulation import simulate as _simulate_function
    from ._simulate_alias import SimulateFunction as _SimulateFunction
    from .tails import tail_from_histogram, tail_from_samples, tempered_fit, threshold_scan

simulate = _SimulateFunction(_simulate_function)
_sys.modules[__name__ + ".simulate"] = simulate

__version__ = "0.1.0"

__all__ = [
    "c_alpha", "psi", "psi_adjoint", "char_exponent", "variance", "cumulant", "cumulant4",
    "DEFAULTS", "SDEParams", "phi", "beta_star", "eta_j_star", "eta_j_critical", "classify",
    "tail_rate", "PhaseResult", "PHASES", "CRITICAL_TOL", "__version__",
    "envelope", "tauberian_prediction", "classify_decay", "kappa_alpha", "learnability_window",
    "window_scaling_law", "simulate", "SimulationResult", "SaturatingDrift", "OUDrift", "TabulatedDrift",
    "sample_increments", "default_eps", "beta_model", "DivergenceError",
    "tail_from_histogram", "tail_from_samples", "tempered_fit", "threshold_scan",
]

