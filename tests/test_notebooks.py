"""Every notebook under nbs/ runs as a test, as nbdev_test runs it (cells flagged notest/slow/cuda are skipped on CPU CI).

The notebooks run in this process, each in its own IPython shell, as nbdev_test's workers run them: one Python and
torch start-up for all of them instead of one each (about three minutes of a two-core CI run). What a notebook could
leave behind in this process is put back: the registry of rebuildable classes (its `#| export` cells register their
own copies of the package's classes), the IN_TEST variable and open figures. Its temporary folders (`tempfile`,
also in the processes it starts) go into the test's own `tmp_path`, which pytest prunes, instead of piling up in the
system's temporary folder (the commands' notebook alone leaves about 400 MB of checkpoints a run). A warning whose
class a notebook defined (its module is `__main__`) is passed on as a UserWarning: pytest-xdist's workers send warnings
to the controller by class name, and one it cannot import stops the whole `pytest -n` run."""
import contextlib, getpass, io, os, tempfile, warnings
import pytest
from conftest import ROOT

NOTEBOOKS = sorted(p for p in (ROOT / "nbs").rglob("*.ipynb")
                   if not any(part.startswith((".", "_")) for part in p.relative_to(ROOT / "nbs").parts))


def test_found_notebooks():
    assert len(NOTEBOOKS) >= 12, NOTEBOOKS


@pytest.fixture(scope="module")
def package_classes() -> dict:
    "The registry of rebuildable classes with every ssbnn module imported: the package's own classes."
    import importlib, pkgutil, ssbnn
    from ssbnn._utils import REBUILDABLE
    for m in pkgutil.walk_packages(ssbnn.__path__, "ssbnn."): importlib.import_module(m.name)
    return dict(REBUILDABLE)


@contextlib.contextmanager
def own_registry(package:dict):
    "Leave the package's rebuildable classes registered afterwards: a notebook's `#| export` cells register its copies."
    from ssbnn._utils import REBUILDABLE
    try: yield
    finally: REBUILDABLE.clear(); REBUILDABLE.update(package)


@contextlib.contextmanager
def importable_warnings():
    "Pass on the warnings raised inside, each with a category importable outside the notebook's `__main__`."
    with warnings.catch_warnings(record=True) as caught: yield             # under the filters already in force
    for w in caught:
        cat = w.category if w.category.__module__ != "__main__" else UserWarning
        msg = w.message if cat is w.category else f"{w.category.__name__}: {w.message}"
        warnings.warn_explicit(msg, cat, w.filename, w.lineno)


def run_notebook(nb, skip_flags=()) -> tuple:
    "Run notebook `nb` as nbdev_test does, in this process: (ran without error, its stderr)."
    from nbdev.test import test_nb
    err = io.StringIO()
    with contextlib.redirect_stderr(err), importable_warnings(): ok, _ = test_nb(nb, skip_flags=list(skip_flags))
    return ok, err.getvalue()


def test_notebook_warnings_leave_importable(tmp_path):
    "A warning class defined in a notebook reaches pytest as a UserWarning that names it, never as `__main__.X`."
    import nbformat
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import warnings\nclass OwnWarning(UserWarning): pass\nwarnings.warn('from the notebook', OwnWarning)")])
    nbformat.write(nb, tmp_path / "w.ipynb")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ok, err = run_notebook(tmp_path / "w.ipynb")
    assert ok, err
    ours = [w for w in caught if "from the notebook" in str(w.message)]
    assert [(w.category, str(w.message)) for w in ours] == [(UserWarning, "OwnWarning: from the notebook")]


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[str(p.relative_to(ROOT / "nbs")) for p in NOTEBOOKS])
def test_notebook(nb, monkeypatch, package_classes, tmp_path):
    from nbdev.config import get_config
    import matplotlib.pyplot as plt
    monkeypatch.setenv("IN_TEST", "1")                                   # test_nb sets it for good; scoped here
    inductor = os.environ.get("TORCHINDUCTOR_CACHE_DIR") or os.path.join(tempfile.gettempdir(), "torchinductor_" + getpass.getuser())
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", inductor)              # torch.compile's default cache: shared, not moved
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))              # its mkdtemp()s, here and
    monkeypatch.setenv("TMPDIR", str(tmp_path))                          # in the processes it starts
    with own_registry(package_classes):
        ok, err = run_notebook(nb, get_config().tst_flags.split())       # settings.ini's: notest slow cuda
    plt.close("all")
    assert ok, f"{nb.name} failed:\n{err[-8000:]}"
