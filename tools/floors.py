"""Are settings.ini's lower bounds true? Installs ssbnn with every runtime requirement at its floor and runs the tests.

    python tools/floors.py constraints             # the pins, one per line (pip's -c format)
    python tools/floors.py check --venv /tmp/floors [--python python3.10] [--out floors.json] [-- PYTEST ARGS]
    python tools/floors.py check --newest --venv /tmp/newest --python python3.13 --out newest.json

`check` makes a fresh venv (with `--python`, e.g. the oldest Python that settings.ini's `min_python` allows), installs
`.[dev]` under those pins, runs pytest there and writes a JSON record: the Python, the versions installed and pytest's
summary line. A floor `X.Y` is pinned to `X.Y.*` (its newest patch; `X` to `X.0.*`), a floor `X.Y.Z` exactly. Installing torch's
CUDA wheels takes a few GB and minutes: this is a release check, not part of `make test`.

`--newest` installs without pins instead: what pip gives a user today, checked on the newest Python that setup.py's
classifiers claim (CI runs the tests on one Python between that and `min_python`).
"""
import argparse, configparser, json, shlex, subprocess, sys, time
from pathlib import Path
from packaging.requirements import Requirement   # pip's own requirement parser
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
SELF_TEST = "tests/test_package.py::test_the_floors_are_the_ones_last_checked"
NEWEST_TEST = "tests/test_package.py::test_the_newest_python_claimed_was_checked_with_the_newest_releases"


def requirements(key:str="requirements") -> list[str]:
    "settings.ini's requirements under `key`, as pip reads them."
    cfg = configparser.ConfigParser(); cfg.read(ROOT / "settings.ini")
    return shlex.split(cfg["DEFAULT"].get(key, ""))


def pin(requirement:str) -> str | None:
    "`name>=X.Y` (or `>=X`: X.0) -> `name==X.Y.*`, `name>=X.Y.Z` -> `name==X.Y.Z`; None for one without a floor."
    r = Requirement(requirement)
    floor = next((s.version for s in r.specifier if s.operator == ">="), None)
    if floor is None: return None
    floor = floor if "." in floor else floor + ".0"                     # `>=8` is 8.0's series
    return f"{r.name}=={floor}.*" if floor.count(".") == 1 else f"{r.name}=={floor}"


def constraints() -> list[str]:
    "One pin per runtime requirement that has a floor."
    return [p for p in map(pin, requirements()) if p]


def _run(cmd:list, **kw) -> subprocess.CompletedProcess:
    print("+", " ".join(map(str, cmd)), flush=True)
    return subprocess.run(cmd, **kw)


def check(venv:Path, python:str, out:Path | None, pytest_args:list, newest:bool=False) -> int:
    "Fresh venv at `venv`, `.[dev]` under the floors' pins (`newest`: without pins), pytest; returns pytest's exit code."
    t0 = time.time()
    if venv.exists() and any(venv.iterdir()) and not (venv / "pyvenv.cfg").exists():
        print(f"floors: {venv} has files and is not a venv; name a new folder or an old venv (it is emptied)"); return 2
    if _run([python, "-m", "venv", "--clear", str(venv)]).returncode: return 2
    py = str(venv / "bin" / "python")
    pinned = [] if newest else constraints()
    pins = venv / "floors.txt"; pins.write_text("".join(p + "\n" for p in pinned))
    if _run([py, "-m", "pip", "install", "-q", "-c", str(pins), "-e", f"{ROOT}[dev]"]).returncode: return 2
    installed = json.loads(_run([py, "-m", "pip", "list", "--format", "json"], capture_output=True, text=True).stdout)
    names = {canonicalize_name(Requirement(p).name) for p in requirements()}
    versions = {d["name"]: d["version"] for d in installed if canonicalize_name(d["name"]) in names}
    t1 = time.time()
    r = _run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--deselect", SELF_TEST, "--deselect", NEWEST_TEST, *pytest_args],
             cwd=ROOT, capture_output=True, text=True)   # those two tests read the records this writes
    sys.stdout.write(r.stdout[-4000:] + r.stderr[-2000:])
    summary = next((l.strip("= ") for l in reversed(r.stdout.splitlines()) if " in " in l and ("passed" in l or "failed" in l)), "")
    if out is not None:
        pyver = _run([py, "-c", "import platform; print(platform.python_version())"], capture_output=True, text=True).stdout.strip()
        record = dict(python=pyver, mode="newest" if newest else "floors", pins=pinned, installed=versions, pytest=summary, exit_code=r.returncode,
                      failed=[l.split()[1] for l in r.stdout.splitlines() if l.startswith(("FAILED", "ERROR"))],
                      install_seconds=round(t1 - t0), test_seconds=round(time.time() - t1))
        tmp = out.with_suffix(out.suffix + ".tmp"); tmp.write_text(json.dumps(record, indent=1) + "\n"); tmp.replace(out)
    return r.returncode


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("constraints", help="print the pins")
    c = sub.add_parser("check", help="install at the floors in a fresh venv and run pytest there")
    c.add_argument("--venv", type=Path, required=True, help="a new folder or an old venv, emptied first")
    c.add_argument("--python", default=sys.executable, help="the interpreter that makes it (default: this one)")
    c.add_argument("--out", type=Path, help="JSON record of the check")
    c.add_argument("--newest", action="store_true", help="install without pins: today's newest releases")
    a, rest = p.parse_known_args(argv)
    if a.cmd == "constraints": print("\n".join(constraints())); return 0
    return check(a.venv, a.python, a.out, [x for x in rest if x != "--"], a.newest)


if __name__ == "__main__":
    raise SystemExit(main())
