"""The documentation site builds with warnings as errors, has an API page for every public module, and
renders without stray markup or resources from other hosts (what tools/screenshot-docs showed)."""
from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from support.paths import subprocess_env

import pydp_core

ROOT = Path(__file__).resolve().parents[2]
PUBLIC_MODULES = [
    "pydp_core", "pydp_core.noise", "pydp_core.calibration", "pydp_core.random", "pydp_core.mechanisms",
    "pydp_core.release", "pydp_core.accounting", "pydp_core.accounting.gdp", "pydp_core.accounting.rao",
    "pydp_core.accounting.guarantees", "pydp_core.accounting.conversions", "pydp_core.manifolds", "pydp_core.io",
    "pydp_core.io.spark", "pydp_core.io.dask", "pydp_core.spark", "pydp_core.dask", "pydp_core.special", "pydp_core.cli",
    "pydp_core.aggregation", "pydp_core.session", "pydp_core.adapters", "pydp_core.adapters.dp_accounting",
    "pydp_core.adapters.jax_privacy", "pydp_core.adapters.opacus",
]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "html"
    res = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(ROOT / "docs"), str(out)],
        capture_output=True, text=True, timeout=900, env=subprocess_env(),
    )
    assert res.returncode == 0, res.stderr[-6000:]
    return out


def _pages(site: Path) -> list[Path]:
    skip = ("_modules", "_static", "_sources", "genindex", "search", "py-modindex")
    return [p for p in sorted(site.rglob("*.html")) if not any(s in p.relative_to(site).as_posix() for s in skip)]


PAGES = ["index", "install", "getting-started", "cli", "tutorials/etl", "tutorials/library-authors",
         "tutorials/researchers", "calibration", "accounting", "pld", "study-subbotin", "noise", "random",
         "release", "manifolds", "io", "aggregate", "cpp", "references", "api/index"]


def _top_level_modules() -> list[str]:
    """Every public module directly under pydp_core (a new one needs its page in docs/api/)."""
    import pkgutil

    return [f"pydp_core.{m.name}" for m in pkgutil.iter_modules(pydp_core.__path__) if not m.name.startswith("_")]


def test_sphinx_build_is_clean_and_complete(site):
    for mod in dict.fromkeys(PUBLIC_MODULES + _top_level_modules()):
        page = site / "api" / f"{mod}.html"
        assert page.is_file(), f"no API page for {mod}"
        assert f"{mod}" in page.read_text(encoding="utf-8")
    for name in PAGES:
        assert (site / f"{name}.html").is_file(), f"no page {name}"
    # The theme is furo and MathJax is served from the site itself.
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "furo" in index
    assert (site / "_static" / "tex-svg.js").stat().st_size > 100_000


def test_tutorials_show_the_output_of_their_code(site):
    """Each tutorial's code ran at build time: the outputs under the code are on the page."""
    for name in ("tutorials/etl", "tutorials/library-authors", "tutorials/researchers", "getting-started"):
        text = (site / f"{name}.html").read_text(encoding="utf-8")
        assert text.count('class="run-output') >= 2, name
    etl = (site / "tutorials" / "etl.html").read_text(encoding="utf-8")
    # The aggregate path: the released table (its groups) and its report.
    outputs = re.findall(r'<div class="run-output-box[^"]*">(.*?)</div>\s*</div>\s*</div>', etl, flags=re.S)
    assert any("Lyon" in o for o in outputs) and any("epsilon" in o for o in outputs), outputs
    # The researchers' figure is the command's own output, embedded in the page.
    assert 'class="run-figure"' in (site / "tutorials" / "researchers.html").read_text(encoding="utf-8")


def test_proof_pages_use_rendered_mathematics(site):
    for name, least in (("calibration", 20), ("release", 50), ("aggregate", 300), ("io", 20), ("manifolds", 60)):
        text = (site / f"{name}.html").read_text(encoding="utf-8")
        assert text.count('class="math') >= least, name
        assert 'src="_static/tex-svg.js"' in text, name
    # The guarantees are numbered statements with their proofs.
    aggregate = (site / "aggregate.html").read_text(encoding="utf-8")
    assert "Theorem 10 (composition of the release)" in aggregate
    assert "Proposition 1 (ledger invariant)" in (site / "io.html").read_text(encoding="utf-8")
    assert "Proposition 4 (the certificate is sound)" in (site / "manifolds.html").read_text(encoding="utf-8")


def test_cli_reference_lists_every_command_and_option(site):
    from pydp_core.cli import COMMANDS, build_parser

    text = (site / "cli.html").read_text(encoding="utf-8")
    for name in COMMANDS:
        assert f'id="command-{name}"' in text, name
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, cmd in sub.choices.items():
        for action in cmd._actions:
            for flag in action.option_strings:
                if flag in ("-h", "--help") or action.help == "==SUPPRESS==":
                    continue
                assert flag in text, (name, flag)
    # The JSON format of compose is shown, not referred back to compose --help.
    assert "discrete_gaussian" in text and "see `pydp-core compose --help`" not in text


class _Text(HTMLParser):
    """The page's prose: text outside code, preformatted blocks, scripts and styles."""

    SKIP = {"code", "pre", "script", "style", "textarea"}

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.prose: list[str] = []
        self.remote: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.depth += 1
        attr = dict(attrs)
        if (tag == "script" and attr.get("src")) or (tag == "link" and attr.get("rel") == "stylesheet"):
            url = attr.get("src") or attr.get("href") or ""
            if re.match(r"^(https?:)?//", url):
                self.remote.append(url)

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if not self.depth:
            self.prose.append(data)


def test_pages_show_no_raw_markup_and_load_nothing_from_other_hosts(site):
    """A backtick in the prose is a code span that did not close (a line wrapped into `- ` or `> `
    starts a list or a quote; a `|` inside a table's code splits the cell); the site works offline."""
    problems = []
    for page in _pages(site):
        parser = _Text()
        parser.feed(page.read_text(encoding="utf-8"))
        name = page.relative_to(site).as_posix()
        problems += [f"{name}: stray backtick in {t.strip()[:80]!r}" for t in parser.prose if "`" in t]
        problems += [f"{name}: loads {url}" for url in parser.remote]
    assert not problems, "\n".join(problems)


def test_top_level_page_links_every_exported_name(site):
    """The names load lazily (PEP 562), so docs/conf.py lists them on the pydp_core page, each linked to
    the subpackage page that documents it."""
    text = (site / "api" / "pydp_core.html").read_text(encoding="utf-8")
    for name, module in pydp_core._EXPORTS.items():
        if module == "pydp_core._paths":
            assert f'id="pydp_core.{name}"' in text, name
        else:
            assert f'href="{module}.html#{module}.{name}"' in text, name
