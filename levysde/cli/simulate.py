"""``levysde simulate``: Euler-Maruyama simulation and the stationary left tail (docs/specification.md §7, §8)."""
from __future__ import annotations

from levysde.cli._common import (
    UsageError,
    add_model_args,
    check_output,
    image_output,
    integer,
    real,
    reject_flags,
    same_file,
)

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


def run(args) -> int:
    from levysde.cli._simulate_report import notes, report
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
    est = res.tail()
    scan = res.tail_scan()
    try:
        fit = res.tempering_limited_fit()
    except ValueError:
        fit = None
    flag, caveats = notes(args, res, est, scan)
    if args.out:
        try:
            res.save(args.out)
        except OSError as exc:
            raise UsageError(f"--out {args.out!r}: cannot save the run ({exc.strerror or exc})") from None
    if plot_path:
        from levysde.plotting import plot_simulation

        plot_simulation(res, plot_path, scan=scan)
    return report(args, res, est, scan, fit, flag, caveats, plot_path)
