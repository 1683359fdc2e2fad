"""``levysde simulate``: Euler-Maruyama simulation and the stationary left tail (docs/specification.md §7, §8)."""
from __future__ import annotations

import math

from levysde.cli._common import (
    UsageError,
    add_model_args,
    check_output,
    image_output,
    integer,
    print_json,
    real,
    reject_flags,
    same_file,
)
from levysde.core.jsonable import finite_or_none

#: why --groups >= 8 (levysde.inference.check.MIN_GROUPS; docs/simulate.md, "Groups")
GROUPS_WHY = ("the jackknife error over G groups has G - 1 degrees of freedom; its 95 % t factor is "
              "12.7 for 2 groups, 2.36 for 8: docs/simulate.md")


def add_parser(sub):
    p = sub.add_parser(
        "simulate",
        help="simulate the SDE and estimate the stationary left-tail rate of zeta",
        description="Simulate dzeta = F dt + sqrt(2 eta_G) dW + dJ (tempered alpha-stable jumps, "
                    "Asmussen-Rosinski cut eps) for many particles and compare the left-tail rate "
                    "of zeta with beta* (docs/specification.md §3, §7, §8).",
    )
    add_model_args(p, multi_eta_j=False)
    g = p.add_argument_group("drift (docs/specification.md §3)")
    g.add_argument("--drift", choices=("saturating", "ou"), default="saturating",
                   help="saturating kappa tanh(gamma (z0 - z)/kappa) or Ornstein-Uhlenbeck "
                        "-gamma (z - z0) (default %(default)s)")
    g.add_argument("--gamma", type=real(allowed="(0, inf)"), default=1.0,
                   help="drift slope at the equilibrium, > 0 (default "
                        "%(default)s). --dt must satisfy gamma*dt <= 0.5")
    g.add_argument("--z0", type=real(), default=0.0, help="equilibrium (default %(default)s)")
    s = p.add_argument_group("simulation (docs/specification.md §7)")
    s.add_argument("--particles", type=integer(2, 10**9), default=16384,
                   help="number of particles (default %(default)s)")
    s.add_argument("--t-end", type=real(0.0, lo_open=True), default=800.0,
                   help="simulated time, burn-in included (default %(default)s)")
    s.add_argument("--dt", type=real(0.0, lo_open=True), default=0.01,
                   help="time step; gamma*dt <= 0.5 and t_end/dt <= 1e12 (default %(default)s)")
    s.add_argument("--burn-in", type=real(0.0), default=50.0,
                   help="time discarded before recording (default %(default)s)")
    s.add_argument("--seed", type=integer(0), default=0, help="random seed (default %(default)s)")
    s.add_argument("--eps", type=real(0.0, lo_open=True), default=None,
                   help="jump cut eps (default levysde.simulation.simulation_eps: 1, 1.5 or 2 "
                        "times (eta_J dt)^(1/alpha), the largest whose bias beta_model - beta* is "
                        "<= 2.5e-4 beta*; printed with the result); the expected big jumps per "
                        "particle-step Lambda_eps*dt must be <= 1e3")
    s.add_argument("--groups", type=integer(8, 4096, why=GROUPS_WHY), default=64,
                   help="independent particle groups for jackknife errors, >= 8 like levysde check's "
                        "--n-groups (default %(default)s)")
    s.add_argument("--backend", choices=("cpu", "cuda"), default="cpu",
                   help="cpu: Numba on all host cores; cuda: an NVIDIA GPU through numba-cuda "
                        "(pip install 'levysde[gpu]'; docs/simulate.md) (default %(default)s)")
    s.add_argument("--threshold", type=real(0.0, lo_open=True), default=None, metavar="DEPTH",
                   help="tail threshold as a depth beyond the equilibrium: the tail X > u of "
                        "X = -zeta with u = DEPTH - z0 (printed as depth and u); inside the "
                        "histogram's half-width (checked before the run) (default 3, deeper "
                        "where the drift is not yet saturated at 3: docs/simulate.md, Bias budget)")
    o = p.add_argument_group("output")
    o.add_argument("--out", metavar="RUN.npz",
                   help="save the run (histograms, final states, metadata); refuses an existing file "
                        "unless --force; written atomically")
    o.add_argument("--force", action="store_true", help="overwrite existing --out / --plot files")
    o.add_argument("--plot", metavar="FILE.png",
                   help="plot the zeta density and the beta_hat(u) scan (png, pdf, svg, ...; "
                        ".png is added to a name without a suffix); refuses an existing file "
                        "unless --force")
    o.add_argument("--json", action="store_true",
                   help="print JSON (no progress bar); n_exceed is a time average (mean number of "
                        "particles beyond u per recorded step), see docs/simulate.md")
    p.set_defaults(func=run)
    return p


#: Python parameter names of levysde.simulate() -> flags (for SimulationInputError.render)
FLAGS = {"dt": "--dt", "eps": "--eps", "gamma": "--gamma", "t_end": "--t-end", "burn_in": "--burn-in",
         "particles": "--particles", "z0": "--z0", "eta_j": "--eta-j", "eta_g": "--eta-g",
         "kappa": "--kappa", "lam": "--lam", "alpha": "--alpha", "n_groups": "--groups",
         "traj_particles": "trajectories", "threshold_u": "--threshold"}


