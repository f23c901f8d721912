"""Trace and compile pretraining's one graph (`TaskLoss`: encoder, head and objective) before spending GPU minutes on it.

    python bench/compile_graph.py --out bench/results/compile_graph_cpu.json
    python bench/compile_graph.py --ranks 2 --out bench/results/compile_graph_cpu_2ranks.json

`pretrain` compiles `TaskLoss` only on CUDA. Dynamo's tracing (graph breaks, guards, recompilation) is the same on every
device, so a CPU run with inductor finds the tracing errors of the GPU path for free; only the code generation
differs (C++ here, Triton there). For the CIFAR SS-BNN and SS-BNN* it records the graphs and graph breaks, the
first-call compile time, the compiled loss and gradients against eager float32, eager float32 against float64 (the
rounding one should expect; SS-BNN only), and whether a second task with fresh noise recompiles; and the same for
SimCLR's augmentation as `pretrain` compiles it (`compiled_augment`). `--ranks 2` checks
the torchrun path the same way: two gloo processes, each compiling `DDP(GatheredTask)`, where DDP's own breaks between
gradient buckets are expected. Writes JSON.
"""
import copy, json, sys, time
from common import check_device, command_line, fail, number, out_file, parser
from pathlib import Path


def _flat_grads(mod):
    "Every parameter gradient of `mod`, flattened into one vector (float64)."
    import torch
    return torch.cat([p.grad.flatten().double() for p in mod.parameters() if p.grad is not None])


def _bucketed(reason:str) -> bool:
    "Whether a graph break is DDP's own, between gradient buckets (so that their all-reduce overlaps the backward pass)."
    return reason.startswith("DDPOptimizer intentional graph-break")


def _rel(a, b) -> float:
    "|a - b| / |b|."
    return ((a - b).norm() / b.norm()).item()


def _second_call(fn) -> tuple:
    "(seconds, False) for a call of `fn` that reuses the compiled graph, or (None, why) when it would recompile."
    import torch
    torch._dynamo.config.error_on_recompile = True
    try:
        t = time.perf_counter(); fn(); return time.perf_counter() - t, False
    except Exception as e:                                    # the error names the guard that failed
        return None, f"{type(e).__name__}: {str(e)[:300]}"
    finally: torch._dynamo.config.error_on_recompile = False


def check(star:bool, m:int, device, run=None) -> dict:
    "Compile the CIFAR SS-BNN (or SS-BNN*) task loss, as `run` wraps it, for tasks of `m` images a process; its graph, timing and agreement with eager."
    import torch
    from ssbnn.experiments.cifar import cifar_ssbnn
    from ssbnn.train import LabelledTask, OneProcess, _draw
    run = run or OneProcess()
    torch.manual_seed(0)
    model = cifar_ssbnn(device=device)
    x = torch.randint(0, 256, (4 * m * run.world_size, 3, 32, 32), dtype=torch.uint8, device=device)
    labelled = LabelledTask.make(x[:m], torch.arange(m, device=device) % 10, model.encoder.dim, 10, batch_size=m) if star else None
    mods = [model.encoder, model.head, model.elbo] + ([labelled.layer] if star else [])
    for mod in mods: mod.to(device).train()
    model.encoder.to(memory_format=torch.channels_last)
    base = run.task_loss(model.encoder, model.head, model.elbo, labelled, amp=True)
    shared, gen = run.generators(0, device)
    args = _draw(x, model.augment, m, run, shared, gen, base, labelled)
    explained = torch._dynamo.explain(run.wrap(copy.deepcopy(base)))(*args)
    eager = run.wrap(copy.deepcopy(base))
    loss_eager = eager(*args)[0]; loss_eager.backward()
    if not star:                                              # the task layer casts its features to float32: no float64 SS-BNN*
        wide = run.wrap(copy.deepcopy(base).double())
        wide(*[a.double() if torch.is_tensor(a) and a.is_floating_point() else a for a in args])[0].backward()
    torch._dynamo.reset()
    compiled = torch.compile(run.wrap(base))
    t = time.perf_counter(); loss = compiled(*args)[0]; loss.backward(); first = time.perf_counter() - t
    g = _flat_grads(base)                                     # before the second task adds its own
    second, recompiled = _second_call(lambda: compiled(*_draw(x, model.augment, m, run, shared, gen, base, labelled))[0].backward())
    g_eager, g_wide = _flat_grads(eager), None if star else _flat_grads(wide)
    return {"objective": "ss-bnn*" if star else "ss-bnn", "processes": run.world_size, "task_images": m * run.world_size,
            "graphs": explained.graph_count, "graph_breaks": explained.graph_break_count,
            "break_reasons": [r.reason for r in explained.break_reasons],
            "compile_seconds": round(first, 1), "second_call_seconds": None if second is None else round(second, 3),
            "recompiled": recompiled, "loss_eager": loss_eager.item(), "loss_compiled": loss.item(),
            "grad_rel_diff_compiled_vs_eager": _rel(g, g_eager), "grad_rel_diff_compiled_vs_float64": None if star else _rel(g, g_wide),
            "grad_rel_diff_eager_vs_float64": None if star else _rel(g_eager, g_wide), "grad_norm": g.norm().item()}


