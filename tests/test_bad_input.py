"Bad input to the library raises an error that names what was wrong and what to do."
import numpy as np
import pytest
import torch
from ssbnn.core import SSBNN, DigitsCNN, ContrastiveELBO, MAPClassifier, load_digits_splits, labelled_subset, make_task, DigitsAugment, LaplacePosterior
from ssbnn.data import load_cifar_splits, check_images
from ssbnn.train import PretrainConfig, get_device


@pytest.fixture(scope="module")
def digits(): return load_digits_splits()


@pytest.fixture(scope="module")
def fitted(digits):
    m = SSBNN(encoder=DigitsCNN(width=4, dim=8), device="cpu").pretrain(digits.x_train, epochs=1, batch_size=256, progress=False)
    return m


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
