"""The inference layer: the SDE fitted to zeta trajectories, the theory's prediction from the fit,
the test of the theory on a run (``check``) and the fit of a run's forgetting envelope.

* ``drift_fit``: the drift F and its plateau kappa (docs/specification.md §3, §8);
* ``noise_fit``: eta_G, eta_J, alpha, lam from the residuals' characteristic function;
* ``sde_fit``: the joint fit with jackknife errors, and the prediction (beta*, phase odds);
* ``dynamics``: the model-free beta* of the far-left increments (the Lundberg root);
* ``spectrum``: descriptors of a recorded spectrum (spread, supported lag range);
* ``independence``: the test of common shocks across neurons;
* ``phase_call``: the closure of beta_tail and beta_dynamics, their combination and the
  admissibility of the root (the phase from data-identified estimates);
* ``check``: ``levysde check``, the fit, the gates and the closing loop on a run;
* ``envelope_grid``: the lag grid of an envelope table;
* ``envelope_fit``: ``levysde envelope``, a run's envelope, its slope and decay class.

Names load on first use (:mod:`lazy_loader`, SPEC 1 of Scientific Python).
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach(
    __name__,
    submod_attrs={
        "drift_fit": [
            "DriftEstimate",
            "increments",
            "estimate_drift",
            "saturating_form",
            "fit_saturating",
            "kappa_flag",
            "restoring_plateau",
        ],
        "noise_fit": [
            "NoiseEstimate",
            "robust_scale",
            "estimate_noise",
            "edge_flags",
            "ALPHA_RANGE",
            "ecf_model_se",
            "floor_se",
        ],
        "sde_fit": ["SDEFit", "fit_sde", "predict", "Prediction", "FIT_KEYS", "floored_replicates"],
        "dynamics": [
            "DynamicsRoot",
            "CutEstimate",
            "beta_dynamics",
            "lundberg_root",
            "empirical_phi",
            "CUT_LEVELS",
            "DEFAULT_CUT",
            "MAX_DELTA_KAPPA",
            "MIN_INCREMENTS",
            "MIN_ESS",
            "STABLE_Z",
            "TRANSITION_CUT",
            "COMMON_SHOCK_F",
            "COMMON_SHOCK_RHO",
        ],
        "spectrum": ["Spread", "spread", "resolved_lag_max"],
        "independence": ["Independence", "independence_test", "INDEPENDENCE_LEVEL"],
        "phase_call": [
            "Closure",
            "closure_test",
            "CLOSURE_Z",
            "Admissibility",
            "admissibility_test",
            "ADMISSIBLE_Z",
            "PHASE_MIN_ODDS",
            "phase_odds",
        ],
        "check": [
            "load_run_arrays",
            "check_run",
            "check_trajectories",
            "CheckReport",
            "Gate",
            "Stationarity",
            "StationarityStat",
            "ks_to_histogram",
            "stationarity_test",
            "ks_critical",
            "clean_columns",
            "MIN_RECORDS",
            "MIN_NEURONS",
            "MIN_GROUPS",
            "PHASE_MIN_PROBABILITY",
            "STATIONARITY_GROUPS",
            "THEORY_MAX_GAMMA_DELTA",
        ],
        "envelope_grid": ["LAG_MIN", "N_LAGS", "lag_grid"],
        "envelope_fit": [
            "RunEnvelope",
            "EnvelopeFits",
            "MIN_EXCURSIONS",
            "RNN_F_FLOOR",
            "MAX_JACK_BLOCKS",
            "sampling_floor",
            "run_theory",
            "run_envelope",
            "simulation_envelope",
            "rnn_envelope",
            "jackknife_slope_se",
            "fit_run_envelope",
        ],
    },
)
