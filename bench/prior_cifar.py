"""Table 1 of the paper on CIFAR-10: prior evaluation scores of BNN priors (ResNet-20-FRN) and the self-supervised prior.

    python bench/prior_cifar.py --archive cifar10_train.npz --epochs 1000                     # pretrain the SS prior here
    python bench/prior_cifar.py --archive cifar10_train.npz --model runs/c10-1000/model     # or score an ssbnn-pretrain model (ResNet-18)
    python bench/prior_cifar.py --archive cifar10_train.npz --priors bnn-gaussian --out part1.json   # one prior a run ...
    python bench/prior_cifar.py --merge part1.json part2.json part3.json --out prior_cifar10.json    # ... joined into one record

Pretraining here follows appendix B.3: the BNN baseline's ResNet-20-FRN as the encoder, tasks of 500 images.

Pairs (augmented view, same class, different class) come from held-out images. Writes a JSON with every figure
(alpha and its bootstrap interval per prior, the time of rho, every pair's rho) and the KDE figure next to it. A run
may score only some of the priors (`--priors`: a device session too short for all of them); `--merge` joins such
parts, and refuses parts that scored other pairs or the same prior twice.
"""
import argparse, hashlib, json, time
from pathlib import Path
from common import parser, number, check_device, check_path, out_file, guarded, epochs_arg, command_line, fail, made_by, record_command, unused_flags

PROG = "prior_cifar.py"

PRIORS = {"self-supervised": "self-supervised", "bnn-gaussian": "BNN, gaussian", "bnn-laplace": "BNN, laplace"}   # flag -> record key
PAPER = {"BNN, gaussian": [0.261, 0.024], "BNN, laplace": [0.269, 0.007], "self-supervised": [0.680, 0.063]}
SHARED = ("pairs_per_group", "pairs_source_sha256", "eval_images", "limit")   # what every part of one Table 1 must share


def priors_arg(text:str) -> list[str]:
    "The `--priors` list: names from PRIORS, comma-separated, each once."
    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if n not in PRIORS]
    if bad or not names or len(set(names)) < len(names):
        raise argparse.ArgumentTypeError(f"{text!r}: name each prior once, from {', '.join(PRIORS)}")
    return names


def pairs_digest(x, y, n_pairs:int, seed:int=0) -> str:
    "sha256 of what `make_pairs` draws the pairs from (the held-out uint8 images, labels, count, seed): parts on the same pairs share it."
    h = hashlib.sha256(f"{n_pairs} {seed}".encode())
    for t in (x, y): h.update(t.contiguous().cpu().numpy().tobytes())    # integers: the same bytes on any machine
    return h.hexdigest()


def scores(rho:dict) -> dict:
    "alpha, its paired bootstrap interval and the mean log rho per group, for each prior's {group: rho (N,)}."
    import torch
    from ssbnn.prior import GROUPS, prior_score_ci
    out = {}
    for name, r in rho.items():
        r = {k: torch.as_tensor(v) for k, v in r.items()}
        s, lo, hi = prior_score_ci(*[r[k] for k in GROUPS])
        out[name] = {"alpha": s, "interval_95": [lo, hi], "mean_log_rho": {k: float(v.clamp_min(1e-12).log().mean()) for k, v in r.items()}}
        print(f"{name:>18}: alpha {s:.3f} ({lo:.3f}-{hi:.3f}); paper {PAPER[name][0]} ± {PAPER[name][1]}")
    return out


def check_figure(out:Path) -> Path:
    "`out` if its figure (the .png beside it) can be written: not the record's own name, not a folder, and new or beside this script's record."
    fig = out.with_suffix(".png")
    if out.suffix.lower() == ".png": fail(PROG, f"--out {out} is the figure's name; give the record a .json name (its figure goes beside it as .png)")
    if fig.is_dir(): fail(PROG, f"--out {out}: its figure {fig} would replace a folder; give another --out")
    if fig.exists() and not (out.exists() and made_by(PROG, record_command(out))):
        fail(PROG, f"--out {out}: {fig} exists beside no record of {PROG}; give another --out (only {PROG}'s own figures are replaced)")
    return out


