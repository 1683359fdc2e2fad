"""Build the documentation site in one command (warnings are errors).

    python docs/build.py [--full]

1. Runs every script in examples/ (``--quick`` unless ``--full``): the figures go to
   docs/_static/figures/ (figures are never hand-drawn) and the printed output is kept;
2. writes the examples gallery, docs/_generated/gallery/: one page per example with its
   description (the script's docstring), its command, its figure and its output;
3. draws the figures of the user-guide pages (docs/figures/*.py, from the examples' runs);
4. writes the layer table of the API page, docs/_generated/layers.md, from the source
   (docs/layers.py: the layers, their modules and the imports between them);
5. runs ``sphinx-build -W --keep-going -b html docs docs/_build/html``.

Every script in examples/ must be listed in EXAMPLES (the build fails otherwise), so a new
example always gets a gallery page.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import pathlib
import subprocess
import sys

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
FIG = DOCS / "_static" / "figures"
GALLERY = DOCS / "_generated" / "gallery"
LAYERS = DOCS / "_generated" / "layers.md"

#: example script -> (extra arguments, figure written into docs/_static/figures or None,
#: module the example needs, or None)
EXAMPLES = {
    "theory_check.py": ([], None, None),
    "phase_diagram.py": ([], "phase_diagram.png", None),
    "tail_check.py": ([], "tail_check.png", None),
    "envelope_classes.py": ([], "envelope_classes.png", None),
    "paper_table.py": (["--outdir", "{tmp}/paper_table"], None, "torch"),
    "anticollapse.py": (["--out", "{tmp}/anticollapse"], None, "torch"),
    "paper_campaign.py": (["--out", "{tmp}/paper_campaign"], None, "torch"),
    "learnability_campaign.py": (["--out", "{tmp}/learnability_campaign", "--scheduler", "sequential"], None, "torch"),
    # after learnability_campaign.py (the scripts run in name order), on its directory
    "learnability_table.py": (["{tmp}/learnability_campaign"], None, "torch"),
    "paper_gpu.py": (["--device", "cpu", "--out", "{tmp}/paper_gpu", "--budget-s", "150"], None, "torch"),
    # after paper_campaign.py (name order), on its quick campaign
    "paper_verdict.py": (["--campaign", "{tmp}/paper_campaign"], None, "torch"),
}


def _docstring(script: pathlib.Path) -> tuple[str, list[str], str]:
    """(title, usage lines, description) of an example script's module docstring."""
    doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
    lines = doc.splitlines()
    title = lines[0].strip().rstrip(".") if lines else script.stem
    usage = [ln.strip() for ln in lines[1:] if ln.strip().startswith("python examples/")]
    body = [ln for ln in lines[1:] if not ln.strip().startswith("python examples/")]
    return title, usage, "\n".join(body).strip("\n")


