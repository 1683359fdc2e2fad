"""levysde without torch: the package, the CLI help and the ImportError message (no torch needed)."""
import os
import subprocess
import sys
import textwrap

#: torch made uninstallable the way a machine without it behaves: importing it raises
#: ModuleNotFoundError and sys.modules has no 'torch' entry. (``sys.modules['torch'] = None``
#: would leave an entry that scipy's array-API helpers read as the torch module and crash on.)
BLOCK = textwrap.dedent("""
    import sys
    class _NoTorch:
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    sys.meta_path.insert(0, _NoTorch())
""")


def _py(code):
    return subprocess.run([sys.executable, "-c", BLOCK + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120)


def test_import_levysde_without_torch():
    r = _py("""
        import levysde
        assert 'torch' not in [k for k, v in sys.modules.items() if v is not None]
        print(levysde.classify(3.0).phase)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "broad"


def test_rnn_subpackage_says_how_to_install():
    r = _py("""
        try:
            import levysde.rnn
        except ImportError as e:
            print(e)
        else:
            raise SystemExit('no ImportError')
    """)
    assert r.returncode == 0, r.stderr
    assert "pip install 'levysde[rnn]'" in r.stdout and "torch==2.13.0" in r.stdout


def test_cli_help_and_train_without_torch(tmp_path):
    r = _py("""
        from levysde.cli import main
        try:
            main(['--help'])
        except SystemExit as e:
            assert e.code == 0
    """)
    assert r.returncode == 0, r.stderr
    assert "train" in r.stdout
    r = _py(f"""
        from levysde.cli import main
        main(['train', '--out', {str(tmp_path / 'x.npz')!r}])
    """)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'levysde[rnn]'" in lines[0]
    assert not os.path.exists(tmp_path / "x.npz")


def test_run_file_reader_without_torch(tmp_path):
    """docs/rnn.md names load_run as the config parser: it needs numpy only."""
    path = str(tmp_path / "run.npz")
    r = _py(f"""
        import numpy as np
        from levysde.io.runfile import load_run, save_run
        arrays = dict(zeta=np.zeros((2, 3)), zeta_jac=np.zeros((2, 3)), step=np.array([0, 5]),
                      Lambda=np.ones((2, 3)), loss=np.ones(2), lags=np.array([1.0, 2.0]),
                      envelope=np.ones((2, 2)))
        save_run({path!r}, arrays, {{"kind": "rnn", "model": "diaggate"}})
        d = load_run({path!r})
        assert d["config"]["model"] == "diaggate" and d["step"].tolist() == [0, 5]
        import stat, os
        assert 'torch' not in [k for k, v in sys.modules.items() if v is not None]
        print("ok")
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
    # the torch parts of levysde.rnn (and so levysde.rnn.checkpoint) still say how to install torch
    r = _py("""
        try:
            from levysde.rnn.checkpoint import load_checkpoint
        except ImportError as e:
            print(e)
    """)
    assert "pip install 'levysde[rnn]'" in r.stdout, r.stderr
