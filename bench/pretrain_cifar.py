"""Benchmark SS-BNN pretraining on CIFAR-10 with the CIFAR-10 recipe (`PretrainConfig.for_cifar10`) on one GPU; writes a JSON of every figure.

    python bench/pretrain_cifar.py --archive path/to/cifar10_train.npz --epochs 50
    python bench/pretrain_cifar.py --archive ... --epochs 10 --star-labels 500      # SS-BNN* instead
    python bench/pretrain_cifar.py --archive ... --epochs 50 --budgets 500 --profile-steps 0 --out-dir bench/results/sweep \
        --point eta0.02 lars_trust=0.02 --point eta0.02-clip lars_trust=0.02,lars_clip=1     # a sweep: one record per point

The archive holds the 50,000 CIFAR-10 training images as packed JPEG bytes (`jpeg`, `offsets`, `labels`, `classes`),
as on our build machines; with a network connection, `--torchvision-root DIR` reads torchvision's copy instead. From
the training images it holds out `--eval` images for evaluation (kNN and Laplace metrics) and `--val` for the Laplace
prior precision; the rest is the unlabelled set and the kNN memory bank.

With `--point NAME SETTINGS` (repeatable) it runs a sweep in one process, the archive read once: each point overrides
the flags' settings (`benchmark_pretraining` arguments and `PretrainConfig` fields, e.g. `lars_trust=0.02,tau_p=1`) and
writes `--out-dir/NAME.json`; a point whose record exists is skipped, so a sweep cut off by a time limit continues
where it stopped when the same command runs again.
"""
import argparse, json, time
from enum import Enum
from pathlib import Path
from common import parser, number, check_device, check_path, check_sizes, out_file, out_folder, guarded, record_command, made_by, epochs_arg, command_line

PROG = "pretrain_cifar.py"

def known_settings() -> dict:
    "What a sweep point may set, with its default: `benchmark_pretraining`'s number, on/off and option arguments and the CIFAR recipe's fields."
    import inspect
    from dataclasses import asdict
    from ssbnn.experiments.cifar import benchmark_pretraining, RECIPE_TAU_P
    from ssbnn.train import PretrainConfig, CompileMode, Optimizer
    from ssbnn.augment import Crops
    from ssbnn.elbo import VariationalMean
    out = asdict(PretrainConfig.for_cifar10())
    out.update({n: q.default for n, q in inspect.signature(benchmark_pretraining).parameters.items() if q.default is not q.empty})
    out["tau_p"] = RECIPE_TAU_P                                          # None stands for the recipe's (`cifar_ssbnn`)
    out["jpeg"] = 0                                                      # re-encode the images as JPEG of this quality first (0: as read)
    for key, option in (("crops", Crops), ("mean", VariationalMean), ("compile_mode", CompileMode), ("optimizer", Optimizer)):
        out[key] = option(out[key])                                      # options: their values are checked
    return {k: v for k, v in out.items() if isinstance(v, (int, float, Enum)) and k not in ("device", "progress")}


def parse_point(text:str, known:dict) -> dict:
    "'lars_trust=0.02,lars_clip=1,crops=clamped' -> {'lars_trust': 0.02, 'lars_clip': True, 'crops': 'clamped'}: each as its default's type."
    out = {}
    for item in filter(None, text.split(",")):
        key, sep, value = (t.strip() for t in item.partition("="))
        if not sep: raise ValueError(f"point setting {item!r} is not KEY=VALUE")
        if key not in known: raise ValueError(f"unknown setting {key!r}; choose from {', '.join(sorted(known))}")
        if isinstance(known[key], Enum):                                          # an option, e.g. crops=clamped
            from ssbnn._utils import as_option
            out[key] = as_option(type(known[key]), value, key).value; continue
        try: v = float(value)
        except ValueError: raise ValueError(f"point setting {item!r}: {value!r} is not a number") from None
        kind = type(known[key])
        if kind in (bool, int) and not v.is_integer() or kind is bool and v not in (0, 1):
            raise ValueError(f"point setting {item!r}: {key} takes {'0 or 1' if kind is bool else 'a whole number'}")
        out[key] = kind(v)
    return out


