"""The theory layer: the model's parameters, the tempered alpha-stable symbol, beta* and the phases,
the forgetting envelope of a spectrum and its asymptotics, and the learnability window.

Pure numpy/scipy/mpmath; no simulation, no data.

=============================== ==========================================================
module                          concern
=============================== ==========================================================
``params``                      defaults and admissible ranges of (eta_G, eta_J, kappa, alpha, lam)
``levy``                        the Levy symbol Psi, its adjoint, cumulants (docs/specification.md §2)
``roots``                       Chandrupatla's bracketing root finder, vectorised
``phases``                      Phi, beta*, eta_J*, eta_J^crit, the phase (docs/specification.md §4)
``envelope_map``                the Laplace-Tauberian map p(tau) -> f(l) (docs/specification.md §5)
``envelope_asymptotics``        the envelope's asymptotic form for the model's spectrum
``envelope_decay``              slopes and decay classes of an envelope curve
``learnability``                kappa_alpha, sample complexity, the learnability window H_N
=============================== ==========================================================
"""
from levysde.theory.envelope_asymptotics import AsymptoticEnvelope, asymptotic_envelope, unit_crossing
from levysde.theory.envelope_decay import DECAY_CLASSES, DecayClass, SlopeFit, classify_decay, fit_slope, local_slope
from levysde.theory.envelope_map import (
    SampleEnvelope,
    envelope,
    envelope_density,
    envelope_hist,
    envelope_samples,
    tauberian_prediction,
    valid_lag_max,
)
from levysde.theory.learnability import kappa_alpha, learnability_window, sample_complexity, window_scaling_law
from levysde.theory.levy import (
    c_alpha,
    char_exponent,
    cumulant,
    cumulant4,
    psi,
    psi_adjoint,
    psi_mp,
    psi_unit_over_beta,
    variance,
)
from levysde.theory.params import DEFAULTS, RANGES, SDEParams, check_param, check_params, describe_range
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
from levysde.theory.roots import chandrupatla

__all__ = ['DEFAULTS', 'RANGES', 'SDEParams', 'describe_range', 'check_param', 'check_params', 'c_alpha', 'psi', 'psi_adjoint', 'psi_unit_over_beta', 'char_exponent', 'variance', 'cumulant', 'cumulant4', 'psi_mp', 'chandrupatla', 'phi', 'beta_star', 'eta_j_star', 'eta_j_critical', 'classify', 'tail_rate', 'PhaseResult', 'PHASES', 'CRITICAL_TOL', 'envelope', 'envelope_samples', 'envelope_hist', 'envelope_density', 'SampleEnvelope', 'tauberian_prediction', 'valid_lag_max', 'AsymptoticEnvelope', 'asymptotic_envelope', 'unit_crossing', 'local_slope', 'fit_slope', 'SlopeFit', 'classify_decay', 'DecayClass', 'DECAY_CLASSES', 'kappa_alpha', 'sample_complexity', 'learnability_window', 'window_scaling_law']
