"""Time rho on one device: the self-supervised prior, and the ResNet-20-FRN BNN prior run eight ways.

    python bench/rho_speed.py --bnn-samples 512

The BNN prior's networks run either all of a batch at once with vmap (grouped convolutions) or one by one (ordinary
convolutions), in float32 or bf16, with images in the default or the channels-last memory format, one by one also
compiled (`rho_network(compile=True)`; compilation happens in the untimed warm-up call). Every variant uses
the same parameter samples, so their rho differ only by arithmetic; another seed's rho gives the Monte Carlo error for
scale. Uses random 512-d representations and random 32x32 images: the cost does not depend on their values. Writes JSON.
"""
import json, time
from common import parser, number, check_device, out_file, device_tag, command_line
from pathlib import Path

# name: (vectorise, amp, channels_last, compile)
VARIANTS = {"vmap-fp32": (True, False, False, False), "vmap-bf16": (True, True, False, False), "one-by-one-fp32": (False, False, False, False),
            "one-by-one-fp32-channels-last": (False, False, True, False), "one-by-one-bf16": (False, True, False, False),
            "one-by-one-bf16-channels-last": (False, True, True, False),
            "one-by-one-fp32-channels-last-compiled": (False, False, True, True), "one-by-one-bf16-channels-last-compiled": (False, True, True, True)}


def timed(fn, sync, warmup=None):
    "(seconds, result) of one call of `fn` after a warm-up call (`warmup`, or `fn` itself)."
    (warmup or fn)(); sync(); t = time.perf_counter(); out = fn(); sync()
    return time.perf_counter() - t, out


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--pairs", type=number(int), default=1000)
    p.add_argument("--ss-samples", type=number(int), default=4096)
    p.add_argument("--bnn-samples", type=number(int), default=512, help="networks timed (the paper's 8,192 scale linearly)")
    p.add_argument("--bnn-batch", type=number(int), default=32, help="networks whose parameters are drawn at once (vmap with 128 ran out of an H100's 80 GB)")
    p.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of {', '.join(VARIANTS)}")
    p.add_argument("--device", default="auto")
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args(argv)
    variants = [v for v in a.variants.split(",") if v]
    if not variants or any(v not in VARIANTS for v in variants):
        p.exit(2, f"rho_speed.py: --variants {a.variants!r}: choose among {', '.join(VARIANTS)}\n")
    dev = check_device("rho_speed.py", a.device)
    out_file("rho_speed.py", a.out)                                # a user's file is never replaced, a folder refused, before any work
    import torch
    from ssbnn.prior import rho_linear, rho_network
    from ssbnn.models import ResNet20FRN
    from ssbnn._utils import atomic_write, environment
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    fa, fb = torch.randn(a.pairs, 512, device=dev), torch.randn(a.pairs, 512, device=dev)
    t_ss, _ = timed(lambda: rho_linear(fa, fb, n_samples=a.ss_samples, chunk=1024), sync)
    xa, xb = torch.rand(a.pairs, 3, 32, 32, device=dev), torch.rand(a.pairs, 3, 32, 32, device=dev)
    net = ResNet20FRN().to(dev)

    def bnn(variant, n=a.bnn_samples, seed=0):
        vectorise, amp, cl, compiled = VARIANTS[variant]
        fmt = torch.channels_last if cl else torch.contiguous_format
        return rho_network(net, xa.contiguous(memory_format=fmt), xb.contiguous(memory_format=fmt), n_samples=n,
                           batch=a.bnn_batch, amp=amp, vectorise=vectorise, compile=compiled, generator=torch.Generator(dev).manual_seed(seed))
    rho, seconds = {}, {}
    for v in variants:
        seconds[v], rho[v] = timed(lambda: bnn(v), sync, warmup=lambda: bnn(v, n=min(a.bnn_batch, a.bnn_samples)))
        print(f"{v:>30}: {seconds[v]:.2f} s for {a.bnn_samples} networks x {a.pairs} pairs "
              f"({seconds[v] * 8192 / a.bnn_samples:.1f} s for 8,192)", flush=True)
    ref = rho[variants[0]]
    fastest = min(seconds, key=seconds.get)
    res = {"pairs": a.pairs, "ss_samples": a.ss_samples, "seconds_rho_ss": t_ss, "bnn_samples": a.bnn_samples, "bnn_batch": a.bnn_batch,
           "bnn_network": f"ResNet20FRN(activation={net.activation.value!r})",
           "variants": {v: {"vectorise": VARIANTS[v][0], "amp": VARIANTS[v][1], "channels_last": VARIANTS[v][2], "compile": VARIANTS[v][3],
                            "seconds": seconds[v], "seconds_8192_extrapolated": seconds[v] * 8192 / a.bnn_samples,
                            f"max_rho_change_vs_{variants[0]}": (rho[v] - ref).abs().max().item()} for v in variants},
           "fastest": fastest, "seconds_rho_bnn_8192_extrapolated": seconds[fastest] * 8192 / a.bnn_samples,
           "goal_seconds_8192": 60, "passed": seconds[fastest] * 8192 / a.bnn_samples <= 60,
           "max_rho_change_other_seed": (bnn(variants[0], seed=1) - ref).abs().max().item(),   # Monte Carlo error, for scale
           **environment(dev),
           "command": command_line("rho_speed.py", argv)}
    print(json.dumps(res, indent=1))
    out = a.out or Path(__file__).parent / "results" / f"rho_speed_{device_tag(res['device'])}.json"
    atomic_write(out, lambda p: p.write_text(json.dumps(res, indent=1)))


if __name__ == "__main__":
    main()
