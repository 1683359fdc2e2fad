"""User-facing text speaks to users about the software: no development log in it.

The pages of the documentation site (README.md, docs/*.md, the examples' docstrings, which the
gallery shows, and the docstrings of every public module and object, which the API pages show)
must not carry the project's internal vocabulary: issue numbers, "goal", "reviewer", sessions,
the machines and load averages that produced a number, dated histories. History goes to
CHANGELOG.md (the changelog page), which is the one page not scanned.

The site is built after the tests in CI, so the test reads the sources that produce the HTML.
When a built site (docs/_build/html) is newer than every page source, its HTML is scanned too.
"""
from __future__ import annotations

import ast
import html
import importlib
import inspect
import pathlib
import pkgutil
import re

import pytest

import levysde

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILT = ROOT / "docs" / "_build" / "html"

#: (pattern, what it is); each is matched case-insensitively unless it says (?-i:)
FORBIDDEN = [
    (r"\bissues? #?\d+", "an issue number"),
    (r"\bgoals?\b", "'goal' (say what is measured and the target it meets)"),
    (r"\breviewer'?s?\b", "'reviewer'"),
    (r"\bsessions?\b", "'session'"),
    (r"\bload(?: averages?)?(?: of| at the start)?\s*[≈~=]?\s*\d", "a load average"),
    (r"\bload averages? (?:of |at )", "a load average"),
    (r"(?-i:\bVMs?\b)|\bvirtual machines?\b", "the machine that produced a number"),
    (r"\b(?:development|project'?s?|shared \d+-core)\s+(?:VMs?|machines?|hosts?)\b",
     "the machine that produced a number"),
    (r"\b20\d\d-[01]\d-[0-3]\d\b", "a date (history goes to the changelog)"),
    (r"\b\d\d?:\d\d UTC\b", "a time of day"),
    (r"\b(?:before|since|after) (?:this|the last|the latest|the previous) (?:change|commit|merge)s?\b",
     "a development-log phrase"),
    (r"(?-i:\b(?:TODO|FIXME|XXX)\b)", "a to-do marker"),
]
_RE = [(re.compile(p, re.I), why) for p, why in FORBIDDEN]


def findings(text: str) -> list[str]:
    out = []
    for rx, why in _RE:
        for m in rx.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            out.append(f"line {line}: {m.group(0)!r} ({why})")
    return out


def pages() -> list[pathlib.Path]:
    docs = [p for p in sorted((ROOT / "docs").glob("*.md")) if p.name != "changelog.md"]
    return [ROOT / "README.md", *docs]


def public_docstrings() -> dict[str, str]:
    """Docstrings shown on the API pages: public modules (not the CLI's) and their public names."""
    out: dict[str, str] = {}
    for info in pkgutil.walk_packages(levysde.__path__, "levysde."):
        name = info.name
        if any(part.startswith("_") for part in name.split(".")) or name.startswith("levysde.cli"):
            continue
        try:
            mod = importlib.import_module(name)
        except ImportError as e:      # an optional dependency (torch) that is not installed
            if "torch" in str(e):
                continue
            raise
        out[name] = mod.__doc__ or ""
        for attr in getattr(mod, "__all__", []):
            obj = getattr(mod, attr, None)
            doc = inspect.getdoc(obj) if (callable(obj) or isinstance(obj, type)) else None
            if doc:
                out[f"{name}.{attr}"] = doc
            if isinstance(obj, type):
                for meth, member in vars(obj).items():
                    if not meth.startswith("_") and getattr(member, "__doc__", None):
                        out[f"{name}.{attr}.{meth}"] = inspect.getdoc(member) or ""
    out["levysde"] = levysde.__doc__ or ""
    return out


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.name)
def test_page_has_no_internal_vocabulary(page):
    bad = findings(page.read_text(encoding="utf-8"))
    assert not bad, f"{page.relative_to(ROOT)}:\n" + "\n".join(bad)


def test_examples_docstrings_have_no_internal_vocabulary():
    bad = []
    for script in sorted((ROOT / "examples").glob("*.py")):
        doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
        bad += [f"examples/{script.name} {f}" for f in findings(doc)]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("folder", ["examples", "benchmarks"])
def test_scripts_name_no_issue_numbers(folder):
    """The scripts' help, docstrings and printed text (all of their source) carry no issue numbers."""
    rx = next(rx for rx, why in _RE if why == "an issue number")
    bad = [f"{folder}/{script.name} line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}"
           for script in sorted((ROOT / folder).glob("*.py"))
           for text in [script.read_text(encoding="utf-8")] for m in rx.finditer(text)]
    assert not bad, "\n".join(bad)


def test_api_docstrings_have_no_internal_vocabulary():
    bad = [f"{name} {f}" for name, doc in public_docstrings().items() for f in findings(doc)]
    assert not bad, "\n".join(bad)


def test_built_site_has_no_internal_vocabulary():
    index = BUILT / "index.html"
    sources = [*pages(), *(ROOT / "levysde").rglob("*.py"), *(ROOT / "examples").glob("*.py")]
    if not index.exists() or index.stat().st_mtime < max(p.stat().st_mtime for p in sources):
        pytest.skip("no built site newer than its sources (python docs/build.py builds it)")
    # the pages of this build (searchindex.js lists them; an old build's leftovers are not)
    m = re.search(r'"docnames":\s*\[(.*?)\]', (BUILT / "searchindex.js").read_text(encoding="utf-8"))
    docnames = re.findall(r'"([^"]+)"', m.group(1)) if m else []
    assert docnames, "docs/_build/html/searchindex.js lists no pages"
    bad = []
    for doc in docnames:
        if doc == "changelog":
            continue
        page = BUILT / f"{doc}.html"
        rel = page.relative_to(BUILT).as_posix()
        text = html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8")))
        bad += [f"{rel} {f}" for f in findings(text)]
    assert not bad, "\n".join(bad[:50])


@pytest.mark.parametrize("text, hit", [
    ("as issue 11 asked", True), ("issues #12", True), ("the 2σ goal", True), ("a reviewer found", True),
    ("load average 7.8", True), ("at load ≈ 3.8", True), ("on the 2-core development VM", True),
    ("Measured 2026-12-01", True), ("01:46 UTC", True), ("before this change", True), ("TODO: x", True),
    ("SimulationResult.load(path)", False), ("numpy.load(f)", False), ("default_rng(20260410)", False),
    ("the load of a busy machine", False), ("the issue of identifiability", False), ("todo = []", False),
    ("a 2-core machine", False), ("the target", False), ("Goal-directed", True),
])
def test_word_list(text, hit):
    assert bool(findings(text)) is hit
