"""Benchmark SS-BNN pretraining on CIFAR-10 with the paper's recipe on one GPU; writes a JSON of every figure.

    python bench/pretrain_cifar.py --archive path/to/cifar10_train.npz --epochs 50
    python bench/pretrain_cifar.py --archive ... --epochs 10 --star-labels 500      # SS-BNN* instead

The archive holds the 50,000 CIFAR-10 training images as packed JPEG bytes (`jpeg`, `offsets`, `labels`, `classes`),
as on our build machines; with a network connection, `--torchvision-root DIR` reads torchvision's copy instead. From
the training images it holds out `--eval` images for evaluation (kNN and Laplace metrics) and `--val` for the Laplace
prior precision; the rest is the unlabelled set and the kNN memory bank.
"""
import argparse, json, sys
from pathlib import Path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--archive", type=Path, help="packed-JPEG archive of the CIFAR-10 training images")
    src.add_argument("--torchvision-root", type=Path, help="torchvision CIFAR-10 folder (download=True if missing)")
    p.add_argument("--epochs", type=float, default=50)
    p.add_argument("--batch-size", type=int, default=1000)
    p.add_argument("--eval", type=int, default=5000, help="held-out evaluation images (default 5000)")
    p.add_argument("--val", type=int, default=1000, help="held-out validation images for the Laplace prior (default 1000)")
    p.add_argument("--budgets", default="50,500,5000", help="label budgets for the Laplace readout")
    p.add_argument("--star-labels", type=int, default=0, help="pretrain SS-BNN* with this many labels")
    p.add_argument("--ntxent-tau", type=float, default=0., help="pretrain with NT-Xent (SimCLR) at this temperature instead")
    p.add_argument("--lars-trust", type=float, default=1e-3, help="LARS trust coefficient (default 1e-3)")
    p.add_argument("--lr", type=float, default=0.6, help="peak learning rate of encoder and head (default 0.6, the paper's)")
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--limit", type=int, default=0, help="use a seeded random subset of N images (smoke tests; only those are decoded)")
    p.add_argument("--device", default="auto")
    p.add_argument("--profile-steps", type=int, default=20, help="then profile this many steps of a fresh SS-BNN with the same recipe (0: skip)")
    p.add_argument("--profile-skip", type=int, default=10, help="steps run before the profiled ones (compilation, warm-up; default 10)")
    p.add_argument("--dump-features", type=Path, default=None, help="also save raw encoder features (fp16) of 10k train, val and test images here")
    p.add_argument("--out", type=Path, default=None, help="JSON path (default bench/results/<name>.json)")
    a = p.parse_args(argv)

    import torch
    from common import cifar_splits
    from ssbnn._utils import atomic_write
    from ssbnn.experiments.cifar import benchmark_pretraining, time_augment, kornia_simclr, profile_pretraining, cifar_ssbnn
    from ssbnn.train import PretrainConfig
    from ssbnn.augment import SimCLRAugment
    from ssbnn._utils import get_device

    data, decode_s = cifar_splits(a, "pretrain_cifar")
    device = get_device(a.device)
    print(f"{data} (read in {decode_s:.0f} s); device {device}", flush=True)

    xa = data.x_train[:2000].to(device)
    aug = {"ssbnn_ms_2000": time_augment(SimCLRAugment(), xa), "kornia_ms_2000": time_augment(kornia_simclr(), xa)}
    print(f"augmenting 2,000 images: ssbnn {aug['ssbnn_ms_2000']:.2f} ms, kornia pipeline {aug['kornia_ms_2000']:.2f} ms", flush=True)

    budgets = tuple(int(b) for b in a.budgets.split(",") if b)
    res = benchmark_pretraining(data, epochs=a.epochs, batch_size=a.batch_size, compile=not a.no_compile,
                                budgets=budgets, star_labels=a.star_labels, ntxent_tau=a.ntxent_tau, device=device,
                                lars_trust=a.lars_trust, lr=a.lr)
    model = res.pop("model")
    if a.dump_features:
        from ssbnn.features import encode
        a.dump_features.mkdir(parents=True, exist_ok=True)
        for split, xs, ys in (("train", data.x_train[:10000], data.y_train[:10000]), ("val", data.x_val, data.y_val), ("test", data.x_test, data.y_test)):
            torch.save({"features": encode(model.encoder, xs).half().cpu(), "y": ys.clone()}, a.dump_features / f"features_{split}.pt")
    if a.profile_steps:
        cfg = PretrainConfig.for_cifar10(epochs=a.epochs, batch_size=a.batch_size, compile=not a.no_compile, lars_trust=a.lars_trust, lr=a.lr, device=str(device))
        res["profile"] = profile_pretraining(cifar_ssbnn(data.num_classes, device=device), data.x_train, cfg, steps=a.profile_steps, skip=a.profile_skip)
        print("where a step's time goes:", ", ".join(f"{r['name']} {100 * r['share']:.0f} %" for r in res["profile"]["top"][:5]), flush=True)
    res.update(augment=aug, read_seconds=decode_s, command="python bench/" + Path(__file__).name + " " + " ".join(sys.argv[1:] if argv is None else argv))
    name = f"pretrain_{res['method'].replace('*', '_star')}_cifar10_{res['device'].split()[1] if ' ' in res['device'] else 'cpu'}_{a.epochs:g}ep{'' if a.lars_trust == 1e-3 else f'_trust{a.lars_trust:g}'}.json"
    out = a.out or Path(__file__).parent / "results" / name
    atomic_write(out, lambda p: p.write_text(json.dumps(res, indent=1)))
    summary = {k: res[k] for k in ("views_per_second", "seconds_per_epoch", "wall_seconds", "peak_gpu_gb", "knn_accuracy", "final_tau", "final_sigma")}
    print(json.dumps(summary, indent=1))
    for r in res["laplace"]: print(f"Laplace readout, {r['labels']} labels: accuracy {r['accuracy']:.3f}, NLL {r['nll']:.3f}, ECE {r['ece']:.3f}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
