"""Command-line hygiene across every command (issue 14, items 4, 7, 11, 15, 16, 18, 19):
full flag names only, one overwrite policy, no replaced device nodes or FIFOs, stale
temporary files cleaned, inapplicable flags refused, no leaked numpy warnings.

Errors that happen before any work are checked in-process through ``levysde.cli.main``
(the same code path as the console script, without an interpreter start per case); a few
representative cases run as subprocesses to check the exit status and stderr end to end.
"""
import json
import os
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

from levysde.cli import build_parser
from levysde.io import files as _io
from tests.helpers import call, one_line_error, run_cli


def sim_run_file(path, edges=None):
    """A minimal simulation run file (the keys read_run requires)."""
    edges = np.linspace(-6.0, 2.0, 81) if edges is None else edges
    counts = np.exp(-0.5 * (0.5 * (edges[1:] + edges[:-1])) ** 2)[None, :].repeat(4, axis=0)
    np.savez(path, hist_edges=edges, hist_counts=counts,
             meta=np.array(json.dumps({"kind": "simulation", "eta_j": 3.0})))
    return path


# ----------------------------------------------------------------------------- item 4

def test_abbreviated_flag_is_an_error_subprocess():
    p = run_cli("phase", "--kap", "2", "--eta-j", "3")
    one_line_error(p.returncode, p.stderr, "--kap")
    assert p.stdout == ""


def test_no_parser_allows_abbreviations(capsys):
    """Every parser of the tree (top level and each command) has allow_abbrev off, and a prefix
    of a real flag of each command is refused."""
    import argparse

    top = build_parser()
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    assert top.allow_abbrev is False
    prefixes = {"phase": ("--eta", "--eta-j", "3"), "simulate": ("--partic", "--eta-j", "3"),
                "envelope": ("--lag-m", "--eta-j", "3"), "diagram": ("--resol",),
                "train": ("--hid", "--out", "x.npz"), "check": ("--late", "run.npz"),
                "paper": ("--n-boot-b", "dir"),
                "learnability": ("--sequ", "--from", "x.npz")}
    assert set(prefixes) == set(sub.choices)
    for name, parser in sub.choices.items():
        assert parser.allow_abbrev is False, name
        prefix, *rest = prefixes[name]
        rc, _, err = call(capsys, name, prefix, "1", *rest)
        one_line_error(rc, err, "unrecognized arguments", prefix)


# ----------------------------------------------------------------------------- item 11

def _outputs(tmp_path):
    """(command line, path of the output that already exists) for every file output."""
    run = sim_run_file(tmp_path / "run.npz")
    t = tmp_path
    return [
        (["simulate", "--eta-j", "3", "--out", t / "x.npz"], t / "x.npz"),
        (["simulate", "--eta-j", "3", "--plot", t / "x.png"], t / "x.png"),
        (["simulate", "--eta-j", "3", "--plot", t / "noext"], t / "noext.png"),
        (["diagram", "--out", t / "x.png"], t / "x.png"),
        (["diagram", "--out", t / "d.svg", "--data", t / "x.npz"], t / "x.npz"),
        (["diagram", "--simulate", "--out", t / "d.png"], t / "d_beta.png"),
        (["envelope", "--eta-j", "3", "--plot", t / "x.pdf"], t / "x.pdf"),
        (["envelope", "--from", run, "--plot", t / "x.png"], t / "x.png"),
        (["check", run, "--plot", t / "x.svg"], t / "x.svg"),
    ]


def test_every_output_refuses_an_existing_file_without_force(tmp_path, capsys):
    for args, existing in _outputs(tmp_path):
        existing.write_text("keep me")
        rc, out, err = call(capsys, *args)
        one_line_error(rc, err, "already exists", "--force")
        assert existing.read_text() == "keep me", args
        existing.unlink()


def test_force_overwrites_subprocess(tmp_path):
    target = tmp_path / "f.png"
    target.write_text("old")
    p = run_cli("envelope", "--eta-j", "3", "--plot", target)
    one_line_error(p.returncode, p.stderr, "already exists")
    p = run_cli("envelope", "--eta-j", "3", "--plot", target, "--force")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_force_without_an_output_is_refused(capsys):
    for args in (["simulate", "--eta-j", "3", "--force"], ["envelope", "--eta-j", "3", "--force"],
                 ["check", "missing.npz", "--force"]):
        rc, _, err = call(capsys, *args)
        one_line_error(rc, err, "--force", "does not apply")


# ----------------------------------------------------------------------------- item 7

