"Bad input to the library raises an error that names what was wrong and what to do."
import json, math
import numpy as np
import pytest
import torch
from ssbnn.core import SSBNN, DigitsCNN, ContrastiveELBO, load_digits_splits, labelled_subset, LaplacePosterior
from ssbnn.elbo import make_task
from ssbnn.augment import DigitsAugment, SimCLRAugment, CropFlip
from ssbnn.baselines import MAPClassifier, MAPConfig, SWAGConfig
from ssbnn.data import load_cifar_splits, check_images
from ssbnn.train import PretrainConfig
from ssbnn.experiments.evaluation import EvalConfig
from ssbnn.experiments.active import ActiveConfig
from ssbnn.experiments.ablation import AblationConfig
from ssbnn.posterior import PriorGrid
from ssbnn._utils import get_device, file_sha256


@pytest.fixture(scope="module")
def digits(): return load_digits_splits()


@pytest.fixture(scope="module")
def fitted(digits):
    m = SSBNN(encoder=DigitsCNN(width=4, dim=8), device="cpu").pretrain(digits.x_train, epochs=1, batch_size=256, progress=False)
    return m


@pytest.fixture(scope="module")
def readout(digits):
    m = SSBNN(encoder=DigitsCNN(width=4, dim=8), device="cpu").pretrain(digits.x_train, epochs=1, batch_size=256, progress=False)
    i = labelled_subset(digits.y_train, 30)
    return m.fit(digits.x_train[i], digits.y_train[i], val=(digits.x_val, digits.y_val))


@pytest.mark.parametrize("x,expect", [
    (torch.rand(10, 8, 8), "add a channel axis"),
    (torch.rand(10, 8, 8, 1).expand(10, 8, 8, 3), "channels-last"),
    (torch.rand(10, 1, 8, 8) * 16, "divide by the maximum"),
    (torch.ones(10, 1, 8, 8, dtype=torch.int32), "dtype"),
    (torch.full((10, 1, 8, 8), float("nan")), "NaN or inf"),
    (torch.full((10, 1, 8, 8), float("inf")), "NaN or inf"),
    ("images.png", "numpy array"),
])
def test_bad_images_for_pretraining(x, expect):
    with pytest.raises((ValueError, TypeError), match=expect):
        SSBNN(device="cpu").pretrain(x, epochs=1, progress=False)


def test_bad_images_for_fit(fitted, digits):
    x = digits.x_train[:20].clone(); x[3, 0, 2, 2] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        fitted.fit(x, digits.y_train[:20], val=(digits.x_val, digits.y_val))


@pytest.mark.parametrize("y,expect", [
    (lambda d: d.y_train[:20] + 10, "num_classes=10"),
    (lambda d: -d.y_train[:20], "negative"),
    (lambda d: d.y_train[:19], "19 labels but there are 20 images"),
    (lambda d: d.y_train[:20].float(), "integer class indices"),
    (lambda d: d.y_train[:20, None], "1-D"),
])
def test_bad_labels(fitted, digits, y, expect):
    with pytest.raises((ValueError, TypeError), match=expect):
        fitted.fit(digits.x_train[:20], y(digits), val=(digits.x_val, digits.y_val), num_classes=10)


def test_bad_validation_set(fitted, digits):
    with pytest.raises(ValueError, match="pair"):
        fitted.fit(digits.x_train[:20], digits.y_train[:20], val=digits.x_val)
    with pytest.raises(ValueError, match="y_val"):
        fitted.fit(digits.x_train[:20], digits.y_train[:20], val=(digits.x_val, digits.y_val[:5]))


def test_budget_larger_than_the_data(digits):
    with pytest.raises(ValueError, match="larger than the 1257 labelled images"):
        labelled_subset(digits.y_train, 2000)


def test_batch_larger_than_the_unlabelled_set(digits):
    with pytest.raises(ValueError, match="larger than the 50 unlabelled images"):
        SSBNN(device="cpu").pretrain(digits.x_train[:50], batch_size=64, progress=False)
    with pytest.raises(ValueError, match="batch size of at most 50"):
        make_task(digits.x_train[:50], 64, DigitsAugment())


def test_missing_data_folder_with_download_off(tmp_path):
    with pytest.raises(FileNotFoundError, match="download=True"):
        load_cifar_splits("cifar10", root=tmp_path / "nowhere", download=False)


@pytest.mark.parametrize("make,expect", [
    (lambda: LaplacePosterior(hessian="blockdiag"), "'full', 'kron', 'diag'"),
    (lambda: ContrastiveELBO(mean="median"), "'mean', 'view_a', 'zero'"),
    (lambda: get_device("tpu"), "unknown device"),
    (lambda: LaplacePosterior(readout="auto"), "'probe', 'tuned', 'marglik'"),
])
def test_unknown_option_values(make, expect):
    with pytest.raises(ValueError, match=expect):
        make()


def test_predict_before_fit(digits):
    with pytest.raises(RuntimeError, match="call fit"):
        SSBNN().predict_proba(digits.x_test)
    with pytest.raises(RuntimeError, match="call fit"):
        MAPClassifier().predict_proba(digits.x_test)


