"""`levysde phase` through a subprocess: output, JSON contract, exit codes."""
import json
import math
import subprocess
import sys

import pytest

from tests.helpers import run_cli as run


def test_phase_json_done_when_criterion():
    p = run("phase", "--eta-j", "0.5", "1.2", "3", "6", "--json")
    assert p.returncode == 0, p.stderr
    recs = json.loads(p.stdout)
    assert [r["phase"] for r in recs] == ["collapsed", "concentrated", "broad", "broad"]
    assert recs[0]["beta"] is None and recs[0]["tail_rate"] == 2.0
    assert abs(recs[2]["beta"] - 0.808357146473768) < 1e-13
    assert abs(recs[2]["eta_j_star"] - 0.96568542494924) < 1e-13
    assert abs(recs[2]["eta_j_critical"] - 2.36008996386890) < 1e-13
    keys = {"eta_j", "eta_g", "kappa", "alpha", "lam", "beta", "phase", "eta_j_star",
            "eta_j_critical", "tail_rate"}
    assert all(set(r) == keys for r in recs)


def test_phase_single_value_is_one_object_and_null_critical_for_small_lam():
    p = run("phase", "--eta-j", "0.8", "--lam", "1", "--kappa", "0.4", "--alpha", "0.6",
            "--eta-g", "0.05", "--json")
    assert p.returncode == 0
    rec = json.loads(p.stdout)
    assert isinstance(rec, dict) and rec["eta_j_critical"] is None and rec["phase"] == "collapsed"


def test_phase_text_table():
    p = run("phase", "--eta-j", "3")
    assert p.returncode == 0
    assert "0.965685424949238" in p.stdout and "2.3600899638689" in p.stdout
    row = [ln.split() for ln in p.stdout.splitlines() if ln.strip().startswith("3.0 ")][0]
    assert abs(float(row[1]) - 0.808357146473768) < 1e-14 and row[2] == "broad"


def test_point_mass_tail_is_null_in_json():
    p = run("phase", "--eta-j", "0", "--eta-g", "0", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["tail_rate"] is None


@pytest.mark.parametrize("args,flag", [
    (["--eta-j", "1", "--alpha", "2.5"], "--alpha"),
    (["--eta-j", "nan"], "--eta-j"),
    (["--eta-j", "abc"], "--eta-j"),
    (["--eta-j", "-1"], "--eta-j"),
    (["--eta-j", "1", "--eta-g", "-0.1"], "--eta-g"),
    (["--eta-j", "1", "--kappa", "0"], "--kappa"),
    (["--eta-j", "1", "--lam", "inf"], "--lam"),
    ([], "--eta-j"),
])
def test_bad_input_one_line_exit_2(args, flag):
    p = run("phase", *args)
    assert p.returncode == 2
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and "Traceback" not in p.stderr


def test_console_script_and_module_agree():
    import pathlib
    import shutil
    exe = pathlib.Path(sys.executable).parent / "levysde"
    exe = str(exe) if exe.exists() else shutil.which("levysde")
    if exe is None:
        pytest.skip("console script not installed")
    a = subprocess.run([exe, "phase", "--eta-j", "2", "--json"], capture_output=True, text=True)
    assert a.returncode == 0 and a.stdout == run("phase", "--eta-j", "2", "--json").stdout


@pytest.mark.parametrize("args,needle", [
    (["phase", "--eta-j", "1", "--lam", "-1E2"], "--lam"),
    (["phase", "--eta-j", "1", "--kappa", "-1e-3"], "--kappa"),
    (["phase", "--eta-j", "-inf"], "--eta-j"),
    (["phase", "--eta-j", "1", "--kappa", "1e-320"], "--kappa"),
    (["--bogus"], "--bogus"),
    ([], "command"),
])
def test_argument_errors_name_the_culprit(args, needle):
    p = run(*args)
    assert p.returncode == 2 and needle in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_mp_near_threshold_does_not_fail():
    # eta_J = eta_J* (1 + 1e-6) with small alpha: beta* within ~1e-60 of lam
    p = run("phase", "--eta-j", "3.176971798096978", "--alpha", "0.1", "--mp", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["beta"] == 2.0


def test_thresholds_at_or_below_zero_say_what_they_mean():
    """eta_J* = lam (kappa - eta_G lam)/Psi_1(lam) <= 0 when kappa/eta_G < lam, and
    eta_J^crit = (kappa - eta_G)/Psi_1(1) <= 0 when eta_G >= kappa (docs/specification.md §4): the
    header says so; a threshold beyond float64 is -inf with its meaning, never 'lam = 0'."""
    p = run("phase", "--eta-j", "3", "--eta-g", "1")
    assert p.returncode == 0
    head = p.stdout.splitlines()[1:3]
    star = float(head[0].split("=")[1].split("(")[0])
    lam, a = 2.0, 1.5
    psi1 = ((2 * lam) ** a - 2 * lam ** a) / (-2 * math.cos(math.pi * a / 2))
    assert star == pytest.approx(lam * (1.0 - 1.0 * lam) / psi1, rel=1e-12)
    assert star < 0 and "Gaussian noise alone" in head[0]
    p = run("phase", "--eta-j", "3", "--eta-g", "1e308")
    assert p.returncode == 0 and "lam = 0" not in p.stdout
    assert "-inf" in p.stdout.splitlines()[1] and "-inf" in p.stdout.splitlines()[2]