def test_fifo_output_is_refused_everywhere_and_kept(tmp_path, capsys):
    """A FIFO (like /dev/null, not a regular file) named as an output, even with --force, is
    refused with one line before any work, and stays a FIFO."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    run = sim_run_file(tmp_path / "run.npz")
    for args in (["simulate", "--eta-j", "3", "--out", fifo, "--force"],
                 ["simulate", "--eta-j", "3", "--plot", str(fifo) + ".png", "--force"],
                 ["diagram", "--out", str(fifo) + ".png", "--force"],
                 ["diagram", "--data", fifo, "--force"],
                 ["envelope", "--from", run, "--plot", str(fifo) + ".png", "--force"],
                 ["check", run, "--plot", str(fifo) + ".png", "--force"]):
        for f in (fifo, tmp_path / "pipe.png", tmp_path / "pipe.npz"):
            if not f.exists():
                os.mkfifo(f)
        if "--data" in args:
            args[args.index("--data") + 1] = tmp_path / "pipe.npz"
        rc, _, err = call(capsys, *args)
        one_line_error(rc, err, "FIFO")
    for f in (fifo, tmp_path / "pipe.png", tmp_path / "pipe.npz"):
        assert stat.S_ISFIFO(os.lstat(f).st_mode)


def test_atomic_write_refuses_non_regular_targets_and_follows_links(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="FIFO"):
        _io.atomic_write(fifo, lambda fh: fh.write(b"x"))
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    with pytest.raises(ValueError, match="directory"):
        _io.atomic_write(tmp_path, lambda fh: fh.write(b"x"))
    # a character device node (needs CAP_MKNOD; the /dev/null case of the issue)
    dev = tmp_path / "null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError):
        dev = None
    if dev is not None:
        with pytest.raises(ValueError, match="character device"):
            _io.atomic_write(dev, lambda fh: fh.write(b"x"))
        assert stat.S_ISCHR(os.lstat(dev).st_mode)
    # a symbolic link: the file it points to is replaced, the link is kept
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    _io.atomic_write(link, lambda fh: fh.write(b"new"))
    assert link.is_symlink() and real.read_text() == "new"
    # nothing else is left in the directory
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["pipe", "link.txt", "real.txt"] + (["null"] if dev is not None else []))


def test_atomic_write_mode_follows_umask(tmp_path):
    old = os.umask(0o022)
    try:
        _io.atomic_write(tmp_path / "f", lambda fh: fh.write(b"x"))
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "f").st_mode) == 0o644


class _Stop(BaseException):
    pass


def test_atomic_write_finishes_before_a_signal_is_handled(tmp_path):
    """A SIGTERM that arrives half way through a write is handled after the file is complete:
    the handler's exception reaches the caller, the target holds both halves, no temporary is
    left; SIGINT's handler is the one it was before the write."""
    import signal

    def _raise(signum, frame):
        raise _Stop

    def writer(fh):
        fh.write(b"first half;")
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):           # give a handler every chance to run inside the writer
            pass
        fh.write(b"second half")

    old_term, old_int = signal.signal(signal.SIGTERM, _raise), signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(_Stop):
            _io.atomic_write(tmp_path / "f", writer)
        assert signal.getsignal(signal.SIGTERM) is _raise and signal.getsignal(signal.SIGINT) is old_int
    finally:
        signal.signal(signal.SIGTERM, old_term)
    assert (tmp_path / "f").read_bytes() == b"first half;second half"
    assert os.listdir(tmp_path) == ["f"]


# ----------------------------------------------------------------------------- item 18

def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_temporary_files_are_removed_by_the_next_write(tmp_path):
    """Temporary files of a writer killed with -9 (a pid that no longer runs), and old ones of an
    unknown writer, are removed by the next write of the same target; a live writer's is kept."""
    host = _io._host()
    dead = tmp_path / f".run.npz.levysde-tmp.{host}.{_dead_pid()}.0badf00d"
    live = tmp_path / f".run.npz.levysde-tmp.{host}.{os.getpid()}.0badf00d"
    other_old = tmp_path / ".run.npz.levysde-tmp.otherhost.1.0badf00d"
    other_new = tmp_path / ".run.npz.levysde-tmp.otherhost.2.0badf00d"
    legacy = tmp_path / ".tmp-ab_cd123run.npz"           # the mkstemp name of earlier versions
    unrelated = tmp_path / ".other.npz.levysde-tmp.x.1.0badf00d"
    for f in (dead, live, other_old, other_new, legacy, unrelated):
        f.write_bytes(b"\0" * 1000)
    past = time.time() - 2 * _io.STALE_TMP_S
    for f in (other_old, legacy):
        os.utime(f, (past, past))
    _io.atomic_write(tmp_path / "run.npz", lambda fh: fh.write(b"data"))
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(["run.npz", live.name, other_new.name, unrelated.name])