def run_example(script: str, extra: list[str], fig: str | None, full: bool, tmp: pathlib.Path) -> str:
    """Run one example; return what it printed."""
    cmd = [sys.executable, str(ROOT / "examples" / script), *(a.format(tmp=tmp) for a in extra)]
    if fig is not None:
        cmd += ["--out", str(FIG / fig)]
    if not full:
        cmd.append("--quick")
    print("+", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    sys.stderr.write(p.stderr[-4000:])
    if p.returncode != 0:
        raise SystemExit(f"docs/build.py: {script} failed with exit status {p.returncode}")
    return p.stdout


def _clean(text: str, tmp: pathlib.Path) -> str:
    """Printed output without this machine's paths: the repository root and the scratch folder."""
    return text.replace(str(tmp), "OUTDIR").replace(str(ROOT) + "/", "").replace(str(ROOT), ".")


def gallery_page(script: str, fig: str | None, output: str | None, need: str | None, full: bool) -> str:
    """Markdown of one gallery page: description, command, figure with caption, output, code."""
    title, usage, body = _docstring(ROOT / "examples" / script)
    flag = "" if full else " --quick"
    src = f"../../../examples/{script}"
    out = [f"# {script}", "", f"{title}.", "",
           f"{{download}}`Download {script} <{src}>`", "", "## Command", "", "```bash"]
    out += usage or [f"python examples/{script}"]
    out += ["```", "", "## What it shows", "", body.replace("*", "\\*"), ""]
    if fig is not None:
        out += ["## Figure", "", f"```{{figure}} ../../_static/figures/{fig}", f":alt: {title}", ":width: 100%",
                f":target: ../../_static/figures/{fig}", "",
                f"{title}. Drawn by `python examples/{script}{flag}` when this site was built (click for the "
                "full-size image).", "```", ""]
    out += ["## Output", ""]
    if output is None:
        out += [f"Not run when this site was built: the example needs `{need}` (`pip install '.[rnn]'`).", ""]
    else:
        out += [f"Printed by `python examples/{script}{flag}` when this site was built:", "",
                "```{code-block} text", ":class: gallery-output", "", output.rstrip(), "```", ""]
    out += ["## Code", "", f"```{{literalinclude}} {src}", ":language: python", ":linenos:", "```", ""]
    return "\n".join(out)


def gallery_index(entries: list[tuple[str, str, str | None]]) -> str:
    """Markdown of the gallery's index page: every example, with its figure when it draws one."""
    out = ["# Examples gallery", "",
           "Each script in `examples/` runs on its own (`python examples/NAME.py`; `--quick` for a",
           "smaller run). The figures and outputs below were produced by the scripts themselves",
           "when this site was built. Each page shows the script's code and has a download link.", "",
           "```{toctree}", ":hidden:", ""]
    out += [name for name, _, _ in entries]
    out += ["```", ""]
    for name, title, fig in entries:
        out += [f"## [{name}.py]({name}.md)", "", f"{title}: `python examples/{name}.py`", ""]
        if fig is not None:
            out += [f"```{{figure}} ../../_static/figures/{fig}", f":alt: {title}", ":width: 100%",
                    f":target: {name}.html", "", f"{title} ([{name}.py]({name}.md)).", "```", ""]
        else:
            out += ["Prints a table (no figure); its output is on the example's page.", ""]
    return "\n".join(out)


def build_gallery(full: bool) -> None:
    scripts = sorted(p.name for p in (ROOT / "examples").glob("*.py"))
    missing = sorted(set(scripts) - set(EXAMPLES))
    if missing:
        raise SystemExit(f"docs/build.py: add {', '.join(missing)} to EXAMPLES (gallery)")
    FIG.mkdir(parents=True, exist_ok=True)
    GALLERY.mkdir(parents=True, exist_ok=True)
    tmp = DOCS / "_build" / "examples"
    tmp.mkdir(parents=True, exist_ok=True)
    entries = []
    for script in scripts:
        extra, fig, need = EXAMPLES[script]
        runnable = need is None or importlib.util.find_spec(need) is not None
        output = _clean(run_example(script, extra, fig, full, tmp), tmp) if runnable else None
        if not runnable:
            print(f"  {script}: not run ({need} is not installed)", flush=True)
        name = script[:-3]
        (GALLERY / f"{name}.md").write_text(gallery_page(script, fig, output, need, full), encoding="utf-8")
        entries.append((name, _docstring(ROOT / "examples" / script)[0], fig))
    (GALLERY / "index.md").write_text(gallery_index(entries), encoding="utf-8")


#: figures of the user-guide pages drawn by docs/figures/*.py: script -> (arguments, figure);
#: "{runs}" is the folder of the runs that examples/anticollapse.py trained for the gallery
FIGURES = {
    "calibration_coverage.py": ([], "calibration_coverage.png"),
    "results_spectra.py": (["{runs}"], "results_spectra.png"),
}


def draw_figures(tmp: pathlib.Path) -> None:
    """Run docs/figures/*.py (each a few seconds): the figures of the calibration and results pages."""
    scripts = sorted(p.name for p in (DOCS / "figures").glob("*.py"))
    missing = sorted(set(scripts) - set(FIGURES))
    if missing:
        raise SystemExit(f"docs/build.py: add {', '.join(missing)} to FIGURES")
    for script, (extra, fig) in FIGURES.items():
        cmd = [sys.executable, str(DOCS / "figures" / script), *(a.format(runs=tmp / "anticollapse") for a in extra),
               str(FIG / fig)]
        print("+", " ".join(cmd), flush=True)
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if p.returncode != 0:
            sys.stderr.write(p.stderr[-4000:])
            raise SystemExit(f"docs/build.py: docs/figures/{script} failed with exit status {p.returncode}")


def write_layers() -> None:
    """docs/_generated/layers.md: the layer table of docs/layers.py (included by docs/api.md)."""
    p = subprocess.run([sys.executable, str(DOCS / "layers.py")], cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr[-4000:])
        raise SystemExit(f"docs/build.py: docs/layers.py failed with exit status {p.returncode}")
    LAYERS.parent.mkdir(parents=True, exist_ok=True)
    LAYERS.write_text(p.stdout, encoding="utf-8")
    print(f"  wrote {LAYERS.relative_to(ROOT)}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="run the examples at full size")
    args = ap.parse_args()
    build_gallery(args.full)
    draw_figures(DOCS / "_build" / "examples")
    write_layers()
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS),
           str(DOCS / "_build" / "html")]
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main())
