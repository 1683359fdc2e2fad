"""The inference layer: the SDE fitted to zeta trajectories, the theory's prediction from the fit,
the test of the theory on a run (``check``) and the fit of a run's forgetting envelope.

``drift_fit``     the drift F and its plateau kappa (docs/specification.md §3, §8)
``noise_fit``     eta_G, eta_J, alpha, lam from the residuals' characteristic function
``sde_fit``       the joint fit with jackknife errors, and the prediction (beta*, phase odds)
``spectrum``      descriptors of a recorded spectrum (spread, supported lag range)
``check``         ``levysde check``: the fit, the gates and the closing loop on a run
``envelope_fit``  ``levysde envelope``: a run's envelope, its slope and decay class
"""
from levysde.inference.check import (
    MIN_GROUPS,
    MIN_NEURONS,
    MIN_RECORDS,
    PHASE_MIN_PROBABILITY,
    CheckReport,
    Gate,
    Stationarity,
    StationarityStat,
    check_run,
    check_trajectories,
    clean_columns,
    ks_critical,
    ks_to_histogram,
    load_run_arrays,
    stationarity_test,
)
from levysde.inference.drift_fit import (
    DriftEstimate,
    estimate_drift,
    fit_saturating,
    increments,
    kappa_flag,
    restoring_plateau,
    saturating_form,
)
from levysde.inference.envelope_fit import (
    LAG_MIN,
    MAX_JACK_BLOCKS,
    MIN_EXCURSIONS,
    N_LAGS,
    RNN_F_FLOOR,
    EnvelopeFits,
    RunEnvelope,
    fit_run_envelope,
    jackknife_slope_se,
    lag_grid,
    rnn_envelope,
    run_envelope,
    run_theory,
    sampling_floor,
    simulation_envelope,
)
from levysde.inference.noise_fit import (
    ALPHA_RANGE,
    NoiseEstimate,
    ecf_model_se,
    edge_flags,
    estimate_noise,
    floor_se,
    robust_scale,
)
from levysde.inference.sde_fit import FIT_KEYS, Prediction, SDEFit, fit_sde, floored_replicates, predict
from levysde.inference.spectrum import Spread, resolved_lag_max, spread

__all__ = ['DriftEstimate', 'increments', 'estimate_drift', 'saturating_form', 'fit_saturating', 'kappa_flag', 'restoring_plateau', 'NoiseEstimate', 'robust_scale', 'estimate_noise', 'edge_flags', 'ALPHA_RANGE', 'ecf_model_se', 'floor_se', 'SDEFit', 'fit_sde', 'predict', 'Prediction', 'FIT_KEYS', 'floored_replicates', 'Spread', 'spread', 'resolved_lag_max', 'load_run_arrays', 'check_run', 'check_trajectories', 'CheckReport', 'Gate', 'Stationarity', 'StationarityStat', 'ks_to_histogram', 'stationarity_test', 'ks_critical', 'clean_columns', 'MIN_RECORDS', 'MIN_NEURONS', 'MIN_GROUPS', 'PHASE_MIN_PROBABILITY', 'RunEnvelope', 'EnvelopeFits', 'LAG_MIN', 'N_LAGS', 'MIN_EXCURSIONS', 'RNN_F_FLOOR', 'MAX_JACK_BLOCKS', 'sampling_floor', 'lag_grid', 'run_theory', 'run_envelope', 'simulation_envelope', 'rnn_envelope', 'jackknife_slope_se', 'fit_run_envelope']
