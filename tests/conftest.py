"Shared fixtures for the pytest suite (the notebooks carry their own tests; see test_notebooks.py)."
import sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def root(): return ROOT


def console(name: str) -> str:
    "Path of a console script installed beside this Python (the venv's bin/)."
    p = BIN / name
    if not p.exists(): pytest.fail(f"{name} is not installed next to {sys.executable}; run `make install`")
    return str(p)
