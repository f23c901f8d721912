"""Low-budget active learning on CIFAR-10 (paper section 5.2) on one GPU: SS-BNN + BALD, SimCLR + entropy, deep ensemble + BALD, random.

    python bench/active_cifar.py --archive path/to/cifar10_train.npz --epochs 50 --seeds 3
    python bench/active_cifar.py --archive ... --ssbnn-model runs/c10-200/model --methods ss-bnn-bald,ss-bnn-random
    python bench/active_cifar.py --merge part-s0 part-s1 part-s2 --out active_cifar10   # parts run separately, as one result

The archive holds the 50,000 CIFAR-10 training images as packed JPEG bytes (`jpeg`, `offsets`, `labels`, `classes`),
as on our build machines; with a network connection, `--torchvision-root DIR` reads torchvision's copy instead (then
the pool is the whole training split and validation / evaluation images come from the test split). From the archive it
holds out `--eval` images for evaluation and `--val` from which the 50-image validation set is drawn; the rest is the
pool. The SS-BNN and SimCLR encoders are pretrained here with the CIFAR-10 recipe (`PretrainConfig.for_cifar10`) for
`--epochs` (the paper: 500) unless
`--ssbnn-model` / `--simclr-model` give model folders from `ssbnn-pretrain` (or older model.pt files). Writes results.json, active.md and
active.png into `--out`. Each finished run (a method and seed) is kept in `--out`'s partial.json at once, and encoders
pretrained here in `--out` (ss-bnn-encoder, simclr-encoder) until the results are written: the same command run again
after it was cut off continues from them (a GPU pretraining does not repeat bit for bit; an encoder pretrained otherwise,
or on other images, is refused). A run too long for one job runs in parts (`--first-seed`, `--seeds`, `--methods`),
which `--merge` joins into one result folder afterwards (no data or GPU needed); a part cut off for good gives the runs
its partial.json holds.
"""
import json, shutil, time
from pathlib import Path
from common import unused_flags, fail, device_tag, parser, number, check_device, check_path, guarded, epochs_arg, command_line

PROG = "active_cifar.py"
METHODS = ("ss-bnn-bald", "simclr-entropy", "ensemble-bald", "ss-bnn-random")


