"""Every notebook under nbs/ runs as a test, as nbdev_test runs it (cells flagged notest/slow/cuda are skipped on CPU CI).

The notebooks run in this process, each in its own IPython shell, as nbdev_test's workers run them: one Python and
torch start-up for all of them instead of one each (about three minutes of a two-core CI run). What a notebook could
leave behind in this process is put back: the registry of rebuildable classes (its `#| export` cells register their
own copies of the package's classes), the IN_TEST variable and open figures."""
import contextlib, io
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


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[str(p.relative_to(ROOT / "nbs")) for p in NOTEBOOKS])
def test_notebook(nb, monkeypatch, package_classes):
    from nbdev.test import test_nb
    from nbdev.config import get_config
    import matplotlib.pyplot as plt
    monkeypatch.setenv("IN_TEST", "1")                                   # test_nb sets it for good; scoped here
    err = io.StringIO()
    with contextlib.redirect_stderr(err), own_registry(package_classes):
        ok, _ = test_nb(nb, skip_flags=get_config().tst_flags.split())   # settings.ini's: notest slow cuda
    plt.close("all")
    assert ok, f"{nb.name} failed:\n{err.getvalue()[-8000:]}"
