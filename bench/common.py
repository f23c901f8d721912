"Shared by the benchmark scripts: their argument parsing and input checks, and the CIFAR-10 splits from a packed-JPEG archive or torchvision's copy, timed."
import json, sys, time
from pathlib import Path


def fail(prog:str, message:str):
    "Bad input: one line on stderr, exit status 2 (as the package's own commands)."
    print(f"{prog}: {message}", file=sys.stderr)
    raise SystemExit(2)


def parser(doc:str):
    "A script's argument parser, described by its docstring's first line: the package's one-line errors (exit status 2), no abbreviated flags."
    from ssbnn.cli import OneLineParser
    return OneLineParser(description=doc.splitlines()[0], allow_abbrev=False)


def number(kind=int, **limits):
    "An argparse type: a finite number of `kind` within `limits` (`ssbnn._utils.check_number`'s keywords; default: positive)."
    from ssbnn.cli import number_arg
    return number_arg(kind, **limits)


def seed_arg():
    "The argparse type of a --seed: a whole number that torch, NumPy and scikit-learn all take (`ssbnn._utils.SEED_LIMITS`)."
    from ssbnn._utils import SEED_LIMITS
    return number(int, **SEED_LIMITS)


def epochs_arg():
    "The argparse type of a pretraining's --epochs: `PretrainConfig`'s own limits."
    from ssbnn.train import PretrainConfig
    return number(float, **PretrainConfig.LIMITS["epochs"])


BAD_INPUT = (ValueError, FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)

def guarded(prog:str, body):
    "`body()`, with bad input (`BAD_INPUT`) said in one line and exit status 2 (the package's `one_line_errors`); other errors keep their traceback, which a device run's log needs."
    from ssbnn.cli import one_line_errors
    with one_line_errors(prog, errors=BAD_INPUT) as status: result = body()
    if status.code: raise SystemExit(status.code)
    return result


def check_device(prog:str, device:str):
    "The torch device `device` names, checked before any work."
    from ssbnn._utils import get_device
    try: return get_device(device)
    except (ValueError, RuntimeError) as e: fail(prog, f"--device {device}: {' '.join(str(e).split())}")


def unused_flags(p, a, used) -> list[str]:
    "The flags of parser `p` given other values than their defaults in `a`, beyond `used`: what a mode that ignores them refuses."
    return [f"--{k.replace('_', '-')}" for k in vars(a) if k not in used and getattr(a, k) != p.get_default(k)]


def check_path(prog:str, flag:str, path, folder:bool|None=None):
    "`path` if it exists (and is a folder, or a file, where `folder` says which), checked before any work."
    if path is None: return None
    path = Path(path)
    if not path.exists(): fail(prog, f"{flag} {path} does not exist")
    if folder is not None and path.is_dir() != folder:
        fail(prog, f"{flag} {path} is a {'file' if folder else 'folder'}; give a {'folder' if folder else 'file'}")
    return path


def record_command(path) -> str:
    "The `command` a JSON record names, or '' for a file that is not one."
    try: rec = json.loads(Path(path).read_text())
    except (OSError, ValueError): return ""
    return str(rec.get("command", "")) if isinstance(rec, dict) else ""


def made_by(prog:str, command:str) -> bool:
    "Whether a record's `command` ran the script `prog` (`python bench/prog ...`, or the script's path first), not merely names it."
    words = command.split()
    words = words[1:] if words[:1] and Path(words[0]).name.startswith("python") else words
    return bool(words) and Path(words[0]).name == prog


def writable(folder) -> bool:
    "Whether a file can be made in `folder`: tried, since `os.access` says yes to root anywhere (in /proc too)."
    import tempfile
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-test-"): return True
    except OSError: return False


def command_line(prog:str, argv=None) -> str:
    "The command a record names (`out_file` replaces only a script's own records): `python bench/<prog>` and its arguments (`argv`, else the process's)."
    return f"python bench/{prog} " + " ".join(map(str, sys.argv[1:] if argv is None else argv))


def label_counts(prog:str, budgets, data) -> list[int]:
    "The label counts of --budgets (`EvalConfig`'s: counts, fractions or 'all', each once) out of `data`'s training split, checked before any work."
    from ssbnn.experiments.evaluation import EvalConfig
    try: return EvalConfig(budgets=tuple(budgets)).label_counts(len(data.y_train), data.num_classes)
    except ValueError as e: fail(prog, f"--budgets: {e}")


def out_file(prog:str, path, flag:str="--out"):
    "`path`, a JSON record to write, checked before any work: not a folder, in a folder that can be written, and new or a record of `prog`."
    if path is None: return None
    path = Path(path)
    if path.is_dir(): fail(prog, f"{flag} {path} is a folder; give the JSON file to write")
    try: path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e: fail(prog, f"{flag} {path}: its folder cannot be made ({e.strerror or e})")
    if not writable(path.parent): fail(prog, f"{flag} {path}: its folder {path.parent} cannot be written")
    if path.exists() and not made_by(prog, record_command(path)):
        fail(prog, f"{flag} {path} exists and is not a record of {prog}; give a new file (only {prog}'s own records are replaced)")
    return path


