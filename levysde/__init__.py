r"""levysde: why trained recurrent networks forget slowly (a power law) or fast.

The per-neuron log decay rate :math:`\zeta_q` of a trained RNN moves during training like the
1-d SDE

.. math::

    d\zeta = F(\zeta)\, dt + \sqrt{2 \eta_G}\, dW + dJ

with :math:`J` a symmetric tempered :math:`\alpha`-stable Levy process. This package computes
the theory (the spectral exponent :math:`\beta^*`, threshold, phases),
simulates the SDE, maps time-scale spectra to forgetting envelopes and checks all of it against
trained networks (docs/theory.md, docs/specification.md).

The package is layered; each layer uses only the ones before it (docs/api.md):

==============  =====================================================================
``core``        outcomes as data, the argument checks
``io``          atomic writes, run files
``theory``      parameters, the Levy symbol, beta* and the phases, envelopes, learnability
``stats``       tail estimators and the jackknife
``simulation``  the Euler-Maruyama solver (Numba CPU and CUDA backends)
``rnn``         the gated-RNN trainer (PyTorch, optional)
``inference``   the SDE fit, ``check``, the run-envelope fit
``studies``     the phase diagram and parameter sweeps
``plotting``    figures (matplotlib, optional)
``cli``         the ``levysde`` command
==============  =====================================================================

Every name loads on first use (:mod:`lazy_loader`, SPEC 1 of Scientific Python), so
``import levysde`` is fast and pulls in neither Numba nor PyTorch.

Quick use::

    import levysde
    r = levysde.classify(3.0)                 # defaults kappa=1, eta_G=0.1, alpha=1.5, lam=2
    r.beta_star, r.phase                      # 0.80835714647..., 'broad'
"""
from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

import lazy_loader as lazy

try:
    __version__ = version("levysde")
except PackageNotFoundError:        # a source tree that was not installed
    __version__ = "0+unknown"

__getattr__, _lazy_dir, _names = lazy.attach(
    __name__,
    submodules=["core", "io", "theory", "stats", "simulation", "rnn", "inference", "studies", "plotting", "cli"],
    submod_attrs={
        "theory.levy": ["c_alpha", "psi", "psi_adjoint", "char_exponent", "variance", "cumulant", "cumulant4"],
        "theory.params": ["DEFAULTS", "SDEParams"],
        "theory.phases": ["phi", "beta_star", "eta_j_star", "eta_j_critical", "classify", "tail_rate", "PhaseResult",
                          "PHASES", "CRITICAL_TOL"],
        "theory.envelope_map": ["envelope", "tauberian_prediction"],
        "theory.envelope_decay": ["classify_decay"],
        "theory.learnability": ["kappa_alpha", "learnability_window", "window_scaling_law"],
        "simulation": ["simulate", "SimulationResult", "SaturatingDrift", "OUDrift", "TabulatedDrift",
                       "sample_increments", "default_eps", "beta_model", "DivergenceError"],
        "stats.tails": ["tail_from_histogram", "tail_from_samples", "tempered_fit", "threshold_scan"],
        "core.status": ["Status", "Estimate"],
    },
)
__all__ = [*_names, "__version__"]


def __dir__() -> list[str]:
    """The public names (those of :data:`__all__`)."""
    return list(__all__)

if TYPE_CHECKING:   # the eager form, for type checkers and IDEs
    from levysde.core.status import Estimate, Status
    from levysde.simulation import (
        DivergenceError,
        OUDrift,
        SaturatingDrift,
        SimulationResult,
        TabulatedDrift,
        beta_model,
        default_eps,
        sample_increments,
        simulate,
    )
    from levysde.stats.tails import tail_from_histogram, tail_from_samples, tempered_fit, threshold_scan
    from levysde.theory.envelope_decay import classify_decay
    from levysde.theory.envelope_map import envelope, tauberian_prediction
    from levysde.theory.learnability import kappa_alpha, learnability_window, window_scaling_law
    from levysde.theory.levy import c_alpha, char_exponent, cumulant, cumulant4, psi, psi_adjoint, variance
    from levysde.theory.params import DEFAULTS, SDEParams
    from levysde.theory.phases import (
        CRITICAL_TOL,
        PHASES,
        PhaseResult,
        beta_star,
        classify,
        eta_j_critical,
        eta_j_star,
        phi,
        tail_rate,
    )