def main(argv=None):
    p = parser(__doc__)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--archive", type=Path, help="packed-JPEG archive of the CIFAR-10 training images")
    src.add_argument("--torchvision-root", type=Path, help="torchvision CIFAR-10 folder (download=True if missing)")
    p.add_argument("--epochs", type=epochs_arg(), default=50, help="pretraining epochs of the SS-BNN and SimCLR encoders (default 50; paper 500)")
    p.add_argument("--batch-size", type=number(int, low=2), default=1000)
    p.add_argument("--ssbnn-model", type=Path, help="a pretrained SS-BNN model folder instead of pretraining here")
    p.add_argument("--simclr-model", type=Path, help="a pretrained NT-Xent model folder instead of pretraining here")
    p.add_argument("--ntxent-tau", type=number(float), default=0.45, help="NT-Xent temperature of SimCLR (default 0.45, the paper's)")
    p.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated, from {','.join(METHODS)}")
    p.add_argument("--seeds", type=number(int), default=3)
    p.add_argument("--first-seed", type=number(int, low=0), default=0, help="seed of the first run (split long runs across calls)")
    p.add_argument("--initial", type=number(int), default=50)
    p.add_argument("--val-labels", type=number(int), default=50, help="labelled validation images (default 50)")
    p.add_argument("--step", type=number(int), default=10)
    p.add_argument("--budget", type=number(int), default=500)
    p.add_argument("--ensemble-budget", type=number(int, low=0), default=0, help="stop the deep ensemble at this many labels (0: --budget)")
    p.add_argument("--members", type=number(int), default=5, help="deep-ensemble members (default 5)")
    p.add_argument("--samples", type=number(int), default=100, help="Laplace posterior samples for BALD (default 100)")
    p.add_argument("--eval", type=number(int), default=4500, help="held-out evaluation images (default 4500)")
    p.add_argument("--val", type=number(int), default=500, help="held-out validation images (default 500; the pool is the rest)")
    p.add_argument("--limit", type=number(int, low=0), default=0, help="use a random subset of this many images (smoke tests)")
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--device", default="auto")
    p.add_argument("--out", type=Path, default=None, help="output folder (default bench/results/active_cifar10_<device>_<epochs>ep)")
    p.add_argument("--merge", type=Path, nargs="+", help="join the result folders of parts of one experiment into --out, and stop")
    a = p.parse_args(argv)
    if a.merge:
        if given := unused_flags(p, a, ("merge", "out")): p.error(f"--merge joins result folders: it runs nothing, so it takes no {', '.join(given)}")
        return merge(a.merge, a.out)
    if not (a.archive or a.torchvision_root): fail(PROG, "give --archive FILE or --torchvision-root DIR (or --merge FOLDER...)")
    methods = [m.strip() for m in a.methods.split(",") if m.strip()]
    bad = [m for m in methods if m not in METHODS]
    if bad or not methods: fail(PROG, f"--methods {a.methods!r}: choose from {', '.join(METHODS)}")
    check_path(PROG, "--archive", a.archive, folder=False)
    for flag, path in (("--ssbnn-model", a.ssbnn_model), ("--simclr-model", a.simclr_model)): check_path(PROG, flag, path)
    from ssbnn.experiments.active import ActiveConfig
    for budget in (a.budget, a.ensemble_budget or a.budget):                   # the protocol's own check, before any work
        guarded(PROG, lambda: ActiveConfig(initial=a.initial, step=a.step, budget=budget).rounds())
    device = check_device(PROG, a.device)
    out = claimed(a.out or Path(__file__).parent / "results" / f"active_cifar10_{device_tag(device)}_{a.epochs:g}ep")

    from common import cifar_splits
    from ssbnn.train import PretrainConfig
    from ssbnn.experiments.cifar import cifar_ssbnn
    from ssbnn.elbo import NTXent
    from ssbnn.models import CIFARResNet18
    from ssbnn.core import SSBNN
    from ssbnn.augment import CropFlip
    from ssbnn.baselines import MAPConfig
    from ssbnn.cli import check_unseen, check_objective
    from ssbnn.report import settings_json
    from ssbnn.posterior import MAPPosterior
    from ssbnn.experiments.active import ActiveMethod, ReadoutLearner, MethodLearner, active_learning

    data, decode_s = guarded(PROG, lambda: cifar_splits(a, PROG))
    print(f"{data} (read in {decode_s:.0f} s); device {device}", flush=True)

    partial = out / "partial.json"                                              # each finished run at once: a call cut off continues

    def recipe(cfg, elbo) -> dict:
        "What a pretraining learns from: the recipe's settings, and SimCLR's NT-Xent temperature."
        return {**settings_json(cfg), "ntxent_tau": elbo.tau if isinstance(elbo, NTXent) else None}

    def reuse(kept, cfg, objective, name):
        "The encoder a call cut off since pretrained into --out, if it was pretrained as this call would be, on the same images."
        loaded = guarded(PROG, lambda: SSBNN.load(kept, device=device))
        then, now = recipe(loaded.config_, loaded.elbo) if getattr(loaded, "config_", None) else {}, recipe(cfg, objective)
        try:
            if not then: raise ValueError(f"{kept} holds an encoder that does not say how it was pretrained")
            if other := [k for k in sorted({*then, *now}) if then.get(k) != now.get(k)]:
                raise ValueError(f"{kept} holds an encoder an earlier call pretrained otherwise ({'; '.join(f'{k}: {then.get(k)} then, {now.get(k)} now' for k in other)})")
            check_unseen(loaded, data, kept); check_objective(loaded, kept, simclr=objective is not None)
        except ValueError as e: fail(PROG, f"{e}; give the same settings to continue from it, or delete {kept} (and {partial}) to start again")
        print(f"{name}: the encoder an earlier call pretrained here ({kept})", flush=True)
        try: earlier = json.loads(partial.read_text())["meta"]["pretraining"][name]   # its record, with its time, as that call kept it
        except (OSError, ValueError, KeyError, TypeError): earlier = {k: then[k] for k in ("epochs", "batch_size", "weight_decay")}
        return loaded, {**earlier, "reused_by_a_later_call": True}

    def encoder(objective, path, name):
        "A pretrained SS-BNN (or SimCLR with an NTXent objective): loaded from `path`, or pretrained here and kept in --out until the results are written."
        model = cifar_ssbnn(data.num_classes, device=device, seed=0, objective=objective)
        cfg = PretrainConfig.for_cifar10(epochs=a.epochs, batch_size=a.batch_size, compile=not a.no_compile, device=str(device))
        kept = out / f"{name}-encoder"                  # pretrained here by a call cut off since: partial.json's runs rest on these weights
        if path is None and kept.is_dir(): return reuse(kept, cfg, objective, name)
        if path is not None:
            loaded = guarded(PROG, lambda: SSBNN.load(path, device=device, **(model.parts() if path.is_file() else {})))
            try:
                check_unseen(loaded, data, path)   # pretrained by ssbnn-pretrain: pass its splits, --eval 9000 --val 1000
                check_objective(loaded, path, simclr=objective is not None)
            except ValueError as e: fail(PROG, str(e))
            made = getattr(loaded, "config_", None)                     # None: an older model.pt, which does not say
            return loaded, {"model": str(path), **{k: getattr(made, k, None) for k in ("epochs", "batch_size", "weight_decay", "seed")}}
        t = time.time(); model.pretrain(data.x_train, cfg, progress=False)
        model.save(kept)                                # a later call of this run reuses it: pretraining on a GPU does not repeat bit for bit
        return model, {"epochs": a.epochs, "batch_size": a.batch_size, "weight_decay": cfg.weight_decay, "seconds": time.time() - t,
                       "final_tau": model.history_[-1]["tau"]}

    pre, learners = {}, {}
    if {"ss-bnn-bald", "ss-bnn-random"} & set(methods):
        ss, pre["ss-bnn"] = encoder(None, a.ssbnn_model, "ss-bnn")
        learners["ss-bnn"] = ReadoutLearner(ss, samples=a.samples)
        print(f"SS-BNN encoder: {pre['ss-bnn']}", flush=True)
    if "simclr-entropy" in methods:
        sc, pre["simclr"] = encoder(NTXent(a.ntxent_tau), a.simclr_model, "simclr")
        learners["simclr"] = ReadoutLearner(sc, MAPPosterior())
        print(f"SimCLR encoder: {pre['simclr']}", flush=True)
    chosen = {"ss-bnn-bald": lambda: ActiveMethod("ss-bnn-bald", learners["ss-bnn"], "bald"),
              "simclr-entropy": lambda: ActiveMethod("simclr-entropy", learners["simclr"], "entropy"),
              "ss-bnn-random": lambda: ActiveMethod("ss-bnn-random", learners["ss-bnn"], "random"),
              "ensemble-bald": lambda: ActiveMethod("ensemble-bald", MethodLearner("deep-ensemble", CIFARResNet18, CropFlip(), MAPConfig(device=str(device), restore_best=False), a.members),
                                                    "bald", a.ensemble_budget if a.ensemble_budget not in (0, a.budget) else None)}
    cfg = ActiveConfig(initial=a.initial, val=a.val_labels, step=a.step, budget=a.budget, seeds=a.seeds, seed=a.first_seed)
    if partial.exists(): print(f"continuing the runs {partial} holds", flush=True)
    about = dict(pretraining=pre, read_seconds=decode_s, command=command_line(Path(__file__).name, argv))
    result = guarded(PROG, lambda: active_learning([chosen[m]() for m in methods], data, cfg, partial=partial, about=about))
    report(result, out)
    partial.unlink(missing_ok=True)                                             # its runs are in results.json now, and need
    for name in ("ss-bnn", "simclr"): shutil.rmtree(out / f"{name}-encoder", ignore_errors=True)   # no encoder kept for them


