"ssbnn's CIFAR-10-C corruptions against the output of the authors' make_cifar_c.py, saved by bench/corrupt_reference.py."
import subprocess, sys
import numpy as np
import pytest
from conftest import ROOT
from ssbnn.experiments.corrupt import CORRUPTIONS

sys.path.insert(0, str(ROOT / "bench"))
from corrupt_reference import TOLERANCE, LegacyDraws, draws  # noqa: E402

FIXTURE = ROOT / "tests" / "reference" / "make_cifar_c.npz"


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_the_corruption_equals_the_original_scripts(name):
    z = np.load(FIXTURE)
    ours = np.stack([CORRUPTIONS[name](im[None], 5, draws(name, int(k)))[0] for im, k in zip(z["images"], z["seeds"])])
    d = np.abs(ours.astype(int) - z[name].astype(int))
    assert d.max() <= TOLERANCE, f"{name}: {(d > TOLERANCE).sum()} values differ from make_cifar_c.py's by up to {d.max()} levels"
    assert (d > 0).mean() < 0.1, f"{name}: {(d > 0).mean():.1%} of the values differ from make_cifar_c.py's by one level"


def test_the_fixture_is_not_trivial():
    z = np.load(FIXTURE)
    x = z["images"].astype(int)
    changes = {n: np.abs(z[n].astype(int) - x).mean() for n in CORRUPTIONS}
    assert z["images"].shape == (4, 32, 32, 3) and min(changes.values()) > 3, changes   # every corruption visibly changes them
    assert len(np.unique(z["seeds"])) == 4


def test_legacy_draws_follow_the_global_stream():
    np.random.seed(3)
    a = np.random.normal(size=4), np.random.randint(-1, 1, size=(2,)), np.random.uniform(-45, 45), np.random.poisson(np.ones(3) * 7)
    r = LegacyDraws(3)
    b = r.normal(size=4), r.integers(-1, 1, size=(2,)), r.uniform(-45, 45), r.poisson(np.ones(3) * 7)
    for u, v in zip(a, b): np.testing.assert_array_equal(u, v)


def test_bad_input_exits_2(tmp_path):
    run = lambda *args: subprocess.run([sys.executable, str(ROOT / "bench" / "corrupt_reference.py"), *args], capture_output=True, text=True)
    r = run("--script", str(tmp_path / "none.py"))
    assert r.returncode == 2 and "no script at" in r.stderr and "make_cifar_c.py" in r.stderr
    (tmp_path / "other.py").write_text("print('hello')\n")
    r = run("--script", str(tmp_path / "other.py"))
    assert r.returncode == 2 and "has no distortion section" in r.stderr
