"""The docs site, built offline with `make docs` and checked as a reader would see it: every page in headless Chromium.

Skipped where Chromium or smalldocs (Python >= 3.11) is not installed (`.ci/run` installs Debian's `chromium`). Screenshots of the home page and a
module page are saved to tests/artifacts/.
"""
import importlib.util, json, os, re, shutil, subprocess, sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit, unquote
import pytest
from conftest import ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = ROOT / "tests" / "artifacts"
pytestmark = [pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)"),
              pytest.mark.skipif(importlib.util.find_spec("smalldocs") is None,
                                 reason="smalldocs renders the site and needs Python >= 3.11 (pip install smalldocs)"),
              pytest.mark.xdist_group("docs")]               # one worker for this module, where xdist honours it


class _Page(HTMLParser):
    "The ids, links and embedded images of one HTML page."
    def __init__(self):
        super().__init__(); self.ids, self.links, self.pngs = set(), [], 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a: self.ids.add(a["id"])
        for k in ("href", "src"):
            if a.get(k) and not (tag == "a" and k == "src"): self.links.append(a[k])
        if tag == "img" and (a.get("src") or "").startswith("data:image/png"): self.pngs += 1


def _parse(path:Path) -> _Page:
    p = _Page(); p.feed(path.read_text(errors="replace")); return p