def test_stale_temporary_file_cleaned_by_a_cli_rerun(tmp_path):
    """The CLI path: a `.tmp` file planted as if `diagram --data` had been killed mid-save is gone
    after the next run (and the run's own output is complete)."""
    stale = tmp_path / f".d.npz.levysde-tmp.{_io._host()}.{_dead_pid()}.deadbeef"
    stale.write_bytes(b"\0" * 4096)
    p = run_cli("diagram", "--resolution", "8", "6", "--out", tmp_path / "d.png", "--data",
                tmp_path / "d.npz")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == ["d.npz", "d.png"]


# ----------------------------------------------------------------------------- items 15, 16

@pytest.mark.parametrize("args,words", [
    (["envelope", "--from", "RUN", "--eta-g", "5"], ["--eta-g", "does not apply", "--from"]),
    (["envelope", "--from", "RUN", "--amplitude", "2"], ["--amplitude", "does not apply"]),
    (["envelope", "--eta-j", "3", "--lags", "1", "2", "--lag-min", "3"], ["--lag-min", "--lags"]),
    (["envelope", "--eta-j", "3", "--lags", "1", "--n-lags", "5"], ["--n-lags", "--lags"]),
    (["envelope", "--eta-j", "3", "--alpha-g", "1.5"], ["--alpha-g", "--N"]),
    (["envelope", "--eta-j", "3", "--C", "2"], ["--C", "--N"]),
    (["envelope", "--eta-j", "3", "--seed", "1"], ["--seed", "--from"]),
    (["envelope", "--eta-j", "3", "--f-floor", "0.01"], ["--f-floor", "--from"]),
    (["envelope", "--from", "RUN", "--seed", "1"], ["--seed", "--n-samples"]),
    (["envelope", "--from", "RUN", "--n-samples", "10"], ["--n-samples", "--source samples"]),
    (["envelope", "--from", "RUN", "--unweighted"], ["--unweighted", "simulation run"]),
    (["simulate", "--eta-j", "3", "--drift", "ou", "--kappa", "2"], ["--kappa", "--drift ou"]),
])
def test_inapplicable_flags_are_refused(tmp_path, capsys, args, words):
    run = sim_run_file(tmp_path / "run.npz")
    rc, out, err = call(capsys, *[run if a == "RUN" else a for a in args])
    one_line_error(rc, err, *words)
    assert out == ""


@pytest.mark.parametrize("args", [
    ["envelope", "--eta-j", "3", "--lag-min", "2", "--lag-max", "1e5", "--n-lags", "5"],
    ["envelope", "--eta-j", "3", "--N", "1e4", "--alpha-g", "1.5", "--C", "2"],
    ["envelope", "--from", "RUN", "--source", "samples", "--n-samples", "3", "--seed", "1"],
    ["envelope", "--eta-j", "3", "--plot", "PLOT", "--force"],
    ["simulate", "--eta-j", "3", "--drift", "ou", "--gamma", "2", "--particles", "64", "--groups", "8",
     "--t-end", "2", "--burn-in", "1"],
])
def test_flags_that_apply_are_accepted(tmp_path, capsys, args):
    """The other side of the rule: the same flags in the mode they belong to are accepted."""
    run = tmp_path / "run.npz"
    sim_run_file(run)
    np.savez(run, **dict(np.load(run)), final_zeta=np.linspace(-3.0, 1.0, 64))
    (tmp_path / "p.png").write_text("old")
    repl = {"RUN": run, "PLOT": tmp_path / "p.png"}
    rc, out, err = call(capsys, *[repl.get(a, a) for a in args], "--json")
    assert rc == 0, err
    assert "does not apply" not in err


def test_inapplicable_flag_subprocess(tmp_path):
    run = sim_run_file(tmp_path / "run.npz")
    p = run_cli("envelope", "--from", run, "--eta-g", "5")
    one_line_error(p.returncode, p.stderr, "--eta-g")


def test_reversed_hist_edges_name_hist_edges(tmp_path, capsys):
    run = sim_run_file(tmp_path / "rev.npz", edges=np.linspace(2.0, -6.0, 81))
    rc, _, err = call(capsys, "envelope", "--from", run)
    one_line_error(rc, err, "hist_edges", "strictly increasing", "rev.npz")
    assert "lag" not in err
    from levysde.io.runfile import read_run

    with pytest.raises(ValueError, match="hist_counts has shape"):
        np.savez(tmp_path / "bad.npz", hist_edges=np.linspace(0, 1, 5), hist_counts=np.ones((2, 3)),
                 meta=np.array(json.dumps({"kind": "simulation"})))
        read_run(tmp_path / "bad.npz")