def _check_outputs(args):
    """Check --out and --plot before any work (the overwrite policy of :func:`check_output`);
    returns the plot path that will be written (.png appended to a name without a suffix)."""
    if args.out is not None:
        check_output(args.out, "--out", args.force)
    plot = image_output(args.plot, "--plot", args.force) if args.plot is not None else None
    if same_file(plot, args.out):
        raise UsageError("--plot and --out name the same file")
    if args.force and args.out is None and plot is None:
        raise UsageError("argument --force: does not apply without --out or --plot")
    return plot


def _depth(u, zeq) -> float:
    """The depth u + zeq beyond the equilibrium (the --threshold convention) of a threshold u on
    X = -zeta; rounded to 1e-10 so that a bin edge prints as the value asked for."""
    return round(u + zeq, 10) + 0.0


def _at(u, zeq) -> str:
    """A threshold on X = -zeta in words: u, and its depth when the two differ."""
    return f"u = {u:g}" if zeq == 0 else f"u = {u:g} (depth {_depth(u, zeq):g})"


def _notes(args, res, est, scan):
    """Caveats printed with the result (and listed under "notes" in --json)."""
    from levysde.simulation.bias import threshold_dependence

    m = res.meta
    zeq = m.equilibrium
    notes = list(m.notes)
    flag = None
    if not (est.beta_hat is not None and math.isfinite(est.beta_hat)):
        flag = "no_exceedances" if not est.n_exceed > 0 else "unresolved"
        ok = [e.u for e in scan if math.isfinite(e.beta_hat)]
        hint = f"e.g. --threshold {max(ok) + zeq:g}" if ok else "e.g. --threshold 0.5"
        notes.append(f"beta_hat is null: no samples of X = -zeta beyond {_at(est.u, zeq)} "
                     f"({'no exceedances' if flag == 'no_exceedances' else 'too few to estimate'}); "
                     f"use a smaller --threshold ({hint}) or a longer run")
    elif not (est.se is not None and math.isfinite(est.se)):
        notes.append(f"beta_hat_se is null: the jackknife over the {res.n_groups} groups needs "
                     f"exceedances beyond {_at(est.u, zeq)} in at least two groups (too few groups or "
                     f"exceedances); use more --particles and --groups, a longer --t-end or a smaller "
                     f"--threshold")
    if args.drift == "ou":
        notes.append("--drift ou has no restoration plateau: the left tail is structurally collapsed "
                      "(docs/specification.md §3), beta_theory is null and beta_hat is a plain exponential fit "
                      "with no theoretical counterpart")
    bb = m.bias_budget
    if bb and est.se is not None and math.isfinite(est.se) and abs(bb["total"]) > 2 * est.se:
        notes.append(f"the predicted bias of beta_hat at {_at(est.u, zeq)} is {bb['total']:+.4f} (eps "
                     f"{bb['eps']:+.4f}, drift saturation {bb['drift_saturation']:+.4f}), more than 2 "
                     f"standard errors ({est.se:.4f}); compare beta_hat with beta_expected = "
                     f"{bb['beta_expected']:.5f} or use a deeper --threshold")
    dep = threshold_dependence(est, scan)
    if dep is not None:
        notes.append(f"beta_hat depends on the threshold: {dep[1]:.5f} at the deeper {_at(dep[0], zeq)}, "
                     f"{dep[2]:+.1f} standard errors of the difference from beta_hat({_at(est.u, zeq)}); the "
                     f"tail is not yet exponential at u (a finite-threshold bias that bias_budget does "
                     f"not model): use a deeper --threshold")
    for flag_name, asked, got in (("--t-end", args.t_end, m.t_end), ("--burn-in", args.burn_in, m.burn_in)):
        if not math.isclose(asked, got, rel_tol=1e-9, abs_tol=1e-12):
            notes.append(f"{flag_name} {asked:g} is not a multiple of --dt {m.dt:g}: simulated "
                         f"{flag_name[2:]} = {got:g} ({round(got / m.dt)} steps)")
    return flag, notes