def claimed(out:Path) -> Path:
    "`out` claimed for this script's results before any work: new, empty or its own (`ssbnn.report.claim_folder`)."
    from ssbnn.report import claim_folder
    return guarded(PROG, lambda: claim_folder(out, replace_results=True, command=PROG))


def report(result:dict, out:Path):
    "Write the result folder; print the accuracy table and, where both ran, BALD's paired gain over random (active.md's tables)."
    from ssbnn.experiments.active import write_active, active_table, gain_table
    from ssbnn.report import cut_off_note
    write_active(result, out)
    print(active_table(result["records"]))
    if note := cut_off_note(result["meta"], "rounds", "some methods may have fewer seeds than others").strip(): print(f"note: {note}")
    if gain := gain_table(result["records"]): print(gain)
    print(f"wrote {out}")


def one_recipe(parts:list):
    "Refuse parts whose encoders were pretrained differently (epochs, task size, weight decay, wherever parts record them)."
    from ssbnn.report import differing
    from ssbnn.experiments.active import _recipes
    made = [p["meta"].get("pretraining", {}) for p in parts]
    for enc in dict.fromkeys(e for m in made for e in m):
        if d := differing([r for m in made for r in _recipes(m.get(enc, {}))], ("epochs", "batch_size", "weight_decay")):   # a merged part's each
            raise ValueError(f"these parts' encoders were pretrained differently ({enc} {d[0]}: {', '.join(map(str, d[1]))}); merge parts of one recipe")


def merge(folders:list, out:Path|None):
    "Join the results.json of parts of one experiment into one result folder `out`."
    from ssbnn.report import read_parts
    from ssbnn.experiments.active import merge_active
    from ssbnn.experiments.active import active_table, gain_table
    from ssbnn.report import release_folder
    def cannot(e, doing="read"):
        "A hand-edited part, said in one line: a field it lacks, a check it fails, or what failed as it was read or reported."
        why = f"a part lacks {e}" if isinstance(e, KeyError) else str(e) if isinstance(e, ValueError) else f"a part cannot be {doing} ({type(e).__name__}: {e})"
        fail(PROG, f"cannot merge {', '.join(map(str, folders))}: {why}" + ("" if isinstance(e, ValueError) else "; give result folders of active_cifar.py"))
    try:
        parts = read_parts(folders, out, partial="partial.json")                # a part cut off gives its finished runs
        result = merge_active(parts)                                            # which checks each part first
        one_recipe(parts)
        active_table(result["records"]), gain_table(result["records"])          # every record scored: tried before the folder is claimed
    except (ValueError, KeyError, TypeError, AttributeError) as e: cannot(e)
    existed = Path(out).exists()
    claimed(out)
    result["meta"]["command"] = "python bench/active_cifar.py --merge " + " ".join(map(str, folders)) + f" --out {out}"
    try: report(result, out)
    except (ValueError, KeyError, TypeError, AttributeError) as e:              # a hand-edited part the checks let through
        release_folder(out, existed)                                            # the claim undone: no folder holding only its mark
        cannot(e, "reported")


if __name__ == "__main__":
    main()
