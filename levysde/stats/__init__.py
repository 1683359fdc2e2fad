"""The statistics layer: estimators that know nothing of the model, used by the simulator's results
and by the inference layer alike.

``tails``      the stationary left tail: Hill-type rates on samples and histograms, threshold
               scans, the tempered fit, the tail amplitude (docs/specification.md §7, §8)
``jackknife``  the delete-a-group jackknife: groups, standard error, bias
"""
from levysde.stats.jackknife import JACKKNIFE_BIAS_LIMIT, jackknife_bias, jackknife_se, neuron_groups
from levysde.stats.tails import (
    CHECK_LEVEL,
    TailEstimate,
    TailFit,
    TemperedFit,
    hill_index,
    hill_rate,
    power_law_note,
    tail_check,
    tail_fit,
    tail_from_histogram,
    tail_from_result,
    tail_from_samples,
    tempered_fit,
    tempered_fit_result,
    threshold_scan,
    threshold_scan_result,
)

__all__ = [
    'neuron_groups', 'jackknife_se', 'jackknife_bias', 'JACKKNIFE_BIAS_LIMIT', 'TailEstimate',
    'hill_rate', 'hill_index', 'tail_from_samples', 'tail_from_histogram', 'tail_from_result',
    'threshold_scan', 'threshold_scan_result', 'TemperedFit', 'tempered_fit',
    'tempered_fit_result', 'TailFit', 'tail_fit', 'power_law_note', 'tail_check', 'CHECK_LEVEL',
]