PAPER_OPTIMISER = dict(optimizer="lars", lr=0.6, weight_decay=1e-6)   # the CIFAR recipe's optimiser before 2026-11-26 (appendix B.1.2's)


def _as_run(r:dict) -> dict:
    "A sweep record's settings as it ran: its W^c prior and optimiser as recorded, not today's defaults."
    settings = dict(r["settings"])
    if "prior_std" in r and "tau_p" not in settings: settings["tau_p"] = round(1 / r["prior_std"], 6)
    for k, before in PAPER_OPTIMISER.items():                            # records before 2026-11-25 ran the paper's and did not say so
        settings.setdefault(k, before if r.get(k) is None else r[k])
    return settings


def best_point(folders) -> tuple[str, dict]:
    "(name, settings) of the SS-BNN sweep point with the highest kNN accuracy in `folders` (SimCLR excluded); a point's seeds count by their mean."
    recs = {}
    for folder in map(Path, folders):
        for f in sorted(folder.glob("*.json")):
            r = json.loads(f.read_text())
            if "point" in r and "knn_accuracy" in r and r.get("method") == "ss-bnn": recs[r["point"]] = r
    if not recs: raise ValueError(f"no SS-BNN sweep records in {', '.join(map(str, folders))}; run the sweep first")
    seeds = {}                                                           # the runs of one point with other seeds, together
    for r in recs.values(): seeds.setdefault(json.dumps({k: v for k, v in _as_run(r).items() if k != "seed"}, sort_keys=True), []).append(r)
    runs = max(seeds.values(), key=lambda g: sum(r["knn_accuracy"] for r in g) / len(g))
    best = min(runs, key=lambda r: (r["settings"].get("seed", 0), r["point"]))   # its first seed's record names it
    return best["point"], _as_run(best)


def record_name(res:dict, known:dict) -> str:
    "pretrain_<method>_cifar10_<GPU>_<epochs>ep[_<settings that differ from the defaults (the optimiser's: from the paper's), the W^c prior and SimCLR's temperature always>].json"
    from common import device_tag
    gpu = device_tag(res["device"])
    diff = [f"trust{res['lars_trust']:g}" if res["lars_trust"] != known["lars_trust"] else "", ("clip" if res["lars_clip"] else "noclip") if res["lars_clip"] != known["lars_clip"] else "",
            f"taup{1 / res['prior_std']:.3g}" if res.get("prior_std") else "",   # always named: the default prior has changed before
            "" if res.get("learn_tau", True) else f"fixedtau{res['tau_init']:g}", f"head{res['head_width']}" if res["head_width"] != known["head_width"] else "",
            "clampedcrops" if res.get("crops") == "clamped" else "", f"jpeg{res['jpeg']}" if res.get("jpeg") else "", f"mean{res['mean']}" if res.get("mean") not in (None, "mean") else "",
            ("fusedopt" if res["fused_optimizer"] else "eageropt") if res.get("fused_optimizer", known["fused_optimizer"]) != known["fused_optimizer"] else "",
            f"ntxent{res['ntxent_tau']:g}" if res.get("ntxent_tau") else "",    # SimCLR's temperature: always named, as the prior
            *(f"{tag}{res[k]:g}" if tag else str(res[k]) for k, tag in (("optimizer", ""), ("lr", "lr"), ("weight_decay", "wd"))
              if k in res and res[k] != PAPER_OPTIMISER[k])]                # named against the paper's: the recipe's has changed before
    return "_".join([f"pretrain_{res['method'].replace('*', '_star')}_cifar10_{gpu}_{res['epochs']:g}ep", *filter(None, diff)]) + ".json"


