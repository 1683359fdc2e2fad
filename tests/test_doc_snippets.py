"""Every code snippet in README.md and docs/*.md runs, and the numbers it prints are checked.

Conventions for the Markdown sources (also stated in docs/index.md, "Tested snippets"):

* ```python blocks run in page order in ONE Python process per page (a shared namespace,
  like a notebook), in a fresh temporary directory, with the repository on PYTHONPATH.
  A statement ending in ``# -> EXPECTED`` is checked: what it prints must match EXPECTED (a
  bare expression, e.g. ``r.phase  # -> [...]``, is printed with ``print()`` first).
* ```bash / ```sh / ```shell blocks run as one bash script each (``set -e -o pipefail``) in
  the same directory; ``levysde`` means ``python -m levysde`` with this interpreter.
  Long commands run in a quick form: the arguments in :data:`QUICK` replace those flags in
  every ``levysde SUBCOMMAND`` call of a bash block, or are appended (levysde refuses a flag
  given twice), and ``python examples/NAME.py`` gets ``--quick``. Only the exit status is checked.
* ```console blocks are transcripts: a line ``$ COMMAND`` (``\\`` continues it) runs the
  command exactly as written (no quick form); the lines up to the next ``$`` line are its
  expected standard output.
* Matching expected output: runs of whitespace match any whitespace; ``...`` matches any
  text (also across lines); a number matches when it agrees to the digits written
  (``0.8084`` matches 0.80836, i.e. half a unit of the last digit; ``1.7291...`` is
  truncated: one unit); ``nan``/``inf`` match themselves.
* An HTML comment ``<!-- snippet: skip REASON -->`` on the line(s) right before a fence skips
  that block (REASON is required: e.g. a GPU, minutes of run time, or set-up commands).
  A block with ``pip install`` or ``-m venv`` is set-up and MUST carry a skip marker (the
  README's two set-up commands are run by CI on a clean clone instead).
* Other fences (```text, ```output, bare ```, ```{directive}) are not executed.
"""
from __future__ import annotations

import json
import math
import os
import pathlib
import re
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN_LANGS = {"python", "bash", "sh", "shell", "console"}
SETUP = re.compile(r"\bpip install\b|-m venv\b")
MARKER = re.compile(r"<!--\s*snippet:\s*(\w+)\s*(.*?)\s*-->")
TIMEOUT = 300  # seconds per page

#: quick form of long commands in bash blocks: arguments appended to ``levysde SUBCOMMAND``.
QUICK = {
    "simulate": ["--particles", "2048", "--t-end", "60", "--burn-in", "10"],
    "train": ["--steps", "40", "--hidden", "16", "--seq-len", "30", "--record-every", "2", "--quiet"],
    "check": ["--n-boot", "20", "--no-simulate"],
    "diagram": ["--resolution", "60", "60"],
}
#: the quick form of ``levysde train --lags fixed`` (its fixed lags reach 256: the sequence must be longer)
QUICK_TRAIN_FIXED = ["--steps", "40", "--hidden", "16", "--seq-len", "260", "--record-every", "2", "--quiet"]
#: extra quick arguments for ``levysde diagram --simulate``
QUICK_DIAGRAM_SIMULATE = ["--quick", "--sim-grid", "2", "2", "--workers", "1"]


