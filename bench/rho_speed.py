"""Time rho on one GPU: the self-supervised prior for 1,000 pairs x 4,096 samples, and the ResNet-20-FRN BNN prior.

    python bench/rho_speed.py --bnn-samples 512

Uses random 512-d representations and random 32x32 images: the cost does not depend on their values. Writes JSON.
"""
import argparse, json, sys, time
from pathlib import Path


def timed(fn, sync):
    "Seconds for one call of `fn` after a warm-up call."
    fn(); sync(); t = time.perf_counter(); fn(); sync()
    return time.perf_counter() - t


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=1000)
    p.add_argument("--ss-samples", type=int, default=4096)
    p.add_argument("--bnn-samples", type=int, default=512, help="networks timed (the paper's 8,192 scale linearly)")
    p.add_argument("--bnn-batch", type=int, default=128)
    p.add_argument("--device", default="auto")
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args(argv)
    import torch
    from ssbnn.prior import rho_linear, rho_network
    from ssbnn.models import ResNet20FRN
    from ssbnn._utils import get_device, atomic_write
    dev = get_device(a.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    fa, fb = torch.randn(a.pairs, 512, device=dev), torch.randn(a.pairs, 512, device=dev)
    t_ss = timed(lambda: rho_linear(fa, fb, n_samples=a.ss_samples, chunk=1024), sync)
    xa, xb = torch.rand(a.pairs, 3, 32, 32, device=dev), torch.rand(a.pairs, 3, 32, 32, device=dev)
    net = ResNet20FRN().to(dev)
    rho = {}
    def bnn(amp):
        rho[amp] = rho_network(net, xa, xb, n_samples=a.bnn_samples, batch=a.bnn_batch, amp=amp, generator=torch.Generator(dev).manual_seed(0))
    t_bnn, t_bf16 = timed(lambda: bnn(False), sync), timed(lambda: bnn(True), sync)
    other = rho_network(net, xa, xb, n_samples=a.bnn_samples, batch=a.bnn_batch, generator=torch.Generator(dev).manual_seed(1))
    res = {"pairs": a.pairs, "ss_samples": a.ss_samples, "seconds_rho_ss": t_ss, "bnn_samples": a.bnn_samples, "bnn_batch": a.bnn_batch,
           "bnn_network": f"ResNet20FRN(activation={net.activation.value!r})", "seconds_rho_bnn": t_bnn, "seconds_rho_bnn_8192_extrapolated": t_bnn * 8192 / a.bnn_samples,
           "seconds_rho_bnn_bf16": t_bf16, "seconds_rho_bnn_bf16_8192_extrapolated": t_bf16 * 8192 / a.bnn_samples,
           "max_rho_change_bf16": (rho[True] - rho[False]).abs().max().item(),           # the same parameter samples
           "max_rho_change_other_seed": (other - rho[False]).abs().max().item(),         # Monte Carlo error, for scale
           "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu", "torch": torch.__version__,
           "command": "python bench/rho_speed.py " + " ".join(sys.argv[1:] if argv is None else argv)}
    print(json.dumps(res, indent=1))
    out = a.out or Path(__file__).parent / "results" / f"rho_speed_{res['device'].split()[1] if ' ' in res['device'] else 'cpu'}.json"
    atomic_write(out, lambda p: p.write_text(json.dumps(res, indent=1)))


if __name__ == "__main__":
    main()
