"""levysde without its optional extras (pyproject.toml: ``[plot]`` matplotlib, ``[sweep]``
dask[distributed], ``[progress]`` tqdm; levysde/core/extras.py): the core and the CLI work, a
feature that needs a missing extra says which one in one line (the CLI: on stderr, exit status
2, before any work is done), and progress bars are simply off. Each missing extra is simulated
in a fresh interpreter that cannot import it (tests/helpers.py, ``hide=``)."""
import importlib.util
import json
import textwrap

import pytest

from levysde.core.extras import EXTRAS, MissingExtraError, install_hint, require
from tests.helpers import ROOT, one_line_error, run_cli, run_python

#: every optional module of the three extras
OPTIONAL = ("matplotlib", "dask", "distributed", "tqdm")


def _py(code, hide):
    return run_python(textwrap.dedent(code), hide=hide, timeout=300)


def test_the_hidden_modules_cannot_be_imported():
    """The test hook itself: a hidden module is missing, as on a machine without it."""
    r = _py("""
        import sys
        try:
            import matplotlib.pyplot
        except ModuleNotFoundError as exc:
            print(exc.name, "matplotlib" in sys.modules)
    """, hide=["matplotlib"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["matplotlib", "False"]


def test_package_and_phase_work_without_any_extra():
    p = run_cli("phase", "--eta-j", "3", "--json", hide=OPTIONAL, timeout=300)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["phase"] == "broad"
    r = _py("""
        import sys
        import levysde, levysde.cli, levysde.plotting, levysde.studies
        print(levysde.classify(3.0).phase)
        print(sorted(m for m in ("matplotlib", "dask", "distributed", "tqdm") if m in sys.modules))
    """, hide=OPTIONAL)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["broad", "[]"]


@pytest.mark.parametrize("args, flag", [
    (["simulate", "--eta-j", "3", "--out", "run.npz", "--plot", "sim.png"], "--plot"),
    (["envelope", "--eta-j", "3", "--plot", "env.png"], "--plot"),
    (["check", "run.npz", "--plot", "check.png"], "--plot"),
    (["diagram", "--resolution", "8", "6", "--out", "d.png"], "--out"),
])
def test_figure_outputs_without_matplotlib_fail_first(tmp_path, args, flag):
    """One line naming [plot], exit 2, and nothing done: simulate would write run.npz (after a
    simulation of about a minute) before drawing; check would first read the missing run."""
    p = run_cli(*args, cwd=tmp_path, hide=["matplotlib"], timeout=300)
    one_line_error(p.returncode, p.stderr, f"levysde {args[0]}: error: argument {flag}: a figure needs matplotlib, "
                   "which is not installed: pip install 'levysde[plot]'")
    assert p.stdout == "" and not list(tmp_path.iterdir())


def test_diagram_simulate_without_dask_fails_first(tmp_path):
    p = run_cli("diagram", "--simulate", "--resolution", "8", "6", "--out", "d.png", cwd=tmp_path,
                hide=["dask", "distributed"], timeout=300)
    one_line_error(p.returncode, p.stderr, "levysde diagram: error: argument --simulate: the local Dask scheduler "
                   "needs distributed, which is not installed: pip install 'levysde[sweep]'")
    assert p.stdout == "" and not list(tmp_path.iterdir())


def test_library_says_which_extra_is_missing():
    r = _py("""
        from levysde.core.extras import MissingExtraError
        from levysde.plotting import plot_phase_diagram
        from levysde.studies import phase_diagram, run_sweep

        d = phase_diagram(nx=4, ny=3)
        for f in (lambda: plot_phase_diagram(d), lambda: run_sweep(lambda p, s: {}, [{}], scheduler="local")):
            try:
                f()
            except MissingExtraError as exc:      # an ImportError
                assert isinstance(exc, ImportError)
                print(exc)
        # the sequential scheduler needs no Dask
        print(run_sweep(lambda p, s: {"seed": s}, [{}, {}], scheduler="sequential", progress=True))
    """, hide=OPTIONAL)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "levysde.plotting needs matplotlib, which is not installed: pip install 'levysde[plot]'"
    assert lines[1] == ("run_sweep with scheduler='local' needs distributed, which is not installed: "
                        "pip install 'levysde[sweep]'")
    assert lines[2].startswith("[{'seed': ") and r.stderr == ""


def test_progress_bars_are_off_without_tqdm():
    r = _py("""
        from levysde.simulation import simulate
        res = simulate(3.0, particles=16, n_groups=2, t_end=0.5, burn_in=0.1, progress=True)
        print(res.hist_counts.shape[0])
    """, hide=["tqdm"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "2" and r.stderr == ""


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch (the [rnn] extra)")
def test_training_progress_is_off_without_tqdm():
    r = _py("""
        from levysde.rnn.trainer import TrainConfig, train
        cfg = TrainConfig(model="diaggate", steps=2, hidden=4, task="delay", delay=3, seq_len=12, batch=4,
                          record_every=1)
        print(len(train(cfg, progress=True)["step"]))
    """, hide=["tqdm"])
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.strip()) >= 2 and r.stderr == ""


def test_install_hint_and_require(monkeypatch):
    assert install_hint("matplotlib.backend_bases", "a figure") == \
        "a figure needs matplotlib, which is not installed: pip install 'levysde[plot]'"
    broken = ModuleNotFoundError("No module named 'kiwisolver'", name="kiwisolver")
    assert install_hint("matplotlib", "a figure", broken) == \
        "a figure needs matplotlib, which fails to import (No module named 'kiwisolver'): pip install 'levysde[plot]'"
    assert require("json", "x") is json
    monkeypatch.setitem(EXTRAS, "no_such_module_levysde", "progress")
    with pytest.raises(MissingExtraError) as exc:
        require("no_such_module_levysde.sub", "x")
    assert str(exc.value) == "x needs no_such_module_levysde, which is not installed: pip install 'levysde[progress]'"
    assert isinstance(exc.value, ImportError) and exc.value.name == "no_such_module_levysde"


def test_the_extras_install_what_the_messages_name():
    """Each module of EXTRAS is in the extra of pyproject.toml that its message names."""
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for module, extra in EXTRAS.items():
        reqs = " ".join(extras[extra]).replace("dask[distributed]", "dask distributed")
        assert module in reqs, (module, extra, extras[extra])
    assert set(extras["all"][0].split("[")[1].rstrip("]").split(",")) == {"plot", "sweep", "progress"}
    for need in ("plot", "sweep", "progress"):
        assert any("levysde[" in r and need in r for r in extras["test"]), need    # the suite tests them all
    assert any("levysde[" in r and "plot" in r for r in extras["docs"])          # the examples draw figures
    assert not set(OPTIONAL) & {r.split(">")[0].split("[")[0] for r in
                                tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]}
