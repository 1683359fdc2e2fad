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
        "envelope_asymptotics": ["AsymptoticEnvelope", "asymptotic_envelope", "unit_crossing"],
        "envelope_decay": ["DECAY_CLASSES", "DecayClass", "SlopeFit", "classify_decay", "fit_slope", "local_slope"],
        "envelope_map": [
            "SampleEnvelope",
            "envelope",
            "envelope_density",
            "envelope_hist",
            "envelope_samples",
            "tauberian_prediction",
            "valid_lag_max",
        ],
        "learnability": ["kappa_alpha", "learnability_window", "sample_complexity", "window_scaling_law"],
        "levy": [
            "c_alpha",
            "char_exponent",
            "cumulant",
            "cumulant4",
            "psi",
            "psi_adjoint",
            "psi_mp",
            "psi_unit_over_beta",
            "variance",
        ],
        "params": ["DEFAULTS", "RANGES", "SDEParams", "check_int", "check_param", "check_params", "describe_range"],
        "phases": [
            "CRITICAL_TOL",
            "PHASES",
            "PhaseResult",
            "beta_star",
            "classify",
            "eta_j_critical",
            "eta_j_star",
            "phi",
            "tail_rate",
        ],
        "roots": ["chandrupatla"],
    },
)