def out_folder(prog:str, path, flag:str="--out"):
    "`path`, a folder to write records into, checked before any work: not a file, and made if missing and writable."
    path = Path(path)
    if path.exists() and not path.is_dir(): fail(prog, f"{flag} {path} is a file; give a folder")
    try: path.mkdir(parents=True, exist_ok=True)
    except OSError as e: fail(prog, f"{flag} {path} cannot be made ({e.strerror or e}); give a writable folder")
    if not writable(path): fail(prog, f"{flag} {path} cannot be written; give a writable folder")
    return path


def timer(device):
    "A function timing `fn()` on the torch `device` (CUDA synchronised before and after): it returns (seconds, what `fn` returned)."
    import torch
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    def timed(fn):
        sync(); t = time.perf_counter(); out = fn(); sync()
        return time.perf_counter() - t, out
    return timed


def show_record(record:dict, out=None):
    "Print the JSON `record`, and write it to `out` (where given) whole or not at all."
    from ssbnn._utils import atomic_write
    text = json.dumps(record, indent=1)
    if out: atomic_write(out, lambda p: p.write_text(text))
    print(text)


def device_tag(device) -> str:
    "A record file's device from a torch device or `ssbnn._utils.environment`'s name of it: a GPU's model ('H100' of 'NVIDIA H100 80GB HBM3'), else 'cpu' or 'mps'."
    if not isinstance(device, str):
        from ssbnn._utils import environment
        device = environment(device)["device"]
    words = device.split() or ["cpu"]
    return words[0] if words[0] in ("cpu", "mps") or len(words) == 1 else words[1]


def cifar_splits(a, prog:str):
    "(splits, seconds to read them) for a script's --archive, --torchvision-root, --val, --eval and --limit arguments."
    from ssbnn.data import load_cifar_splits, archive_splits
    t = time.time()
    if a.archive:
        if not a.archive.exists(): fail(prog, f"no archive at {a.archive}")
        if a.archive.is_dir(): fail(prog, f"--archive {a.archive} is a folder; give the packed-JPEG archive (.npz)")
        data = archive_splits(a.archive, val=a.val, test=a.eval, limit=a.limit, threads=16)
    else:
        data = load_cifar_splits("cifar10", root=a.torchvision_root, download=True, val=a.val)
    return data, time.time() - t


def check_sizes(prog:str, train:int, batch_size:int, budgets=(), star_labels:int=0, what:str=""):
    "Refuse, before pretraining, a task or a labelled subset larger than the `train` images that --limit, --val and --eval leave."
    for flag, v in (("--batch-size", batch_size), ("--star-labels", star_labels), *(("--budgets", b) for b in budgets)):
        if v > train: fail(prog, f"{what}{flag} {v} is larger than the {train:,} training images that --limit, --val and --eval leave; use at most {train:,}")


def check_jpeg_quality(quality:int) -> int:
    "`quality` if `reencode_jpeg` takes it (1 to 95, or 0 for the images as read), else ValueError saying so."
    if quality and not 1 <= quality <= 95: raise ValueError(f"jpeg quality {quality}: choose 1 to 95 (PIL's useful range), or 0 for the images as read")
    return quality


def jpeg_round_trip(img, quality:int) -> tuple:
    "(image, bytes): a `(C,H,W)` uint8 RGB image after a JPEG round trip at `quality` (PIL's 4:2:0 chroma), and its JPEG's size."
    import io
    import numpy as np
    from PIL import Image
    buf = io.BytesIO(); Image.fromarray(img.transpose(1, 2, 0)).save(buf, "JPEG", quality=quality)
    size = buf.tell()
    return np.asarray(Image.open(buf).convert("RGB")).transpose(2, 0, 1), size


def reencode_jpeg(data, quality:int, threads:int=16):
    "`data` (uint8 `ImageSplits`) with every image re-encoded as a JPEG of `quality` (PIL's 4:2:0 chroma): a dose of the archive's own compression."
    import dataclasses
    from concurrent.futures import ThreadPoolExecutor
    import numpy as np, torch
    if not check_jpeg_quality(quality): raise ValueError("jpeg quality 0 means the images as read: there is nothing to re-encode")
    one = lambda img: jpeg_round_trip(img, quality)[0]
    def split(x):
        with ThreadPoolExecutor(threads) as ex: return torch.from_numpy(np.stack(list(ex.map(one, x.numpy(), chunksize=256))))
    return dataclasses.replace(data, x_train=split(data.x_train), x_val=split(data.x_val), x_test=split(data.x_test),
                               name=f"{data.name}, re-encoded as JPEG {quality}")


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


def write_rows(out, rows:list, seeds:int, command:str|None=None):
    "The rows, the seeds, this machine's environment (and the `command` that made them) as JSON: written atomically to `out`, or to stdout."
    import json, torch
    from ssbnn._utils import atomic_write, environment
    text = json.dumps({"rows": rows, "meta": {"seeds": seeds, **environment(torch.device("cpu"))},
                       **({"command": command} if command else {})}, indent=1)
    if out: atomic_write(out, lambda f: f.write_text(text))
    else: sys.stdout.write(text + "\n")
