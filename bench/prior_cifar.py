"""Table 1 of the paper on CIFAR-10: prior evaluation scores of BNN priors (ResNet-20-FRN) and the self-supervised prior.

    python bench/prior_cifar.py --archive cifar10_train.npz --epochs 1000                     # pretrain the SS prior here
    python bench/prior_cifar.py --archive cifar10_train.npz --model runs/c10-1000/model     # or score an ssbnn-pretrain model (ResNet-18)

Pretraining here follows appendix B.3: the BNN baseline's ResNet-20-FRN as the encoder, tasks of 500 images.

Pairs (augmented view, same class, different class) come from held-out images. Writes a JSON with every figure
(alpha and its bootstrap interval per prior, the time of rho for the SS prior) and the KDE figure next to it.
"""
import argparse, json, sys, time
from pathlib import Path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--archive", type=Path, required=True)
    p.add_argument("--model", type=Path, default=None, help="a model folder from ssbnn-pretrain (or an older model.pt) (else pretrain --epochs here)")
    p.add_argument("--epochs", type=float, default=1000, help="pretraining epochs of the SS prior's encoder (default 1000, the paper's)")
    from ssbnn.experiments.cifar import Encoder
    p.add_argument("--encoder", default="resnet20-frn", choices=[e.value for e in Encoder], help="encoder pretrained here: 'resnet20-frn' (default, the paper's for Table 1) or 'resnet18'")
    p.add_argument("--batch-size", type=int, default=500, help="task size of that pretraining (default 500, the paper's for Table 1)")
    p.add_argument("--pairs", type=int, default=1000, help="pairs per group (default 1000)")
    p.add_argument("--ss-samples", type=int, default=4096)
    p.add_argument("--bnn-samples", type=int, default=8192)
    p.add_argument("--bnn-batch", type=int, default=64, help="networks whose parameters are drawn at once (and run at once, without --one-by-one)")
    p.add_argument("--amp", action="store_true", help="BNN prior: bf16 forward passes (bench/rho_speed.py measures their speed and effect)")
    p.add_argument("--one-by-one", action="store_true", help="BNN prior: run the networks one by one, not with vmap (bench/rho_speed.py times both)")
    p.add_argument("--channels-last", action="store_true", help="BNN prior: channels-last images and weights (with --one-by-one)")
    p.add_argument("--compile", action="store_true", help="BNN prior: compile each network's forward pass (with --one-by-one)")
    p.add_argument("--eval", type=int, default=9000, help="held-out evaluation images, as ssbnn-pretrain holds out (default 9000); "
                   "the pairs come from the 1,000 validation images")
    p.add_argument("--limit", type=int, default=0, help="use a random subset of the images (smoke tests)")
    p.add_argument("--device", default="auto")
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args(argv)

    import torch
    import matplotlib; matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from ssbnn.experiments.cifar import cifar_ssbnn
    from ssbnn.cli import load_model, archive_data, check_unseen
    from ssbnn.augment import SimCLRAugment
    from ssbnn.train import PretrainConfig
    from ssbnn._utils import get_device, atomic_write, environment
    from common import device_tag
    from ssbnn.prior import GROUPS, make_pairs, rho_linear, rho_network, prior_score_ci, plot_kde
    from ssbnn.models import ResNet20FRN

    device = get_device(a.device)
    data = archive_data(a.archive, a.eval, a.limit)          # ssbnn-pretrain's splits: its models never saw these pairs
    if a.model:
        model = load_model(a.model, device=device)
        check_unseen(model, data, a.model)
    else:
        model = cifar_ssbnn(device=device, encoder=a.encoder)
        model.pretrain(data.x_train, PretrainConfig.for_cifar10(epochs=a.epochs, batch_size=min(a.batch_size, len(data.x_train)),
                                                                device=str(device), compile=device.type == "cuda"))
    pairs = make_pairs(data.x_val, data.y_val, a.pairs, SimCLRAugment(), seed=0)     # held-out images

    gen = lambda: torch.Generator(device).manual_seed(0)
    feats = {k: (model.features(xa), model.features(xb)) for k, (xa, xb) in pairs.items()}
    if device.type == "cuda": torch.cuda.synchronize()
    t = time.perf_counter()
    rho = {"self-supervised": {k: rho_linear(*feats[k], n_samples=a.ss_samples, generator=gen()) for k in GROUPS}}
    if device.type == "cuda": torch.cuda.synchronize()
    t_ss = (time.perf_counter() - t) / len(GROUPS)

    bnn = ResNet20FRN().to(device)
    to_dev = lambda x: x.to(device, memory_format=torch.channels_last if a.channels_last else torch.contiguous_format)
    t = time.perf_counter()
    for prior in ("gaussian", "laplace"):
        rho[f"BNN, {prior}"] = {k: rho_network(bnn, to_dev(xa), to_dev(xb), a.bnn_samples, prior, 0.2, a.bnn_batch, gen(), amp=a.amp,
                                               vectorise=not a.one_by_one, compile=a.compile) for k, (xa, xb) in pairs.items()}
    t_bnn = (time.perf_counter() - t) / (2 * len(GROUPS))

    rounded = lambda t: [round(v, 4) for v in t.flatten().tolist()]
    res = {"pairs_per_group": a.pairs, "ss_samples": a.ss_samples, "bnn_samples": a.bnn_samples, "bnn_amp": a.amp, "bnn_one_by_one": a.one_by_one, "bnn_channels_last": a.channels_last, "bnn_compile": a.compile,
           "bnn_network": f"ResNet20FRN(activation={bnn.activation.value!r}): Izmailov et al.'s resnet20_frn_swish on images "
                          f"normalised as their data pipeline does (mean {rounded(bnn.norm.mean)}, std {rounded(bnn.norm.std)})",
           "interval": "95 % percentile bootstrap over the pairs' base images (the three groups resampled together)",
           "seconds_rho_ss_per_group": t_ss, "seconds_rho_bnn_per_group": t_bnn,
           "paper": {"BNN, gaussian": [0.261, 0.024], "BNN, laplace": [0.269, 0.007], "self-supervised": [0.680, 0.063]},
           **environment(device),
           "model": str(a.model) if a.model else f"{a.encoder} pretrained here for {a.epochs:g} epochs of tasks of {a.batch_size}",
           "ss_prior_std": getattr(model.elbo, "prior_std", None),          # the W^c prior the SS encoder was pretrained with
           "command": "python bench/prior_cifar.py " + " ".join(sys.argv[1:] if argv is None else argv)}
    for name, r in rho.items():
        s, lo, hi = prior_score_ci(*[r[k] for k in GROUPS])
        res[name] = {"alpha": s, "interval_95": [lo, hi], "mean_log_rho": {k: float(v.clamp_min(1e-12).log().mean()) for k, v in r.items()}}
        print(f"{name:>18}: alpha {s:.3f} ({lo:.3f}-{hi:.3f}); paper {res['paper'][name][0]} ± {res['paper'][name][1]}")
    print(f"rho, self-supervised prior: {t_ss:.2f} s per {a.pairs} pairs x {a.ss_samples} samples")

    out = a.out or Path(__file__).parent / "results" / f"prior_cifar10_{device_tag(res['device'])}.json"
    atomic_write(out, lambda p: p.write_text(json.dumps(res, indent=1)))
    fig, axs = plt.subplots(1, 3, figsize=(14, 3.4))
    for ax, (name, r) in zip(axs, rho.items()): plot_kde(r, ax, f"{name} (alpha {res[name]['alpha']:.2f})")
    fig.tight_layout(); atomic_write(out.with_suffix(".png"), lambda p: fig.savefig(p, dpi=110, format="png"))
    print(f"wrote {out} and {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
