"""The main job's encoder under each way of finding the MAP readout, with and without its Laplace posterior.

    python bench/digits_readouts.py --out bench/results/digits_readouts.json

Pretrains the default SS-BNN (seed 0, as `ssbnn` does; or resumes `--checkpoint`, e.g. the main job's
`pretrain.ckpt`), then fits the main job's labelled subsets (seeds 0-2) with each `Readout` and scores the test split:
the paper's protocol (`probe`), the validation-tuned L-BFGS readout (`tuned`) and the marginal-likelihood one
(`marglik`). Writes JSON.
"""
import json, warnings
from common import command_line, label_counts, number, out_file, parser
from pathlib import Path


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--checkpoint", type=Path, default=None, help="a finished pretraining checkpoint of the default recipe")
    p.add_argument("--budgets", default="10,50", help="label counts, fractions or 'all' (default 10,50)")
    p.add_argument("--seeds", type=number(int, low=1, high=1000), default=3, help="label seeds 0..N-1 (default 3, as the main job)")
    p.add_argument("--out", type=Path, default=None, help="JSON record (default: print it)")
    a = p.parse_args(argv)
    prog = "digits_readouts.py"
    out = out_file(prog, a.out)
    import numpy as np
    from ssbnn.core import SSBNN, LaplacePosterior
    from ssbnn.data import load_digits_splits
    from ssbnn.posterior import PriorEdgeWarning
    from common import labelled_scores, write_rows
    warnings.simplefilter("ignore", PriorEdgeWarning)
    d = load_digits_splits()
    budgets = label_counts(prog, a.budgets.split(","), d)                # before pretraining
    model = SSBNN(device="cpu", seed=0).pretrain(d.x_train, checkpoint=a.checkpoint, progress=False)
    rows = []
    for readout in ("probe", "tuned", "marglik"):
        model.posterior = LaplacePosterior(readout=readout)
        for n in budgets:
            runs = []
            for s in range(a.seeds):
                la, mp = labelled_scores(model, d, n, s)
                runs.append([la["nll"], mp["nll"], la["ece"], mp["ece"], la["accuracy"], model.posterior_.prior_precision_])
            m = np.mean(runs, 0)
            rows.append({"readout": readout, "labels": n, "laplace_nll": m[0], "map_nll": m[1], "laplace_ece": m[2],
                         "map_ece": m[3], "accuracy": m[4], "prior_precision_mean": m[5]})
            print(json.dumps(rows[-1]), flush=True)
    write_rows(out, rows, a.seeds, command=command_line(prog, argv))


if __name__ == "__main__":
    main()