# --- The hostile-user audit (issue 14): every case it found, as a test -------------------------------------------

@pytest.mark.parametrize("kw,expect", [
    (dict(epochs=0), "epochs must be a finite number > 0"),
    (dict(epochs=-5), "epochs must be"),
    (dict(epochs=float("nan")), "got nan"),
    (dict(epochs=float("inf")), "got inf"),
    (dict(epochs=1e306), r"≤ 1e\+06"),
    (dict(lr=-1), "lr must be a finite number > 0"),
    (dict(batch_size=0), "batch_size must be a whole number ≥ 2"),
    (dict(seed=-1), "seed must be a whole number ≥ 0"),
    (dict(seed=10**30), "seed must be"),
])
def test_silent_or_late_settings_are_refused_up_front(digits, kw, expect):
    with pytest.raises(ValueError, match=expect):
        SSBNN(device="cpu").pretrain(digits.x_train[:100], progress=False, **kw)


def test_num_classes_zero_is_not_infer(fitted, digits):
    with pytest.raises(ValueError, match="num_classes must be a whole number ≥ 2"):
        fitted.fit(digits.x_train[:20], digits.y_train[:20], val=(digits.x_val, digits.y_val), num_classes=0)


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_numpy_default_float_images_are_converted(fitted, digits, dtype):
    x = digits.x_train[:40].numpy().astype(dtype)
    assert check_images(x).dtype == torch.float32
    p = fitted.fit(x, digits.y_train[:40].numpy(), val=(digits.x_val.numpy().astype(dtype), digits.y_val.numpy())).predict_proba(x)
    assert p.shape == (40, 10) and torch.isfinite(p).all()


def test_wrong_channel_count_and_empty_arrays(readout, digits):
    with pytest.raises(ValueError, match="has 3 channel\\(s\\) but the encoder takes 1"):
        readout.predict_proba(digits.x_test.expand(-1, 3, -1, -1))
    with pytest.raises(ValueError, match="has 3 channel"):
        SSBNN(device="cpu").pretrain(digits.x_train[:100].expand(-1, 3, -1, -1), epochs=1, batch_size=50, progress=False)
    with pytest.raises(ValueError, match="holds no images"):
        SSBNN(device="cpu").pretrain(np.zeros((0, 1, 8, 8), np.float32), epochs=1, progress=False)
    with pytest.raises(ValueError, match="holds no images"):
        readout.predict_proba(digits.x_test[:0])


def test_a_flipped_byte_in_a_saved_model_is_an_error(fitted, tmp_path):
    path = fitted.save(tmp_path / "m") / "model.safetensors"
    raw = bytearray(path.read_bytes())
    w = fitted.encoder.state_dict()["0.0.weight"].flatten()[:4].numpy().tobytes()     # bytes of the first conv weights
    i = raw.index(w)
    for k in range(64): raw[i + k] ^= 0x01                                             # 64 flipped bits, as in the audit
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="is damaged"):
        SSBNN.load(tmp_path / "m", device="cpu")


@pytest.mark.parametrize("content,expect", [
    (b"", "not a readable ssbnn checkpoint"),
    (bytes(range(256)) * 40, "not a readable ssbnn checkpoint"),
])
def test_a_model_file_that_is_not_a_model(tmp_path, content, expect):
    (tmp_path / "m.pt").write_bytes(content)
    with pytest.raises(ValueError, match=expect):
        SSBNN.load(tmp_path / "m.pt", device="cpu")


def test_a_model_folder_whose_safetensors_is_not_one(fitted, tmp_path):
    folder = fitted.save(tmp_path / "m")
    (folder / "model.safetensors").write_bytes(bytes(range(256)) * 40)
    cfg = json.loads((folder / "config.json").read_text())
    cfg["files"]["model.safetensors"] = file_sha256(folder / "model.safetensors")     # consistent digest, foreign bytes
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="is not a readable safetensors file"):
        SSBNN.load(folder, device="cpu")


def test_training_checkpoint_given_as_a_model(digits, tmp_path):
    SSBNN(encoder=DigitsCNN(width=4, dim=8), device="cpu").pretrain(digits.x_train[:100], epochs=1, batch_size=50, progress=False,
                                                                    checkpoint=tmp_path / "run.ckpt")
    with pytest.raises(ValueError, match="is a training checkpoint"):
        SSBNN.load(tmp_path / "run.ckpt", device="cpu")


def test_no_claim_of_a_kept_checkpoint_that_does_not_exist(tmp_path):
    from ssbnn.train import training_state, NonFiniteLossError
    enc = torch.nn.Linear(2, 2)
    with torch.no_grad(): enc.weight[0, 0] = float("nan")
    with pytest.raises(NonFiniteLossError, match="no checkpoint was written"):
        training_state(tmp_path / "none.ckpt", PretrainConfig(), [enc], None, None, None, 5, [])