def run(args) -> int:
    from levysde.simulation import (
        CudaUnavailableError,
        DivergenceError,
        OUDrift,
        SaturatingDrift,
        SimulationInputError,
        simulate,
    )

    if args.burn_in >= args.t_end:
        raise UsageError(f"--burn-in must be smaller than --t-end = {args.t_end:g}; got {args.burn_in:g}")
    if args.groups > args.particles:
        raise UsageError(f"--groups must be at most --particles = {args.particles}; got {args.groups}")
    if args.drift == "ou":
        reject_flags(args, ("kappa",), "to --drift ou (no restoration plateau: the OU drift has "
                                       "no kappa; docs/specification.md §3)")
    try:   # gamma <= 0: SimulationInputError from the drift (saturating) or simulate (ou)
        drift = (SaturatingDrift(args.kappa, args.gamma, args.z0) if args.drift == "saturating"
                 else OUDrift(args.gamma, args.z0))
    except SimulationInputError as exc:
        raise UsageError(exc.render(FLAGS)) from None
    plot_path = _check_outputs(args)
    try:
        res = simulate(args.eta_j, eta_g=args.eta_g, alpha=args.alpha, lam=args.lam, drift=drift,
                       particles=args.particles, t_end=args.t_end, burn_in=args.burn_in, dt=args.dt,
                       seed=args.seed, eps=args.eps, n_groups=args.groups,
                       threshold_u=args.threshold, progress=not args.json, backend=args.backend)
    except SimulationInputError as exc:
        raise UsageError(exc.render(FLAGS)) from None
    except DivergenceError as exc:
        raise UsageError(str(exc)) from None
    except CudaUnavailableError as exc:
        raise UsageError(f"--backend cuda: {exc}") from None
    m = res.meta
    est = res.tail()
    scan = res.tail_scan()
    try:
        fit = res.tempering_limited_fit()
    except ValueError:
        fit = None
    flag, notes = _notes(args, res, est, scan)
    if args.out:
        try:
            res.save(args.out)
        except OSError as exc:
            raise UsageError(f"--out {args.out!r}: cannot save the run ({exc.strerror or exc})") from None
    if plot_path:
        from levysde.plotting import plot_simulation

        plot_simulation(res, plot_path, scan=scan)
    out = {
        "beta_hat": finite_or_none(est.beta_hat), "beta_hat_se": finite_or_none(est.se),
        "beta_hat_flag": flag, "notes": notes,
        "threshold_u": est.u, "threshold_depth": _depth(est.u, m.equilibrium),
        "equilibrium": m.equilibrium, "n_exceed": finite_or_none(est.n_exceed),
        "n_excursions": finite_or_none(est.n_excursions),
        "beta_theory": finite_or_none(m.beta_theory), "beta_model": finite_or_none(m.beta_model),
        "tail_rate_theory": finite_or_none(m.tail_rate_theory), "phase": m.phase,
        "bias_budget": m.bias_budget,
        "eps": m.eps, "dt": m.dt, "particle_steps_per_s": m.particle_steps_per_s,
        "backend": m.backend, "device": m.device,
        "wall_time_s": m.wall_time_s, "particles": m.particles, "t_end": m.t_end,
        "burn_in": m.burn_in, "seed": m.seed,
        "tempered_fit_b": finite_or_none(fit.b) if fit else None,
        "tempered_fit_b_se": finite_or_none(fit.se) if fit else None,
        "scan": [{"u": e.u, "depth": _depth(e.u, m.equilibrium), "beta_hat": finite_or_none(e.beta_hat), "se": finite_or_none(e.se),
                  "n_excursions": finite_or_none(e.n_excursions)} for e in scan],
    }
    if args.out:
        out["out"] = args.out
    if plot_path:
        out["plot"] = plot_path
    if args.json:
        print_json(out)
        return 0

    def f(v, fmt=".5f"):
        return "-" if v is None or not math.isfinite(v) else format(v, fmt)

    print(f"levysde simulate   eta_J = {m.eta_j:g}   eta_G = {m.eta_g:g}   alpha = {m.alpha:g}   "
          f"lam = {m.lam:g}   drift = {m.drift} (gamma = {args.gamma:g}, z0 = {args.z0:g})")
    print(f"particles = {m.particles}   t_end = {m.t_end:g}   burn-in = {m.burn_in:g}   "
          f"dt = {m.dt:g}   eps = {m.eps:.4g}   seed = {m.seed}")
    print(f"wall time = {m.wall_time_s:.1f} s   particle-steps/s = {m.particle_steps_per_s:.3g}   "
          f"backend = {m.backend} ({m.device})")
    print(f"phase = {m.phase}   beta* = {f(m.beta_theory)}   beta_model (root of Phi_eps) = "
          f"{f(m.beta_model)}   theory tail rate = {f(m.tail_rate_theory)}")
    print(f"tail X > u of X = -zeta: u = {est.u:g} = depth {_depth(est.u, m.equilibrium):g} (--threshold) "
          f"beyond the equilibrium X = {-m.equilibrium:g}")
    print(f"beta_hat(u = {est.u:g}) = {f(est.beta_hat)} +- {f(est.se)} (jackknife over {res.n_groups} groups, "
          f"{f(est.n_excursions, '.0f')} excursions)")
    if fit:
        print(f"tempering-limited fit exp(-b x) x^(-1-alpha), {_at(fit.u, m.equilibrium)}: b = {fit.b:.4f} +- {fit.se:.4f} "
              f"(lam = {m.lam:g})")
    for note in notes:
        print(f"note: {note}")
    print()
    print(f"{'depth':>6} {'u':>6} {'beta_hat':>10} {'se':>8} {'excursions':>11}")
    for e in scan:
        print(f"{_depth(e.u, m.equilibrium):>6g} {e.u:>6g} {f(e.beta_hat, '.4f'):>10} {f(e.se, '.4f'):>8} {f(e.n_excursions, '.0f'):>11}")
    if args.out:
        print(f"\nsaved {args.out}")
    if plot_path:
        print(f"plot  {plot_path}")
    return 0
