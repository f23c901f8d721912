"The installed package: its public API, its version, and that ssbnn/ is exactly what the notebooks export."
import configparser, filecmp, shutil, subprocess, sys
import pytest
import torch
import ssbnn
from ssbnn import core
from conftest import ROOT, console


def test_version_matches_settings():
    cfg = configparser.ConfigParser(); cfg.read(ROOT / "settings.ini")
    assert ssbnn.__version__ == cfg["DEFAULT"]["version"]


def test_front_door_exports():
    for name in ["SSBNN", "load_digits_splits", "labelled_subset", "DigitsCNN", "ContrastiveELBO", "PretrainConfig",
                 "evaluate", "LaplacePosterior", "MAPPosterior", "KNNMonitor"]:
        assert name in core.__all__, name
        assert hasattr(core, name), name
    assert len(core.__all__) <= 12            # a small public API: the twelve names 13_core lists

def test_front_door_does_not_import_the_baselines():
    code = "import sys, ssbnn.core; assert 'ssbnn.baselines' not in sys.modules and 'ssbnn.experiments' not in sys.modules"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_estimator_api_end_to_end():
    d = core.load_digits_splits()
    m = core.SSBNN(encoder=core.DigitsCNN(width=8, dim=32), device="cpu").pretrain(d.x_train, epochs=3, batch_size=256, progress=False)
    i = core.labelled_subset(d.y_train, 30, seed=0)
    p = m.fit(d.x_train[i], d.y_train[i], val=(d.x_val, d.y_val)).predict_proba(d.x_test)
    assert p.shape == (360, 10) and torch.allclose(p.sum(1), torch.ones(360), atol=1e-5)
    r = core.evaluate(p, d.y_test)
    assert set(r) == {"accuracy", "nll", "ece"} and 0 <= r["accuracy"] <= 1


def test_pretraining_is_seeded():
    d = core.load_digits_splits()
    ws = []
    for _ in range(2):
        torch.manual_seed(0)                  # a user-built encoder is initialised by the caller's RNG
        m = core.SSBNN(encoder=core.DigitsCNN(width=4, dim=8), device="cpu", seed=3)
        ws.append(m.pretrain(d.x_train[:300], epochs=2, batch_size=100, progress=False).encoder.state_dict())
    assert all(torch.equal(a, b) for a, b in zip(ws[0].values(), ws[1].values()))


