"""Pretraining settings for the digits against the readout they give, scored away from the test split.

    python bench/digits_recipe.py --out bench/results/digits_recipe.json

Each setting pretrains one SS-BNN (seed 0); each labelled subset (10 and 50 labels, seeds 100-111, not the main job's
0-2) is fitted by the default Step II (linear probe, Laplace tuned on the validation split) and scored on the training
images outside it, which the encoder saw unlabelled. The test split is never used, so the main job's numbers stay
an honest measurement of the setting chosen here. Writes JSON.
"""
import argparse, json, sys, time
from pathlib import Path

SETTINGS = [dict(epochs=250, batch_size=512), dict(epochs=120, batch_size=512), dict(epochs=120, batch_size=512, lr=5e-3),
            dict(epochs=120, batch_size=512, lr=1e-2), dict(epochs=120, batch_size=256), dict(epochs=120, batch_size=256, lr=5e-3),
            dict(epochs=120, batch_size=256, lr=1e-3), dict(epochs=120, batch_size=128)]


def score(model, data, budget:int, seeds) -> dict:
    "Mean NLL, accuracy and ECE of the SS-BNN and of its MAP readout over `seeds` subsets of `budget` labels."
    import numpy as np, torch
    from ssbnn.data import labelled_subset
    from ssbnn.metrics import evaluate
    rows = []
    for s in seeds:
        i = labelled_subset(data.y_train, budget, seed=s)
        rest = torch.ones(len(data.y_train), dtype=torch.bool); rest[i] = False
        model.fit(data.x_train[i], data.y_train[i], (data.x_val, data.y_val), data.num_classes)
        x, y = data.x_train[rest], data.y_train[rest]
        bnn, mp = evaluate(model.predict_proba(x), y), evaluate(model.predict_proba(x, laplace=False), y)
        rows.append([bnn["nll"], mp["nll"], bnn["accuracy"], bnn["ece"], mp["ece"]])
    m = np.mean(rows, 0)
    return dict(zip(("nll", "map_nll", "accuracy", "ece", "map_ece"), map(float, m)))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=12, help="labelled subsets per budget (seeds 100, 101, ...)")
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args(argv)
    import torch
    from ssbnn.core import SSBNN
    from ssbnn.data import load_digits_splits
    from ssbnn._utils import atomic_write, environment
    data, rows = load_digits_splits(), []
    for setting in SETTINGS:
        t = time.time()
        model = SSBNN(device="cpu", seed=0).pretrain(data.x_train, progress=False, **setting)
        rows.append({**setting, "pretrain_seconds": time.time() - t,
                     **{str(n): score(model, data, n, range(100, 100 + a.seeds)) for n in (10, 50)}})
        print(json.dumps(rows[-1]), flush=True)
    out = json.dumps({"rows": rows, "meta": {"seeds": a.seeds, **environment(torch.device("cpu"))}}, indent=1)
    if a.out: atomic_write(a.out, lambda f: f.write_text(out))
    else: sys.stdout.write(out + "\n")


if __name__ == "__main__":
    main()
