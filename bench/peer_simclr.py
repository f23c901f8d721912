"""SimCLR on CIFAR-10 as lightly's benchmark trains it, written independently of ssbnn: the reference for ssbnn's pipeline.

Everything that learns is here, in plain PyTorch, and none of it is ssbnn's code:
- per-image torchvision transforms in DataLoader workers: lightly's `SimCLRTransform` for CIFAR-10 (crop of 0.08-1 of the
  area, flip, colour jitter 0.4/0.4/0.4/0.1 with probability 0.8, grey with 0.2, no blur, ImageNet normalisation);
- the pytorch-cifar ResNet-18 (3x3 stem, no max-pool) that lightly's `ResNetGenerator('resnet-18')` builds, PyTorch's
  default initialisation;
- lightly's SimCLR projection head (512-512-128, batch norm), NT-Xent, each view through the network on its own;
- momentum SGD at 0.06 per 128 images, weight decay 5e-4 on every parameter, cosine over the epochs (lightly's
  `cifar10_benchmark.py`); `--warmup-epochs` and `--decay weights` give ssbnn's warm-up and decay split instead;
- lightly's kNN (k 200, t 0.1: `tests/peers/lightly/knn.py`, copied from lightly) on the backbone's features.
ssbnn only reads and splits the archive, so the kNN is measured on the same 44,000 / 5,000 images as
`bench/pretrain_cifar.py`'s. Run with the settings of the `simclr-sgd` sweep point (the same recipe through ssbnn's
pipeline), it says whether the gap to lightly's 0.85 is the pipeline's (augmentation, network, loop) or the recipe's.
"""
import argparse, functools, json, math, os, runpy, sys, time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
IMAGENET = ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))      # lightly's normalisation


class Block(nn.Module):
    "pytorch-cifar's BasicBlock: two 3x3 convolutions with batch norm, and a 1x1 projection where the shape changes."
    def __init__(self, c_in:int, c_out:int, stride:int):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False), nn.BatchNorm2d(c_out)
        self.conv2, self.bn2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False), nn.BatchNorm2d(c_out)
        self.shortcut = nn.Sequential() if stride == 1 and c_in == c_out else \
            nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out))

    def forward(self, x):
        return F.relu(self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))) + self.shortcut(x))


def resnet18() -> nn.Sequential:
    "The CIFAR ResNet-18 of pytorch-cifar (lightly's ResNetGenerator), without its classifier: images (N,3,32,32) -> (N,512)."
    layers, c = [nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU()], 64
    for width, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Block(c, width, stride), Block(width, width, 1)]; c = width
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())


def head(dim:int=512, hidden:int=512, out:int=128) -> nn.Sequential:
    "lightly's SimCLRProjectionHead(512, 512, 128): linear, batch norm, ReLU, linear."
    return nn.Sequential(nn.Linear(dim, hidden, bias=False), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Linear(hidden, out))


def nt_xent(z0, z1, t:float=0.5):
    "SimCLR's loss for two views (N,d) each: cross-entropy of each view's partner among the other 2N - 1 views."
    z = F.normalize(torch.cat([z0, z1]).float(), dim=1)
    sim = (z @ z.T / t).fill_diagonal_(float("-inf"))
    n = len(z0)
    return F.cross_entropy(sim, torch.cat([torch.arange(n, 2 * n), torch.arange(n)]).to(z.device))


def simclr_transform():
    "lightly's SimCLRTransform(input_size=32, cj_strength=0.5, gaussian_blur=0) up to its ToTensor: a PIL image -> a PIL view."
    import torchvision.transforms as T
    return T.Compose([T.RandomResizedCrop(32, scale=(0.08, 1.)), T.RandomHorizontalFlip(),
                      T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8), T.RandomGrayscale(0.2)])


def normaliser(device) -> tuple:
    "lightly's normalisation as (mean, std), each (1,3,1,1) on `device`, made once."
    return tuple(torch.tensor(c, device=device).view(1, 3, 1, 1) for c in IMAGENET)


