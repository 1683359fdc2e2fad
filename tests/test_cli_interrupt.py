"""Ctrl-C (SIGINT) at any point of a ``levysde`` command: exit status 130 and one line
"interrupted" on stderr, no traceback; also while the numeric stack imports (numpy, scipy,
numba and the compiled kernels: the slow part of a start), for both entry points (the console
script and ``python -m levysde``). Library users keep a plain KeyboardInterrupt.

The interrupt is placed deterministically: a ``sitecustomize`` in a temporary directory (test
only) installs an import hook that sends SIGINT to the process when a chosen module is first
looked up, i.e. in the middle of ``import levysde``."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HOOK = textwrap.dedent('''
    import importlib.abc, os, signal, sys

    class _SigintAt(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == os.environ["SIGINT_AT"]:
                sys.meta_path.remove(self)
                os.kill(os.getpid(), signal.SIGINT)
            return None

    sys.meta_path.insert(0, _SigintAt())   # (shadows any sitecustomize of the environment)
''')

#: the file pip writes for [project.scripts] levysde = "levysde.cli:main"
CONSOLE_SCRIPT = "import sys\nfrom levysde.cli import main\nsys.exit(main())\n"


def _env(tmp_path, module):
    (tmp_path / "sitecustomize.py").write_text(HOOK)
    return dict(os.environ, SIGINT_AT=module,
                PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT, os.environ.get("PYTHONPATH", "")]))


def _entry(tmp_path, form):
    if form == "console":
        script = tmp_path / "bin" / "levysde"
        script.parent.mkdir()
        script.write_text(CONSOLE_SCRIPT)
        return [sys.executable, str(script)]
    return [sys.executable, "-m", "levysde"]


def _interrupted(p):
    assert p.returncode == 130, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.strip().endswith("interrupted") and p.stdout == "", p.stderr


#: modules each command imports on its way (the hook fires when one is first looked up)
PHASE_IMPORTS = ["numpy", "scipy.special", "mpmath", "levysde.theory.phases", "levysde.cli.phase"]
SIMULATE_IMPORTS = ["numba", "levysde.simulation._kernels", "levysde.stats.tails"]


@pytest.mark.parametrize("form", ["console", "module"])
@pytest.mark.parametrize("module", PHASE_IMPORTS + SIMULATE_IMPORTS)
def test_sigint_while_the_command_imports(tmp_path, form, module):
    command = (["phase", "--eta-j", "3"] if module in PHASE_IMPORTS else
               ["simulate", "--eta-j", "3", "--particles", "64", "--t-end", "60", "--json"])
    p = subprocess.run([*_entry(tmp_path, form), *command], capture_output=True,
                       text=True, env=_env(tmp_path, module), timeout=300)
    _interrupted(p)


def test_library_import_keeps_keyboard_interrupt(tmp_path):
    """A script that uses levysde: the interrupt is not turned into an exit of the caller."""
    p = subprocess.run([sys.executable, "-c", "import levysde; levysde.classify(3.0)"], capture_output=True,
                       text=True, env=_env(tmp_path, "levysde.theory.phases"), timeout=300)
    assert p.returncode != 130 and "KeyboardInterrupt" in p.stderr, (p.returncode, p.stderr)


def test_sigint_during_a_long_simulation():
    """A real Ctrl-C, 2 s into a run of several minutes (imports done or not: both end the same)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, "-m", "levysde", "simulate", "--eta-j", "3", "--particles",
                          "16384", "--t-end", "50000", "--json"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(2.0)
    p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise
    _interrupted(subprocess.CompletedProcess(p.args, p.returncode, out, err))
    assert err.strip() in ("levysde simulate: interrupted", "levysde: interrupted"), err
