"""The main job's encoder under each way of finding the MAP readout, with and without its Laplace posterior.

    python bench/digits_readouts.py --out bench/results/digits_readouts.json

Pretrains the default SS-BNN (seed 0, as `ssbnn` does; or resumes `--checkpoint`, e.g. the main job's
`pretrain.ckpt`), then fits the main job's labelled subsets (seeds 0-2) with each `Readout` and scores the test split:
the paper's protocol (`probe`), the validation-tuned L-BFGS readout (`tuned`) and the marginal-likelihood one
(`marglik`). Writes JSON.
"""
import argparse, json, sys, warnings
from pathlib import Path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint", type=Path, default=None, help="a finished pretraining checkpoint of the default recipe")
    p.add_argument("--budgets", default="10,50")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args(argv)
    import numpy as np, torch
    from ssbnn.core import SSBNN, LaplacePosterior
    from ssbnn.data import load_digits_splits, labelled_subset
    from ssbnn.metrics import evaluate
    from ssbnn.posterior import PriorEdgeWarning
    from ssbnn._utils import atomic_write, environment
    warnings.simplefilter("ignore", PriorEdgeWarning)
    d = load_digits_splits()
    model = SSBNN(device="cpu", seed=0).pretrain(d.x_train, checkpoint=a.checkpoint, progress=False)
    rows = []
    for readout in ("probe", "tuned", "marglik"):
        model.posterior = LaplacePosterior(readout=readout)
        for n in map(int, a.budgets.split(",")):
            runs = []
            for s in range(a.seeds):
                i = labelled_subset(d.y_train, n, seed=s)
                model.fit(d.x_train[i], d.y_train[i], (d.x_val, d.y_val), d.num_classes)
                la, mp = (evaluate(model.predict_proba(d.x_test, laplace=b), d.y_test) for b in (True, False))
                runs.append([la["nll"], mp["nll"], la["ece"], mp["ece"], la["accuracy"], model.posterior_.prior_precision_])
            m = np.mean(runs, 0)
            rows.append({"readout": readout, "labels": n, "laplace_nll": m[0], "map_nll": m[1], "laplace_ece": m[2],
                         "map_ece": m[3], "accuracy": m[4], "prior_precision_mean": m[5]})
            print(json.dumps(rows[-1]), flush=True)
    out = json.dumps({"rows": rows, "meta": {"seeds": a.seeds, **environment(torch.device("cpu"))}}, indent=1)
    if a.out: atomic_write(a.out, lambda f: f.write_text(out))
    else: sys.stdout.write(out + "\n")


if __name__ == "__main__":
    main()
