"""``levysde diagram``: phase diagrams over two model parameters (docs/theory.md)."""
from __future__ import annotations

import pathlib

from ._common import UsageError, integer, print_json, real

_AXES = ("eta_j", "kappa", "eta_g", "alpha", "lam")


def add_parser(sub):
    p = sub.add_parser(
        "diagram",
        help="phase diagram: beta* heat map with the threshold and critical curves",
        description="Draw beta* over two of eta_j, kappa, eta_g, alpha, lam with the threshold "
                    "eta_J = eta_J* and the critical line beta* = 1 (docs/theory.md).",
    )
    p.add_argument("--x", choices=_AXES, default="eta_j", help="x-axis parameter (default eta_j)")
    p.add_argument("--y", choices=_AXES, default="kappa", help="y-axis parameter (default kappa)")
    p.add_argument("--x-range", type=real(), nargs=2, metavar=("LO", "HI"), help="x-axis range")
    p.add_argument("--y-range", type=real(), nargs=2, metavar=("LO", "HI"), help="y-axis range")
    p.add_argument("--resolution", type=integer(2, 4000), nargs=2, default=(500, 500),
                   metavar=("NX", "NY"), help="grid size (default 500 500)")
    p.add_argument("--log-x", action="store_true", help="geometric spacing on x")
    p.add_argument("--log-y", action="store_true", help="geometric spacing on y")
    g = p.add_argument_group("fixed parameters (those not on an axis; docs/theory.md defaults, eta_j = 3)")
    g.add_argument("--eta-j", type=real(0.0), help="eta_J >= 0")
    g.add_argument("--eta-g", type=real(0.0), help="eta_G >= 0")
    g.add_argument("--kappa", type=real(0.0, lo_open=True), help="kappa > 0")
    g.add_argument("--alpha", type=real(0.0, 2.0, lo_open=True, hi_open=True), help="alpha in (0, 2)")
    g.add_argument("--lam", type=real(0.0), help="lam >= 0")
    p.add_argument("--out", default="diagram.png", metavar="FILE",
                   help="figure file; format from the extension: .png, .pdf, .svg (default diagram.png)")
    p.add_argument("--data", metavar="FILE.npz", help="also write the grid data")
    sim = p.add_argument_group("simulated overlay (Dask sweep)")
    sim.add_argument("--simulate", action="store_true",
                     help="simulate a coarse sub-grid and overlay the measured beta_hat")
    sim.add_argument("--quick", action="store_true",
                     help="small simulations (2048 particles, 200 time units): a minute or two")
    sim.add_argument("--sim-grid", type=integer(1, 50), nargs=2, default=(4, 4), metavar=("NX", "NY"),
                     help="simulated sub-grid (default 4 4; points without a root are skipped)")
    sim.add_argument("--scheduler", default="local",
                     help="'local' (a LocalCluster, default), 'sequential', or tcp://HOST:PORT")
    sim.add_argument("--workers", type=integer(1, 256), default=2, help="local Dask workers (default 2)")
    sim.add_argument("--store", metavar="DIR",
                     help="write each finished point here; a rerun resumes and skips finished points")
    sim.add_argument("--seed", type=integer(0), default=0, help="master seed of the sweep (default 0)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from ..diagram import phase_diagram
    from ..plotting import plot_phase_diagram

    if args.x == args.y:
        raise UsageError(f"argument --y: must differ from --x (both are {args.x})")
    out = pathlib.Path(args.out)
    if out.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise UsageError(f"argument --out: extension must be .png, .pdf or .svg; got {out.name!r}")
    fixed = {}
    for name in _AXES:
        v = getattr(args, name)
        if v is None:
            continue
        if name in (args.x, args.y):
            raise UsageError(f"argument --{name.replace('_', '-')}: {name} is an axis; give its range instead")
        fixed[name] = v
    from ..params import check_param

    for flag, axis, rng in (("--x-range", args.x, args.x_range), ("--y-range", args.y, args.y_range)):
        if rng is None:
            continue
        if not rng[0] < rng[1]:
            raise UsageError(f"argument {flag}: LO must be < HI; got {rng[0]:g} {rng[1]:g}")
        try:
            check_param(axis, rng)
        except ValueError as exc:
            raise UsageError(f"argument {flag}: {exc}") from None
    d = phase_diagram(args.x, args.y, x_range=args.x_range, y_range=args.y_range,
                      nx=args.resolution[0], ny=args.resolution[1], log_x=args.log_x,
                      log_y=args.log_y, **fixed)
    overlay = None
    if args.simulate:
        from ..diagram import simulated_overlay
        from ..plotting import plot_beta_check

        if not (args.scheduler in ("local", "sequential") or args.scheduler.startswith("tcp://")):
            raise UsageError(f"argument --scheduler: must be local, sequential or tcp://HOST:PORT; "
                             f"got {args.scheduler!r}")
        overlay = simulated_overlay(d, nx=args.sim_grid[0], ny=args.sim_grid[1], quick=args.quick,
                                    master_seed=args.seed, scheduler=args.scheduler,
                                    n_workers=args.workers, store=args.store, progress=not args.json)
        companion = out.with_name(out.stem + "_beta" + out.suffix)
        plot_beta_check(overlay, path=companion)
    plot_phase_diagram(d, path=out, overlay=overlay)
    if args.data:
        d.save(args.data)
    if args.json:
        import numpy as np

        counts = {name: int((d.phase_code == i).sum()) for i, name in enumerate(d.phases)}
        sim = None
        if overlay is not None:
            sim = {k: [None if not np.isfinite(v) else float(v) for v in overlay[k]]
                   for k in ("x", "y", "beta_hat", "se", "beta_theory", "beta_model")}
            sim["wall_s"] = overlay["wall_s"]
            sim["companion"] = str(out.with_name(out.stem + "_beta" + out.suffix))
        print_json({"out": str(out), "data": args.data, "x": args.x, "y": args.y, "simulated": sim,
                    "x_range": [float(d.x[0]), float(d.x[-1])], "y_range": [float(d.y[0]), float(d.y[-1])],
                    "resolution": [int(d.x.size), int(d.y.size)], "fixed": d.fixed,
                    "phase_counts": counts,
                    "beta_star_range": [float(np.nanmin(d.beta_star)), float(np.nanmax(d.beta_star))]
                    if np.isfinite(d.beta_star).any() else None})
    else:
        print(f"wrote {out}" + (f" and {args.data}" if args.data else ""))
        if overlay is not None:
            print(f"simulated {overlay['x'].size} points in {overlay['wall_s']:.1f} s; companion plot "
                  f"{out.with_name(out.stem + '_beta' + out.suffix)}")
            for xv, yv, bh, se, bt in zip(overlay["x"], overlay["y"], overlay["beta_hat"], overlay["se"],
                                          overlay["beta_theory"]):
                print(f"  {args.x}={xv:.4g} {args.y}={yv:.4g}: beta_hat {bh:.4f} +- {se:.4f}   beta* {bt:.4f}   "
                      f"({(bh - bt) / se:+.1f} se)")
    return 0
