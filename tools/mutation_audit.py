"""Can the tests fail? Plant each bug of `tools/mutants.json` in a notebook and check that its tests catch it.

Each mutant replaces one exact piece of a notebook's code (it must occur once among the code cells), exports the
notebook into the package, and runs that notebook's tests (`nbdev_test --path`) and the pytest files the mutant names
under `pytest`, in a clone of the committed tree, so the working tree is never touched. The clone comes first on
PYTHONPATH, so the bug is in whatever imports the module: the notebook's later cells, the pytest files, and the
processes they start (the CLIs, `run_local`'s ranks). A mutant the tests pass "survived": a bug they cannot see.
Mutants marked `equivalent` change no behaviour (their reason says why); their survival is expected. Writes a JSON
record and prints one line per mutant.

    python tools/mutation_audit.py [--only NOTEBOOK ...] [--out bench/results/mutation_audit_cpu.json]

About 68 minutes for the 209 mutants of the recorded run on two CPU cores, 19 more for the next 25, and 84 for the 167
added after them on 2026-11-27 (run in eight parts, at times two at once), and 160 minutes for the 151 of 2026-11-27 to
28 (eight parts, two at once), 83 for the 97 of 2026-11-28 (five parts), and about 95 for the 149 of its second session
(nine parts, two at once), and 33 for the 32 of its third (three parts, two at once), 7 for 11 more and 12 for 22 more
(two parts each), and 42 for the 119 of its fourth (fifteen parts, at times two at once), and 4 for the 37 of its fifth
(three parts, two at once) and 55 for its 32 more (five parts, at most two at once), and 14 for the 17 of its sixth, on
the SIGTERM path (five parts, two at once), and 3 for the 6 of its seventh with the 8 it rewrote (four parts, two at
once), and 1 for the 4 of its eighth with the 4 it rewrote (one part) and 2 for its 2 more and 1 rewritten (one part)
and 2 for 1 more and 2 rewritten (one part) and 1 for 1 more and 1 for 1 more with 2 rewritten and 7 for 8 more and 1
rewritten and 1 for 1 more (each one part), and 62 for the 43 of its tenth with the 16 it rewrote (nine parts, at most
two at once; 2 removed with the redundant checks they mutated), and 19 for the 6 of 2026-11-29 with the 1 it rewrote
(one part, beside two reviews) and 15 for its 13 more (two parts; one survivor, its test mended and re-run)
and 8 for 3 more (one part), and 4 for the 13 of 2026-11-29's second session with 4 for the 1 it rewrote (two
parts, one at a time) and 2 for its 2 more with 1 rewritten (one part), and 1 for the 1 of 2026-11-29's third session with the 2 beside it
re-run (one part) and 4 for its 2 more and 2 rewritten (two parts)
and 1 for its 2 more and 1 rewritten (one part), and 4 for the 7 of 2026-11-29's fourth session with the 3 it
rewrote (one part) and 6 for its 18 more with 2 rewritten (one part) and 0.1 for 1 more: 824 minutes of runs in all for
the 1201.
`tests/test_mutants.py` checks that every mutant still applies to the notebooks as they are, so the list cannot
quietly go stale.
"""
from __future__ import annotations
import argparse, json, os, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT/"tools"/"mutants.json"

def load_mutants(path=MUTANTS) -> list[dict]:
    "The mutants: dicts with nb, old, new, what, and optionally pytest (test files that also run) and equivalent (why it changes nothing)."
    return json.loads(Path(path).read_text())

def _code(nb:dict) -> list[dict]: return [c for c in nb["cells"] if c["cell_type"] == "code"]

def occurrences(root:Path, m:dict) -> int:
    "How often the mutant's `old` occurs among its notebook's code cells."
    nb = json.loads((root/m["nb"]).read_text())
    return sum("".join(c["source"]).count(m["old"]) for c in _code(nb))

def _bin(name:str) -> str: return str(Path(sys.executable).parent/name)

ARCHIVE = ROOT.parent/"shared"/"data"/"cifar10_train.npz"    # where tests/test_cifar_archive.py finds CIFAR-10 from this checkout

def _env(root:Path) -> dict:
    "The environment of the tests: `root`'s package before the installed one, and this checkout's CIFAR-10 archive (none lies beside a clone)."
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), *filter(None, [os.environ.get("PYTHONPATH")])])}
    if ARCHIVE.exists(): env.setdefault("SSBNN_CIFAR_ARCHIVE", str(ARCHIVE))
    return env

def snapshot(root:Path) -> dict:
    "The notebooks' and the package's files under `root`, {path: text}, to restore after a mutant."
    return {p: p.read_text() for d in ("nbs", "ssbnn") for p in (root/d).rglob("*") if p.is_file() and p.suffix in (".ipynb", ".py")}

