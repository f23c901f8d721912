"""Cost of the distributed path on one GPU: the CIFAR pretraining benchmark, plain against `torchrun --nproc_per_node=1`.

    python bench/ddp_overhead.py --archive path/to/cifar10_train.npz              # on a machine with one GPU
    python bench/ddp_overhead.py --archive ... --gpus 1,2,4                       # also scaling over 2 and 4 GPUs
    python bench/ddp_overhead.py --archive ... --sync-bn                          # the torchrun runs with SyncBatchNorm

The driver decodes the archive once, then runs the benchmark (`ssbnn.experiments.cifar.benchmark_pretraining`, Laplace readout left
out) alternately as a plain process and under torchrun, `--repeats` times each, and compares the median views per second
(compilation and the first epoch excluded). Under torchrun `pretrain` takes the DistributedDataParallel path with the
task gathered across ranks, even with one process. The target of issue 8: at most 3 % slower than the plain path on
one GPU. Each kind of run also records what actually ran: the process group's backend (NCCL on GPUs), the encoder's
SyncBatchNorm layers (with `--sync-bn`; PyTorch skips their all-reduce in a group of one) and the graphs torch.compile
built. Writes bench/results/ddp_overhead_<device>.json.
"""
import argparse, json, statistics, subprocess, sys, tempfile, time
from common import parser, number, fail, check_path, check_device, check_sizes, command_line, device_tag, guarded, out_file
from pathlib import Path


def worker(a):
    "One benchmark run in this process (plain, or one rank of a torchrun launch); rank 0 writes `a.out`."
    import numpy as np
    import torch
    from torch import nn
    from ssbnn.data import splits_from_arrays
    from ssbnn.experiments.cifar import benchmark_pretraining
    from ssbnn.distributed import init_distributed, close_distributed
    from ssbnn._utils import atomic_write
    env = init_distributed(a.device)
    z = np.load(a.arrays)
    data = splits_from_arrays(z["x"], z["y"], val=a.val, test=a.eval, name="cifar10")
    res = benchmark_pretraining(data, epochs=a.epochs, batch_size=a.batch_size, compile=not a.no_compile, budgets=(),
                                device=env.device if env.distributed else a.device, progress=False, sync_bn=a.sync_bn and env.distributed)
    model = res.pop("model")
    res.update(world_size=env.world_size, distributed=env.distributed,
               backend=torch.distributed.get_backend() if env.distributed else None,
               sync_bn_layers=sum(isinstance(m, nn.SyncBatchNorm) for m in model.encoder.modules()),
               compiled_graphs=torch._dynamo.utils.counters["stats"]["unique_graphs"])
    if env.is_main: atomic_write(a.out, lambda p: p.write_text(json.dumps(res, indent=1)))
    close_distributed()


