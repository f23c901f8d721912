"Shared fixtures for the pytest suite (the notebooks carry their own tests; see test_notebooks.py)."
import os, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def pytest_configure(config):
    "Under pytest -n, give each worker its share of the CPU's threads, for torch here and in the processes it starts."
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))   # set in each xdist worker, before any test imports torch
    if workers < 2 or any(k in os.environ for k in THREAD_VARS): return   # serial, or threads chosen by the user
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    os.environ.update(dict.fromkeys(THREAD_VARS, str(max(1, cores // workers))))   # two workers on two cores: one thread each


@pytest.fixture(scope="session")
def root(): return ROOT


def console(name: str) -> str:
    "Path of a console script installed beside this Python (the venv's bin/)."
    p = BIN / name
    if not p.exists(): pytest.fail(f"{name} is not installed next to {sys.executable}; run `make install`")
    return str(p)