def main(argv=None):
    known = known_settings()
    p = parser(__doc__)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--archive", type=Path, help="packed-JPEG archive of the CIFAR-10 training images")
    src.add_argument("--torchvision-root", type=Path, help="torchvision CIFAR-10 folder (download=True if missing)")
    p.add_argument("--epochs", type=epochs_arg(), default=50)
    p.add_argument("--batch-size", type=number(int, low=2), default=1000)
    p.add_argument("--eval", type=number(int), default=5000, help="held-out evaluation images (default 5000)")
    p.add_argument("--val", type=number(int), default=1000, help="held-out validation images for the Laplace prior (default 1000)")
    p.add_argument("--budgets", default="50,500,5000", help="label budgets for the Laplace readout")
    p.add_argument("--star-labels", type=number(int, low=0), default=0, help="pretrain SS-BNN* with this many labels")
    p.add_argument("--ntxent-tau", type=number(float, low=0), default=0., help="pretrain with NT-Xent (SimCLR) at this temperature instead")
    p.add_argument("--lars-trust", type=number(float), default=known["lars_trust"], help=f"LARS trust coefficient (default {known['lars_trust']:g})")
    p.add_argument("--lars-clip", action=argparse.BooleanOptionalAction, default=known["lars_clip"],
                   help=f"clip each tensor's LARS rate at the scheduled one (solo-learn's clip_lr; default {'on' if known['lars_clip'] else 'off'})")
    p.add_argument("--tau-p", type=number(float), default=None, help="W^c prior temperature: N(0, 1/tau_p^2) (default the recipe's, RECIPE_TAU_P; the paper's: 0.65)")
    p.add_argument("--head-width", type=number(int), default=known["head_width"], help=f"projection head's hidden width (default {known['head_width']})")
    p.add_argument("--jpeg", type=number(int, low=0), default=0, help="re-encode every image as a JPEG of this quality first, 1-95 (default 0: as read; "
                   "a dose of the archive's own JPEG-75 compression)")
    p.add_argument("--lr", type=number(float), default=known["lr"], help=f"peak learning rate of encoder and head (default {known['lr']:g}, the paper's)")
    p.add_argument("--weight-decay", type=number(float, low=0), default=known["weight_decay"],
                   help=f"weight decay of encoder and head (default {known['weight_decay']:g}, the recipe's; the paper's: 1e-6)")
    p.add_argument("--fused-optimizer", action=argparse.BooleanOptionalAction, default=known["fused_optimizer"],
                   help=f"the optimiser's update as a few fused kernels: LARS compiled (default {'on' if known['fused_optimizer'] else 'off'})")
    p.add_argument("--label-seeds", type=number(int), default=1, help="labelled subsets per budget for the Laplace readout (seeds 0..N-1; default 1)")
    p.add_argument("--point", nargs=2, action="append", metavar=("NAME", "SETTINGS"), default=[],
                   help="a sweep point: its name and settings, e.g. --point clip lars_trust=0.02,lars_clip=1 (repeatable; needs --out-dir)")
    p.add_argument("--best-of", type=Path, nargs="+", default=[], metavar="FOLDER",
                   help="run the SS-BNN sweep point with the best kNN recorded in these folders, as the point NAME-<epochs>ep (needs --out-dir)")
    p.add_argument("--out-dir", type=Path, default=None, help="folder of the sweep's records (NAME.json each)")
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--limit", type=number(int, low=0), default=0, help="use a seeded random subset of N images (smoke tests; only those are decoded)")
    p.add_argument("--device", default="auto")
    p.add_argument("--profile-steps", type=number(int, low=0), default=20, help="then profile this many steps of a fresh SS-BNN with the same recipe (0: skip)")
    p.add_argument("--profile-skip", type=number(int, low=0), default=10, help="steps run before the profiled ones (compilation, warm-up; default 10)")
    p.add_argument("--dump-features", type=Path, default=None, help="also save raw encoder features (fp16) of 10k train, val and test images here")
    p.add_argument("--out", default=None, help="JSON path, or a folder (ending in /) for <name>.json (default bench/results/<name>.json)")
    a = p.parse_args(argv)
    points = []
    for name, text in a.point:
        try: points.append((name, parse_point(text, known)))
        except ValueError as e: p.error(f"point {name}: {e}")
    if a.best_of:
        try: name, over = best_point(a.best_of)
        except ValueError as e: p.error(str(e))
        points.append((f"{name}-{a.epochs:g}ep", over))
    from common import check_jpeg_quality, reencode_jpeg
    try:
        for q in {a.jpeg, *(over.get("jpeg", a.jpeg) for _, over in points)}: check_jpeg_quality(q)
    except ValueError as e: p.error(str(e))
    if points and a.out_dir is None: p.error("--point and --best-of need --out-dir")
    if a.out_dir is not None and not points: p.error("--out-dir holds a sweep's records: name its points with --point or --best-of, or write one record with --out")
    if points and a.out: p.error("--out names one record; a sweep writes --out-dir/NAME.json")
    try: budgets = tuple(int(b) for b in a.budgets.split(",") if b)
    except ValueError: p.error(f"argument --budgets: {a.budgets!r} is not a comma-separated list of label counts, e.g. 50,500,5000")
    if any(b < 1 for b in budgets): p.error(f"argument --budgets: {a.budgets!r}: each budget is a number of labels, 1 or more")
    if a.out_dir and all((a.out_dir / f"{name}.json").exists() for name, _ in points):
        print(f"every point's record is in {a.out_dir} already"); return
    if a.archive: check_path(PROG, "--archive", a.archive, folder=False)       # before any work: where it reads and writes, and on what
    device = check_device(PROG, a.device)
    if a.out_dir: out_folder(PROG, a.out_dir, "--out-dir")
    if a.dump_features: out_folder(PROG, a.dump_features, "--dump-features")
    if a.out and (a.out.endswith("/") or Path(a.out).is_dir()): out_folder(PROG, a.out)
    elif a.out: out_file(PROG, a.out)

    import torch
    from common import cifar_splits
    from ssbnn._utils import atomic_write
    from ssbnn.experiments.cifar import benchmark_pretraining, time_augment, kornia_simclr
    from ssbnn.augment import SimCLRAugment, compiled_augment

    data, decode_s = guarded(PROG, lambda: cifar_splits(a, PROG))
    doses = {}
    def dosed(q:int):
        "The splits as read (q 0), or re-encoded as JPEG of quality q (once per q)."
        if q and q not in doses: doses[q] = reencode_jpeg(data, q)
        return doses[q] if q else data
    for name, over in points or [("", {})]:                       # each task and labelled subset fits the training split
        check_sizes(PROG, len(data.x_train), over.get("batch_size", a.batch_size), over.get("budgets", budgets), over.get("star_labels", a.star_labels),
                    what=f"point {name}: " if name else "")
    print(f"{data} (read in {decode_s:.0f} s); device {device}", flush=True)

    xa = data.x_train[:2000].to(device)
    aug = {"ssbnn_ms_2000": time_augment(SimCLRAugment(), xa), "kornia_ms_2000": time_augment(kornia_simclr(), xa)}
    if not a.no_compile and device.type == "cuda":               # what pretrain runs: the deterministic part compiled
        aug["ssbnn_compiled_ms_2000"] = time_augment(compiled_augment(SimCLRAugment()), xa)
    print("augmenting 2,000 images (ms): " + ", ".join(f"{k[:-8]} {v:.2f}" for k, v in aug.items()), flush=True)

    base = dict(epochs=a.epochs, batch_size=a.batch_size, compile=not a.no_compile, budgets=budgets, star_labels=a.star_labels,
                ntxent_tau=a.ntxent_tau, device=device, label_seeds=tuple(range(a.label_seeds)), lars_trust=a.lars_trust,
                lars_clip=a.lars_clip, tau_p=a.tau_p, head_width=a.head_width, lr=a.lr, weight_decay=a.weight_decay,
                fused_optimizer=a.fused_optimizer)
    command = command_line(PROG, argv)
    for name, over in points:
        out = a.out_dir / f"{name}.json"
        if out.exists(): print(f"{name}: {out} exists, skipped", flush=True); continue
        print(f"{name}: {over}", flush=True)
        q = over.get("jpeg", a.jpeg)
        res = benchmark_pretraining(dosed(q), **{**base, **{k: v for k, v in over.items() if k != "jpeg"}})
        res.pop("model")
        res.update(jpeg=q, point=name, settings=over, augment=aug, read_seconds=decode_s, command=command)
        atomic_write(out, lambda f: f.write_text(json.dumps(res, indent=1)))
        _summarise(res, out)
    if points:
        out = a.out_dir / "profile.json"
        if a.profile_steps and not out.exists():
            res = {"profile": _profile(a, data, device), "augment": aug, "device": str(device), "torch": torch.__version__, "command": command}
            atomic_write(out, lambda f: f.write_text(json.dumps(res, indent=1)))
        return
    res = benchmark_pretraining(dosed(a.jpeg), **base)
    res["jpeg"] = a.jpeg
    model = res.pop("model")
    if a.dump_features:
        from ssbnn.features import encode
        for split, xs, ys in (("train", data.x_train[:10000], data.y_train[:10000]), ("val", data.x_val, data.y_val), ("test", data.x_test, data.y_test)):
            feats = {"features": encode(model.encoder, xs).half().cpu(), "y": ys.clone()}
            atomic_write(a.dump_features / f"features_{split}.pt", lambda f: torch.save(feats, f))   # whole or not at all
    if a.profile_steps: res["profile"] = _profile(a, data, device)
    res.update(augment=aug, read_seconds=decode_s, command=command)
    out = Path(a.out or Path(__file__).parent / "results")                # a str: Path would drop a trailing /
    if a.out is None or a.out.endswith("/") or out.is_dir(): out = out / record_name(res, known)
    if out.exists() and not made_by(PROG, record_command(out)):
        out = out.with_name(f"{out.stem}_{time.strftime('%Y%m%d-%H%M%S')}.json")    # a file that is not this script's record is kept
    atomic_write(out, lambda p: p.write_text(json.dumps(res, indent=1)))
    _summarise(res, out)


