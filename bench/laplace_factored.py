"""Time the Kronecker-factored (or diagonal) last-layer Laplace at many classes: predictive and prior search, ssbnn's against laplace-torch's.

    python bench/laplace_factored.py --inputs 500 --out bench/results/laplace_kron_100_cpu.json

Above ten classes the paper's Hessian is Kronecker-factored. For it (and for a diagonal one) laplace-torch's GLM
predictive pushes each input's Jacobian through the factors and forms the logits' whole C x C covariance.
`posterior.laplace_predict` computes only the C variances the probit predictive needs, in the factors' eigenbasis, and
`posterior.search_prior_precision` scores every candidate prior precision in one pass the same way; laplace-torch's
way is one predictive per candidate (`posterior.probit_nll`, the exhaustive reference). It holds each input's Jacobian,
C x C(dim + 1) numbers (20 MB at 100 classes and 512 features in float32): it runs here on 100 inputs at a time, and
laplace-torch's search on `--val` inputs. Features are random, around one random centre per class: at the defaults the
MAP readout is right on about a fifth of the inputs (chance: a hundredth), over-confident, and the pick lies inside the grid. Writes JSON: seconds of each, the largest differences, and both picks.
"""
from pathlib import Path
from common import parser, number, check_device, out_file, command_line, timer, show_record

PROG = "laplace_factored.py"


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--dim", type=number(int, low=1, high=4096), default=512, help="features (a ResNet-18's 512; at most 4096)")
    p.add_argument("--classes", type=number(int, low=2, high=1000), default=100)
    p.add_argument("--hessian", choices=("kron", "diag"), default="kron")
    p.add_argument("--train", type=number(int, low=1, high=10**6), default=1000, help="labelled features the Laplace approximation is fitted on")
    p.add_argument("--inputs", type=number(int, low=1, high=10**7), default=2000, help="inputs predicted")
    p.add_argument("--val", type=number(int, low=1, high=10**6), default=100, help="validation inputs of the prior search (laplace-torch's holds all their Jacobians)")
    p.add_argument("--device", default="auto")
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args(argv)
    dev, out = check_device(PROG, a.device), out_file(PROG, a.out)
    import torch
    from ssbnn.posterior import fit_readout, fit_laplace, laplace_predict, search_prior_precision, PriorGrid
    from ssbnn._utils import environment
    timed = timer(dev)
    g = torch.Generator(dev).manual_seed(0)
    centres = 0.17 * torch.randn(a.classes, a.dim, device=dev, generator=g)
    def sample(n):
        y = torch.arange(n, device=dev) % a.classes
        return centres[y] + torch.randn(n, a.dim, device=dev, generator=g), y
    (f, y), (q, _), (fv, yv) = sample(a.train), sample(a.inputs), sample(a.val)
    t_fit, la = timed(lambda: fit_laplace(fit_readout(f, y, a.classes, 1e-2), f, y, a.hessian))
    grid = PriorGrid(max_extend=0)                                   # the default grid's 41 candidates, not extended
    t_search, ours = timed(lambda: search_prior_precision(la, fv, yv, grid))
    t_exhaustive, full = timed(lambda: search_prior_precision(la, fv, yv, grid, exhaustive=True))
    la.prior_precision = ours.precision
    t_first, _ = timed(lambda: laplace_predict(la, q))
    t_ours, mine = timed(lambda: laplace_predict(la, q))
    t_lib, lib = timed(lambda: torch.cat([la(q[i:i + 100], pred_type="glm", link_approx="probit") for i in range(0, len(q), 100)]))
    record = {"dim": a.dim, "classes": a.classes, "hessian": a.hessian, "params": a.classes * (a.dim + 1), "train": a.train,
              "inputs": a.inputs, "val": a.val, "candidates": len(grid.values()), "fit_s": t_fit,
              "search_ssbnn_s": t_search, "search_exhaustive_s": t_exhaustive, "search_speedup": t_exhaustive / t_search,
              "search_nll_max_abs_diff": float((ours.nll - full.nll).abs().max()), "pick": ours.precision, "pick_exhaustive": full.precision,
              "ssbnn_first_s": t_first, "ssbnn_s": t_ours, "laplace_torch_s": t_lib, "speedup": t_lib / t_ours,
              "max_abs_diff": float((mine - lib).abs().max()), "command": command_line(PROG, argv), **environment(dev)}
    show_record(record, out)


if __name__ == "__main__":
    main()
