"""``levysde learnability``: the empirical learnability window H_N of a trained network and the test
of its master law N(l) ∝ f(l)^(-kappa_alpha) (docs/learnability.md).

``--from RUN.npz`` (a ``levysde train`` run with its checkpoint; needs torch) computes the matched
statistic on the run's diagnostic set and writes it beside the run (``RUN.learnability.npz``);
``--from RUN.learnability.npz`` measures again from that file (numpy only).
"""
from __future__ import annotations

import json
import sys

from levysde.cli._common import UsageError, check_output, emit, image_output, integer, real, reject_flags

_TORCH_FLAGS = ("sequences", "lags", "w_seed", "zeroth_order", "block", "device", "out", "force")


def add_parser(sub):
    p = sub.add_parser(
        "learnability",
        help="empirical learnability window H_N of a trained RNN and its master-law test",
        description="The learnability paper's measurement on a trained network: the matched statistic "
                    "psi_t(l) per lag (output error x first-order transport x a Jacobian-vector product), "
                    "its alpha-stable fit, SNR(l, N) = |m| N^(1-1/alpha) / sigma, the sample size N(l), H_N, "
                    "and the slope of log N(l) on -kappa_alpha log f(l) (the theory: 1), with bootstrap "
                    "intervals over sequences (docs/learnability.md).")
    p.add_argument("--from", dest="run_file", required=True, metavar="RUN.npz",
                   help="a levysde train run (with RUN.ckpt beside it; needs torch), or a saved "
                        "RUN.learnability.npz (measured again, numpy only)")
    m = p.add_argument_group("matched statistic (with a training run)")
    m.add_argument("--sequences", type=integer(8), default=None,
                   help="diagnostic sequences (the task's probe stream; default the run's probe batch)")
    m.add_argument("--lags", type=integer(1), nargs=3, default=None, metavar=("LO", "HI", "N"),
                   help="lags int(linspace(LO, HI, N)) (default 4 256 128, the paper's, cut to the loss window)")
    m.add_argument("--w-seed", type=integer(0), default=12345,
                   help="seed of the random parameter direction of the Jacobian-vector product (default %(default)s)")
    m.add_argument("--zeroth-order", action="store_true",
                   help="transport mu0 only (default: mu0 + mu1, the paper's)")
    m.add_argument("--block", type=integer(1), default=64, help="sequences per pass (memory; default %(default)s)")
    m.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="(default %(default)s)")
    m.add_argument("--out", metavar="FILE.npz", default=None,
                   help="where to store the sums and the result (default RUN.learnability.npz beside the run)")
    m.add_argument("--force", action="store_true", help="overwrite an existing --out file")
    s = p.add_argument_group("measurement")
    s.add_argument("--eps", type=real(0.0, lo_open=True), default=0.1,
                   help="SNR detection threshold (default %(default)s, the paper's)")
    s.add_argument("--n-grid", type=real(0.0, lo_open=True), nargs="+", default=None, metavar="N",
                   help="increasing sample sizes of the SNR rule (default 25 50 100 ... 12800, the paper's)")
    s.add_argument("--N", type=real(0.0, lo_open=True), nargs="+", default=None, metavar="N",
                   help="report H_N at these N (default: the grid)")
    s.add_argument("--n-boot", type=integer(50, 100000), default=400,
                   help="bootstrap replicates over sequences (default %(default)s)")
    s.add_argument("--seed", type=integer(0), default=0, help="seed of the bootstrap (default %(default)s)")
    p.add_argument("--plot", metavar="FILE.png", help="N(l) and f(l) on log axes and the master-law fit")
    p.add_argument("--plot-force", action="store_true", help="overwrite an existing --plot file")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)
    return p


def _is_learnability_file(path: str) -> bool:
    from levysde.io.learnfile import read_learnability

    try:
        read_learnability(path)
    except ValueError:
        return False
    return True


def _sums(args):
    """(sums, info, written path or None)."""
    from levysde.io.learnfile import learnability_path, read_learnability

    if _is_learnability_file(args.run_file):
        reject_flags(args, _TORCH_FLAGS, "to a learnability file (its matched statistic is already computed)")
        sums, meta = read_learnability(args.run_file)
        return sums, meta.get("source", {}), None
    try:
        import torch  # noqa: F401
    except ImportError:
        raise UsageError("--from a training run needs PyTorch: pip install 'levysde[rnn]'") from None
    from levysde.rnn.matched import run_matched_sums

    out = args.out or learnability_path(args.run_file)
    check_output(out, "--out", args.force, example="run.learnability.npz")
    lags = None
    if args.lags is not None:
        import numpy as np

        lo, hi, n = args.lags
        if not lo < hi:
            raise UsageError(f"argument --lags: LO ({lo}) must be below HI ({hi})")
        lags = np.unique(np.linspace(lo, hi, n).astype(np.int64))
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise UsageError(f"argument --device: cuda requested but CUDA is not available (torch {torch.__version__})")
    try:
        sums, info = run_matched_sums(args.run_file, sequences=args.sequences, lags=lags, w_seed=args.w_seed,
                                      first_order=not args.zeroth_order, block=args.block, device=args.device)
    except ValueError as exc:
        raise UsageError(f"--from: {exc}") from None
    return sums, info, out


