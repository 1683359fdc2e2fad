"""Studies over many parameter points: the phase diagram (``diagram``), its simulated overlay
(``overlay``), the parallel, resumable sweep behind it (``sweep``) and the anti-collapse
paper's training campaign on that sweep (``campaign``, needs torch; its points and the
progress of its runs torch-free in ``campaign_plan``), its verdict: the paper's
estimators beside levysde's check on the finished runs (``paper_verdict``, numpy only), and the
learnability paper's campaign (``learnability_campaign``, needs torch), with what their
command-line drivers share (``drivers``: the one-line usage errors, the check of a campaign
directory).

Names load on first use (:mod:`lazy_loader`, SPEC 1 of Scientific Python).
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach(
    __name__,
    submod_attrs={
        "diagram": ["AXES", "PhaseDiagram", "phase_diagram", "DEFAULT_RANGES", "SIM_SETTINGS"],
        "overlay": ["simulated_overlay", "simulate_point"],
        "sweep": ["load_point", "point_file", "point_seed", "run_sweep"],
        "drivers": ["CampaignParser", "check_campaign_dir"],
        "learnability_campaign": ["GATED_FIRST", "learnability_run_name", "learnability_points",
                                  "learnability_point", "run_learnability_campaign", "learnability_status",
                                  "measured_summary"],
        "campaign": ["CampaignPaused", "train_run", "train_point", "run_campaign"],
        "campaign_plan": ["campaign_points", "campaign_status", "run_summary"],
        "paper_verdict": ["campaign_runs", "run_time_scales", "profile_lags", "model_paper_estimates",
                          "verdict_rows", "verdict_table", "far_left_drift", "verdict_figure_data"],
    },
)