def test_offline_download_is_one_clear_error(monkeypatch, tmp_path):
    import urllib.error
    from torchvision import datasets
    def offline(*a, **kw): raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")
    monkeypatch.setattr(datasets, "CIFAR10", offline)
    with pytest.raises(ValueError, match="could not download cifar10 .* check the network connection"):
        load_cifar_splits("cifar10", root=tmp_path, download=True)


# --- A property-based fuzz of the input checks: a clear error or a valid result, never a crash inside torch ----------

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st, HealthCheck          # noqa: E402
from hypothesis.extra import numpy as hnp                                          # noqa: E402
from ssbnn.data import check_labels                                                # noqa: E402

CLEAR = (ValueError, TypeError)
_dtypes = st.sampled_from([np.float16, np.float32, np.float64, np.uint8, np.int64, np.bool_])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hnp.arrays(_dtypes, hnp.array_shapes(min_dims=0, max_dims=5, min_side=0, max_side=4), elements=None))
def test_fuzz_check_images(x):
    try: out = check_images(x)
    except CLEAR as e: assert str(e); return
    assert out.ndim == 4 and len(out) > 0 and out.dtype == torch.float32
    assert torch.isfinite(out).all() and 0 <= out.min() and out.max() <= 1


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(st.sampled_from([np.int64, np.int32, np.uint8, np.float32, np.bool_]), hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=6)),
       st.one_of(st.none(), st.integers(-3, 12)))
def test_fuzz_check_labels(y, num_classes):
    try: out = check_labels(y, num_classes=num_classes)
    except CLEAR as e: assert str(e); return
    assert out.ndim == 1 and out.dtype == torch.long and (len(out) == 0 or out.min() >= 0)


_numbers = st.one_of(st.integers(-10**20, 10**20), st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.text(max_size=3), st.none())


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(PretrainConfig.LIMITS)), _numbers)
def test_fuzz_pretrain_config(name, value):
    try: cfg = PretrainConfig(**{name: value})
    except CLEAR as e: assert name in str(e); return
    v = getattr(cfg, name)
    assert math.isfinite(float(v))
    if cfg.batch_size > 1257:                                  # a task needs more images than there are: said, not run
        with pytest.raises(ValueError, match="larger than the 1257 unlabelled images"): cfg.steps(1257)
    else: assert cfg.steps(1257) >= 1



_CONFIGS = (PretrainConfig, EvalConfig, MAPConfig, SWAGConfig, ActiveConfig, AblationConfig, PriorGrid, DigitsAugment, SimCLRAugment,
            CropFlip)
_LIMITED = [(cls, name) for cls in _CONFIGS for name in sorted(cls.LIMITS)]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_LIMITED), _numbers)
def test_fuzz_every_config_keeps_its_limits(setting, value):
    "A number outside a configuration's LIMITS is refused naming the setting; one inside is kept as given (a whole one as an int)."
    cls, name = setting
    limits = cls.LIMITS[name]
    try: cfg = cls(**{name: value})
    except CLEAR as e: assert name in str(e); return
    v = getattr(cfg, name)
    assert (type(v) is int and v == value) if limits.get("integer") else v is value
    assert not isinstance(v, bool) and math.isfinite(v)
    assert v > limits["low"] if limits.get("open_low") else v >= limits.get("low", -math.inf)
    assert v <= limits.get("high", math.inf) and (not limits.get("integer") or float(v).is_integer())

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hnp.arrays(st.sampled_from([np.float16, np.float32, np.float64, np.uint8]), st.tuples(st.integers(0, 3), st.integers(1, 4), st.just(8), st.just(8)),
                  elements=None))
def test_fuzz_fit_images(readout, x):
    "Images of any channel count, dtype and size (down to none) given to a fitted model: a prediction or a clear error."
    try: p = readout.predict_proba(x)
    except CLEAR as e: assert str(e); return
    assert p.shape == (len(x), 10) and torch.isfinite(p).all()


def test_warnings_point_at_the_users_line(fitted, digits):
    "A warning raised deep in the package (SSBNN.fit -> check_labelled) is attributed to the line that called the package."
    i = labelled_subset(digits.y_train, 30)
    with pytest.warns(UserWarning, match="no label is of classes") as said:
        fitted.fit(digits.x_train[i], digits.y_train[i] * 2, val=(digits.x_val, digits.y_val * 2))   # classes 0, 2, ..., 18 of 0..18
    mine = [w for w in said if "no label is of classes" in str(w.message)]
    assert len(mine) == 1 and mine[0].filename == __file__, (mine[0].filename, mine[0].lineno)


@pytest.mark.parametrize("shape", [(20, 1, 16, 16), (20, 3, 8, 8)])
def test_labelled_images_of_another_size_than_the_unlabelled(digits, shape):
    "SS-BNN*'s labelled images are augmented into the unlabelled batch: another size or channel count is named, not torch's cat error."
    with pytest.raises(ValueError, match=r"the labelled images are \(\d+, \d+, \d+\) but the unlabelled ones \(1, 8, 8\)"):
        SSBNN(device="cpu").pretrain(digits.x_train[:64], labelled=(torch.rand(*shape), torch.arange(20) % 10), epochs=1, batch_size=32, progress=False)