def run(args) -> int:
    from levysde.inference.learnability_measure import N_GRID, measure_learnability
    from levysde.io.learnfile import save_learnability

    plot_path = image_output(args.plot, "--plot", args.plot_force, "--plot-force") if args.plot else None
    if args.plot_force and not args.plot:
        raise UsageError("argument --plot-force: does not apply without --plot")
    sums, info, out = _sums(args)
    grid = args.n_grid if args.n_grid is not None else N_GRID
    if any(b <= a for a, b in zip(grid, grid[1:], strict=False)):
        raise UsageError("argument --n-grid: the sample sizes must increase")
    res = measure_learnability(sums, N_grid=grid, eps=args.eps, n_boot=args.n_boot, seed=args.seed, N_eval=args.N)
    rec = res.records()
    report = {"source": info, **rec}
    if out is not None:
        save_learnability(out, sums, {"source": info, "result": rec})
        report["written"] = out
    where = ""
    if plot_path:
        from levysde.plotting import plot_learnability

        try:
            written = plot_learnability(res, plot_path, title=_title(info))
        except ValueError as exc:
            raise ValueError("--plot: " + str(exc).removeprefix("path: ")) from None
        where = f"levysde learnability: plot written to {written}\n"
    if args.json:
        sys.stderr.write(where)
        emit(json.dumps(report, indent=2, allow_nan=False) + "\n")
    else:
        emit(_text(report) + where)
    return 0


def _title(info) -> str:
    return " ".join(f"{k} {info[k]}" for k in ("model", "optimizer", "hidden", "seed") if k in info)


def _num(v, fmt=".4g"):
    return "-" if v is None else format(v, fmt)


def _text(r) -> str:
    lines = [f"levysde learnability   {_title(r['source'])}   sequences {r['n_sequences']}   "
             f"eps {r['eps']:g}   bootstrap {r['n_boot']}"]
    if "written" in r:
        lines.append(f"matched statistic and result written to {r['written']}")
    n_sig = sum(r["significant"])
    lines.append(f"lags with a significant mean: {n_sig} of {len(r['lags'])}   alpha (median over "
                 f"{'those' if n_sig else 'all lags'}): {_num(r['alpha_pooled'])}")
    if not n_sig:
        lines.append("no lag's mean is resolved: N(l) and H_N of the SNR rule reflect noise only")
    for name, m in r["master_law"].items():
        ci = m["slope_interval"]
        lines.append(f"master law ({name} N): slope {_num(m['slope'])}  {int(100 * r['confidence'])}% interval "
                     f"[{_num(ci[0])}, {_num(ci[1])}]  lags {m['n_lags']}  consistent with 1: "
                     f"{'-' if m['consistent_with_1'] is None else 'yes' if m['consistent_with_1'] else 'no'}"
                     + (f"   [withheld: {m['withheld']}]" if m.get("withheld") else ""))
    d = r["decay"]
    if d.get("status") == "ok":
        adverb = {"exponential": "exponentially", "polynomial": "as a power", "logarithmic": "logarithmically"}
        lines.append(f"f decays {adverb[d['f_class']]} in l: H_N should grow {adverb[d['H_N_growth']]} in N")
    else:
        lines.append(f"decay class of f: unavailable ({d.get('reason')})")
    if d.get("sigma_on_f_loglog_slope") is not None:
        lines.append(f"noise scale against the envelope: d log sigma / d log f = {_num(d['sigma_on_f_loglog_slope'])} "
                     f"(1: the noise carries f's decay, and |m|/sigma need not follow f)")
    lines.append(f"{'N':>8} {'H_N':>7} {'H_N sig.':>9} {'H_N*':>7}")
    for i, N in enumerate(r["N_eval"]):
        lines.append(f"{_num(N, 'g'):>8} {_num(r['H_N'][i], 'g'):>7} {_num(r['H_N_significant'][i], 'g'):>9} "
                     f"{_num(r['H_N_star'][i], 'g'):>7}")
    lines.append(f"{'lag':>6} {'mean':>11} {'se':>10} {'alpha':>7} {'sigma':>10} {'f':>10} {'N(l)':>7} {'N*(l)':>10}")
    step = max(1, len(r["lags"]) // 16)
    for i in range(0, len(r["lags"]), step):
        lines.append(f"{_num(r['lags'][i], 'g'):>6} {_num(r['mean'][i], '.3e'):>11} {_num(r['mean_se'][i], '.2e'):>10} "
                     f"{_num(r['alpha'][i], '.3f'):>7} {_num(r['sigma'][i], '.3e'):>10} {_num(r['f'][i], '.3e'):>10} "
                     f"{_num(r['N_required'][i], 'g'):>7} {_num(r['N_star'][i], '.3g'):>10}"
                     f"{'' if r['significant'][i] else '  (mean not significant)'}")
    return "\n".join(lines) + "\n"
