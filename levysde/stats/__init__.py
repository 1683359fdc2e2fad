"""The statistics layer: estimators that know nothing of the model, used by the simulator's results
and by the inference layer alike.

* ``tails``: the stationary left tail: Hill-type rates on samples and histograms, threshold
  scans, the tempered fit, the tail amplitude (docs/specification.md §7, §8);
* ``jackknife``: the delete-a-group jackknife: groups, standard error, bias;
* ``tempered_pareto``: the tempered Pareto law ``x^(-1-alpha) e^(-lam x)`` above a threshold (the
  jump sizes of a tempered stable law): density, exact samples, peaks-over-threshold MLE;
* ``stable_fit``: the symmetric alpha-stable fit by the empirical characteristic function, from
  per-group sums (so that resampling groups costs no second pass over the samples).

Names load on first use (:mod:`lazy_loader`, SPEC 1 of Scientific Python).
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach(
    __name__,
    submod_attrs={
        "stable_fit": ["ECF_POINTS", "ECF_U_RANGE", "ECF_PHI2_RANGE", "ecf_grid", "ecf_sums", "ecf_points",
                       "fit_from_sums", "robust_half_iqr"],
        "tempered_pareto": ["TemperedParetoFit"],
        "jackknife": ["JACKKNIFE_BIAS_LIMIT", "jackknife_bias", "jackknife_se", "neuron_groups"],
        "tails": [
            "CHECK_LEVEL",
            "TailEstimate",
            "TailFit",
            "TemperedFit",
            "hill_index",
            "hill_rate",
            "power_law_note",
            "tail_check",
            "tail_fit",
            "tail_from_histogram",
            "tail_from_result",
            "tail_from_samples",
            "tempered_fit",
            "tempered_fit_result",
            "threshold_scan",
            "threshold_scan_result",
        ],
    },
)