def _profile(a, data, device) -> dict:
    "torch.profiler summary of `a.profile_steps` steps of a fresh SS-BNN with the flags' recipe, after `a.profile_skip`."
    from ssbnn.experiments.cifar import profile_pretraining, cifar_ssbnn
    from ssbnn.train import PretrainConfig
    cfg = PretrainConfig.for_cifar10(epochs=a.epochs, batch_size=a.batch_size, compile=not a.no_compile, lars_trust=a.lars_trust,
                                     lars_clip=a.lars_clip, lr=a.lr, fused_optimizer=a.fused_optimizer, device=str(device))
    fresh = cifar_ssbnn(data.num_classes, device=device, tau_p=a.tau_p, head_width=a.head_width)
    prof = profile_pretraining(fresh, data.x_train, cfg, steps=a.profile_steps, skip=a.profile_skip)
    print("where a step's time goes:", ", ".join(f"{r['name']} {100 * r['share']:.0f} %{' (a range)' if r.get('range') else ''}"
                                                 for r in prof["top"][:5]), flush=True)
    return prof


def _summarise(res:dict, out:Path):
    "Print a record's headline figures and where it was written."
    summary = {k: res[k] for k in ("views_per_second", "seconds_per_epoch", "wall_seconds", "peak_gpu_gb", "knn_accuracy", "final_tau", "final_sigma", "final_align")}
    print(json.dumps(summary, indent=1))
    for r in res["laplace"]:
        print(f"Laplace readout, {r['labels']} labels, seed {r['seed']}: accuracy {r['accuracy']:.3f}, NLL {r['nll']:.3f} "
              f"(MAP readout {r['map_nll']:.3f}), ECE {r['ece']:.3f} (MAP readout {r['map_ece']:.3f})")
    print(f"wrote {out}", flush=True)


if __name__ == "__main__":
    main()
