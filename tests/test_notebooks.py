"Every notebook under nbs/ runs as a test with nbdev_test (cells flagged slow/cuda/notest are skipped on CPU CI)."
import subprocess
import pytest
from conftest import ROOT, console

NOTEBOOKS = sorted(p for p in (ROOT / "nbs").rglob("*.ipynb")
                   if not any(part.startswith((".", "_")) for part in p.relative_to(ROOT / "nbs").parts))


def test_found_notebooks():
    assert len(NOTEBOOKS) >= 12, NOTEBOOKS


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[str(p.relative_to(ROOT / "nbs")) for p in NOTEBOOKS])
def test_notebook(nb):
    r = subprocess.run([console("nbdev_test"), "--path", str(nb), "--do_print"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"{nb.name} failed:\n{r.stdout[-4000:]}\n{r.stderr[-8000:]}"
