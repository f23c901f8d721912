"Shared by the benchmark scripts: the CIFAR-10 splits from a packed-JPEG archive or torchvision's copy, timed."
import sys, time


def fail(prog:str, message:str):
    "Bad input: one line on stderr, exit status 2 (as the package's own commands)."
    print(f"{prog}: {message}", file=sys.stderr)
    raise SystemExit(2)


def device_tag(device:str) -> str:
    "A record file's device from `ssbnn._utils.environment`'s name: a GPU's model ('H100' of 'NVIDIA H100 80GB HBM3'), else 'cpu' or 'mps'."
    words = device.split() or ["cpu"]
    return words[0] if words[0] in ("cpu", "mps") or len(words) == 1 else words[1]


def cifar_splits(a, prog:str):
    "(splits, seconds to read them) for a script's --archive, --torchvision-root, --val, --eval and --limit arguments."
    from ssbnn.data import load_cifar_splits, archive_splits
    t = time.time()
    if a.archive:
        if not a.archive.exists(): fail(prog, f"no archive at {a.archive}")
        data = archive_splits(a.archive, val=a.val, test=a.eval, limit=a.limit, threads=16)
    else:
        data = load_cifar_splits("cifar10", root=a.torchvision_root, download=True, val=a.val)
    return data, time.time() - t


def labelled_scores(model, data, budget:int, seed:int, held_out_train:bool=False) -> tuple[dict, dict]:
    "Fit `model` on `budget` stratified labels (`seed`; validation split for the prior); metrics of its posterior and its MAP readout, on the test split or, with `held_out_train`, on the training images outside the subset."
    import torch
    from ssbnn.data import labelled_subset
    from ssbnn.metrics import evaluate
    i = labelled_subset(data.y_train, budget, seed=seed)
    model.fit(data.x_train[i], data.y_train[i], (data.x_val, data.y_val), data.num_classes)
    if held_out_train:
        rest = torch.ones(len(data.y_train), dtype=torch.bool); rest[i] = False
        x, y = data.x_train[rest], data.y_train[rest]
    else: x, y = data.x_test, data.y_test
    return evaluate(model.predict_proba(x), y), evaluate(model.predict_proba(x, laplace=False), y)


def write_rows(out, rows:list, seeds:int):
    "The rows, the seeds and this machine's environment as JSON: written atomically to `out`, or to stdout."
    import json, torch
    from ssbnn._utils import atomic_write, environment
    text = json.dumps({"rows": rows, "meta": {"seeds": seeds, **environment(torch.device("cpu"))}}, indent=1)
    if out: atomic_write(out, lambda f: f.write_text(text))
    else: sys.stdout.write(text + "\n")
