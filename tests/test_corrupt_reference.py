"ssbnn's CIFAR-10-C corruptions against the output of the authors' make_cifar_c.py, saved by bench/corrupt_reference.py."
import subprocess, sys
import numpy as np
import pytest
from conftest import ROOT
from ssbnn.experiments.corrupt import CORRUPTIONS

sys.path.insert(0, str(ROOT / "bench"))
from corrupt_reference import FIXTURE_IMAGES, TOLERANCE, LegacyDraws, draws, fixture_key  # noqa: E402

FIXTURE = ROOT / "tests" / "reference" / "make_cifar_c.npz"


@pytest.mark.parametrize("severity", list(FIXTURE_IMAGES))
@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_the_corruption_equals_the_original_scripts(name, severity):
    z = np.load(FIXTURE)
    ref = z[fixture_key(name, severity)]
    ours = np.stack([CORRUPTIONS[name](im[None], severity, draws(name, 1000 * severity + i))[0] for i, im in enumerate(z["images"][:len(ref)])])
    d = np.abs(ours.astype(int) - ref.astype(int))
    assert d.max() <= TOLERANCE, f"{name} {severity}: {(d > TOLERANCE).sum()} values differ from make_cifar_c.py's by up to {d.max()} levels"
    assert (d > 0).mean() < 0.1, f"{name} {severity}: {(d > 0).mean():.1%} of the values differ from make_cifar_c.py's by one level"


def test_the_fixture_is_not_trivial():
    z = np.load(FIXTURE)
    x = z["images"].astype(int)
    assert z["images"].shape == (4, 32, 32, 3) and len({im.tobytes() for im in z["images"]}) == 4
    for s, n in FIXTURE_IMAGES.items():
        changes = {c: np.abs(z[fixture_key(c, s)].astype(int) - x[:n]).mean() for c in CORRUPTIONS}
        assert all(len(z[fixture_key(c, s)]) == n for c in CORRUPTIONS) and min(changes.values()) > 0.5, (s, changes)   # each visibly changes them
        if s > 1: assert all((z[fixture_key(c, s)][:2] != z[fixture_key(c, s - 1)][:2]).any() for c in CORRUPTIONS), s   # severities differ


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