# --------------------------------------------------------------------------- parsing
class Block:
    def __init__(self, page, line, lang, text, marker):
        self.page, self.line, self.lang, self.text, self.marker = page, line, lang, text, marker

    @property
    def where(self):
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: pathlib.Path) -> list[Block]:
    """Fenced code blocks of a Markdown page with the snippet marker right before each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)", lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = len(m.group(1)), m.group(2), m.group(3).lower()
        j = i + 1
        while j < len(lines) and not re.match(rf"^\s*{re.escape(fence)}\s*$", lines[j]):
            j += 1
        body = "\n".join(ln[indent:] if ln[:indent].strip() == "" else ln for ln in lines[i + 1:j])
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mk = MARKER.search(lines[k]) if k >= 0 else None
        out.append(Block(page, i + 1, lang, body, (mk.group(1), mk.group(2)) if mk else None))
        i = j + 1
    return out


def runnable(page):
    return [b for b in blocks(page) if b.lang in RUN_LANGS]


# --------------------------------------------------------------------------- matching
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_TOKEN = re.compile(rf"(?P<dots>\.\.\.|…)|(?P<num>(?<![\w.]){_NUM}(?P<trunc>\.\.\.|…)?(?![\w]))"
                    rf"|(?P<naninf>(?<![\w])(?:nan|inf)(?![\w]))|(?P<ws>\s+)|(?P<lit>.)", re.S)
_ACTUAL_NUM = rf"({_NUM}|nan|inf)"


def _tolerance(text: str, truncated: bool) -> float:
    mant, _, exp = text.lower().partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    unit = 10.0 ** (int(exp or 0) - decimals)
    return unit if truncated else 0.5 * unit


def output_matches(expected: str, actual: str) -> tuple[bool, str]:
    """Match printed output against the documented text (rules in the module docstring)."""
    pattern, numbers = [], []
    for m in _TOKEN.finditer(expected.strip()):
        if m.group("dots"):
            pattern.append(r".*?")
        elif m.group("num"):
            txt = m.group("num")[: len(m.group("num")) - len(m.group("trunc") or "")]
            numbers.append((txt, _tolerance(txt, bool(m.group("trunc")))))
            pattern.append(_ACTUAL_NUM)
        elif m.group("naninf"):
            numbers.append((m.group("naninf"), 0.0))
            pattern.append(_ACTUAL_NUM)
        elif m.group("ws"):
            pattern.append(r"\s+")
        else:
            c = m.group("lit")
            pattern.append(re.escape(c) + (r"\s*" if c in "[](){},:=" else ""))
    regex = "".join(pattern).replace(r"\s*\s+", r"\s+")
    found = re.fullmatch(r"\s*" + regex + r"\s*", actual, re.S)
    if not found:
        return False, "text differs"
    for (want, tol), got in zip(numbers, found.groups(), strict=True):
        w, g = float(want), float(got)
        if math.isnan(w) or math.isnan(g):
            ok = math.isnan(w) and math.isnan(g)
        elif math.isinf(w) or math.isinf(g):
            ok = w == g
        else:
            ok = abs(g - w) <= tol * (1 + 1e-9) + 1e-300
        if not ok:
            return False, f"number {got} printed where the docs say {want} (tolerance {tol:g})"
    return True, ""


# --------------------------------------------------------------------------- running
_WORKER = r"""
import ast, contextlib, io, json, os, re, sys, traceback
proto = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)                      # stray C-level output cannot corrupt the protocol
ns = {"__name__": "__main__"}
CHECK = re.compile(r"#\s*->\s?(.*?)\s*$")
for req in sys.stdin:
    req = json.loads(req)
    checks, err = [], None
    try:
        src = req["code"]
        lines = src.splitlines()
        tree = ast.parse(src)
        n_marks = sum(1 for ln in lines if CHECK.search(ln))
        for stmt in tree.body:
            m = CHECK.search(lines[stmt.end_lineno - 1])
            node = stmt
            if m and isinstance(stmt, ast.Expr) and not (isinstance(stmt.value, ast.Call)
                                                        and getattr(stmt.value.func, "id", "") == "print"):
                node = ast.Expr(ast.Call(ast.Name("print", ast.Load()), [stmt.value], []))
                ast.copy_location(node, stmt)
                ast.fix_missing_locations(node)
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                exec(compile(ast.Module([node], []), req["name"], "exec"), ns)
            if m:
                checks.append({"line": stmt.end_lineno, "expected": m.group(1), "got": buf.getvalue()})
        if len(checks) != n_marks:
            err = f"{n_marks - len(checks)} '# ->' marker(s) not at the end of a statement"
    except BaseException:
        err = traceback.format_exc(limit=-3)
    proto.write(json.dumps({"checks": checks, "error": err}) + "\n")
    proto.flush()
