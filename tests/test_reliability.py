"""Failure kinds a hostile user meets: mismatched resume files, no writable Numba cache, files
that declare huge arrays, output that cannot be written, figure formats that need absent
software, Dask without the ``__main__`` guard, float32 overflow of heavy-tailed draws,
degenerate data in the estimators, exponents from too short a range, the tempering boundary,
misleading messages, and logs. Each test fails without the fix of its kind."""
from __future__ import annotations

import hashlib
import os
import shutil

import numpy as np
import pytest

from tests.helpers import call, one_line_error, run_python

TINY = dict(task="delay", delay=5, seq_len=16, batch=4, record_every=5, lr=1e-2, steps=10)


def _digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


# ------------------------------------------------------------------------- 1. resume mismatch
def test_resume_refuses_a_checkpoint_of_another_run(tmp_path, capsys):
    pytest.importorskip("torch")
    from levysde.rnn.trainer import TrainConfig, train

    first, second = str(tmp_path / "first.npz"), str(tmp_path / "second.npz")
    train(TrainConfig(hidden=4, seed=1, **TINY), first)
    train(TrainConfig(hidden=6, seed=2, **TINY), second)
    shutil.copy(tmp_path / "second.ckpt", tmp_path / "first.ckpt")
    before = _digest(first)
    # the CLI takes every flag not given from the checkpoint: without the check it resumes the
    # second run into the first run's file
    rc, out, err = call(capsys, "train", "--out", first, "--resume", "--steps", "15", "--quiet")
    one_line_error(rc, err, "not the checkpoint of run file", "hidden")
    assert _digest(first) == before
    with pytest.raises(ValueError, match="not the checkpoint of run file"):
        train(TrainConfig(hidden=6, seed=2, **dict(TINY, steps=15)), first, resume=True)
    assert _digest(first) == before


def test_sweep_store_refuses_a_point_file_of_another_sweep(tmp_path):
    from levysde.studies.sweep import run_sweep

    def task(point, seed):
        return {"v": float(point["a"]) + seed % 7}

    a, b = tmp_path / "a", tmp_path / "b"
    run_sweep(task, [{"a": 1.0}, {"a": 2.0}], store=a, scheduler="sequential", progress=False)
    run_sweep(task, [{"a": 5.0}, {"a": 6.0}], store=b, scheduler="sequential", progress=False)
    shutil.copy(b / "point_000001.npz", a / "point_000001.npz")
    with pytest.raises(ValueError, match="another sweep's point"):
        run_sweep(task, [{"a": 1.0}, {"a": 2.0}], store=a, scheduler="sequential", progress=False)


# ------------------------------------------------------------------------- 2. no writable Numba cache
#: Numba may look for a cache directory only where NUMBA_CACHE_DIR points, and that is not a
#: directory (a path under a regular file: unwritable even for root)
_NO_CACHE = {"NUMBA_CACHE_DIR": "/dev/null/numba-cache", "NUMBA_CACHE_LOCATOR_CLASSES": "UserProvidedCacheLocator"}