def to_input(v:torch.Tensor, norm:tuple) -> torch.Tensor:
    "The transform's last two steps, ToTensor and Normalize, where `norm` lives: uint8 views (B,32,32,3) -> float (B,3,32,32), channels-last."
    x = v.to(norm[0].device, non_blocking=True).permute(0, 3, 1, 2).float().div(255)    # ToTensor's arithmetic, then Normalize's
    return ((x - norm[0]) / norm[1]).contiguous(memory_format=torch.channels_last)


class TwoViews(torch.utils.data.Dataset):
    "uint8 images (N,3,32,32) as pairs of independently transformed uint8 views (32,32,3): 4x less shared memory than float."
    def __init__(self, x:torch.Tensor):
        self.x, self.tf = x.permute(0, 2, 3, 1).contiguous().numpy(), simclr_transform()

    def __len__(self): return len(self.x)

    def __getitem__(self, i):
        from PIL import Image
        im = Image.fromarray(self.x[i])
        return np.array(self.tf(im)), np.array(self.tf(im))              # writable copies, as collate wants


class ChunkedEpochs(torch.utils.data.Sampler):
    "Each epoch a fresh shuffle cut into batches of `batch_size` (the rest dropped), each handed out in chunks of at most `chunk` indices."
    def __init__(self, n:int, batch_size:int, chunk:int, generator:torch.Generator):
        self.n, self.batch_size, self.chunk, self.generator = n, batch_size, chunk, generator

    def __len__(self): return self.n // self.batch_size * math.ceil(self.batch_size / self.chunk)

    def __iter__(self):
        perm = torch.randperm(self.n, generator=self.generator)
        for b in range(self.n // self.batch_size):
            yield from (c.tolist() for c in perm[b * self.batch_size:(b + 1) * self.batch_size].split(self.chunk))


def batches(loader, per_batch:int, device):
    "Whole batches of both views, (B,32,32,3) uint8 each on `device`, from a loader of a batch's chunks in turn."
    parts = []
    for a, b in loader:                              # small chunks: what the workers hold in shared memory stays small
        parts.append((a.to(device, non_blocking=True), b.to(device, non_blocking=True)))
        if len(parts) == per_batch: yield tuple(torch.cat(v) for v in zip(*parts)); parts = []


def lr_factor(step:int, total:int, warmup:int, start:float, per_epoch:int) -> float:
    "Warm-up from `start` over `warmup` steps, then cosine; with no warm-up, lightly's cosine stepped once an epoch."
    if warmup == 0: return 0.5 * (1 + math.cos(math.pi * (step // per_epoch) / (total // per_epoch)))
    if step < warmup: return start + (1 - start) * step / warmup
    return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))


def param_groups(modules, decay:str="all") -> list:
    "SGD's parameter groups: weight decay on every parameter ('all', lightly), or on weights only, not biases or batch norm ('weights', ssbnn)."
    params = [p for m in modules for p in m.parameters()]
    if decay == "all": return [{"params": params}]
    if decay != "weights": raise ValueError(f"decay must be 'all' or 'weights', not {decay!r}")
    return [{"params": [p for p in params if p.ndim > 1]}, {"params": [p for p in params if p.ndim <= 1], "weight_decay": 0.}]


@torch.no_grad()
def features(net:nn.Module, x:torch.Tensor, device, amp:bool, batch:int=1000) -> torch.Tensor:
    "Backbone features (N,512) of uint8 images (N,3,32,32), normalised as the views are, in eval mode."
    net.eval()
    norm, out = normaliser(device), []
    for i in range(0, len(x), batch):
        with torch.autocast(device.type, torch.bfloat16, enabled=amp):
            out.append(net(to_input(x[i:i + batch].permute(0, 2, 3, 1), norm)).float())
    net.train()
    return torch.cat(out)


@functools.cache
def lightly_knn():
    "lightly's `knn_predict` (tests/peers/lightly/knn.py, copied from lightly), loaded once."
    return runpy.run_path(str(HERE.parent / "tests" / "peers" / "lightly" / "knn.py"))["knn_predict"]


def knn(net, data, device, amp:bool) -> float:
    "lightly's kNN accuracy (k 200, t 0.1) of the test split with the training split as memory bank."
    predict = lightly_knn()
    bank = F.normalize(features(net, data.x_train, device, amp), dim=1)
    q = F.normalize(features(net, data.x_test, device, amp), dim=1)
    y_bank, y = data.y_train.to(device), data.y_test.to(device)
    k = min(200, len(bank))                                       # a smoke test's bank may be smaller
    hits = sum((predict(q[i:i + 1000], bank.T, y_bank, data.num_classes, k, 0.1)[:, 0] == y[i:i + 1000]).sum().item()
               for i in range(0, len(q), 1000))
    return hits / len(q)


def train(data, epochs:int=50, batch_size:int=1000, lr:float|None=None, weight_decay:float=5e-4, temperature:float=0.5,
          warmup_epochs:float=0., warmup_start:float=1e-3 / 0.6, decay:str="all", joint_bn:bool=False, knn_every:int=10,
          workers:int=0, seed:int=0, device="cpu", amp:bool=True, progress:bool=True,
          chunk:int=128, # images a worker hands over at a time: shared memory holds 2 chunks a worker (25 MB for 16)
         ) -> dict:
    "Pretrain SimCLR on `data.x_train` as lightly does; the record: kNN curve, loss curve, speed (the network under 'net')."
    device = torch.device(device)
    amp = amp and device.type == "cuda"
    torch.manual_seed(seed)
    net, proj = resnet18().to(device, memory_format=torch.channels_last), head().to(device)
    lr = 0.06 * batch_size / 128 if lr is None else lr
    opt = torch.optim.SGD(param_groups((net, proj), decay), lr=lr, momentum=0.9, weight_decay=weight_decay)
    sampler = ChunkedEpochs(len(data.x_train), batch_size, chunk, torch.Generator().manual_seed(seed))
    loader = torch.utils.data.DataLoader(TwoViews(data.x_train), batch_sampler=sampler, num_workers=workers,
                                         pin_memory=device.type == "cuda", persistent_workers=workers > 0)
    per_epoch, norm = len(data.x_train) // batch_size, normaliser(device)
    total, warmup = epochs * per_epoch, round(warmup_epochs * per_epoch)
    history, step, t0 = [], 0, time.time()
    bar = range(epochs)
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(bar, desc="peer SimCLR", unit="epoch")
    for epoch in bar:
        te, losses = time.time(), []
        for v0, v1 in batches(loader, math.ceil(batch_size / chunk), device):
            for g in opt.param_groups: g["lr"] = lr * lr_factor(step, total, warmup, warmup_start, per_epoch)
            x0, x1 = to_input(v0, norm), to_input(v1, norm)
            with torch.autocast(device.type, torch.bfloat16, enabled=amp):
                if joint_bn: z0, z1 = proj(net(torch.cat([x0, x1]))).chunk(2)      # as ssbnn: both views one batch
                else: z0, z1 = proj(net(x0)), proj(net(x1))                         # as lightly: each view on its own
            loss = nt_xent(z0, z1, temperature)
            opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
            losses.append(loss.detach()); step += 1
        row = {"epoch": epoch + 1, "loss": torch.stack(losses).mean().item(), "lr": opt.param_groups[0]["lr"],
               "seconds": time.time() - te}                                  # the epoch's steps, its kNN left out
        if (epoch + 1) % knn_every == 0 or epoch + 1 == epochs: row["knn_accuracy"] = knn(net, data, device, amp)
        history.append(row)
        if progress: bar.set_postfix({k: round(v, 4) for k, v in row.items() if k in ("loss", "knn_accuracy")})
    s_epoch = float(np.mean([r["seconds"] for r in history[1:] or history]))   # the first epoch also starts the workers
    return {"method": "peer-simclr", "epochs": epochs, "batch_size": batch_size, "lr": lr, "weight_decay": weight_decay,
            "temperature": temperature, "warmup_epochs": warmup_epochs, "warmup_start": warmup_start, "decay": decay,
            "joint_bn": joint_bn, "amp": amp, "workers": workers, "chunk": chunk, "seed": seed, "train_images": len(data.x_train),
            "eval_images": len(data.x_test), "steps": step, "seconds_per_epoch": s_epoch,
            "seconds_per_epoch_50k": s_epoch * 50_000 / len(data.x_train), "wall_seconds": time.time() - t0,
            "knn_accuracy": history[-1]["knn_accuracy"], "best_knn_accuracy": max(r.get("knn_accuracy", 0) for r in history),
            "history": history, "net": net}


def main(argv=None):
    from common import parser, number, seed_arg           # run as a script: bench/ is on the path
    p = parser(__doc__)                                   # one-line errors, exit status 2, as every script here
    p.add_argument("--archive", type=Path, required=True, help="packed-JPEG archive of the CIFAR-10 training images")
    p.add_argument("--epochs", type=number(int), default=50)
    p.add_argument("--batch-size", type=number(int, low=2), default=1000, help="images per step, at least 2 (default 1000, ssbnn's recipe; lightly's: 512)")
    p.add_argument("--lr", type=number(float), default=None, help="peak learning rate (default 0.06 x batch / 128, lightly's rule)")
    p.add_argument("--weight-decay", type=number(float, low=0), default=5e-4)
    p.add_argument("--temperature", type=number(float), default=0.5, help="NT-Xent temperature (default 0.5, lightly's)")
    p.add_argument("--warmup-epochs", type=number(float, low=0), default=0., help="linear warm-up epochs before the cosine (default 0, lightly's)")
    p.add_argument("--decay", choices=("all", "weights"), default="all",
                   help="which parameters weight decay reaches: 'all' (lightly) or 'weights' (ssbnn: not biases or batch norm)")
    p.add_argument("--joint-bn", action="store_true", help="both views through the network as one batch, as ssbnn does")
    p.add_argument("--knn-every", type=number(int), default=10, help="epochs between kNN evaluations (default 10)")
    p.add_argument("--workers", type=number(int, low=0), default=None, help="DataLoader workers for the transforms (default: the CPUs, at most 16)")
    p.add_argument("--amp", action=argparse.BooleanOptionalAction, default=True, help="bf16 autocast on CUDA (default on)")
    p.add_argument("--seed", type=seed_arg(), default=0)
    p.add_argument("--device", default="auto")
    p.add_argument("--eval", type=number(int), default=5000, help="held-out evaluation images (default 5000)")
    p.add_argument("--val", type=number(int), default=1000, help="held-out validation images, left out as ssbnn leaves them (default 1000)")
    p.add_argument("--limit", type=number(int, low=0), default=0, help="use a seeded random subset of N images (smoke tests)")
    p.add_argument("--out", type=Path, default=None, help="JSON record (default bench/results/peer_simclr_cifar10_<device>_<epochs>ep.json)")
    a = p.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from common import cifar_splits, check_device, check_path, command_line, device_tag, fail, guarded, out_file
    prog = Path(__file__).name
    check_path(prog, "--archive", a.archive, folder=False)                    # before any work: what it reads, where it writes, on what
    from ssbnn._utils import atomic_write, environment
    device = check_device(prog, a.device); env = environment(device)
    out = out_file(prog, a.out or HERE / "results" / f"peer_simclr_cifar10_{device_tag(env['device'])}_{a.epochs}ep.json")
    data, read_s = guarded(prog, lambda: cifar_splits(a, prog))
    if a.batch_size > len(data.x_train): fail(prog, f"--batch-size {a.batch_size} is larger than the {len(data.x_train)} training images")
    workers = min(16, os.cpu_count() or 1) if a.workers is None else a.workers
    print(f"{data} (read in {read_s:.0f} s); device {device}, {workers} workers", flush=True)
    res = train(data, a.epochs, a.batch_size, a.lr, a.weight_decay, a.temperature, a.warmup_epochs, decay=a.decay,
                joint_bn=a.joint_bn, knn_every=a.knn_every, workers=workers, seed=a.seed, device=device, amp=a.amp)
    res.pop("net")
    res.update(read_seconds=read_s, command=command_line(prog, argv), **env)
    atomic_write(out, lambda f: f.write_text(json.dumps(res, indent=1)))
    print(json.dumps({k: res[k] for k in ("knn_accuracy", "best_knn_accuracy", "seconds_per_epoch_50k", "wall_seconds")}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
