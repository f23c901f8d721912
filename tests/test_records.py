"The committed GPU records against an independent scoring of the predictions they kept (scikit-learn, scipy, numpy; no ssbnn code)."
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import mannwhitneyu
from sklearn.metrics import log_loss

PARTS = Path(__file__).resolve().parents[1] / "bench" / "results" / "eval_cifar10_parts"
def _one_per_budget(folder:Path) -> list:
    "A part's first kept file of each budget (links to identical runs left out)."
    files = [f for f in sorted(folder.glob("*.npz")) if not f.is_symlink()]
    return list({f.stem.rsplit("_", 2)[1]: f for f in reversed(files)}.values())

KEPT = [f for part in sorted(PARTS.glob("*/predictions")) for f in _one_per_budget(part)]


def _probs(kept:np.ndarray) -> np.ndarray:
    "A kept set as a row-normalised float64 predictive: float16 log-probabilities, or bytes q with log p = -(8q/255)² (the corrupted sets)."
    p = np.exp(-(kept * 8. / 255) ** 2 if kept.dtype == np.uint8 else kept.astype(np.float64))
    return p / p.sum(1, keepdims=True)


def _ece(p:np.ndarray, y:np.ndarray, bins:int=15) -> float:
    "Guo et al.'s ECE: |accuracy - confidence| per equal-width confidence bin (lo, hi], weighted by the bin's share."
    conf, right = p.max(1), p.argmax(1) == y
    which = np.digitize(conf, np.linspace(0, 1, bins + 1)[1:-1], right=True)
    return sum(abs(right[which == b].mean() - conf[which == b].mean()) * (which == b).mean() for b in np.unique(which))


def _entropy(p:np.ndarray) -> np.ndarray:
    return -(p * np.log(np.clip(p, 1e-300, None))).sum(1)


def _metrics(f) -> dict:
    "A record's metrics from one kept-predictions file, computed without ssbnn."
    y, test = f["y"], _probs(f["test"])
    out = {"nll": log_loss(y, test, labels=range(test.shape[1])), "accuracy": (test.argmax(1) == y).mean(), "ece": _ece(test, y)}
    cs = [_probs(f[k]) for k in f.files if k.startswith("c_")]
    out.update(c_nll=np.mean([log_loss(y, c, labels=range(c.shape[1])) for c in cs]),
               c_accuracy=np.mean([(c.argmax(1) == y).mean() for c in cs]), c_ece=np.mean([_ece(c, y) for c in cs]))
    ood = _entropy(_probs(f["ood"]))                                      # AUROC = Mann-Whitney U / (n_ood * n_in)
    out["ood_auroc"] = mannwhitneyu(ood, _entropy(test)).statistic / (len(ood) * len(test))
    return out


@pytest.mark.skipif(not KEPT, reason="no evaluation part with kept predictions in bench/results")
@pytest.mark.parametrize("path", KEPT, ids=lambda p: f"{p.parents[1].name}/{p.name}")
def test_cifar_records_match_their_kept_predictions(path):
    "Each kept run's record (NLL, accuracy, ECE, their corrupted means, OOD AUROC) is what its own predictions give."
    method, labels, seed = path.stem.rsplit("_", 2)
    records = json.loads((path.parents[1] / "results.json").read_text())["records"]
    rec = next(r for r in records if (r["method"].replace("*", "star"), str(r["labels"]), f"s{r['seed']}") == (method, labels, seed))
    with np.load(path) as f: got = _metrics(f)
    for k, v in got.items():   # float16 log-probabilities move an NLL by < 0.05 %, an ECE or AUROC by < 1e-3; bytes more (03_evaluation)
        assert rec[k] == pytest.approx(v, rel=2e-3, abs=3e-3 if k.startswith("c_") else 1e-3), (k, rec[k], v)
