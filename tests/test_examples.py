"""Every example runs in its --quick mode and prints what it promises."""
import pathlib
import subprocess
import sys

import pytest

EX = pathlib.Path(__file__).resolve().parent.parent / "examples"


def run(name, *args, tmp_path=None):
    return subprocess.run([sys.executable, str(EX / name), "--quick", *args], capture_output=True, text=True,
                          timeout=600)


def test_theory_check():
    p = run("theory_check.py")
    assert p.returncode == 0, p.stderr
    assert "eta_J* = 0.96568542494924" in p.stdout and "max |Phi(beta*)|" in p.stdout


def test_phase_diagram(tmp_path):
    p = run("phase_diagram.py", "--out", str(tmp_path / "pd.png"))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "pd.png").stat().st_size > 10_000


def test_envelope_classes(tmp_path):
    p = run("envelope_classes.py", "--out", str(tmp_path / "ec.png"))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert "class exponential" in lines[0] and "class polynomial" in lines[2] and "class logarithmic" in lines[4]


@pytest.mark.slow
def test_tail_check(tmp_path):
    p = run("tail_check.py", "--out", str(tmp_path / "tc.png"))
    assert p.returncode == 0, p.stderr
    assert "collapsed: tempered fit" in p.stdout and "broad: beta_hat" in p.stdout


def test_paper_table_quick(tmp_path):
    pytest.importorskip("torch")
    p = subprocess.run([sys.executable, str(EX / "paper_table.py"), "--quick", "--outdir", str(tmp_path),
                        "--json", str(tmp_path / "t.json")], capture_output=True, text=True, timeout=1200)
    assert p.returncode == 0, p.stderr[-2000:]
    import json

    rows = json.loads((tmp_path / "t.json").read_text())["rows"]
    assert [r["model"] for r in rows[::2]] == ["constgate", "sharedgate", "diaggate", "gru", "lstm"]
    shared = rows[2]
    assert shared["zeta_std"] < 1e-9            # SharedGate: one zeta for all neurons, by construction
    assert rows[4]["zeta_std"] > 0.05           # DiagGate spreads