def restore(root:Path, saved:dict):
    "Put back what `snapshot` saw; remove package files made since."
    for p in (root/"ssbnn").rglob("*.py"):
        if p not in saved: p.unlink()
    for p, text in saved.items():
        if p.read_text() != text: p.write_text(text)

def plant(root:Path, m:dict):
    "Apply the mutant to its notebook under `root` and export that notebook into `root`'s package."
    p = root/m["nb"]
    nb = json.loads(p.read_text())
    for c in _code(nb):
        s = "".join(c["source"])
        if m["old"] in s: c["source"] = s.replace(m["old"], m["new"]).splitlines(keepends=True)
    p.write_text(json.dumps(nb, indent=1))
    subprocess.run([_bin("nbdev_export"), "--path", m["nb"]], cwd=root, capture_output=True, check=True)

def _last_error(r) -> str:
    "The last line of a finished test run's output that names an error or a failed test ('' if none)."
    errors = [l.strip() for l in (r.stdout + r.stderr).splitlines() if "Error" in l or l.startswith("FAILED")]
    return errors[-1] if errors else ""

def run_notebook(root:Path, nb:str, timeout:int=1200) -> tuple[bool, float, str]:
    "Run a notebook's tests: (passed, seconds, the last error line)."
    t = time.time()
    r = subprocess.run([_bin("nbdev_test"), "--path", nb], cwd=root, capture_output=True, text=True, timeout=timeout, env=_env(root))
    return r.returncode == 0, time.time() - t, _last_error(r)

def run_pytest(root:Path, files:list[str], timeout:int=1200) -> tuple[bool, float, str]:
    "Run pytest files of `root` against its package: (passed, seconds, the first failure)."
    t = time.time()
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *files], cwd=root,
                       capture_output=True, text=True, timeout=timeout, env=_env(root))
    return r.returncode == 0, time.time() - t, _last_error(r)

def audit(mutants:list[dict], root:Path, log=print) -> list[dict]:
    "Each mutant planted alone in `root`: killed (its tests fail) or survived; notebooks and package are restored after."
    out = []
    for m in mutants:
        row = {"nb": m["nb"], "what": m["what"], **({"equivalent": m["equivalent"]} if "equivalent" in m else {})}
        n = occurrences(root, m)
        if n != 1: row["error"] = f"the mutant's text occurs {n} times in {m['nb']}: update tools/mutants.json"
        else:
            saved = snapshot(root)
            try:
                plant(root, m)
                passed, seconds, why = run_notebook(root, m["nb"])
                if passed and m.get("pytest"):
                    passed, more, why = run_pytest(root, m["pytest"]); seconds += more
                row.update(killed=not passed, seconds=round(seconds, 1), **({"by": why} if why else {}))
            finally: restore(root, saved)
        out.append(row)
        log(f"{'killed  ' if row.get('killed') else 'ERROR   ' if 'error' in row else 'SURVIVED'} {m['nb']}: {m['what']}")
    return out

def summary(rows:list[dict]) -> dict:
    "Counts, and the survivors that are not marked equivalent: the tests' blind spots."
    gaps = [f"{r['nb']}: {r['what']}" for r in rows if r.get("killed") is False and "equivalent" not in r]
    return {"mutants": len(rows), "killed": sum(bool(r.get("killed")) for r in rows),
            "equivalent_survivors": sum(r.get("killed") is False and "equivalent" in r for r in rows),
            "errors": sum("error" in r for r in rows), "blind_spots": gaps}

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="notebooks (paths under nbs/, or their names) to audit; default all")
    ap.add_argument("--out", type=Path, default=None, help="JSON record to write")
    a = ap.parse_args(argv)
    mutants = load_mutants()
    if a.only:
        known = {m["nb"] for m in mutants}
        pick = {nb for nb in known for o in a.only if nb == o or Path(nb).stem == Path(o).stem}
        if not pick:
            print(f"mutation_audit: no mutants for {' '.join(a.only)}; notebooks with mutants: {', '.join(sorted(known))}", file=sys.stderr)
            sys.exit(2)
        mutants = [m for m in mutants if m["nb"] in pick]
    t = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp)/"repo"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True).stdout.strip()
        rows = audit(mutants, clone)
    from ssbnn._utils import atomic_write, environment
    s = summary(rows)
    rec = {"commit": commit, **environment("cpu"), "wall_seconds": round(time.time() - t), **s, "rows": rows}
    print(f"{s['killed']} of {s['mutants']} mutants killed; {s['equivalent_survivors']} equivalent; {s['errors']} stale; "
          f"blind spots: {s['blind_spots'] or 'none'}")
    if a.out:
        atomic_write(a.out, lambda f: f.write_text(json.dumps(rec, indent=1)))      # whole or not at all
    sys.exit(1 if s["blind_spots"] or s["errors"] else 0)

if __name__ == "__main__": main()