# ----------------------------------------------------------------------------- item 19

def test_diagram_no_leaked_warnings(tmp_path):
    """--lam 0 (no threshold eta_J*: an all-NaN gap) draws without a RuntimeWarning; an axis
    range matplotlib cannot draw is one line naming the flag."""
    p = run_cli("diagram", "--lam", "0", "--resolution", "8", "6", "--out", tmp_path / "a.png")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    p = run_cli("diagram", "--x-range", "0", "1e308", "--resolution", "8", "6", "--out", tmp_path / "b.png")
    one_line_error(p.returncode, p.stderr, "--x-range")


def test_plots_emit_no_runtime_warning_on_all_nan_input(tmp_path):
    import warnings

    from levysde.plotting import plot_beta_check, plot_phase_diagram
    from levysde.studies.diagram import phase_diagram

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = phase_diagram(nx=6, ny=5, lam=0.0)
        assert not np.isfinite(d.threshold_gap).any()
        plot_phase_diagram(d, path=tmp_path / "a.png")
        nan = np.full(2, np.nan)
        plot_beta_check({"beta_theory": nan, "beta_hat": nan, "se": nan}, path=tmp_path / "b.png")


def test_directory_as_figure_output_is_refused(tmp_path, capsys):
    """A directory given as a figure name is refused (not turned into DIR.png)."""
    run = sim_run_file(tmp_path / "run.npz")
    d = tmp_path / "figs"
    d.mkdir()
    for args in (["simulate", "--eta-j", "3", "--plot", d], ["diagram", "--out", d],
                 ["envelope", "--from", run, "--plot", d], ["check", run, "--plot", d]):
        rc, _, err = call(capsys, *args)
        one_line_error(rc, err, "is a directory")
    assert not (tmp_path / "figs.png").exists()


def test_learnability_lags_with_f_func_conflict():
    """Library audit (item 13's kind): lags next to a closed-form f_func were silently ignored."""
    from levysde.theory.learnability import learnability_window

    def f(l):
        return np.asarray(l, dtype=float) ** -0.5

    with pytest.raises(ValueError, match="lags apply only to a tabulated f"):
        learnability_window(1e4, f_func=f, lags=[1.0, 10.0])
    # closed form: f(H) = f* = (C/N)^(1/kappa_alpha), kappa_alpha = 2 for alpha_g = 2 -> H = N
    assert learnability_window(1e4, f_func=f) == pytest.approx(1e4, rel=1e-9)


@pytest.mark.parametrize("args,flag", [
    (["--t-max", "50"], "--t-max"),
    (["--model", "gru", "--gate-a", "0.3"], "--gate-a"),
    (["--model", "constgate", "--init", "chrono", "--gate-a", "0.3"], "--gate-a"),
    (["--delay", "3"], "--delay"),
    (["--task", "delay", "--kernel", "5"], "--kernel"),
    (["--inject-target", "gate"], "--inject-target"),
    (["--n-mem", "3"], "--n-mem"),
    (["--task", "delay", "--mem-lag-max", "50"], "--mem-lag-max"),
    (["--mem-gamma", "0.5"], "--mem-gamma"),
])
def test_train_flags_that_do_not_apply_are_refused(tmp_path, capsys, args, flag):
    pytest.importorskip("torch")
    rc, out, err = call(capsys, "train", "--out", tmp_path / "r.npz", *args)
    one_line_error(rc, err, flag, "does not apply")
    assert not list(tmp_path.iterdir())


def test_train_refuses_existing_run_or_checkpoint_without_force(tmp_path, capsys):
    pytest.importorskip("torch")
    for existing in (tmp_path / "r.npz", tmp_path / "r.ckpt"):
        existing.write_text("keep me")
        rc, _, err = call(capsys, "train", "--out", tmp_path / "r.npz", "--steps", "1")
        one_line_error(rc, err, "exists", "--force")
        assert existing.read_text() == "keep me"
        existing.unlink()
    fifo = tmp_path / "r.ckpt"
    os.mkfifo(fifo)
    rc, _, err = call(capsys, "train", "--out", tmp_path / "r.npz", "--steps", "1", "--force")
    one_line_error(rc, err, "FIFO")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("argv", [
    ["diagram", "--resolution", "10", "10", "--out", ""],
    ["envelope", "--eta-j", "3", "--plot", "", "--lags", "1", "10"],
])
def test_empty_figure_name_is_refused(argv, tmp_path):
    """An empty figure name is a one-line error (it used to write a hidden '.png.png', or
    nothing at all), before any work."""
    p = run_cli(*argv, cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "expected a file name" in p.stderr, p.stderr
    assert not list(tmp_path.iterdir())