def run_once(a, arrays:Path, nproc:int, out:Path) -> dict:
    "The benchmark as a subprocess: plain python (nproc 0) or torchrun with `nproc` processes."
    args = [str(Path(__file__).resolve()), "--worker", "--arrays", str(arrays), "--epochs", str(a.epochs),
            "--batch-size", str(a.batch_size), "--eval", str(a.eval), "--val", str(a.val), "--device", a.device, "--out", str(out)]
    if a.no_compile: args.append("--no-compile")
    if a.sync_bn: args.append("--sync-bn")
    launcher = [sys.executable] if nproc == 0 else [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"]   # torchrun of this Python
    t = time.time()
    r = subprocess.run(launcher + args, capture_output=True, text=True)
    if r.returncode: sys.exit(f"ddp_overhead: the {'plain' if nproc == 0 else f'torchrun x{nproc}'} run failed:\n{r.stderr[-4000:]}")
    res = json.loads(out.read_text())
    print(f"{'plain' if nproc == 0 else f'torchrun x{nproc}':>12}: {res['views_per_second']:,.0f} views/s "
          f"(wall {time.time() - t:.0f} s)", flush=True)
    return res


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--archive", type=Path, help="packed-JPEG archive of the CIFAR-10 training images")
    p.add_argument("--epochs", type=number(float), default=10)
    p.add_argument("--batch-size", type=number(int, low=2), default=1000, help="images per task, over all processes (default 1000)")
    p.add_argument("--eval", type=number(int), default=5000)
    p.add_argument("--val", type=number(int), default=1000)
    p.add_argument("--repeats", type=number(int), default=2, help="runs of each kind, alternating (default 2)")
    p.add_argument("--gpus", default="1", help="process counts for torchrun, e.g. 1,2,4 (default 1)")
    p.add_argument("--limit", type=number(int, low=0), default=0, help="use a seeded random subset of this many images (smoke tests)")
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--sync-bn", action="store_true", help="the torchrun runs synchronise batch norm (SyncBatchNorm; GPUs only)")
    p.add_argument("--device", default="auto")
    p.add_argument("--out", type=Path, default=None, help="JSON path (default bench/results/ddp_overhead_<device>.json)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--arrays", type=Path, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.worker: return worker(a)
    prog = "ddp_overhead.py"
    if a.archive is None: fail(prog, "give --archive, the packed-JPEG archive of the CIFAR-10 training images")
    check_path(prog, "--archive", a.archive, folder=False)
    nprocs = [n.strip() for n in a.gpus.split(",") if n.strip()]
    if not nprocs or not all(n.isdigit() and int(n) > 0 for n in nprocs): fail(prog, f"--gpus {a.gpus}: give process counts, e.g. 1 or 1,2,4")
    name = f"ddp_overhead_{device_tag(check_device(prog, a.device))}.json"
    out = out_file(prog, a.out or Path(__file__).parent / "results" / name)     # before any work: a user's file is never replaced
    from ssbnn.train import local_batch
    nprocs = [int(n) for n in nprocs]
    for n in nprocs: guarded(prog, lambda: local_batch(a.batch_size, n))   # each torchrun's processes share a task evenly

    import numpy as np
    from ssbnn.data import read_jpeg_archive, splits_from_arrays
    from ssbnn._utils import atomic_write
    with tempfile.TemporaryDirectory() as tmp:
        x, y = read_jpeg_archive(a.archive, threads=16)
        if a.limit:                                                    # the archive is sorted by class: a seeded random subset
            i = np.random.default_rng(0).permutation(len(y))[:a.limit]
            x, y = x[i], y[i]
        train = len(guarded(prog, lambda: splits_from_arrays(x, y, val=a.val, test=a.eval)).x_train)   # the workers' split, checked here
        check_sizes(prog, train, a.batch_size)
        arrays = Path(tmp) / "cifar.npz"
        np.savez(arrays, x=x, y=y)                                     # decoded once, read by every run
        runs = {0: [], **{n: [] for n in nprocs}}
        for i in range(a.repeats):
            for n in runs: runs[n].append(run_once(a, arrays, n, Path(tmp) / f"run{n}_{i}.json"))
    vps = {n: statistics.median(r["views_per_second"] for r in rs) for n, rs in runs.items()}
    slowdown = 1 - vps[1] / vps[0] if 1 in vps else None
    device = runs[0][0]["device"]
    res = {"command": command_line(prog, argv),
           "device": device, "torch": runs[0][0]["torch"], "epochs": a.epochs, "batch_size": a.batch_size,
           "views_per_second": {("plain" if n == 0 else f"torchrun_{n}"): v for n, v in vps.items()},
           "all_views_per_second": {("plain" if n == 0 else f"torchrun_{n}"): [r["views_per_second"] for r in rs] for n, rs in runs.items()},
           "knn_accuracy": {("plain" if n == 0 else f"torchrun_{n}"): [r["knn_accuracy"] for r in rs] for n, rs in runs.items()},
           "ran": {("plain" if n == 0 else f"torchrun_{n}"): {k: rs[0][k] for k in ("backend", "sync_bn_layers", "compiled_graphs")} for n, rs in runs.items()},
           "sync_bn": a.sync_bn, "slowdown_1gpu": slowdown, "target": 0.03, "passed": None if slowdown is None else slowdown <= 0.03}
    atomic_write(out, lambda f: f.write_text(json.dumps(res, indent=1)))       # whole or not at all
    if slowdown is not None: print(f"torchrun x1 against plain: {100 * slowdown:+.1f} % slower (target at most 3 %)")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
