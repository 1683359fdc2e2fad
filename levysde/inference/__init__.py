"""The inference layer: the SDE fitted to zeta trajectories, the theory's prediction from the fit,
the test of the theory on a run (``check``) and the fit of a run's forgetting envelope.

``drift_fit``     the drift F and its plateau kappa (docs/specification.md §3, §8)
``noise_fit``     eta_G, eta_J, alpha, lam from the residuals' characteristic function
``sde_fit``       the joint fit with jackknife errors, and the prediction (beta*, phase odds)
``dynamics``      model-free beta* from the far-left increments (the Lundberg root)
``spectrum``      descriptors of a recorded spectrum (spread, supported lag range)
``check``         ``levysde check``: the fit, the gates and the closing loop on a run
``envelope_fit``  ``levysde envelope``: a run's envelope, its slope and decay class

Names load on first use (:mod:`lazy_loader`, SPEC 1 of Scientific Python).
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach(
    __name__,
    submod_attrs={
        "check": [
            "MIN_GROUPS",
            "MIN_NEURONS",
            "MIN_RECORDS",
            "PHASE_MIN_PROBABILITY",
            "CheckReport",
            "check_run",
            "check_trajectories",
            "clean_columns",
            "ks_critical",
            "ks_to_histogram",
            "load_run_arrays",
            "stationarity_test",
        ],
        "dynamics": [
            "COMMON_SHOCK_F",
            "COMMON_SHOCK_RHO",
            "CUT_LEVELS",
            "DEFAULT_CUT",
            "MAX_DELTA_KAPPA",
            "MIN_ESS",
            "MIN_INCREMENTS",
            "STABLE_Z",
            "TRANSITION_CUT",
            "CutEstimate",
            "DynamicsRoot",
            "beta_dynamics",
            "empirical_phi",
            "lundberg_root",
        ],
        "drift_fit": [
            "DriftEstimate",
            "estimate_drift",
            "fit_saturating",
            "increments",
            "kappa_flag",
            "saturating_form",
        ],
        "envelope_fit": [
            "LAG_MIN",
            "MAX_JACK_BLOCKS",
            "MIN_EXCURSIONS",
            "N_LAGS",
            "RNN_F_FLOOR",
            "EnvelopeFits",
            "RunEnvelope",
            "fit_run_envelope",
            "jackknife_slope_se",
            "lag_grid",
            "rnn_envelope",
            "run_envelope",
            "run_theory",
            "sampling_floor",
            "simulation_envelope",
        ],
        "noise_fit": [
            "ALPHA_RANGE",
            "NoiseEstimate",
            "ecf_model_se",
            "edge_flags",
            "estimate_noise",
            "floor_se",
            "robust_scale",
        ],
        "sde_fit": ["FIT_KEYS", "Prediction", "SDEFit", "fit_sde", "floored_replicates", "predict"],
        "spectrum": ["resolved_lag_max", "spread"],
    },
)
