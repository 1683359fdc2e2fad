"""``levysde diagram``: phase diagrams over two model parameters (docs/theory.md)."""
from __future__ import annotations

import pathlib
import re

from levysde.cli._common import (
    UsageError,
    check_output,
    check_store,
    image_output,
    integer,
    print_json,
    real,
    same_file,
)
from levysde.core.extras import require
from levysde.core.jsonable import finite_or_none
from levysde.studies.diagram import AXES as _AXES

#: largest axis value that can be drawn (matplotlib's tick locator multiplies the range by 10)
_MAX_AXIS = 1e300

#: sweep flags: (flag, attribute, default); they need --simulate
_SIM_FLAGS = (("--quick", "quick", False), ("--sim-grid", "sim_grid", (4, 4)),
              ("--scheduler", "scheduler", "local"), ("--workers", "workers", 2),
              ("--store", "store", None), ("--seed", "seed", 0), ("--backend", "backend", "cpu"))


def _quick_help() -> str:
    from levysde.studies.diagram import SIM_SETTINGS

    q, f = SIM_SETTINGS["quick"], SIM_SETTINGS["full"]
    return (f"small simulations ({q['particles']} particles, t_end {q['t_end']:g}, threshold u = "
            f"{q['u']:g}) instead of the default ({f['particles']} particles, t_end {f['t_end']:g}, "
            f"u = {f['u']:g})")


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
                   help="figure file; format from the extension: .png, .pdf, .svg, ... (checked first; .png "
                        "added to a name without one; default diagram.png); with --simulate also FILE_beta.EXT")
    p.add_argument("--data", metavar="FILE.npz", help="also write the grid data")
    p.add_argument("--force", action="store_true",
                   help="overwrite existing output files (default: refuse them)")
    sim = p.add_argument_group("simulated overlay (Dask sweep)")
    sim.add_argument("--simulate", action="store_true",
                     help="simulate a coarse sub-grid and overlay the measured beta_hat")
    # the sweep flags default to None so that giving one without --simulate is an error
    sim.add_argument("--quick", action="store_true", default=None, help=_quick_help())
    sim.add_argument("--sim-grid", type=integer(1, 50), nargs=2, metavar=("NX", "NY"),
                     help="simulated sub-grid (default 4 4; points without a root are skipped)")
    sim.add_argument("--scheduler",
                     help="'local' (a LocalCluster, default), 'sequential', or tcp://HOST:PORT "
                          "(an existing Dask cluster; connection timeout 10 s)")
    sim.add_argument("--workers", type=integer(1, 256), help="local Dask workers (default 2)")
    sim.add_argument("--store", metavar="DIR",
                     help="write each finished point here; a rerun resumes and skips finished points")
    sim.add_argument("--seed", type=integer(0), help="master seed of the sweep (default 0)")
    sim.add_argument("--backend", choices=("cpu", "cuda"),
                     help="simulator backend of every point (default cpu; cuda needs a GPU and "
                          "numba-cuda, docs/simulate.md)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=run)
    return p


def _sim_flags(args) -> set:
    """The sweep flags given; UsageError when one is given without --simulate. Fills defaults."""
    given = {attr for _, attr, _ in _SIM_FLAGS if getattr(args, attr) is not None}
    if not args.simulate:
        for flag, attr, _ in _SIM_FLAGS:
            if attr in given:
                raise UsageError(f"argument {flag}: needs --simulate (it only affects the simulated overlay)")
    for _, attr, default in _SIM_FLAGS:
        if getattr(args, attr) is None:
            setattr(args, attr, default)
    return given


def _outputs(args):
    """(figure path, companion path) after the overwrite policy of every output file."""
    out = pathlib.Path(image_output(args.out, "--out", args.force))
    companion = out.with_name(out.stem + "_beta" + out.suffix)
    if args.simulate:
        check_output(str(companion), "--out (its companion plot)", args.force, example=companion.name)
    if args.data is not None:
        if not args.data.endswith(".npz"):
            raise UsageError(f"argument --data: the file name must end in .npz; got {args.data!r}")
        check_output(args.data, "--data", args.force, example="diagram.npz")
        if same_file(args.data, str(out)) or (args.simulate and same_file(args.data, str(companion))):
            raise UsageError("argument --data: must differ from --out")
    return out, companion


def _fixed_params(args) -> dict:
    """The parameters held fixed (given and not on an axis)."""
    fixed = {}
    for name in _AXES:
        v = getattr(args, name)
        if v is None:
            continue
        if name in (args.x, args.y):
            raise UsageError(f"argument --{name.replace('_', '-')}: {name} is an axis; give its range instead")
        fixed[name] = v
    return fixed


def _check_ranges(args) -> None:
    """Axis ranges: LO < HI, drawable, within the parameter's range, > 0 on a log axis."""
    from levysde.studies.diagram import DEFAULT_RANGES
    from levysde.theory.params import check_param
    for flag, axis, rng in (("--x-range", args.x, args.x_range), ("--y-range", args.y, args.y_range)):
        if rng is None:
            continue
        if not rng[0] < rng[1]:
            raise UsageError(f"argument {flag}: LO must be < HI; got {rng[0]:g} {rng[1]:g}")
        if max(abs(rng[0]), abs(rng[1])) > _MAX_AXIS:
            raise UsageError(f"argument {flag}: |LO|, |HI| must be <= {_MAX_AXIS:g} (matplotlib's axis "
                             f"ticks overflow beyond); got {rng[0]:g} {rng[1]:g}")
        try:
            check_param(axis, rng)
        except ValueError as exc:
            raise UsageError(f"argument {flag}: {exc}") from None
    for lflag, rflag, axis, rng, log in (("--log-x", "--x-range", args.x, args.x_range, args.log_x),
                                         ("--log-y", "--y-range", args.y, args.y_range, args.log_y)):
        if log and (rng or DEFAULT_RANGES[axis])[0] <= 0:
            lo, hi = rng or DEFAULT_RANGES[axis]
            how = "the given" if rng else "the default"
            raise UsageError(f"argument {lflag}: a log axis needs {rflag} LO > 0; {how} {axis} range is "
                             f"{lo:g} {hi:g}")


def _check_sweep(args, given) -> None:
    """--scheduler, --workers and --store of the simulated overlay."""
    sched = args.scheduler
    if not (sched in ("local", "sequential") or re.fullmatch(r"tcp://[^\s/:]+:\d+", sched)):
        raise UsageError(f"argument --scheduler: must be local, sequential or tcp://HOST:PORT; "
                         f"got {sched!r}")
    if sched != "local" and "workers" in given:
        raise UsageError(f"argument --workers: only applies to --scheduler local (got --scheduler {sched})")
    if sched != "sequential":                  # a Dask cluster: the [sweep] extra
        require("distributed", f"argument --simulate: the {sched} Dask scheduler")
    if args.store is not None:
        check_store(args.store, "--store")
    if args.backend == "cuda":
        from levysde.simulation import CudaUnavailableError, load_cuda
        try:
            load_cuda()
        except CudaUnavailableError as exc:
            raise UsageError(f"argument --backend: {exc}") from None


def _overlay(args, d, companion):
    """Simulate the coarse sub-grid (Dask sweep) and draw the companion plot; the overlay dict."""
    from levysde.plotting import plot_beta_check
    from levysde.studies.overlay import simulated_overlay

    try:
        overlay = simulated_overlay(d, nx=args.sim_grid[0], ny=args.sim_grid[1], quick=args.quick,
                                    master_seed=args.seed, scheduler=args.scheduler,
                                    n_workers=args.workers if args.scheduler == "local" else None,
                                    store=args.store, progress=not args.json,
                                    connect_timeout=10.0, backend=args.backend)
    except ConnectionError as exc:
        if not args.scheduler.startswith("tcp://"):
            raise
        raise UsageError(f"argument --scheduler: {exc}") from None
    plot_beta_check(overlay, path=companion)
    return overlay


def run(args) -> int:
    from levysde.plotting import plot_phase_diagram
    from levysde.studies.diagram import phase_diagram

    given = _sim_flags(args)
    if args.x == args.y:
        raise UsageError(f"argument --y: must differ from --x (both are {args.x})")
    out, companion = _outputs(args)
    fixed = _fixed_params(args)
    _check_ranges(args)
    if args.simulate:
        _check_sweep(args, given)
    d = phase_diagram(args.x, args.y, x_range=args.x_range, y_range=args.y_range,
                      nx=args.resolution[0], ny=args.resolution[1], log_x=args.log_x,
                      log_y=args.log_y, **fixed)
    overlay = _overlay(args, d, companion) if args.simulate else None
    plot_phase_diagram(d, path=out, overlay=overlay)
    if args.data:
        d.save(args.data)
    if args.json:
        print_json(_summary(args, d, overlay, out, companion))
    else:
        _print_report(args, overlay, out, companion)
    return 0


def _summary(args, d, overlay, out, companion) -> dict:
    """The --json summary: files, axes, phase counts, beta* range and the simulated points."""
    import numpy as np

    counts = {name: int((d.phase_code == i).sum()) for i, name in enumerate(d.phases)}
    sim = None
    if overlay is not None:
        sim = {k: [finite_or_none(v) for v in overlay[k]]
               for k in ("x", "y", "beta_hat", "se", "beta_theory", "beta_model")}
        sim.update(wall_s=overlay["wall_s"], companion=str(companion),
                   near_tempering_boundary=[bool(v) for v in overlay["near_tempering_boundary"]])
    return {"out": str(out), "data": args.data, "x": args.x, "y": args.y, "simulated": sim,
            "x_range": [float(d.x[0]), float(d.x[-1])], "y_range": [float(d.y[0]), float(d.y[-1])],
            "resolution": [int(d.x.size), int(d.y.size)], "fixed": d.fixed,
            "phase_counts": counts,
            "beta_star_range": [float(np.nanmin(d.beta_star)), float(np.nanmax(d.beta_star))]
            if np.isfinite(d.beta_star).any() else None}


def _print_report(args, overlay, out, companion) -> None:
    import numpy as np

    print(f"wrote {out}" + (f" and {args.data}" if args.data else ""))
    if overlay is None:
        return
    print(f"simulated {overlay['x'].size} points in {overlay['wall_s']:.1f} s; companion plot {companion}")
    for xv, yv, bh, se, bt, near in zip(overlay["x"], overlay["y"], overlay["beta_hat"], overlay["se"],
                                        overlay["beta_theory"], overlay["near_tempering_boundary"], strict=True):
        dev = (f"({(bh - bt) / se:+.1f} se)" if se > 0 and np.isfinite(bh) else "(no error estimate)") + \
            (" [beta* near lam: beta_hat biased up]" if near else "")
        print(f"  {args.x}={xv:.4g} {args.y}={yv:.4g}: beta_hat {bh:.4f} +- {se:.4f}   beta* {bt:.4f}   "
              f"{dev}")