def write(res:dict, out:Path):
    "The record (atomically) and the KDE figure of every prior it holds, from the record's own rho values."
    import torch
    import matplotlib; matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from ssbnn._utils import atomic_write
    from ssbnn.prior import plot_kde
    rho = res["rho"]
    fig, axs = plt.subplots(1, len(rho), figsize=(4.7 * len(rho), 3.4), squeeze=False)   # drawn first: a figure that fails leaves no record
    for ax, (name, r) in zip(axs[0], rho.items()):
        plot_kde({k: torch.tensor(v) for k, v in r.items()}, ax, f"{name} (alpha {res[name]['alpha']:.2f})")
    fig.tight_layout()
    atomic_write(out, lambda p: p.write_text(json.dumps(res, indent=1)))
    atomic_write(out.with_suffix(".png"), lambda p: fig.savefig(p, dpi=110, format="png"))
    print(f"wrote {out} and {out.with_suffix('.png')}")


def _part_problem(r) -> str|None:
    "What keeps a record from being a part of Table 1 (an older or hand-edited file), or None."
    import math
    from ssbnn._utils import is_number as number
    from ssbnn.prior import GROUPS
    if not (isinstance(r, dict) and isinstance(r.get("rho"), dict)) or any(k not in r for k in (*SHARED, "interval", "device")):
        return "written since 2026-11-26? It has no rho values, pairs' hash or interval"
    if not isinstance(r["device"], str): return f"its device {r['device']!r} is not a device's name"
    rho_in_range = lambda v: number(v) and math.isfinite(v) and 0 <= v <= 1 + 1e-6   # a probability, as `plot_kde` checks it
    for name, groups in r["rho"].items():
        if name not in PRIORS.values(): return f"it scored the unknown prior {name!r} (priors: {', '.join(PRIORS.values())})"
        if not (isinstance(groups, dict) and sorted(groups) == sorted(GROUPS) and all(isinstance(v, list) and all(map(rho_in_range, v)) for v in groups.values())):
            return f"its {name!r} rho values are not a list of numbers in [0, 1] for each group of pairs ({', '.join(GROUPS)})"
        if any(len(v) != r["pairs_per_group"] for v in groups.values()): return f"its {name!r} rho values are not {r['pairs_per_group']!r} a group, as its pairs_per_group says"
        if not (isinstance(r.get(name), dict) and number(r[name].get("alpha"))): return f"it has no alpha for the {name!r} prior"
    return None


def merge(parts:list[Path]) -> dict:
    "One record from parts that scored different priors on the same pairs; ValueError says which part does not fit."
    recs = []
    for path in parts:
        try: recs.append(json.loads(Path(path).read_text()))
        except (OSError, ValueError) as e: raise ValueError(f"{path} is not a readable JSON record ({e}); give prior_cifar.py's records") from None
    first, seen = recs[0], {}
    for path, r in zip(parts, recs):
        if bad := _part_problem(r): raise ValueError(f"{path} is not a part of Table 1 ({bad}); score it again")
        diff = [k for k in SHARED if r[k] != first[k]]
        if diff: raise ValueError(f"{path} scored other pairs than {parts[0]} ({', '.join(diff)} differ)")
        for name in r["rho"]:
            if name in seen: raise ValueError(f"{path} and {seen[name]} both scored the {name!r} prior: keep one")
            seen[name] = path
    res = {k: first[k] for k in SHARED}
    res.update(paper=PAPER, interval=first["interval"],
               device=" + ".join(dict.fromkeys(r["device"] for r in recs)),   # where each part ran; each part's own fields under `parts`
               parts=[{k: v for k, v in r.items() if k not in ("rho", "paper", *PAPER)} for r in recs],
               rho={n: v for r in recs for n, v in r["rho"].items()},
               command="python bench/prior_cifar.py --merge " + " ".join(map(str, parts)))
    res.update({n: r[n] for r in recs for n in r["rho"]})
    return res


