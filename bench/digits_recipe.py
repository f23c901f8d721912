"""Pretraining settings for the digits against the readout they give, scored away from the test split.

    python bench/digits_recipe.py --out bench/results/digits_recipe.json

Each setting pretrains one SS-BNN (seed 0); each labelled subset (10 and 50 labels, seeds 100-111, not the main job's
0-2) is fitted by the default Step II (linear probe, Laplace tuned on the validation split) and scored on the training
images outside it, which the encoder saw unlabelled. The test split is never used, so the main job's numbers stay
an honest measurement of the setting chosen here. Writes JSON.
"""
import json, time
from common import command_line, number, out_file, parser
from pathlib import Path

SETTINGS = [dict(epochs=250, batch_size=512), dict(epochs=120, batch_size=512), dict(epochs=120, batch_size=512, lr=5e-3),
            dict(epochs=120, batch_size=512, lr=1e-2), dict(epochs=120, batch_size=256), dict(epochs=120, batch_size=256, lr=5e-3),
            dict(epochs=120, batch_size=256, lr=1e-3), dict(epochs=120, batch_size=128)]


def score(model, data, budget:int, seeds) -> dict:
    "Mean NLL, accuracy and ECE of the SS-BNN and of its MAP readout over `seeds` subsets of `budget` labels."
    import numpy as np
    from common import labelled_scores
    rows = [[bnn["nll"], mp["nll"], bnn["accuracy"], bnn["ece"], mp["ece"]]
            for bnn, mp in (labelled_scores(model, data, budget, s, held_out_train=True) for s in seeds)]
    return dict(zip(("nll", "map_nll", "accuracy", "ece", "map_ece"), map(float, np.mean(rows, 0))))


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--seeds", type=number(int, low=1, high=1000), default=12, help="labelled subsets per budget (seeds 100, 101, ...)")
    p.add_argument("--out", type=Path, default=None, help="JSON record (default: print it)")
    a = p.parse_args(argv)
    out = out_file("digits_recipe.py", a.out)
    from ssbnn.core import SSBNN
    from ssbnn.data import load_digits_splits
    from common import write_rows
    data, rows = load_digits_splits(), []
    for setting in SETTINGS:
        t = time.time()
        model = SSBNN(device="cpu", seed=0).pretrain(data.x_train, progress=False, **setting)
        rows.append({**setting, "pretrain_seconds": time.time() - t,
                     **{str(n): score(model, data, n, range(100, 100 + a.seeds)) for n in (10, 50)}})
        print(json.dumps(rows[-1]), flush=True)
    write_rows(out, rows, a.seeds, command=command_line("digits_recipe.py", argv))


if __name__ == "__main__":
    main()