"""


def _value_counts() -> dict[str, int]:
    """flag -> number of values it takes, for every flag of the quick forms."""
    counts: dict[str, int] = {}
    for args in [*QUICK.values(), QUICK_DIAGRAM_SIMULATE]:
        flag = None
        for a in args:
            if a.startswith("--"):
                flag = a
                counts[flag] = 0
            else:
                counts[flag] += 1
    return counts


def _bash_preambles() -> tuple[str, str]:
    """bash function definitions: (as written, for console transcripts; quick form, for bash blocks).
    The quick form replaces a quick flag the command already gives (levysde refuses a flag given
    twice) and appends the others."""
    cases = "\n".join(f"    {sub}) extra=({' '.join(args)});;" for sub, args in QUICK.items())
    nval = " ".join(f"[{f}]={n}" for f, n in _value_counts().items())
    return """
levysde() { "$SNIPPET_PY" -m levysde "$@"; }
python() { "$SNIPPET_PY" "$@"; }
python3() { "$SNIPPET_PY" "$@"; }
""", f"""
levysde() {{
  local extra=()
  case "$1" in
{cases}
  esac
  if [[ "$1" == diagram && " $* " == *" --simulate "* ]]; then extra+=({' '.join(QUICK_DIAGRAM_SIMULATE)}); fi
  if [[ "$1" == train && " $* " == *" --lags fixed "* ]]; then extra=({' '.join(QUICK_TRAIN_FIXED)}); fi
  local -A nval=({nval})
  local kept=() skip=0 a
  for a in "$@"; do
    if (( skip > 0 )); then skip=$((skip - 1)); continue; fi
    if [[ -n "${{nval[$a]+x}}" && " ${{extra[*]}} " == *" $a "* ]]; then skip=${{nval[$a]}}; continue; fi
    if [[ "$a" == --*=* && -n "${{nval[${{a%%=*}}]+x}}" && " ${{extra[*]}} " == *" ${{a%%=*}} "* ]]; then continue; fi
    kept+=("$a")
  done
  "$SNIPPET_PY" -m levysde "${{kept[@]}}" "${{extra[@]}}"
}}
python() {{
  if [[ "$1" == examples/*.py ]]; then "$SNIPPET_PY" "$@" --quick; else "$SNIPPET_PY" "$@"; fi
}}
python3() {{ python "$@"; }}
"""


PLAIN_PREAMBLE, QUICK_PREAMBLE = _bash_preambles()


def _console_commands(text: str):
    """(command, expected output) pairs of a ```console transcript."""
    out, cmd, exp = [], None, []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("$ "):
            if cmd is not None:
                out.append((cmd, "\n".join(exp)))
            cmd, exp = ln[2:], []
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1] + " " + lines[i].strip()
        elif cmd is not None:
            exp.append(ln)
        i += 1
    if cmd is not None:
        out.append((cmd, "\n".join(exp)))
    return out


def _run_page(page: pathlib.Path, tmp: pathlib.Path) -> tuple[list[str], list[str]]:
    """Run every runnable block of a page; return (failures, skipped)."""
    for name in ("examples", "benchmarks"):
        (tmp / name).symlink_to(ROOT / name)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               SNIPPET_PY=sys.executable, MPLBACKEND="Agg")
    failures, skipped, worker = [], [], None
    try:
        for b in runnable(page):
            t0 = time.perf_counter()
            if b.marker and b.marker[0] == "skip":
                if not b.marker[1]:
                    failures.append(f"{b.where}: skip marker without a reason")
                skipped.append(f"{b.where}: {b.marker[1]}")
                continue
            if b.marker:
                failures.append(f"{b.where}: unknown snippet marker {b.marker[0]!r}")
                continue
            if SETUP.search(b.text):
                failures.append(f"{b.where}: set-up commands (pip install / venv) need a skip marker")
                continue
            if b.lang == "python":
                if worker is None:
                    worker = subprocess.Popen([sys.executable, "-c", _WORKER], cwd=tmp, env=env, text=True,
                                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                              stderr=subprocess.PIPE)
                worker.stdin.write(json.dumps({"code": b.text, "name": b.where}) + "\n")
                worker.stdin.flush()
                reply = worker.stdout.readline()
                if not reply:
                    failures.append(f"{b.where}: python worker died: {worker.stderr.read()[-2000:]}")
                    worker = None
                    continue
                reply = json.loads(reply)
                if reply["error"]:
                    failures.append(f"{b.where}: {reply['error']}")
                for c in reply["checks"]:
                    ok, why = output_matches(c["expected"], c["got"])
                    if not ok:
                        failures.append(f"{b.where} (+{c['line']}): {why}: expected {c['expected']!r}, "
                                        f"printed {c['got']!r}")
            elif b.lang == "console":
                for cmd, expected in _console_commands(b.text):
                    p = subprocess.run(["bash", "-o", "pipefail", "-c", PLAIN_PREAMBLE + cmd], cwd=tmp,
                                       env=env, capture_output=True, text=True, timeout=TIMEOUT)
                    if p.returncode != 0:
                        failures.append(f"{b.where}: `{cmd}` exit {p.returncode}: {p.stderr[-1500:]}")
                        continue
                    ok, why = output_matches(expected, p.stdout)
                    if not ok:
                        failures.append(f"{b.where}: `{cmd}`: {why}:\n--- docs\n{expected}\n--- printed\n"
                                        f"{p.stdout[-3000:]}")
            else:
                p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", QUICK_PREAMBLE + b.text], cwd=tmp,
                                   env=env, capture_output=True, text=True, timeout=TIMEOUT)
                if p.returncode != 0:
                    failures.append(f"{b.where}: bash block exit {p.returncode}: {p.stderr[-1500:]}")
            print(f"{b.where} ({b.lang}): {time.perf_counter() - t0:.1f} s")
    finally:
        if worker is not None:
            worker.stdin.close()
            worker.wait(timeout=60)
    return failures, skipped


# --------------------------------------------------------------------------- tests
@pytest.mark.parametrize("page", [p for p in PAGES if runnable(p)], ids=lambda p: p.name)
def test_page_snippets(page, tmp_path):
    failures, skipped = _run_page(page, tmp_path)
    for s in skipped:
        print("skipped block", s)
    assert not failures, "\n\n".join(failures)


def test_pages_have_checked_snippets():
    """The runner sees the README's library example and its expected numbers."""
    readme = runnable(ROOT / "README.md")
    py = [b for b in readme if b.lang == "python"]
    assert py and sum(b.text.count("# ->") for b in py) >= 4
    setup = [b for b in readme if SETUP.search(b.text)]
    assert setup and all(b.marker and b.marker[0] == "skip" for b in setup)


@pytest.mark.parametrize("expected, actual, ok", [
    ("0.8084", "0.808357146", True),             # half a unit of the last written digit
    ("0.8084", "0.80846", False),
    ("1.7291...", "1.72913775", True),           # truncated
    ("1.7291...", "1.72925", False),
    ("[nan 1.72913775 0.80835715]", "[       nan 1.72913775 0.80835715]", True),
    ("[nan 1.72913775]", "[1.0 1.72913775]", False),
    ("['collapsed' 'broad']", "['collapsed' 'broad']", True),
    ("['collapsed' 'broad']", "['collapsed' 'concentrated']", False),
    ("eta_J* = 0.965685\n...\nbeta* = 0.81", "eta_J* = 0.96568542\nmore\nlines\nbeta* = 0.8084", True),
    ("1.2e-3", "0.00124", True),
    ("1.2e-3", "0.00126", False),
    ("486409 excursions", "486409 excursions", True),
    ("486409 excursions", "486410 excursions", False),
])
def test_output_matching(expected, actual, ok):
    assert output_matches(expected, actual)[0] is ok