def main(argv=None):
    p = parser(__doc__)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--archive", type=Path)
    src.add_argument("--merge", type=Path, nargs="+", metavar="PART", help="join records that each scored some of the priors (needs --out)")
    p.add_argument("--priors", type=priors_arg, default=list(PRIORS), help=f"the priors to score, comma-separated (default all: {','.join(PRIORS)})")
    p.add_argument("--model", type=Path, default=None, help="a model folder from ssbnn-pretrain (or an older model.pt) (else pretrain --epochs here)")
    p.add_argument("--epochs", type=epochs_arg(), default=1000, help="pretraining epochs of the SS prior's encoder (default 1000, the paper's)")
    from ssbnn.experiments.cifar import Encoder
    p.add_argument("--encoder", default="resnet20-frn", choices=[e.value for e in Encoder], help="encoder pretrained here: 'resnet20-frn' (default, the paper's for Table 1) or 'resnet18'")
    p.add_argument("--batch-size", type=number(int, low=2), default=500, help="task size of that pretraining (default 500, the paper's for Table 1)")
    p.add_argument("--pairs", type=number(int), default=1000, help="pairs per group (default 1000)")
    p.add_argument("--ss-samples", type=number(int), default=4096)
    p.add_argument("--bnn-samples", type=number(int), default=8192)
    p.add_argument("--bnn-batch", type=number(int), default=64, help="networks whose parameters are drawn at once (and run at once, without --one-by-one)")
    p.add_argument("--amp", action="store_true", help="BNN prior: bf16 forward passes (bench/rho_speed.py measures their speed and effect)")
    p.add_argument("--one-by-one", action="store_true", help="BNN prior: run the networks one by one, not with vmap (bench/rho_speed.py times both)")
    p.add_argument("--channels-last", action="store_true", help="BNN prior: channels-last images and weights (with --one-by-one)")
    p.add_argument("--compile", action="store_true", help="BNN prior: compile each network's forward pass (with --one-by-one)")
    p.add_argument("--eval", type=number(int), default=9000, help="held-out evaluation images, as ssbnn-pretrain holds out (default 9000); "
                   "the pairs come from the 1,000 validation images")
    p.add_argument("--limit", type=number(int, low=0), default=0, help="use a random subset of the images (smoke tests)")
    p.add_argument("--device", default="auto")
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args(argv)
    if a.merge:
        if a.out is None: p.error("--merge needs --out")
        if given := unused_flags(p, a, ("merge", "out")):
            p.error(f"--merge joins records: it scores nothing, so it takes no {', '.join(given)}")
        if a.out.resolve() in [Path(m).resolve() for m in a.merge]: p.error(f"--out {a.out} is one of the parts; give a new file")
        out = check_figure(out_file(PROG, a.out))
        try: res = merge(a.merge)
        except (ValueError, OSError, KeyError) as e: p.error(str(e))
        return write(res, out)
    if a.model and "self-supervised" not in a.priors: p.error("--model is the self-supervised prior's encoder: add self-supervised to --priors")
    check_path(PROG, "--archive", a.archive, folder=False); check_path(PROG, "--model", a.model)
    device = check_device(PROG, a.device)
    from common import device_tag
    part = "" if len(a.priors) == len(PRIORS) else "_" + "+".join(a.priors)      # a part is not named as the whole table
    out = check_figure(out_file(PROG, a.out or Path(__file__).parent / "results" / f"prior_cifar10_{device_tag(device)}{part}.json"))

    import torch
    from ssbnn.experiments.cifar import cifar_ssbnn
    from ssbnn.cli import load_model, archive_data, check_unseen
    from ssbnn.augment import SimCLRAugment
    from ssbnn.train import PretrainConfig
    from ssbnn._utils import environment
    from ssbnn.prior import GROUPS, make_pairs, rho_linear, rho_network
    from ssbnn.models import ResNet20FRN

    data = guarded(PROG, lambda: archive_data(a.archive, a.eval, a.limit))   # ssbnn-pretrain's splits: its models never saw these pairs
    pairs = make_pairs(data.x_val, data.y_val, a.pairs, SimCLRAugment(), seed=0)     # held-out images
    gen = lambda: torch.Generator(device).manual_seed(0)
    sync = lambda: torch.cuda.synchronize() if device.type == "cuda" else None
    rho, res = {}, {"pairs_per_group": a.pairs, "pairs_source_sha256": pairs_digest(data.x_val, data.y_val, a.pairs), "eval_images": a.eval, "limit": a.limit}
    if "self-supervised" in a.priors:
        if a.model:
            model = guarded(PROG, lambda: load_model(a.model, device=device))
            guarded(PROG, lambda: check_unseen(model, data, a.model))
        else:
            model = cifar_ssbnn(device=device, encoder=a.encoder)
            model.pretrain(data.x_train, PretrainConfig.for_cifar10(epochs=a.epochs, batch_size=min(a.batch_size, len(data.x_train)),
                                                                    device=str(device), compile=device.type == "cuda"))
        feats = {k: (model.features(xa), model.features(xb)) for k, (xa, xb) in pairs.items()}
        sync(); t = time.perf_counter()
        rho["self-supervised"] = {k: rho_linear(*feats[k], n_samples=a.ss_samples, generator=gen()) for k in GROUPS}
        sync(); res["seconds_rho_ss_per_group"] = (time.perf_counter() - t) / len(GROUPS)
        res.update(ss_samples=a.ss_samples, ss_prior_std=getattr(model.elbo, "prior_std", None),   # the W^c prior the SS encoder was pretrained with
                   ss_weight_decay=getattr(getattr(model, "config_", None), "weight_decay", None),  # and its weight decay (None: not recorded)
                   model=str(a.model) if a.model else f"{a.encoder} pretrained here for {a.epochs:g} epochs of tasks of {a.batch_size}")
    bnn_priors = [n for n in a.priors if n.startswith("bnn-")]
    if bnn_priors:
        bnn = ResNet20FRN().to(device)
        to_dev = lambda x: x.to(device, memory_format=torch.channels_last if a.channels_last else torch.contiguous_format)
        rounded = lambda t: [round(v, 4) for v in t.flatten().tolist()]
        t = time.perf_counter()
        for prior in bnn_priors:
            rho[PRIORS[prior]] = {k: rho_network(bnn, to_dev(xa), to_dev(xb), a.bnn_samples, prior.removeprefix("bnn-"), 0.2, a.bnn_batch, gen(),
                                                 amp=a.amp, vectorise=not a.one_by_one, compile=a.compile) for k, (xa, xb) in pairs.items()}
        res.update(seconds_rho_bnn_per_group=(time.perf_counter() - t) / (len(bnn_priors) * len(GROUPS)), bnn_samples=a.bnn_samples,
                   bnn_amp=a.amp, bnn_one_by_one=a.one_by_one, bnn_channels_last=a.channels_last, bnn_compile=a.compile,
                   bnn_network=f"ResNet20FRN(activation={bnn.activation.value!r}): Izmailov et al.'s resnet20_frn_swish on images "
                               f"normalised as their data pipeline does (mean {rounded(bnn.norm.mean)}, std {rounded(bnn.norm.std)})")
    res.update(interval="95 % percentile bootstrap over the pairs' base images (the three groups resampled together)", paper=PAPER,
               **environment(device), command=command_line(PROG, argv))
    res.update(scores(rho))
    res["rho"] = {n: {k: [float(f"{v:.6g}") for v in r.tolist()] for k, r in g.items()} for n, g in rho.items()}   # every pair's rho, for --merge
    if "seconds_rho_ss_per_group" in res: print(f"rho, self-supervised prior: {res['seconds_rho_ss_per_group']:.2f} s per {a.pairs} pairs x {a.ss_samples} samples")
    write(res, out)


if __name__ == "__main__":
    main()
