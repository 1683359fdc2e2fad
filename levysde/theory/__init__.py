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

Names load on first use (:mod:`lazy_loader`, SPEC 1 of Scientific Python).
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach(
    __name__,
    submod_attrs={
        "params": ["DEFAULTS", "RANGES", "SDEParams", "describe_range", "check_param", "check_params"],
        "levy": [
            "c_alpha",
            "psi",
            "psi_adjoint",
            "psi_unit_over_beta",
            "char_exponent",
            "variance",
            "cumulant",
            "cumulant4",
            "psi_mp",
        ],
        "roots": ["chandrupatla"],
        "phases": [
            "phi",
            "beta_star",
            "eta_j_star",
            "eta_j_critical",
            "classify",
            "tail_rate",
            "PhaseResult",
            "PHASES",
            "CRITICAL_TOL",
        ],
        "envelope_map": [
            "envelope",
            "envelope_samples",
            "envelope_hist",
            "envelope_density",
            "SampleEnvelope",
            "tauberian_prediction",
            "valid_lag_max",
        ],
        "envelope_asymptotics": ["AsymptoticEnvelope", "asymptotic_envelope", "unit_crossing"],
        "envelope_decay": ["local_slope", "fit_slope", "SlopeFit", "classify_decay", "DecayClass", "DECAY_CLASSES",
                           "MIN_LOG_DECAY", "MIN_SLOPE_DECADES"],
        "learnability": ["kappa_alpha", "sample_complexity", "learnability_window", "window_scaling_law"],
    },
)