@pytest.mark.slow
def test_simulator_runs_without_a_writable_numba_cache(tmp_path):
    code = ("import tempfile, levysde\n"
            f"tempfile.tempdir = {str(tmp_path)!r}\n"
            "r = levysde.simulate(2.0, particles=64, t_end=2.0, burn_in=1.0, dt=0.01, n_groups=8, seed=1,"
            " progress=False)\n"
            "from levysde.simulation._jitcache import CACHE\n"
            "print(CACHE, r.meta.particles)\n")
    r = run_python(code, env_base={**os.environ, **_NO_CACHE}, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["True", "64"]        # cached in a private temporary directory
    assert [p.name for p in tmp_path.iterdir()] == [f"levysde-numba-{os.getuid()}"]
    assert "warning" not in r.stderr.lower()


def test_no_cache_at_all_is_one_warning_not_an_import_error():
    code = ("import tempfile, warnings\n"
            "tempfile.tempdir = '/dev/null/tmp'\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    import levysde.simulation._kernels\n"
            "from levysde.simulation._jitcache import CACHE\n"
            "print(CACHE, len(w), 'NUMBA_CACHE_DIR' in str(w[0].message))\n")
    r = run_python(code, env_base={**os.environ, **_NO_CACHE}, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["False", "1", "True"]


# ------------------------------------------------------------------------- 3. allocation before validation
def _npy_member(shape, dtype="<f8", data=b"\0" * 16) -> bytes:
    header = repr({"descr": dtype, "fortran_order": False, "shape": shape}).encode()
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + data


def _bomb_npz(path, config='{"kind": "rnn"}'):
    import zipfile

    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("config.npy", _npy_member((), f"<U{len(config)}", "".join(
            c + "\0\0\0" for c in config).encode("latin-1")))
        zf.writestr("zeta.npy", _npy_member((10 ** 11,)))


def _patch_central_sizes(path, member: str, size: int) -> None:
    """Make the zip directory of ``path`` declare ``size`` uncompressed bytes for ``member``."""
    blob = bytearray(open(path, "rb").read())
    name = member.encode()
    i = 0
    while True:
        i = blob.index(b"PK\x01\x02", i)
        n = int.from_bytes(blob[i + 28:i + 30], "little")
        if blob[i + 46:i + 46 + n] == name:
            blob[i + 24:i + 28] = size.to_bytes(4, "little")
            break
        i += 4
    open(path, "wb").write(bytes(blob))


def test_npz_headers_are_bounded_before_any_allocation(tmp_path, capsys):
    from levysde.io.runfile import read_run
    from levysde.studies.sweep import load_point

    bomb = tmp_path / "bomb.npz"
    _bomb_npz(bomb)
    rc, out, err = call(capsys, "envelope", "--from", str(bomb))
    one_line_error(rc, err, "corrupt or oversized run file", "zeta.npy")
    rc, out, err = call(capsys, "check", str(bomb))
    one_line_error(rc, err, "corrupt or oversized run file")
    with pytest.raises(ValueError, match="corrupt or oversized"):
        load_point(bomb)
    plain = tmp_path / "plain.npy"                  # a bare .npy header declaring 800 GB
    plain.write_bytes(_npy_member((10 ** 11,)))
    with pytest.raises(ValueError, match="plain .npy array"):
        read_run(plain)


def test_checkpoint_zip_directory_is_bounded_before_loading(tmp_path):
    torch = pytest.importorskip("torch")
    import zipfile

    from levysde.rnn.checkpoint import load_checkpoint, save_checkpoint

    ck = tmp_path / "r.ckpt"
    save_checkpoint(str(ck), {"model": {"w": torch.zeros(1000)}})
    member = next(n for n in zipfile.ZipFile(ck).namelist() if n.endswith("data/0"))
    _patch_central_sizes(ck, member, 2 ** 32 - 1)
    with pytest.raises(ValueError, match="corrupt or oversized checkpoint"):
        load_checkpoint(str(ck))



# ------------------------------------------------------------------------- 4. output that cannot be written
def _levysde(*args, stdout, extra_env=None, cwd=None):
    import subprocess
    import sys

    from tests.helpers import env

    e = env({**os.environ, **(extra_env or {})})
    return subprocess.run([sys.executable, "-m", "levysde", *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, env=e, cwd=cwd, timeout=300)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_full_disk_on_stdout_is_one_line_and_a_failure(json_flag):
    with open("/dev/full", "w") as full:
        r = _levysde("phase", "--eta-j", "3", *json_flag, stdout=full)
    one_line_error(r.returncode, r.stderr, "levysde phase", "standard output", "No space left", status=1)


def test_closed_stdout_is_refused_before_any_work():
    import subprocess

    r = _levysde("phase", "--eta-j", "3", stdout=subprocess.DEVNULL)      # control: fine
    assert r.returncode == 0 and r.stderr == ""
    code = ("import os, subprocess, sys\n"
            "r = subprocess.run([sys.executable, '-m', 'levysde', 'phase', '--eta-j', '3'], stdout=None,\n"
            "                   stderr=subprocess.PIPE, text=True, pass_fds=(), close_fds=True,\n"
            "                   preexec_fn=lambda: os.close(1))\n"
            "sys.stdout.write(str(r.returncode) + '|' + r.stderr)\n")
    r = run_python(code, timeout=300)
    rc, _, err = r.stdout.partition("|")
    one_line_error(int(rc), err, "standard output is closed")


def test_non_ascii_names_are_escaped_on_an_ascii_stdout(tmp_path):
    import subprocess

    r = _levysde("envelope", "--eta-j", "3", "--plot", "日本ü.png", stdout=subprocess.PIPE,
                 extra_env={"PYTHONIOENCODING": "ascii"}, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "levysde envelope" in r.stdout                 # the report is not lost
    assert "\\u65e5\\u672c\\xfc.png" in r.stdout and (tmp_path / "日本ü.png").exists()
    r = _levysde("phase", "--eta-j", "3", stdout=subprocess.PIPE, extra_env={"PYTHONIOENCODING": "ascii"})
    assert r.returncode == 0 and "beta*" in r.stdout


# ------------------------------------------------------------------------- 5. figure formats needing absent software
@pytest.mark.parametrize("cmd", [
    ["envelope", "--eta-j", "3", "--plot"],
    ["diagram", "--resolution", "4", "4", "--out"],
    ["simulate", "--eta-j", "2", "--particles", "64", "--t-end", "2", "--burn-in", "1", "--groups", "8", "--plot"],
    ["check", "missing.npz", "--plot"],
])
def test_a_format_needing_absent_software_is_refused_before_any_work(cmd, tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))          # no LaTeX engine: .pgf cannot be written
    rc, out, err = call(capsys, *cmd, "figure.pgf")
    one_line_error(rc, err, "'.pgf'", "xelatex", "not found", ".png")
    assert out == "" and list(tmp_path.iterdir()) == []
    # every command accepts the same formats
    from levysde.plotting import figure_formats

    assert {"png", "pdf", "svg", "eps"} <= set(figure_formats()) and "pgf" not in figure_formats()


# ------------------------------------------------------------------------- 6. Dask without the __main__ guard
_SWEEP_SCRIPT = """\
from levysde.studies.sweep import run_sweep


def task(point, seed):
    return {"v": point["a"]}


{call}
"""


def test_a_local_sweep_at_a_scripts_top_level_fails_at_once(tmp_path):
    import subprocess
    import sys
    import time

    pytest.importorskip("distributed")
    from tests.helpers import env

    call_ = 'print(run_sweep(task, [{"a": 1.0}], scheduler="local", n_workers=1, progress=False))'
    script = tmp_path / "unguarded.py"
    script.write_text(_SWEEP_SCRIPT.replace("{call}", call_))
    t0 = time.monotonic()
    try:
        r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env(),
                           timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("an unguarded local sweep hangs instead of failing")
    assert time.monotonic() - t0 < 60
    assert r.returncode != 0 and r.stdout == ""
    last = r.stderr.strip().splitlines()[-1]
    assert "RuntimeError" in last and 'if __name__ == "__main__":' in last and "line 8" in last, r.stderr
    # the same call under the guard is not refused by the check (here: the check alone)
    guarded = tmp_path / "guarded.py"
    guarded.write_text(_SWEEP_SCRIPT.replace("{call}", 'if __name__ == "__main__":\n    from levysde.studies '
                                                       'import sweep\n    print(sweep._unguarded_main_line())'))
    r = subprocess.run([sys.executable, str(guarded)], capture_output=True, text=True, env=env(), timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "None", r.stderr


# ------------------------------------------------------------------------- 7. float32 overflow of heavy-tailed draws
def test_alpha_stable_indices_float32_cannot_hold_are_refused(capsys):
    pytest.importorskip("torch")
    from levysde.rnn.tasks import ALPHA_MIN_FLOAT32, build_task
    from levysde.rnn.trainer import TrainConfig

    for flags in (["--input-alpha", "0.05"], ["--inject-alpha", "0.05", "--inject-scale", "0.01"]):
        rc, out, err = call(capsys, "train", *flags, "--out", "never-written.npz")
        one_line_error(rc, err, flags[0], "float32", "[0.5")
    assert not os.path.exists("never-written.npz")
    with pytest.raises(ValueError, match="inject_alpha.*float32"):
        TrainConfig(inject_alpha=0.05, inject_scale=0.01).validate()
    with pytest.raises(ValueError, match="input_alpha.*float32"):
        build_task("delay", 20, input_alpha=0.05)
    build_task("delay", 20, input_alpha=ALPHA_MIN_FLOAT32)          # the bound itself is allowed


def test_alpha_stable_draws_are_finite_in_float32():
    torch = pytest.importorskip("torch")
    from levysde.rnn.tasks import ALPHA_MIN_FLOAT32, sas_noise

    g = torch.Generator().manual_seed(3)
    x = sas_noise((200_000,), 0.05, g)               # the public sampler keeps the full range of alpha
    assert x.dtype == torch.float32 and torch.isfinite(x).all()
    # 1 % of the float64 draws exceed float32's largest value (P(|X| > x) ~ 2 C_alpha x^-alpha):
    # they are clamped to it, not turned into infinities
    big = torch.finfo(torch.float32).max
    assert 0.005 < float((x.abs() == big).double().mean()) < 0.02
    y = sas_noise((1_000_000,), ALPHA_MIN_FLOAT32, g)
    assert float(y.double().abs().max()) ** 2 < big      # squares fit float32 (P ~ 2e-10 per draw)


# ------------------------------------------------------------------------- 8. degenerate data in the estimators
def test_estimators_refuse_non_finite_data_naming_the_argument():
    import levysde
    from levysde.stats.tails import hill_index, hill_rate, tail_check

    edges, counts = np.linspace(-5.0, 0.0, 11), np.ones((8, 10))
    bad = {
        "x": lambda: levysde.tail_from_samples(np.full((4, 100), np.inf), 3.0),
        "u": lambda: levysde.tail_from_samples(np.ones((4, 100)), float("nan")),
        "weights": lambda: levysde.tail_from_samples(np.ones((4, 100)), 0.5, weights=np.full(400, -1.0)),
        "counts": lambda: levysde.tail_from_histogram(edges, np.full((8, 10), np.nan), u=3.0),
        "edges": lambda: levysde.tail_from_histogram(edges[::-1], counts, u=3.0),
        "u ": lambda: levysde.tail_from_histogram(edges, counts, u=float("inf")),
        "us": lambda: levysde.threshold_scan(edges, counts, None, [np.nan]),
        "alpha": lambda: levysde.tempered_fit(edges, counts, 3.0, alpha=float("nan")),
        "outside": lambda: levysde.tempered_fit(edges, counts, 3.0, alpha=1.5, outside=np.full((8, 4), np.inf)),
        " x": lambda: hill_rate([np.inf, 1.0], 0.5),
        "sizes": lambda: hill_index([np.nan, 2.0], 1.0),
        "tail_fraction": lambda: tail_check(hist=(edges, counts, None, None), tail_fraction=float("nan")),
    }
    for name, f in bad.items():
        with pytest.raises(ValueError, match=name.strip()):
            f()


def test_classify_decay_refuses_an_envelope_that_does_not_decay():
    import levysde

    lags = np.arange(1.0, 51.0)
    for f in (np.full(50, 0.3), 0.3 + 1e-4 * np.log(lags)):        # constant; rising
        with pytest.raises(ValueError, match="f does not decay"):
            levysde.classify_decay(lags, f)
    # a true power law (f = l^-0.8 / 2) is still classified
    assert levysde.classify_decay(lags, 0.5 * lags ** -0.8).name == "polynomial"


# ------------------------------------------------------------------------- 9. exponents from too short a range
@pytest.fixture
def short_spectrum_run(tmp_path):
    """An RNN run file whose spectrum supports lags up to tau_(10) ~ 1.8 only (time scales 1 to 3)."""
    from tests.test_check import write_run

    rng = np.random.default_rng(0)
    zeta = rng.uniform(-1.0, 0.3, 40)[None, :] + 0.05 * rng.standard_normal((30, 40))
    path = tmp_path / "short.npz"
    write_run(path, zeta, np.arange(30) * 10.0)
    return path


def test_an_exponent_over_less_than_a_decade_is_withheld_everywhere(short_spectrum_run, capsys):
    import json

    from levysde.theory.envelope_decay import MIN_SLOPE_DECADES, fit_slope

    lags = np.geomspace(1.0, 1.8, 20)
    rc, out, err = call(capsys, "envelope", "--from", str(short_spectrum_run), "--json",
                        "--lags", *[f"{v:.6f}" for v in lags])
    assert rc == 0, err
    assert json.loads(out)["slope"] is None and "decades; a power-law exponent needs >= 1 decade" in err
    rc, out, err = call(capsys, "check", str(short_spectrum_run), "--no-simulate", "--json", "--n-boot", "20")
    assert rc == 0, err
    d = json.loads(out)
    assert d["beta_envelope"] is None and "needs >= 1 decade" in d["beta_envelope_flag"]
    # the truncation of a requested grid at tau_(10) is said, not silent
    rc, out, err = call(capsys, "envelope", "--from", str(short_spectrum_run), "--json", "--n-lags", "50")
    assert "exceed tau_(10)" in json.loads(out)["note"]
    # over a decade or more the exponent of a power law is fitted (f = l^-0.7 / 2: slope -0.7)
    lg = np.geomspace(1.0, 1e3, 40)
    assert fit_slope(lg, 0.5 * lg ** -0.7).slope == pytest.approx(-0.7, abs=1e-12)
    assert MIN_SLOPE_DECADES == 1.0


# ------------------------------------------------------------------------- 10. the tempering boundary
def test_a_simulated_tail_near_the_tempering_boundary_carries_a_note(capsys):
    import json

    import levysde
    from levysde.simulation.bias import tempering_boundary

    beta = levysde.beta_star(2.0, 0.1, 1.0, 1.0, 1.5)              # 1.4853: within 1 % of lam = 1.5
    assert tempering_boundary(3.0, beta, 1.5) == pytest.approx(1.0 / (1.5 - beta))
    assert tempering_boundary(3.0, levysde.beta_star(3.0, 0.1, 1.0, 1.5, 2.0), 2.0) is None   # defaults
    assert tempering_boundary(3.0, 0.5, 0.0) is None and tempering_boundary(3.0, None, 1.5) is None
    small = ["--particles", "256", "--t-end", "6", "--burn-in", "2", "--groups", "8", "--json"]
    rc, out, err = call(capsys, "simulate", "--eta-j", "2", "--alpha", "1", "--lam", "1.5", *small)
    assert rc == 0, err
    notes = json.loads(out)["notes"]
    assert any("tempering boundary" in n and "e^(-lam x) x^(-1-alpha)" in n for n in notes), notes
    rc, out, err = call(capsys, "simulate", "--eta-j", "3", *small)
    assert rc == 0 and not any("tempering boundary" in n for n in json.loads(out)["notes"])


# ------------------------------------------------------------------------- 11. misleading or leaked messages
def test_a_value_starting_with_a_dash_gets_a_way_out(capsys):
    rc, out, err = call(capsys, "check", "-r.npz")
    one_line_error(rc, err, "'-r.npz' starts with '-'", "./-r.npz")
    rc, out, err = call(capsys, "simulate", "--eta-j", "2", "--out", "-x.npz")
    one_line_error(rc, err, "--out=-x.npz", "./-x.npz")
    rc, out, err = call(capsys, "phase", "--eta-j", "-3")          # a negative number stays a value
    one_line_error(rc, err, "--eta-j", "out of range")
    assert "starts with '-'" not in err


@pytest.mark.parametrize("args, flag", [
    (["phase", "--eta-j", "3", "--kappa", "2", "--kappa", "3"], "--kappa"),
    (["phase", "--eta-j", "1", "--eta-j", "2"], "--eta-j"),
    (["envelope", "--eta-j", "3", "--lags", "1", "--lags", "2"], "--lags"),
    (["simulate", "--eta-j", "3", "--seed", "1", "--seed=2"], "--seed"),
])
def test_repeated_flags_are_refused(args, flag, capsys):
    rc, out, err = call(capsys, *args)
    one_line_error(rc, err, f"argument {flag}: given more than once")


def test_contradictory_clip_flags_are_refused(tmp_path, capsys):
    pytest.importorskip("torch")
    rc, out, err = call(capsys, "train", "--clip", "2", "--no-clip", "--out", str(tmp_path / "r.npz"))
    one_line_error(rc, err, "--clip", "--no-clip")
    assert not (tmp_path / "r.npz").exists()


def test_time_scales_beyond_doubles_are_named_not_numpys_message(tmp_path, capsys):
    import json

    from tests.test_check import write_run

    path = tmp_path / "huge.npz"
    with np.errstate(over="ignore"):
        write_run(path, np.full((30, 20), 1e300), np.arange(30) * 10.0)
    rc, out, err = call(capsys, "envelope", "--from", str(path))
    one_line_error(rc, err, "--from", "zeta must be <= 708.4", "10th slowest")
    assert "(0, 0]" not in err
    rc, out, err = call(capsys, "check", str(path), "--no-simulate", "--json", "--n-boot", "20")
    assert rc == 0 and "Geometric" not in err and "encountered" not in err, err
    assert "zeta must be <= 708.4" in json.loads(out)["beta_envelope_flag"]


# ------------------------------------------------------------------------- 12. progress and numbers in logs
def test_no_progress_bar_off_a_terminal(capsys):
    from levysde.studies.sweep import run_sweep

    run_sweep(lambda p, s: {"v": 1.0}, [{"a": 1}, {"a": 2}], scheduler="sequential", progress=True)
    assert capsys.readouterr().err == ""          # stderr is no terminal here: no bar, no '\r'


def test_simulate_reports_compile_time_apart_and_no_negative_zero(capsys):
    import re

    import levysde

    small = ["--particles", "256", "--t-end", "6", "--burn-in", "2", "--groups", "8"]
    rc, out, err = call(capsys, "simulate", "--eta-j", "3", *small)
    assert rc == 0, err
    assert not re.search(r"(?<![\w.])-0(\.0*)?(?![\w.])", out), out       # e.g. "X = -0" at z0 = 0
    assert "compiling or loading the kernels" in out
    res = levysde.simulate(3.0, particles=256, t_end=6.0, burn_in=2.0, n_groups=8, progress=False)
    m = res.meta
    assert m.compile_time_s is not None and m.compile_time_s >= 0.0
    assert m.particle_steps_per_s == pytest.approx(m.particles * m.steps / m.wall_time_s)


def test_gate_saturation_is_shown_when_it_matters(tmp_path, capsys):
    import json

    from levysde.rnn.learned import SATURATION_SHOWN, saturation_note
    from tests.test_check import write_run

    assert saturation_note({"saturated": np.array([0.0, SATURATION_SHOWN / 2])}) is None
    assert "gate saturation: 20.0%" in saturation_note({"saturated": np.array([0.0, 0.2])})
    rng = np.random.default_rng(1)
    path = tmp_path / "sat.npz"
    write_run(path, rng.normal(-2.0, 0.5, (30, 40)), np.arange(30) * 10.0)
    with np.load(path) as z:
        arrays = dict(z)
    np.savez(path, **arrays, saturated=np.linspace(0.0, 0.3, 30))
    rc, out, err = call(capsys, "check", str(path), "--no-simulate", "--json", "--n-boot", "20")
    assert rc == 0, err
    assert any(n.startswith("gate saturation: 30.0%") for n in json.loads(out)["notes"])


def test_train_shows_gate_saturation(tmp_path, capsys):
    pytest.importorskip("torch")
    rc, out, err = call(capsys, "train", "--model", "diaggate", "--task", "delay", "--seq-len", "16",
                        "--hidden", "4", "--steps", "5", "--record-every", "5", "--quiet", "--json",
                        "--out", str(tmp_path / "r.npz"))
    assert rc == 0, err
    import json

    d = json.loads(out)
    assert 0.0 <= d["saturated"] <= 1.0 and "saturation_note" in d


# ------------------------------------------------------------------------- API edge cases
def test_require_unknown_module_raises_missing_extra_not_keyerror():
    from levysde.core.extras import MissingExtraError, install_hint, require

    with pytest.raises(MissingExtraError, match="no_such_module_xyz"):
        require("no_such_module_xyz.sub", "a feature")
    with pytest.raises(ValueError, match="module"):
        install_hint("no_such_module_xyz", "a feature")


def test_checkpoint_path_accepts_pathlike(tmp_path):
    from levysde.io.runfile import checkpoint_path

    assert checkpoint_path(tmp_path / "run") == str(tmp_path / "run") + ".ckpt"
    assert checkpoint_path(tmp_path / "run.npz") == str(tmp_path / "run") + ".ckpt"


def test_valid_lag_max_validates_zeta_min_and_factor():
    from levysde.theory.envelope_map import valid_lag_max

    with pytest.raises(ValueError, match="zeta_min"):
        valid_lag_max(float("nan"))
    with pytest.raises(ValueError, match="factor"):
        valid_lag_max(-1.0, factor=-2.0)
    with pytest.raises(ValueError, match="factor"):
        valid_lag_max(-1.0, factor=0.0)
    assert valid_lag_max(-800.0) == float("inf")
    assert valid_lag_max(-2.0, factor=3.0) == pytest.approx(3.0 * np.exp(2.0), rel=1e-15)


def test_read_checkpoint_taus_validates_min_checkpoints(tmp_path):
    from levysde.io.checkpoint_taus import read_checkpoint_taus

    np.save(tmp_path / "ckpt_0001_taus.npy", np.array([10.0, 20.0]))
    for bad in (0, -1, 2.5, "x"):
        with pytest.raises(ValueError, match="min_checkpoints"):
            read_checkpoint_taus(tmp_path, min_checkpoints=bad)
    assert read_checkpoint_taus(tmp_path, min_checkpoints=1).epoch.tolist() == [1]


def test_estimate_drift_validates_dz_dt_min_count():
    from levysde.inference.drift_fit import estimate_drift

    rng = np.random.default_rng(0)
    z = rng.normal(size=200)
    dz = -0.1 * z + 0.01 * rng.normal(size=200)
    dt = np.ones(200)
    with pytest.raises(ValueError, match="dt"):
        estimate_drift(z, dz, np.zeros(200), bins=5)
    with pytest.raises(ValueError, match="dz"):
        estimate_drift(z, np.full(200, np.nan), dt, bins=5)
    for bad in (0, 1, 2.5):
        with pytest.raises(ValueError, match="min_count"):
            estimate_drift(z, dz, dt, bins=5, min_count=bad)


def test_hill_index_validates_min_exceed():
    from levysde.stats.tails import hill_index

    sizes = np.random.default_rng(1).pareto(1.5, size=500) + 1.0
    for bad in (0, -3, 2.5):
        with pytest.raises(ValueError, match="min_exceed"):
            hill_index(sizes, 1.0, min_exceed=bad)
    assert len(hill_index(sizes, 1.0, factors=(1.0,), min_exceed=1)) == 1


def test_plot_envelope_error_names_the_python_parameter(tmp_path):
    pytest.importorskip("matplotlib")
    from levysde.plotting import plot_envelope

    lags = np.geomspace(1, 100, 10)
    with pytest.raises(ValueError, match=r"^path: ") as exc:
        plot_envelope(lags, lags ** -0.5, str(tmp_path))
    assert "--plot" not in str(exc.value)


def test_predict_validates_n_boot_and_no_jump_eta_j_star():
    from levysde.inference.sde_fit import fit_sde, predict

    rng = np.random.default_rng(3)
    T, H = 400, 64
    z = np.empty((T, H))
    z[0] = rng.normal(size=H)
    for t in range(1, T):
        z[t] = z[t - 1] + 0.05 * np.tanh(-z[t - 1]) + 0.1 * rng.normal(size=H)
    fit = fit_sde(z, np.arange(T))
    assert fit.noise.mode != "jumps"
    for bad in (0, -1, 2.5):
        with pytest.raises(ValueError, match="n_boot"):
            predict(fit, n_boot=bad)
    p = predict(fit, n_boot=20)
    assert not p.eta_j_star.ok and "jump" in p.eta_j_star.flag


def test_psi_mp_carries_dps_digits_and_validates():
    import mpmath

    from levysde.theory.levy import psi_mp

    with mpmath.workdps(15):                 # the caller's precision: the default 15 digits
        v = psi_mp("0.1", alpha="1.3", lam="0.7", eta_j="2", dps=40)
    with mpmath.workdps(80):                 # independent closed form at 80 digits
        a, lam, b, e = mpmath.mpf("1.3"), mpmath.mpf("0.7"), mpmath.mpf("0.1"), mpmath.mpf(2)
        ref = -e * ((lam - b) ** a + (lam + b) ** a - 2 * lam ** a) / (2 * mpmath.cos(mpmath.pi * a / 2))
        assert abs(v - ref) / abs(ref) < mpmath.mpf(10) ** -38
    for kw, name in ((dict(alpha=2.5, lam=1.0), "alpha"), (dict(alpha=0.0, lam=1.0), "alpha"),
                     (dict(alpha=1.5, lam=-1.0), "lam"), (dict(alpha=1.5, lam="nan"), "lam")):
        with pytest.raises(ValueError, match=name):
            psi_mp(0.1, **kw)
    with pytest.raises(ValueError, match="beta"):
        psi_mp("nan", alpha=1.5, lam=1.0)
    with pytest.raises(ValueError, match="eta_j"):
        psi_mp(0.1, alpha=1.5, lam=1.0, eta_j=-1)


def test_resumed_sweep_point_has_the_fresh_python_types(tmp_path):
    from levysde.studies.sweep import run_sweep

    def task(point, seed):
        return {"n": point["x"] * 2, "y": point["x"] / 4, "ok": True, "v": np.arange(3.0)}

    pts = [{"x": 1}, {"x": 2}]
    fresh = run_sweep(task, pts, store=str(tmp_path), scheduler="sequential", progress=False)
    resumed = run_sweep(task, pts, store=str(tmp_path), scheduler="sequential", progress=False)
    for a, b in zip(fresh, resumed, strict=True):
        ra, rb = (r if isinstance(r, dict) else r.result for r in (a, b))
        for key in ("n", "y", "ok"):
            assert type(rb[key]) is type(ra[key]) and rb[key] == ra[key], (key, ra[key], rb[key])
        assert np.array_equal(rb["v"], ra["v"])


def test_fit_slope_and_classify_decay_validate_their_window_arguments():
    from levysde.theory.envelope_decay import classify_decay, fit_slope

    lags = np.geomspace(1, 1e4, 80)
    f = lags ** -0.7
    for kw, name in ((dict(f_floor=-1.0), "f_floor"), (dict(f_floor=float("nan")), "f_floor"),
                     (dict(f_start=float("nan")), "f_start"), (dict(f_start=0.0), "f_start"),
                     (dict(min_points=0), "min_points"), (dict(min_points=2.5), "min_points"),
                     (dict(min_decades=-1.0), "min_decades")):
        with pytest.raises(ValueError, match=name):
            fit_slope(lags, f, **kw)
    for kw, name in ((dict(f_floor=-1.0), "f_floor"), (dict(f_start=1e-301), "f_start"),
                     (dict(lag_min=float("nan")), "lag_min"), (dict(lag_min=0.5), "lag_min"),
                     (dict(min_points=0), "min_points"), (dict(min_points=2.5), "min_points")):
        with pytest.raises(ValueError, match=name):
            classify_decay(lags, f, **kw)
    assert fit_slope(lags, f).slope == pytest.approx(-0.7, abs=1e-9)


def test_check_array_increasing_with_allowed_nan_checks_the_other_entries():
    from levysde.core.validate import check_array

    out = check_array("x", [1.0, np.nan, 2.0, 3.0], allow_nan=True, increasing=True)
    assert np.isnan(out[1]) and out[3] == 3.0
    with pytest.raises(ValueError, match=r"x must .*got 1\.5 after 2\.0"):
        check_array("x", [1.0, 2.0, np.nan, 1.5], allow_nan=True, increasing=True)


# ------------------------------------------------------------------------- campaign drivers
DRIVERS = ("paper_campaign", "learnability_campaign")


def _drive(capsys, name, *args):
    """``examples/NAME.py ARGS`` in-process: (exit status, stdout, stderr)."""
    import importlib.util

    from tests.helpers import ROOT

    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    try:
        rc = mod.main([str(a) for a in args])
    except SystemExit as exc:
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("name", DRIVERS)
@pytest.mark.parametrize("args, words", [
    (["--workers", "0"], ["--workers", ">= 1"]),
    (["--workers", "two"], ["argument --workers", "'two'"]),
    (["--epochs", "0"], ["--epochs"]),          # out of range (paper) or not a flag (learnability)
    (["--bogus"], ["unrecognized arguments: --bogus"]),
    (["--quic"], ["unrecognized arguments: --quic"]),      # no abbreviations
])
def test_campaign_driver_usage_errors_are_one_line(name, args, words, capsys):
    rc, out, err = _drive(capsys, name, *args)
    one_line_error(rc, err, "error:", *words)
    assert "usage:" not in err and not out


@pytest.mark.parametrize("name", DRIVERS)
def test_campaign_driver_usage_error_in_a_fresh_interpreter(name):
    import subprocess
    import sys

    from tests.helpers import ROOT, env

    r = subprocess.run([sys.executable, str(ROOT / "examples" / f"{name}.py"), "--bogus"], capture_output=True,
                       text=True, env=env(), timeout=300)
    one_line_error(r.returncode, r.stderr, f"{name}.py: error: unrecognized arguments: --bogus")


@pytest.mark.parametrize("name", DRIVERS)
def test_campaign_driver_refuses_an_out_that_is_a_file(name, tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("kept")
    for out, words in ((f, ["is a file, not a campaign directory"]), (f / "c", ["cannot be created", "is a file"])):
        for extra in ([], ["--status"]):
            rc, o, err = _drive(capsys, name, "--quick", "--scheduler", "sequential", "--out", out, *extra)
            one_line_error(rc, err, "--out", repr(str(out)), *words)
            assert not o
    assert f.read_text() == "kept"


def test_campaign_functions_refuse_an_out_that_is_a_file(tmp_path):
    pytest.importorskip("torch")
    from levysde.studies.campaign import run_campaign
    from levysde.studies.learnability_campaign import run_learnability_campaign

    f = tmp_path / "file"
    f.write_text("kept")
    with pytest.raises(ValueError, match="^out .* is a file, not a campaign directory"):
        run_campaign("cpu-quick", f, labels=["diaggate"], seeds=[47], scheduler="sequential", progress=False)
    with pytest.raises(ValueError, match="^out .* cannot be created"):
        run_learnability_campaign("learnability-quick", f / "c", models=["gru"], optimizers=["sgd"],
                                  scheduler="sequential", progress=False)
    assert f.read_text() == "kept"


@pytest.mark.parametrize("name", DRIVERS)
def test_status_where_there_is_no_campaign_says_so(name, tmp_path, capsys):
    for out, why in ((tmp_path / "nowhere", "no such directory"), (tmp_path, "no runs/ directory in it")):
        rc, o, err = _drive(capsys, name, "--status", "--out", out)
        one_line_error(rc, err, f"--out {str(out)!r}: no campaign there ({why})")
        assert not o
    assert not (tmp_path / "nowhere").exists() and not (tmp_path / "runs").exists()


@pytest.mark.parametrize("name", DRIVERS)
def test_status_of_a_campaign_without_runs_yet_is_an_empty_table(name, tmp_path, capsys):
    pytest.importorskip("torch")
    (tmp_path / "runs").mkdir()
    rc, o, err = _drive(capsys, name, "--status", "--json", "--out", tmp_path)
    assert rc == 0 and not err, err
    if name == "paper_campaign":            # every run of the profile, none started
        import json
        assert json.loads(o) and not any(r["started"] for r in json.loads(o))
    else:
        assert o.strip() == "[]"


# ------------------------------------------------------------------------- flags named as spelled
def test_an_existing_learnability_plot_names_plot_force(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    fig = tmp_path / "fig.png"
    fig.write_bytes(b"kept")
    rc, out, err = call(capsys, "learnability", "--from", tmp_path / "run.npz", "--plot", fig)
    one_line_error(rc, err, "--plot", "already exists; use --plot-force to overwrite it")
    assert "--force" not in err.replace("--plot-force", "") and fig.read_bytes() == b"kept"


# ------------------------------------------------------------------------- a missing checkpoint
def test_a_missing_checkpoint_is_called_missing_not_corrupt(tmp_path, capsys):
    pytest.importorskip("torch")
    from levysde.rnn.checkpoint import load_checkpoint
    from levysde.rnn.trainer import TrainConfig, train

    run = tmp_path / "run.npz"
    train(TrainConfig(hidden=4, seed=1, **TINY), str(run))
    ckpt = tmp_path / "run.ckpt"
    ckpt.unlink()
    before = _digest(run)
    with pytest.raises(ValueError, match=f"^checkpoint {str(ckpt)!r} is missing"):
        load_checkpoint(str(ckpt))
    rc, out, err = call(capsys, "train", "--out", run, "--resume", "--steps", "15", "--quiet")
    one_line_error(rc, err, f"the checkpoint {str(ckpt)!r} is missing")
    with pytest.raises(ValueError, match="is missing"):
        train(TrainConfig(hidden=4, seed=1, **dict(TINY, steps=15)), str(run), resume=True)
    rc, out, err = call(capsys, "learnability", "--from", run, "--out", tmp_path / "m.npz")
    one_line_error(rc, err, f"checkpoint {str(ckpt)!r} is missing")
    assert "corrupt" not in err and _digest(run) == before


def test_a_campaign_run_whose_checkpoint_is_missing_is_kept(tmp_path):
    pytest.importorskip("torch")
    import time

    from levysde.studies.campaign import campaign_points, train_run

    cfg = campaign_points("cpu-quick", labels=["diaggate"], seeds=[47], epochs=1)[0]["config"]
    run = tmp_path / "diaggate_s47.npz"
    assert train_run(cfg, str(run), deadline=time.time())["step"][-1] == 0      # paused: unfinished
    (tmp_path / "diaggate_s47.ckpt").unlink()
    before = _digest(run)
    with pytest.raises(ValueError, match=r"the checkpoint .*diaggate_s47\.ckpt of this unfinished run is missing"):
        train_run(cfg, str(run))
    assert _digest(run) == before


# ------------------------------------------------------------------------- the paper campaign's driver
@pytest.mark.parametrize("args, words", [
    (["--budget-s", "-1"], ["--budget-s must be a finite number of seconds >= 0; got -1.0"]),
    (["--budget-s", "nan"], ["--budget-s", "got nan"]),
    (["--budget-s", "inf"], ["--budget-s", "got inf"]),
    (["--seeds", "47", "47"], ["--seeds must be distinct; got 47 47"]),
    (["--quick", "--preset", "cpu"], ["--quick is the cpu-quick profile", "--preset cpu"]),
])
def test_paper_campaign_refuses_bad_flags_before_any_work(args, words, tmp_path, capsys):
    rc, out, err = _drive(capsys, "paper_campaign", "--out", tmp_path / "c", "--scheduler", "sequential", *args)
    one_line_error(rc, err, *words)
    assert not out and not (tmp_path / "c").exists()


def test_paper_campaign_status_needs_no_torch_and_training_says_it_does(tmp_path):
    import json
    import subprocess
    import sys

    from tests.helpers import ROOT, env

    ex = [sys.executable, str(ROOT / "examples" / "paper_campaign.py"), "--quick"]
    (tmp_path / "runs").mkdir()
    r = subprocess.run([*ex, "--status", "--json", "--out", str(tmp_path), "--models", "diaggate", "--seeds", "83"],
                       capture_output=True, text=True, env=env(hide=["torch"]), timeout=300)
    assert r.returncode == 0 and not r.stderr, r.stderr
    assert [(x["run"], x["started"], x["step"], x["loss_ratio"]) for x in json.loads(r.stdout)] == \
        [("diaggate_s83.npz", False, 0, None)]
    r = subprocess.run([*ex, "--status", "--out", str(tmp_path), "--models", "diaggate"],
                       capture_output=True, text=True, env=env(hide=["torch"]), timeout=300)
    assert r.returncode == 0 and r.stdout.count("not started") == 2 and "nan" not in r.stdout
    r = subprocess.run([*ex, "--scheduler", "sequential", "--out", str(tmp_path / "new")],
                       capture_output=True, text=True, env=env(hide=["torch"]), timeout=300)
    one_line_error(r.returncode, r.stderr, "training a campaign needs torch", "pip install 'levysde[rnn]'")
    assert not (tmp_path / "new").exists()


def test_paper_campaign_status_rounds_to_three_digits(capsys):
    import importlib.util

    from tests.helpers import ROOT

    spec = importlib.util.spec_from_file_location("paper_campaign", ROOT / "examples" / "paper_campaign.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.print_rows([{"run": "diaggate_s47.npz", "started": True, "step": 3, "steps": 3, "records": 2,
                     "loss_ratio": 0.5, "zeta_window_std": float("nan"), "window_masked": 0, "train_s": 0.09}])
    line = capsys.readouterr().out.splitlines()[1]
    assert line.split()[-1] == "0.09" and "n/a" in line and "nan" not in line


def test_a_campaign_retrains_a_finished_run_whose_file_is_gone(tmp_path, capsys):
    pytest.importorskip("torch")
    from levysde.studies.campaign import run_campaign

    kw = dict(labels=["diaggate"], seeds=[47, 83], epochs=1, scheduler="sequential", progress=False)
    for batch in (False, True):
        out = tmp_path / str(batch)
        rows = run_campaign("cpu-quick", out, batch_seeds=batch, **kw)
        (out / "runs" / "diaggate_s83.npz").unlink()
        capsys.readouterr()
        again = run_campaign("cpu-quick", out, batch_seeds=batch, **kw)
        err = capsys.readouterr().err
        assert err.strip() == "diaggate_s83.npz: run file missing, training it again", err
        assert (out / "runs" / "diaggate_s83.npz").exists() and [r["finished"] for r in again] == [True, True]
        assert again[0] == rows[0]
    with pytest.raises(ValueError, match="holds a different campaign .*; use another --out for a different campaign"):
        run_campaign("cpu-quick", tmp_path / "False", **dict(kw, epochs=2))


def test_a_failed_campaign_start_leaves_no_directory(tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("needs a machine without CUDA")
    from levysde.studies.campaign import run_campaign

    (tmp_path / "kept").mkdir()
    for out in (tmp_path / "a" / "b", tmp_path / "kept"):
        with pytest.raises(ValueError, match="CUDA is not available"):
            run_campaign("cpu-quick", out, labels=["diaggate"], seeds=[47], epochs=1, device="cuda",
                         scheduler="sequential", progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"] and not any((tmp_path / "kept").iterdir())

def test_pareto_lags_must_start_below_the_sequence(tmp_path):
    """``--lag-lo`` at or beyond ``--seq-len``: no lag would enter the target (one line, exit 2); in
    Python a ValueError naming lag_lo."""
    import pytest

    pytest.importorskip("torch")
    from levysde.rnn.tasks import build_task
    from levysde.rnn.trainer import TrainConfig
    from tests.helpers import run_cli

    p = run_cli("train", "--task", "lagged", "--seq-len", "2", "--steps", "2", "--out", tmp_path / "r.npz")
    assert p.returncode == 2 and "--lag-lo" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    with pytest.raises(ValueError, match="lag_lo must be below seq_len"):
        TrainConfig(task="lagged", seq_len=8, lag_lo=8, lag_hi=40).validate()
    build_task("lagged", 20, lag_lo=3, lag_hi=40)          # lags beyond T are allowed when some fit


def test_train_out_template_names_the_single_seeds_file(tmp_path):
    """``--out runs/x_{seed}.npz`` (the template of ``--seeds``) with one ``--seed`` writes x_SEED.npz."""
    import pytest

    pytest.importorskip("torch")
    from tests.helpers import run_cli

    p = run_cli("train", "--model", "diaggate", "--task", "lagged", "--seq-len", "20", "--lag-lo", "2",
                "--lag-hi", "10", "--lag-count", "3", "--hidden", "4", "--n-train", "16", "--batch", "8",
                "--steps", "2", "--seed", "3", "--quiet", "--out", tmp_path / "x_{seed}.npz")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "x_3.npz").exists() and not (tmp_path / "x_{seed}.npz").exists()


@pytest.mark.parametrize("script, args, words", [
    ("lam_increments.py", ["--kinds", "bogus"], "--kinds must name"),
    ("gates_power.py", ["--part", "check", "--n", "0"], "--n and --workers must be >= 1"),
])
def test_benchmark_scripts_refuse_bad_options(script, args, words):
    import pathlib
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parent.parent
    p = subprocess.run([sys.executable, str(root / "benchmarks" / script), *args], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2 and words in p.stderr, p.stderr
