"""``levysde check RUN.npz``: fit the SDE to a trained network's zeta trajectories and test
the theory on it (docs/theory.md; docs/specification.md §8)."""
from __future__ import annotations

import math

from levysde.cli._common import UsageError, image_output, integer, print_json, real


def add_parser(sub):
    p = sub.add_parser(
        "check",
        help="test the theory on a levysde train run: the phase from the spectrum's tail and the dynamics' root",
        description="Measure beta* twice from the zeta_q trajectories of a run file, as the left-tail rate "
                    "of the late spectrum and as the root of the far-left increments' cumulant generating "
                    "function; call the phase where the two agree and every gate (records, neurons, "
                    "stationarity, independence of the neurons, odds, tempering) passes. Also fit the SDE "
                    "(kappa, eta_G, eta_J, alpha, lam) and report its beta* where the fit is identified, the "
                    "envelope exponent and a simulation of the fitted SDE.",
    )
    p.add_argument("run", metavar="RUN.npz", nargs="?", help="run file written by levysde train")
    p.add_argument("--from", dest="from_dir", metavar="DIR",
                   help="check the anti-collapse paper's output instead of a run file: a checkpoint_taus/ "
                        "directory of ckpt_EEEE_taus.npy files (or a model directory holding one); records are "
                        "checkpoints, time in epochs, units with tau = NaN are right-censored")
    p.add_argument("--loss-ratio", type=real(0.0), metavar="R",
                   help="with --from: the run's late loss / trivial predictor's loss from its logs (the files "
                        "hold no loss; without it the phase is withheld)")
    p.add_argument("--variant", choices=("gate", "jac", "window"), default="gate",
                   help="gate: zeta from the gates; jac: first-order zeta^(1); window: the anti-collapse "
                        "paper's windowed transport zeta_window (run files trained with --window-lags; "
                        "non-decaying units are right-censored) (default gate)")
    p.add_argument("--late-fraction", type=real(0.0, 1.0, lo_open=True), default=0.5,
                   help="last fraction of the records used as the stationary part (default 0.5)")
    p.add_argument("--n-boot", type=integer(10, 100000), default=400,
                   help="normal draws (jackknife covariance) for the fitted SDE's phase probabilities (default 400)")
    p.add_argument("--n-groups", type=integer(8, 1000), default=16,
                   help="neuron groups of the jackknife behind the errors of kappa, eta_G, eta_J, alpha, lam, "
                        "beta_dynamics, beta_envelope and the closure's correlation (beta_tail: delete one "
                        "neuron; the stationarity test: at least 64 groups; default 16, at least 8)")
    p.add_argument("--seed", type=integer(0), default=0,
                   help="seed of the phase-probability draws and of the closing-loop simulation")
    p.add_argument("--no-simulate", action="store_true",
                   help="skip the closing-loop simulation; the closing_loop check of the fitted SDE (KS "
                        "distance) is then not applied, so beta_theory may be reported without it")
    p.add_argument("--plot", metavar="FILE.png",
                   help="4-panel figure (png, pdf, svg, ...: the suffix's format, checked before any work; "
                        ".png added to a name without a suffix); "
                        "refuses an existing file unless --force")
    p.add_argument("--force", action="store_true", help="overwrite an existing --plot file")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)
    return p


#: statuses whose value is not a measurement: printed as the status word, without the number
_NOT_A_VALUE = ("not identified", "at bound", "not significant")


def _line(name, d, key):
    v, se, flag, status = d.get(key), d.get(f"{key}_se"), d.get(f"{key}_flag"), d.get(f"{key}_status")
    if v is None:
        val = status if status in _NOT_A_VALUE else "unavailable"
    elif status in _NOT_A_VALUE:
        val = status
    else:
        val = f"{v:.4g}" + (f" +- {se:.2g}" if se is not None else "")
        if d.get(f"{key}_log_se") is not None:      # a multiplicative error: the interval
            ls = d[f"{key}_log_se"]
            val += f" (1-sigma interval [{v * math.exp(-ls):.3g}, {v * math.exp(ls):.3g}])"
        if status not in (None, "ok"):
            val += f" ({status})"
    return f"  {name:<16} {val}" + (f"   [{flag}]" if flag else "")


def _kappa_line(d):
    """kappa from the better-identified source: the drift fit's plateau or the mean far-left drift of
    the dynamics' cut (the smaller relative error; a fit without an error never wins). The dynamics'
    kappa counts only where its cut has what the dynamics' root needs (MIN_INCREMENTS increments,
    MIN_CUT_NEURONS neurons); where it would win without them, kappa is not identified."""
    from levysde.inference.dynamics import MIN_CUT_NEURONS, MIN_INCREMENTS

    dyn = d.get("dynamics") or {}

    def rel(v, se):
        return se / abs(v) if v not in (None, 0) and se is not None else math.inf

    fit_rel = rel(d.get("kappa_hat"), d.get("kappa_hat_se"))
    dyn_rel = rel(dyn.get("kappa_hat"), dyn.get("kappa_hat_se"))
    if dyn_rel < fit_rel:
        n_inc, n_neu = dyn.get("n_increments") or 0, dyn.get("n_neurons") or 0
        fit_flag = f": {d['kappa_hat_flag']}" if d.get("kappa_hat_flag") else ""
        if n_inc < MIN_INCREMENTS or n_neu < MIN_CUT_NEURONS:
            if math.isfinite(fit_rel):
                return _line("kappa", d, "kappa_hat")
            return _line("kappa", {"k": None, "k_status": "not identified",
                                   "k_flag": f"the dynamics' cut has {n_inc} increments of {n_neu} neurons (needs "
                                             f">= {MIN_INCREMENTS} and >= {MIN_CUT_NEURONS}); the drift fit's plateau "
                                             f"has no error" + fit_flag}, "k")
        return _line("kappa", {"k": dyn["kappa_hat"], "k_se": dyn["kappa_hat_se"],
                               "k_flag": "mean far-left drift at the dynamics' cut (the drift fit's plateau is "
                                         "less well identified" + fit_flag + ")"}, "k")
    return _line("kappa", d, "kappa_hat")


