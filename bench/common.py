"Shared by the benchmark scripts: the CIFAR-10 splits from a packed-JPEG archive or torchvision's copy, timed."
import sys, time


def cifar_splits(a, prog:str):
    "(splits, seconds to read them) for a script's --archive, --torchvision-root, --val, --eval and --limit arguments."
    from ssbnn.data import load_cifar_splits, archive_splits
    t = time.time()
    if a.archive:
        if not a.archive.exists(): sys.exit(f"{prog}: no archive at {a.archive}")
        data = archive_splits(a.archive, val=a.val, test=a.eval, limit=a.limit, threads=16)
    else:
        data = load_cifar_splits("cifar10", root=a.torchvision_root, download=True, val=a.val)
    return data, time.time() - t
