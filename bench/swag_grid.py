"""SWAG's learning rate on the digits: the paper's grid (1e-2, 1e-3, 1e-4) against a wider one, per labelled subset.

    python bench/swag_grid.py --out bench/results/swag_grid_digits_cpu.json

Trains the digits evaluation's MAP networks (its budgets, label seeds, subsets and settings: `evaluation.labelled` on
`digits_setup`), then runs SWAG from each at every rate of `--lrs` on its own and scores it on the validation split,
which picks the rate, and on the test split. Each row says which rate the paper's grid picks and whether that is the
grid's edge, which rate the wider grid picks, and their test metrics beside the MAP network's. A rate fitted on its own
gives the moments and draws it gets in `SWAG.fit`'s grid (the same generator seeds), so the paper's pick is
`SWAG.fit`'s. Writes JSON.
"""
import argparse, json, math, sys
from pathlib import Path
from common import command_line, label_counts, parser, number, out_file


def lr_list(text:str) -> list:
    "Comma-separated positive learning rates, largest first (an argparse type)."
    try: out = sorted({float(v) for v in text.split(",")}, reverse=True)
    except ValueError: out = []
    if not out or not all(0 < lr < math.inf for lr in out):
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of positive numbers; give e.g. 1e-1,1e-2,1e-3,1e-4")
    return out


def _pick(rates:dict, lrs) -> float:
    "The rate of `lrs` with the lowest validation NLL in `rates` ({rate: {'val_nll': ...}})."
    return min(lrs, key=lambda lr: rates[lr]["val_nll"])


def summary(rows:list) -> list:
    "Per budget: how often each grid's pick is its edge, and the mean test NLL of the MAP network, of SWAG at the paper's pick and at the wider grid's."
    out = []
    for n in dict.fromkeys(r["labels"] for r in rows):
        rs = [r for r in rows if r["labels"] == n]
        mean = lambda f: sum(map(f, rs)) / len(rs)
        out.append({"labels": n, "runs": len(rs), "paper_pick_on_edge": sum(r["paper_pick_on_edge"] for r in rs),
                    "wide_pick_on_edge": sum(r["wide_pick_on_edge"] for r in rs),
                    "map_nll": mean(lambda r: r["map"]["nll"]), "paper_nll": mean(lambda r: r["rates"][str(r["paper_pick"])]["nll"]),
                    "wide_nll": mean(lambda r: r["rates"][str(r["wide_pick"])]["nll"]),
                    "wide_picks": [r["wide_pick"] for r in rs]})
    return out


PROG = Path(__file__).name

def main(argv=None):
    from ssbnn.cli import add_options
    from ssbnn.experiments.evaluation import EvalConfig
    p = parser(__doc__)
    add_options(p, EvalConfig, ["budgets", "seeds"])
    p.add_argument("--lrs", type=lr_list, default=lr_list("1,3e-1,1e-1,3e-2,1e-2,1e-3,1e-4"), help="SWAG learning rates to fit; must include the paper's")
    p.add_argument("--samples", type=number(int, low=1, high=1000), default=None, help="SWAG draws per prediction (default SWAGConfig's)")
    p.add_argument("--out", default=None, help="the JSON record to write (default: stdout)")
    a = p.parse_args(argv)
    out = out_file(PROG, a.out) if a.out else None
    from dataclasses import replace
    import torch
    from ssbnn._utils import atomic_write, environment
    from ssbnn.baselines import SWAG, SWAGConfig
    from ssbnn.experiments.evaluation import digits_setup, labelled
    from ssbnn.metrics import evaluate
    lrs, paper = a.lrs, SWAGConfig().lrs
    if missing := [lr for lr in paper if lr not in lrs]:
        p.error(f"--lrs leaves out the paper's rate(s) {', '.join(map(str, missing))}; include {', '.join(map(str, paper))}")
    setup = digits_setup(device="cpu")
    counts = label_counts(PROG, a.budgets, setup.data)                    # before any network is trained
    swag_config = replace(setup.swag_config, **({"samples": a.samples} if a.samples else {}))
    cfg, d = EvalConfig(budgets=a.budgets, seeds=a.seeds), setup.data
    score = lambda probs: {k: v for k, v in evaluate(probs, d.y_test).items() if k in ("nll", "accuracy", "ece")}
    rows = []
    for n in counts:
        for seed in range(cfg.seed, cfg.seed + a.seeds):
            sub = labelled(setup, cfg, n, seed, [])
            rates = {}
            for lr in lrs:
                s = SWAG(sub.map(), replace(swag_config, lrs=(lr,))).fit(*sub.data())
                rates[lr] = {"val_nll": s.val_nll_[lr], **score(s.predict_proba(d.x_test))}     # the NLL that SWAG.fit picks by
            pick, wide = _pick(rates, paper), _pick(rates, lrs)
            rows.append({"labels": n, "seed": seed, "map": score(sub.map().predict_proba(d.x_test)),
                         "rates": {str(lr): r for lr, r in rates.items()}, "paper_pick": pick,
                         "paper_pick_on_edge": pick in (min(paper), max(paper)), "wide_pick": wide,
                         "wide_pick_on_edge": wide in (min(lrs), max(lrs))})
            print(json.dumps({k: rows[-1][k] for k in ("labels", "seed", "paper_pick", "wide_pick")}), flush=True)
    text = json.dumps({"rows": rows, "summary": summary(rows), "paper_lrs": list(paper), "lrs": lrs, "samples": swag_config.samples,
                       "seeds": a.seeds, "command": command_line(PROG, argv),
                       **environment(torch.device("cpu"))}, indent=1)
    if out: atomic_write(out, lambda f: f.write_text(text))
    else: sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
