"""Studies over many parameter points: the phase diagram and the parallel, resumable sweep behind its
simulated overlay.
"""
from levysde.studies.diagram import (
    AXES,
    DEFAULT_RANGES,
    SIM_SETTINGS,
    PhaseDiagram,
    phase_diagram,
    simulate_point,
    simulated_overlay,
)
from levysde.studies.sweep import load_point, point_seed, run_sweep

__all__ = [
    'AXES', 'PhaseDiagram', 'phase_diagram', 'DEFAULT_RANGES', 'simulated_overlay',
    'simulate_point', 'SIM_SETTINGS', 'point_seed', 'run_sweep', 'load_point',
]