def check_augment(n:int, device) -> dict:
    "Compile SimCLR's augmentation as `pretrain` does (`compiled_augment`) for batches of `n`; its graph and agreement with eager."
    import torch
    from ssbnn.augment import SimCLRAugment, compiled_augment
    aug = SimCLRAugment()
    x = torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8, device=device).float() / 255
    explained = torch._dynamo.explain(aug.apply)(x, *aug.draw(n, x, torch.Generator(device).manual_seed(0)))
    torch._dynamo.reset()
    fast = compiled_augment(aug)
    t = time.perf_counter(); out = fast(x, torch.Generator(device).manual_seed(0)); first = time.perf_counter() - t
    _, recompiled = _second_call(lambda: fast(x, torch.Generator(device).manual_seed(1)))   # new parameters, same graph
    ref = aug(x, torch.Generator(device).manual_seed(0))
    return {"objective": "simclr-augment", "images": n, "graphs": explained.graph_count, "graph_breaks": explained.graph_break_count,
            "break_reasons": [r.reason for r in explained.break_reasons], "compile_seconds": round(first, 1),
            "recompiled": recompiled, "max_abs_diff_compiled_vs_eager": (out - ref).abs().max().item()}


def ranked_rows(m:int) -> list[dict]:
    "`check` on this process of a gloo group, with `DDPRun`'s sharded task, gathered representations and DDP wrapper."
    from ssbnn.distributed import DDPRun
    run = DDPRun()
    dev = run.device("cpu")
    return [check(star, m, dev, run) for star in (False, True)]


PROG = Path(__file__).name

def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--task-images", type=number(int, low=2), default=8, help="images per view in the task, at least 2: a task needs negatives (CPU: keep it small)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--ranks", type=number(int, low=1, high=64), default=1, help="CPU processes: above 1, the torchrun path (gloo, DDP, gathered task)")
    p.add_argument("--out", type=Path, default=None, help="JSON record (default: print it)")
    a = p.parse_args(argv)
    if a.task_images < 2 * a.ranks: fail(PROG, f"--task-images {a.task_images} leaves a rank fewer than 2 images (a task needs negatives); give at least {2 * a.ranks} for {a.ranks} ranks")
    dev, out = check_device(PROG, a.device), out_file(PROG, a.out)
    from ssbnn._utils import atomic_write, environment
    if a.ranks > 1:
        from ssbnn.distributed import run_local
        per_rank = run_local(ranked_rows, a.ranks, a.task_images // a.ranks, timeout=1800)
        rows = [{**r, "grad_norm_by_rank": [rr[i]["grad_norm"] for rr in per_rank]} for i, r in enumerate(per_rank[0])]
    else: rows = [check(star, a.task_images, dev) for star in (False, True)] + [check_augment(2 * a.task_images, dev)]
    text = json.dumps({"rows": rows, "meta": environment(dev), "command": command_line(PROG, argv)}, indent=1)
    if out: atomic_write(out, lambda f: f.write_text(text))
    else: sys.stdout.write(text + "\n")
    bad = [r["objective"] for r in rows if r["recompiled"] or any(not _bucketed(b) for b in r["break_reasons"])]
    if bad: sys.exit(f"{PROG}: graph breaks (other than DDP's between buckets) or recompilation in {', '.join(bad)} (see the record)")


if __name__ == "__main__":
    main()
