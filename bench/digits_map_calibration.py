"""Why the digits' MAP networks are under-confident, and so leave last-layer Laplace nothing to do: augmentation and the restored best epoch, one at a time.

    python bench/digits_map_calibration.py --out bench/results/digits_map_calibration.json

The main job's MAP baseline (`digits_setup`) is DigitsCNN trained with Adam on the labelled digits, augmented by
`DigitsAugment.mild()`, early-stopped on the validation NLL with the best epoch's weights restored. Its confidence sits
3-16 points below its accuracy, and last-layer Laplace (the `ll-laplace` method), which can only widen a predictive,
then asks for the top of its prior grid and equals MAP. This script trains the same network on the main job's subsets
(labels x seeds, `labelled_subset` with the label seed, the MAP seed the same) with each of the four variants
{augmentation: mild, none} x {weights: the best epoch's, those at the stop}, and a fifth that trains all 300 epochs
(mild augmentation, no early stopping), and, for each, scores on the test split:
accuracy, mean confidence (of the predicted class) and their gap, NLL, ECE; and the same network's last-layer Laplace
posterior: its NLL, ECE, tuned prior precision and whether that sits on an edge of the grid. Writes JSON.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from common import command_line, label_counts, number, out_file, parser, write_rows

VARIANTS = {"mild, best epoch": ("mild", True, 25), "mild, at the stop": ("mild", False, 25),     # (augmentation, restore_best, min_epochs)
            "none, best epoch": (None, True, 25), "none, at the stop": (None, False, 25),
            "mild, all 300 epochs": ("mild", False, 300)}


def one_run(d, n:int, seed:int, augment, restore_best:bool, min_epochs:int=25) -> dict:
    "MAP and its last-layer Laplace posterior on the `n`-label subset of `seed`: test metrics of both, the MAP's confidence, the prior."
    import warnings
    from ssbnn.baselines import MAPClassifier, MAPConfig, LastLayerLaplace
    from ssbnn.augment import DigitsAugment
    from ssbnn.data import labelled_subset
    from ssbnn.metrics import evaluate, confidence
    from ssbnn.models import DigitsCNN
    from ssbnn.posterior import PriorEdgeWarning
    i = labelled_subset(d.y_train, n, seed=seed)
    data = (d.x_train[i], d.y_train[i], (d.x_val, d.y_val), d.num_classes)
    net = MAPClassifier(DigitsCNN, DigitsAugment.mild() if augment else None, MAPConfig(device="cpu", seed=seed, restore_best=restore_best,
                                                                                                    min_epochs=min_epochs)).fit(*data)
    p = net.predict_proba(d.x_test)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PriorEdgeWarning)                 # an edge pick is what is recorded here
        lla = LastLayerLaplace(net).fit(*data)
    m, la, info = evaluate(p, d.y_test), evaluate(lla.predict_proba(d.x_test), d.y_test), lla.info()
    conf = confidence(p)
    return {"map_accuracy": m["accuracy"], "map_confidence": conf, "map_gap_pts": 100 * (conf - m["accuracy"]), "map_nll": m["nll"],
            "map_ece": m["ece"], "laplace_nll": la["nll"], "laplace_ece": la["ece"], "prior_precision": info["prior_precision"],
            "prior_on_edge": info["prior_on_edge"], "epochs": net.info()["epochs"]}


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--budgets", default="10,50,126,1257", help="label counts, fractions or 'all' (default 10,50,126,1257: the main job's)")
    p.add_argument("--seeds", type=number(int), default=3, help="label seeds 0..N-1 (default 3, as the main job)")
    p.add_argument("--out", type=Path, default=None, help="JSON record (default: print it)")
    a = p.parse_args(argv)
    prog = "digits_map_calibration.py"
    out = out_file(prog, a.out)
    import numpy as np
    from ssbnn.data import load_digits_splits
    d = load_digits_splits()
    budgets = label_counts(prog, a.budgets.split(","), d)
    rows = []
    for name, (augment, restore, least) in VARIANTS.items():
        for n in budgets:
            runs = [one_run(d, n, s, augment, restore, least) for s in range(a.seeds)]
            row = {"variant": name, "augment": augment or "none", "restore_best": restore, "min_epochs": least, "labels": n,
                   **{k: float(np.mean([r[k] for r in runs])) for k in runs[0] if k != "prior_on_edge"},
                   "prior_precision_median": float(np.median([r["prior_precision"] for r in runs])),
                   "edge_picks": sum(bool(r["prior_on_edge"]) for r in runs), "runs": runs}
            rows.append(row)
            print(f"{name:18s} {n:5d} labels: accuracy {row['map_accuracy']:.3f}, confidence - accuracy {row['map_gap_pts']:+.1f} pts, "
                  f"NLL MAP {row['map_nll']:.3f} -> Laplace {row['laplace_nll']:.3f}, prior {row['prior_precision_median']:.3g} "
                  f"({row['edge_picks']}/{a.seeds} on an edge)", flush=True)
    write_rows(out, rows, a.seeds, command=command_line(prog, argv))


if __name__ == "__main__":
    main()
