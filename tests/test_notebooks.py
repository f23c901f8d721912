"""Every notebook under nbs/ runs as a test, as nbdev_test runs it (cells flagged notest/slow/cuda are skipped on CPU CI).

The notebooks run in this process, each in its own IPython shell, as nbdev_test's workers run them: one Python and
torch start-up for all of them instead of one each (about two minutes of a two-core CI run)."""
import contextlib, io
import pytest
from conftest import ROOT

NOTEBOOKS = sorted(p for p in (ROOT / "nbs").rglob("*.ipynb")
                   if not any(part.startswith((".", "_")) for part in p.relative_to(ROOT / "nbs").parts))
SKIP = ["notest", "slow", "cuda"]                                      # settings.ini's tst_flags


def test_found_notebooks():
    assert len(NOTEBOOKS) >= 12, NOTEBOOKS


def test_skip_flags_match_settings():
    from nbdev.config import get_config
    assert sorted(get_config().tst_flags.split()) == sorted(SKIP)


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[str(p.relative_to(ROOT / "nbs")) for p in NOTEBOOKS])
def test_notebook(nb, monkeypatch):
    from nbdev.test import test_nb
    import matplotlib.pyplot as plt
    monkeypatch.setenv("IN_TEST", "1")                                   # test_nb sets it for good; scoped here
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        ok, _ = test_nb(nb, skip_flags=SKIP)
    plt.close("all")
    assert ok, f"{nb.name} failed:\n{err.getvalue()[-8000:]}"
