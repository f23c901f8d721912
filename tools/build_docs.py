"""`make docs`: the documentation site without Quarto.

nbdev processes the notebooks exactly as `nbdev_docs` would (show_doc blocks, hidden and flagged cells, backtick links;
the sidebar is `nbs/sidebar.yml`, kept by hand in the order data flows) into `_proc/`; then `smalldocs`, a pure-Python
renderer of `_quarto.yml` projects, renders that project into `_docs/`. Where Quarto is installed, `nbdev_docs` builds
the hosted site from the same files (see .github/workflows/deploy.yaml). Pages keep their notebook names here
(`04_elbo.html`); links that nbdev writes to the hosted pages (`https://<doc_host>/<baseurl>/elbo.html#...`) are pointed
at the local pages so the site works offline.
smalldocs loads KaTeX from a CDN; for the offline site the same KaTeX release is taken from the npm registry (`npm
pack`, cached in `.cache/katex/`), copied into `_docs/_vendor/katex/` and the pages are pointed at it, so the maths
renders without a network. The hosted Quarto site keeps Quarto's own maths.
"""
import importlib.util, json, os, re, shutil, subprocess, sys, tarfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _frontmatter(nb:dict) -> tuple[int, str]:
    "Index and text of the notebook's raw YAML frontmatter cell (-1 if none)."
    for i, c in enumerate(nb["cells"]):
        if c["cell_type"] == "raw" and "".join(c["source"]).lstrip().startswith("---"): return i, "".join(c["source"])
    return -1, ""


def _page_map(proc:Path) -> dict:
    "Quarto's output name of each page ('elbo.html') -> the offline page ('04_elbo.html', relative to the site root)."
    pages = {}
    for p in proc.rglob("*.ipynb"):
        _, fm = _frontmatter(json.loads(p.read_text()))
        m = re.search(r"^output-file:\s*(\S+)", fm, re.M)
        rel = p.relative_to(proc).with_suffix(".html").as_posix()
        pages[(p.parent.relative_to(proc) / m[1]).as_posix() if m else rel] = rel
    return pages


def localise(proc:Path, host:str):
    "Point links to the hosted pages at the offline ones and drop `output-file`, which smalldocs does not read."
    pages = _page_map(proc)
    link = re.compile(re.escape(host.rstrip("/")) + r"/([\w/.-]+\.html)")
    for p in proc.rglob("*.ipynb"):
        nb, up = json.loads(p.read_text()), "../" * len(p.relative_to(proc).parts[:-1])
        def fix(m): return up + pages[m[1]] if m[1] in pages else m[0]
        for c in nb["cells"]:
            src = link.sub(fix, "".join(c["source"]))
            for o in c.get("outputs", []):
                for k, v in o.get("data", {}).items():
                    if k in ("text/markdown", "text/html"): o["data"][k] = link.sub(fix, "".join(v))
            c["source"] = src
        i, fm = _frontmatter(nb)
        if i >= 0: nb["cells"][i]["source"] = re.sub(r"^output-file:.*\n", "", fm, flags=re.M)
        p.write_text(json.dumps(nb, indent=1, ensure_ascii=False))


def vendor_katex(site:Path, cache:Path=ROOT / ".cache" / "katex") -> bool:
    "Copy smalldocs' KaTeX release from the npm registry (cached) into the site and point the pages at it; False if npm failed."
    from smalldocs.layout import KATEX
    version = re.search(r"katex@([\d.]+)", KATEX)[1]
    dist = cache / version / "package" / "dist"
    if not dist.exists():
        (cache / version).mkdir(parents=True, exist_ok=True)
        r = subprocess.run(["npm", "pack", f"katex@{version}", "--pack-destination", str(cache / version)],
                           capture_output=True, text=True) if shutil.which("npm") else None
        if r is None or r.returncode:
            print(f"docs: KaTeX {version} could not be fetched with npm; the maths renders only online", file=sys.stderr)
            return False
        with tarfile.open(cache / version / f"katex-{version}.tgz") as t: t.extractall(cache / version, filter="data")
    shutil.copytree(dist, site / "_vendor" / "katex", dirs_exist_ok=True)
    for page in site.rglob("*.html"):
        text = page.read_text()
        if KATEX in text: page.write_text(text.replace(KATEX, os.path.relpath(site / "_vendor" / "katex", page.parent)))
    return True


# Quarto settings that smalldocs does not act on and that do not change the html site: expected, not errors.
BENIGN = ("format commonmark is not built", "format.html.keep-md is ignored")


def build(out:Path=ROOT / "_docs", strict:bool=True) -> Path:
    "Process the notebooks with nbdev and render the site with smalldocs into `out`; returns `out`."
    from nbdev.config import get_config
    from nbdev.serve import proc_nbs
    if importlib.util.find_spec("smalldocs") is None:
        raise SystemExit("make docs: smalldocs is not installed (it needs Python >= 3.11): pip install smalldocs, or nbdev_docs with Quarto")
    cfg = get_config()
    proc = Path(proc_nbs(force=True))
    localise(proc, cfg.doc_host + cfg.doc_baseurl)
    r = subprocess.run([str(Path(sys.executable).parent / "smalldocs"), "render", "--quiet", str(proc)], capture_output=True, text=True)
    warnings = [l for l in (r.stdout + r.stderr).splitlines() if l.strip() and not any(b in l for b in BENIGN)]
    if r.returncode or (strict and warnings): raise SystemExit("smalldocs: the site has problems:\n" + "\n".join(warnings))
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.move(str(proc / "_docs"), tmp)
    vendor_katex(tmp)
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    return out


if __name__ == "__main__":          # proc_nbs spawns worker processes: keep the guard
    t = time.time()
    os.chdir(ROOT)
    site = build()
    print(f"docs: {len(list(site.rglob('*.html')))} pages in {site.relative_to(ROOT)}/ ({time.time() - t:.0f} s); open {site / 'index.html'}")