def _report(args):
    """The check of a run file, or of a checkpoint_taus directory (--from)."""
    if (args.run is None) == (args.from_dir is None):
        raise UsageError("give a run file RUN.npz or --from DIR (one of them)")
    if args.from_dir is None:
        if args.loss_ratio is not None:
            raise UsageError("argument --loss-ratio: applies with --from only (a run file has its loss)")
        from levysde.inference.checkpoint_check import check_run_censored

        return check_run_censored(args.run, variant=args.variant, late_fraction=args.late_fraction,
                                  n_boot=args.n_boot, seed=args.seed, closing_loop=not args.no_simulate,
                                  n_groups=args.n_groups)
    if args.variant != "gate":
        raise UsageError("argument --variant: checkpoint_taus hold one time scale per unit (no variants)")
    from levysde.inference.checkpoint_check import check_checkpoint_taus

    return check_checkpoint_taus(args.from_dir, loss_ratio=args.loss_ratio, late_fraction=args.late_fraction,
                                 n_boot=args.n_boot, seed=args.seed, closing_loop=not args.no_simulate,
                                 n_groups=args.n_groups)


def run(args) -> int:
    if args.plot is not None:
        args.plot = image_output(args.plot, "--plot", args.force)
    elif args.force:
        raise UsageError("argument --force: does not apply without --plot")
    rep = _report(args)
    args.run = args.run if args.run is not None else args.from_dir
    d = rep.as_json()
    if args.plot:
        from levysde.plotting import plot_check

        src = args.run
        if args.from_dir is not None:
            from levysde.io.checkpoint_taus import read_checkpoint_taus

            ct = read_checkpoint_taus(args.from_dir)
            src = {"zeta": ct.zeta, "step": ct.epoch.astype(float)}
        plot_check(rep, src, args.plot)
    if args.json:
        print_json(d)
        return 0
    cfg = rep.config
    if args.from_dir is not None:
        x = rep.extra
        print(f"levysde check --from {args.from_dir}   checkpoint_taus: {x['n_units']} units, epochs "
              f"{x['epochs'][0]}..{x['epochs'][1]} (every {x['record_interval_epochs']:g}), censored "
              f"{x['n_censored_final']} at the last checkpoint")
    else:
        print(f"levysde check {args.run}   model={cfg.get('model')} optimizer={cfg.get('optimizer')} "
              f"task={cfg.get('task')} hidden={cfg.get('hidden')} variant={args.variant}")
    print("fitted SDE (late part of training):")
    print(_kappa_line(d))
    for name, key in (("eta_G", "eta_g_hat"), ("eta_J", "eta_j_hat"), ("alpha", "alpha_hat"), ("lam", "lam_hat")):
        print(_line(name, d, key))
    print("prediction vs observation:")
    probs = ", ".join(f"{k} {v:.0%}" for k, v in d["phase_probabilities"].items())
    ratio = "n/a" if d.get("loss_ratio") is None else f"{d['loss_ratio']:.3g}"
    if "learned" in d:
        said = {True: "yes", False: "no"}.get(d["learned"], "unknown")
        print(f"  {'learned':<16} {said} (late loss / trivial loss = {ratio})")
    print(f"  {'phase':<16} {d['phase'] or 'withheld'}" + (f"   ({probs})" if probs else ""))
    if d.get("phase_evidence"):
        print(f"    evidence: {d['phase_evidence']}")
    for reason in d["phase_withheld"]:
        print(f"    withheld: {reason}")
    if d["phase"] is None and d.get("phase_candidates"):
        print(f"    open: {' or '.join(d['phase_candidates'])} (beta > 1 where the data reach; lam not identified)")
    st, ind = d["stationarity"], d.get("independence") or {}
    for name, v, why in (("stationary", d["stationary"], st.get("reason", "not tested")),
                         ("independent", d.get("independent"), ind.get("reason", "not tested"))):
        print(f"  {name:<16} {'untested' if v is None else v}   [{why}]")
    tails = (("beta (tail)", "beta_tail"),) + ((("beta (tail, cens)", "beta_tail_censored"),)
                                               if "beta_tail_censored" in d else ())
    for name, key in (*tails,
                      ("beta (dynamics)", "beta_dynamics"), ("beta (envelope)", "beta_envelope"),
                      ("KS(sim, net)", "ks_distance"),
                      ("beta (sim tail)", "beta_sim_tail")):
        print(_line(name, d, key))
    cz = d.get("closure_z")
    print(f"  {'closure z':<16} " + ("untested" if cz is None else
                                     f"{cz:+.2f} (tail vs dynamics; they agree when |z| <= {d['closure_critical']:g})")
          + (f"   beta (combined) {d['beta_combined']:.4g} +- {d['beta_combined_se']:.2g}"
             if d.get("beta_combined") is not None else ""))
    adm = d.get("admissibility") or {}
    if adm:
        print(f"  {'tempering':<16} {adm['evidence']}   [{adm['reason']}]")
    print(_line("beta* (theory)", d, "beta_theory"))
    s, e = d["zeta_spread"], d["zeta_spread_early"]

    def g(v):
        return "n/a" if v is None else f"{v:.3g}"

    print(f"  zeta spread: std {g(s['std'])} (early {g(e['std'])}), IQR {g(s['iqr'])}, "
          f"tau decades {g(s['decades'])}")
    for n in d["notes"]:
        print("  note:", n)
    return 0
