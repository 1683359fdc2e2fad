"""levysde without torch: the package, the CLI help and the ImportError message (no torch needed)."""
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
    """Without torch, levysde.rnn's torch-free parts import; the trainer's names say how to install it."""
    r = _py("""
        import levysde.rnn
        print(levysde.rnn.trivial_loss({"task": "adding", "seq_len": 10}))
        try:
            levysde.rnn.train
        except ImportError as e:
            print(e)
        else:
            raise SystemExit('no ImportError')
    """)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert float(lines[0]) == 2.0 / 12.0                     # Var(v1 + v2), v uniform on [0, 1]
    assert "pip install 'levysde[rnn]'" in lines[1] and "torch==2.13.0" in lines[1]

    # the torch parts of levysde.rnn (and so levysde.rnn.checkpoint) still say how to install torch
    r = _py("""
        try:
            from levysde.rnn.checkpoint import load_checkpoint
        except ImportError as e:
            print(e)
    """)
    assert "pip install 'levysde[rnn]'" in r.stdout, r.stderr
