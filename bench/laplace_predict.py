"""Time the last-layer Laplace predictive of a full-Hessian readout: ssbnn's class blocks against laplace-torch's own.

    python bench/laplace_predict.py --inputs 2000 --out bench/results/laplace_predict_cpu.json
    python bench/laplace_predict.py --inputs 2000 --ggn-scale 1e-16 --out bench/results/laplace_scale_saturated_cpu.json

Both compute the probit predictive (Eq. L2) of the same fitted approximation: laplace-torch forms the logits' whole
C x C covariance J Sigma J^T for each input (and Sigma = S S^T on every call), `posterior.laplace_predict` only the C
diagonal entries, each from its class's (d+1) x (d+1) block of Sigma (formed once and kept while the scale is).
The posterior scale (the Cholesky factor of H + lambda I), computed once per prior precision, is timed on its own:
laplace-torch's, in the Hessian's dtype, and `posterior.stable_scale`'s, in float64. Features are random: the
predictive's cost does not depend on their values, but the float32 factorisation's does: `--ggn-scale` multiplies the
GGN as a saturated readout's (probabilities within about 1e-17 of 0 or 1) is small, and the float32 factorisation then
runs through subnormal numbers, slow on a CPU. Writes JSON: seconds of each, the largest difference.
"""
from pathlib import Path
from common import fail, parser, number, check_device, out_file, command_line, timer, show_record

PROG = "laplace_predict.py"


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--dim", type=number(int, low=1, high=4096), default=512, help="features (a ResNet-18's 512; at most 4096)")
    p.add_argument("--classes", type=number(int, low=2, high=1000), default=10)
    p.add_argument("--train", type=number(int, low=1, high=10**6), default=500, help="labelled features the Laplace approximation is fitted on")
    p.add_argument("--inputs", type=number(int, low=1, high=10**7), default=9000, help="inputs predicted (one CIFAR-10 run scores about 150,000)")
    p.add_argument("--ggn-scale", type=number(float, low=0, high=1, open_low=True), default=1.,
                   help="multiply the GGN by this (1e-16: a saturated readout's, whose float32 factorisation is slow on a CPU)")
    p.add_argument("--device", default="auto")
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args(argv)
    if a.dim * a.classes > 20_000:                                   # the full GGN is (dim x classes)^2 numbers
        fail(PROG, f"--dim {a.dim} x --classes {a.classes} = {a.dim * a.classes:,} last-layer weights: their full Hessian would not fit; keep the product at most 20,000")
    dev, out = check_device(PROG, a.device), out_file(PROG, a.out)
    import torch
    from ssbnn.posterior import fit_readout, fit_laplace, laplace_predict, stable_scale
    from ssbnn._utils import environment
    timed = timer(dev)
    g = torch.Generator(dev).manual_seed(0)
    f, y = torch.randn(a.train, a.dim, device=dev, generator=g), torch.arange(a.train, device=dev) % a.classes
    q = torch.randn(a.inputs, a.dim, device=dev, generator=g)
    la = fit_laplace(fit_readout(f, y, a.classes, 1e-2), f, y)
    from laplace.utils import invsqrt_precision                      # after fit_laplace, which silences laplace-torch's import warnings
    la.H = la.H * a.ggn_scale
    la.prior_precision = 1.
    t_scale_lib, lib_scale = timed(lambda: invsqrt_precision(la.posterior_precision))   # laplace-torch's own, in H's dtype
    t_scale, scale = timed(lambda: stable_scale(la).posterior_scale)
    t_first, _ = timed(lambda: laplace_predict(la, q))                 # forms the class blocks
    t_ours, ours = timed(lambda: laplace_predict(la, q))
    t_lib, lib = timed(lambda: torch.cat([la(q[i:i + 1000], pred_type="glm", link_approx="probit") for i in range(0, len(q), 1000)]))
    record = {"dim": a.dim, "classes": a.classes, "params": a.classes * (a.dim + 1), "train": a.train, "inputs": a.inputs,
              "ggn_scale": a.ggn_scale, "dtype": str(la.H.dtype).removeprefix("torch."),
              "scale_laplace_torch_s": t_scale_lib, "scale_ssbnn_s": t_scale, "scale_max_abs_diff": float((scale - lib_scale).abs().max()),
              "ssbnn_first_s": t_first, "ssbnn_s": t_ours, "laplace_torch_s": t_lib, "speedup": t_lib / t_ours,
              "max_abs_diff": float((ours - lib).abs().max()), "command": command_line(PROG, argv), **environment(dev)}
    show_record(record, out)


if __name__ == "__main__":
    main()
