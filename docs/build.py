"""Build the documentation site in one command (warnings are errors).

    python docs/build.py [--full]

1. Runs the examples (``--quick`` unless ``--full``) to generate the figures the
   pages show, into docs/_static/figures/ (figures are never hand-drawn);
2. runs ``sphinx-build -W --keep-going -b html docs docs/_build/html``.
"""
from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
FIG = DOCS / "_static" / "figures"

#: (example script, extra arguments, figure file written into docs/_static/figures)
FIGURES = [
    ("phase_diagram.py", [], "phase_diagram.png"),
    ("tail_check.py", [], "tail_check.png"),
    ("envelope_classes.py", [], "envelope_classes.png"),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="run the examples at full size")
    args = ap.parse_args()
    FIG.mkdir(parents=True, exist_ok=True)
    for script, extra, fig in FIGURES:
        cmd = [sys.executable, str(ROOT / "examples" / script), *extra, "--out", str(FIG / fig)]
        if not args.full:
            cmd.append("--quick")
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, cwd=ROOT)
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS),
           str(DOCS / "_build" / "html")]
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main())