def _build_site() -> Path:
    r = subprocess.run([sys.executable, "tools/build_docs.py"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return ROOT / "_docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    "Build the site once per test run; under `pytest -n`, once for all workers (they would build into `_proc/` together)."
    if "PYTEST_XDIST_WORKER" not in os.environ: return _build_site()
    # pytest 9.2 with pytest-xdist 3.8 ignores the module's xdist_group (pytest-dev/pytest-xdist#1386), so several
    # workers can reach this fixture: xdist's documented pattern, a file lock in the run's shared temporary folder.
    from filelock import FileLock                     # torch's own dependency
    built = tmp_path_factory.getbasetemp().parent / "docs-built"
    with FileLock(f"{built}.lock"):
        if not built.exists(): _build_site(); built.touch()
    return ROOT / "_docs"


def _notebooks():
    nbs = ROOT / "nbs"
    return sorted(p.relative_to(nbs) for p in nbs.rglob("*.ipynb") if not any(s.startswith((".", "_")) for s in p.relative_to(nbs).parts))


def test_every_notebook_has_a_page(site):
    missing = [str(nb) for nb in _notebooks() if not (site / nb.with_suffix(".html")).exists()]
    assert not missing, f"notebooks without a page: {missing}"
    assert (site / "tutorials" / "index.html").exists()


def _hosted() -> str:
    "The hosted site's address (settings.ini's doc_host and doc_baseurl, as nbdev reads them), ending in '/'."
    from nbdev.config import get_config
    c = get_config(path=ROOT)
    return c.doc_host.rstrip("/") + "/" + c.doc_baseurl.strip("/") + "/"


def test_internal_links_resolve(site):
    broken, pages, hosted = [], {p: _parse(p) for p in site.rglob("*.html")}, _hosted()
    for page, parsed in pages.items():
        for link in parsed.links:
            u = urlsplit(link)
            if link.startswith(hosted) and u.path.endswith(".html"):   # the build points every page nbdev makes at its offline copy
                broken.append(f"{page.relative_to(site)} -> {link} (no notebook makes that hosted page)"); continue
            if u.scheme or link.startswith(("//", "mailto:")): continue            # external
            target = page if not u.path else (page.parent / unquote(u.path)).resolve()
            if target.is_dir(): target = target / "index.html"
            if not target.exists(): broken.append(f"{page.relative_to(site)} -> {link}"); continue
            if u.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if u.fragment not in ids: broken.append(f"{page.relative_to(site)} -> {link} (no such anchor)")
    assert not broken, "broken internal links:\n" + "\n".join(broken[:40])


def _shown_outputs(proc_nb:Path) -> tuple[int, int]:
    "Code cells with outputs, and PNG figures among them, that nbdev keeps in a processed notebook."
    nb = json.loads(proc_nb.read_text())
    outs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    return len(outs), sum("image/png" in o.get("data", {}) for o in outs)


def test_pages_show_their_outputs_and_figures(site):
    bad = []
    for nb in _notebooks():
        n_out, n_png = _shown_outputs(ROOT / "_proc" / nb)
        html = (site / nb.with_suffix(".html")).read_text()
        if n_out and "cell-output" not in html: bad.append(f"{nb}: {n_out} outputs, none on the page")
        if _parse(site / nb.with_suffix(".html")).pngs < n_png: bad.append(f"{nb}: fewer than its {n_png} figures on the page")
    assert not bad, "\n".join(bad)
    for nb in ("07_train.ipynb", "experiments/03_evaluation.ipynb", "11_prior.ipynb", "tutorials/01_tour.ipynb"):  # pages that must have figures
        assert _parse(site / Path(nb).with_suffix(".html")).pngs > 0, f"{nb}: page has no figure; were its outputs saved?"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


def _tab(browser):
    "A new tab with network requests refused (the check is offline); returns it and the list its JavaScript errors go to."
    page, errors = browser.new_page(viewport={"width": 1280, "height": 900}), []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.route(re.compile(r"^https?://"), lambda route: route.abort())
    return page, errors


def _open(browser, path:Path):
    "Open a page in a new tab; returns the page and its JavaScript errors."
    page, errors = _tab(browser)
    page.goto(path.as_uri(), wait_until="load")
    return page, errors


def test_every_page_loads_without_javascript_errors(site, browser):
    bad, (page, errors) = [], _tab(browser)                            # one tab, as a reader goes from page to page
    for path in sorted(site.rglob("*.html")):
        errors.clear()
        page.goto(path.as_uri(), wait_until="load")
        title, text = page.title(), page.inner_text("main") if page.locator("main").count() else page.inner_text("body")
        if errors: bad.append(f"{path.relative_to(site)}: JavaScript errors {errors}")
        if not title or len(text.strip()) < 50: bad.append(f"{path.relative_to(site)}: empty page (title {title!r})")
    page.close()
    assert not bad, "\n".join(bad)


def test_kernel_free_sliders_move_the_figure(site, browser):
    checked = 0
    for path in sorted(site.rglob("*.html")):
        if 'type="range"' not in path.read_text(): continue
        page, errors = _open(browser, path)
        for i in range(page.locator("input[type=range]").count()):
            slider = page.locator("input[type=range]").nth(i)
            img = page.locator(f"img#{slider.get_attribute('id').replace('_slider', '_img')}")
            before, last = img.get_attribute("src"), slider.get_attribute("max")
            assert int(last) > 0, f"{path.name}: slider {i} has a single frame"
            slider.fill(last)
            assert img.get_attribute("src") != before, f"{path.name}: moving slider {i} did not change the figure"
            checked += 1
        assert not errors, f"{path.name}: JavaScript errors {errors}"
        page.close()
    assert checked >= 2, f"expected the prior pages' sliders, found {checked}"


def test_maths_is_rendered_offline(site, browser):
    "KaTeX comes with the site: formulas are typeset, not left as TeX."
    page, errors = _open(browser, site / "04_elbo.html")
    page.wait_for_function("document.querySelectorAll('.katex').length > 0", timeout=10_000)
    assert page.locator(".katex").count() > 5 and not errors
    assert "\\tilde" not in page.inner_text("main")                   # no raw TeX left on the page
    page.close()


def test_screenshots(site, browser):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for name, page_path in [("home", "index.html"), ("module", "04_elbo.html"), ("tutorial", "tutorials/01_tour.html")]:
        page, errors = _open(browser, site / page_path)
        page.screenshot(path=str(ARTIFACTS / f"docs_{name}.png"), full_page=False)
        assert (ARTIFACTS / f"docs_{name}.png").stat().st_size > 10_000 and not errors
        page.close()