def test_library_is_what_the_notebooks_export(tmp_path):
    "nbdev_export on a copy of the tree leaves ssbnn/ unchanged: the library is in sync with nbs/."
    for name in ("nbs", "ssbnn"): shutil.copytree(ROOT / name, tmp_path / name, symlinks=True)
    for name in ("settings.ini", "setup.py", "pyproject.toml", "_quarto.yml", "README.md"): shutil.copy(ROOT / name, tmp_path / name)
    r = subprocess.run([console("nbdev_export")], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    cmp = filecmp.dircmp(ROOT / "ssbnn", tmp_path / "ssbnn", ignore=["__pycache__"])
    assert not (cmp.diff_files or cmp.left_only or cmp.right_only), \
        f"ssbnn/ differs from the notebooks' export: {cmp.diff_files + cmp.left_only + cmp.right_only}; run `make export`"


def test_modules_compile_without_warnings():
    "No module emits a SyntaxWarning (e.g. a LaTeX backslash in a docstring) on Python 3.12+."
    import warnings
    for f in sorted((ROOT / "ssbnn").rglob("*.py")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            compile(f.read_text(), str(f), "exec")


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU"))])
def test_a_saved_folder_predicts_the_same_in_a_fresh_process(tmp_path, device):
    "A model folder loads in another Python process (no training history, nothing pickled) and predicts within 1e-6."
    d = core.load_digits_splits()
    m = core.SSBNN(encoder=core.DigitsCNN(width=8, dim=32), device="cpu").pretrain(d.x_train, epochs=2, batch_size=256, progress=False)
    i = core.labelled_subset(d.y_train, 30, seed=0)
    p = m.fit(d.x_train[i], d.y_train[i], val=(d.x_val, d.y_val)).predict_proba(d.x_test)
    m.save(tmp_path / "model")
    torch.save(p, tmp_path / "expected.pt")
    code = ("import sys, torch; from ssbnn.core import SSBNN, load_digits_splits; "
            f"m = SSBNN.load(sys.argv[1], device={device!r}); p = m.predict_proba(load_digits_splits().x_test); "
            "q = torch.load(sys.argv[2]); print((p - q).abs().max().item())")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "model"), str(tmp_path / "expected.pt")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert float(r.stdout.strip().splitlines()[-1]) <= 1e-6


def test_the_wheel_ships_every_module_and_the_assets(tmp_path):
    "A wheel built from this tree holds exactly ssbnn/'s files (frost.npz and the paper's tables included), built without setuptools' warnings."
    import zipfile
    src = tmp_path / "src"
    shutil.copytree(ROOT / "ssbnn", src / "ssbnn", ignore=shutil.ignore_patterns("__pycache__"))
    for f in ("setup.py", "settings.ini", "README.md", "pyproject.toml"): shutil.copy(ROOT / f, src / f)
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "is absent from the `packages`" not in r.stdout + r.stderr       # ssbnn/assets is a package of its own
    [wheel] = (tmp_path / "dist").glob("ssbnn-*.whl")
    shipped = {n for n in zipfile.ZipFile(wheel).namelist() if n.startswith("ssbnn/")}
    tree = {p.relative_to(src).as_posix() for p in (src / "ssbnn").rglob("*") if p.is_file()}
    assert shipped == tree and {"ssbnn/assets/frost.npz", "ssbnn/assets/paper_tables.json"} <= shipped


def test_the_floors_check_never_empties_a_folder_that_is_not_a_venv(tmp_path):
    import runpy
    (tmp_path / "notes.txt").write_text("mine")
    assert runpy.run_path(str(ROOT / "tools" / "floors.py"))["main"](["check", "--venv", str(tmp_path)]) == 2
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_the_floors_are_the_ones_last_checked():
    "settings.ini's lower bounds are what `tools/floors.py check` last installed and passed the tests with."
    import json, runpy
    floors = runpy.run_path(str(ROOT / "tools" / "floors.py"))
    assert floors["pin"]("torch>=2.6") == "torch==2.6.*" and floors["pin"]("ipywidgets>=8") == "ipywidgets==8.0.*"
    assert floors["pin"]("laplace-torch>=0.2.3") == "laplace-torch==0.2.3" and floors["pin"]("pillow") is None
    record = json.loads((ROOT / "bench" / "results" / "floors.json").read_text())
    assert record["pins"] == floors["constraints"](), \
        "settings.ini's floors changed since they were last checked: run `python tools/floors.py check` (its docstring says how)"
    cfg = configparser.ConfigParser(); cfg.read(ROOT / "settings.ini")
    assert record["python"].startswith(cfg["DEFAULT"]["min_python"] + "."), record["python"]
    # the first check ran this test too, before its record existed; later checks deselect it (floors.SELF_TEST)
    assert record["exit_code"] == 0 or record["failed"] == [floors["SELF_TEST"]], record["pytest"]


def test_the_newest_python_claimed_was_checked_with_the_newest_releases():
    "setup.py's classifiers claim Pythons up to the last of `py_versions`: `tools/floors.py check --newest` passed on it."
    import json, re
    newest = re.search(r"py_versions = '([^']*)'", (ROOT / "setup.py").read_text()).group(1).split()[-1]
    record = json.loads((ROOT / "bench" / "results" / "newest.json").read_text())
    assert (record["mode"], record["pins"]) == ("newest", []) and record["python"].startswith(newest + "."), record["python"]
    assert record["exit_code"] == 0, record["pytest"]
