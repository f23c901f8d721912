"""ssbnn's ResNet-20-FRN against Izmailov et al.'s own network (bnn_hmc's Haiku model), on the same parameters and images.

The reference is bnn_hmc's `bnn_hmc/utils/models.py`, copied byte for byte into `tests/peers/bnn_hmc` (see its README).
It runs with JAX and Haiku, which ssbnn does not need; install them beside ssbnn to run this:

    pip install jax dm-haiku
    python bench/frn_reference.py --out bench/results/frn_reference_cpu.json --fixture tests/reference/resnet20_frn.npz

Every parameter, FRN's included, is drawn from the paper's N(0, 1/5) prior, as the BNN prior of Table 1 draws them.
Both networks, `resnet20_frn_swish` (the default, the network of Izmailov et al.'s CIFAR-10 runs) and `resnet20_frn`,
run on the same images. `--fixture` saves the draws' seed and order, a few images and the reference's logits, which
`nbs/03_models.ipynb` compares ssbnn against on every test run, without JAX.
"""
import json, platform, runpy, sys, time
from pathlib import Path
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PEER = ROOT / "tests" / "peers" / "bnn_hmc" / "bnn_hmc" / "utils" / "models.py"
MODELS = {"swish": "resnet20_frn_swish", "relu": "resnet20_frn"}   # ssbnn's activation -> bnn_hmc's model name
TOLERANCE = 1e-4     # of the largest logit: float32 convolutions summed in another order (XLA's and PyTorch's)


def draw_params(names, shapes, seed:int, var:float) -> dict:
    "bnn_hmc's parameter tree {module: {name: float32 array}}, each parameter drawn from N(0, var) in the order `names` gives."
    rng, params = np.random.default_rng(seed), {}
    for name, shape in zip(names, shapes):
        module, p = str(name).split("/")
        shape = tuple(int(n) for n in str(shape).split(","))
        params.setdefault(module, {})[p] = rng.standard_normal(shape, dtype=np.float32) * np.float32(np.sqrt(var))
    return params


def ours_logits(activation:str, params:dict, x:np.ndarray) -> np.ndarray:
    "ssbnn's ResNet20FRN with bnn_hmc's parameters `params` on normalised channels-last images `x` `(N,32,32,3)`: logits `(N,10)`."
    import torch
    from ssbnn.models import ResNet20FRN, load_haiku_params
    as_given = dict(mean=(0.,) * 3, std=(1.,) * 3)          # bnn_hmc's network takes images its data pipeline has normalised
    net = load_haiku_params(ResNet20FRN(activation=activation, **as_given), params).eval()
    with torch.no_grad(): return net(torch.from_numpy(np.ascontiguousarray(x)).permute(0, 3, 1, 2)).numpy()


def reference(activation:str):
    "bnn_hmc's (apply, init) for the network with this activation."
    return runpy.run_path(str(PEER))["get_model"](MODELS[activation], {"num_classes": 10})


def main(argv=None):
    from common import parser, number, seed_arg           # run as a script: bench/ is on the path
    p = parser(__doc__)                                   # one-line errors, exit status 2, as every script here
    p.add_argument("--images", type=number(int), default=64, help="random images (standard normal, as normalised images are)")
    p.add_argument("--var", type=number(float), default=0.2, help="prior variance of every parameter (the paper's 1/5)")
    p.add_argument("--seed", type=seed_arg(), default=0)
    p.add_argument("--out", type=Path, help="JSON record")
    p.add_argument("--fixture", type=Path, help="also save the draws' recipe, 4 images and the reference's logits here (.npz)")
    a = p.parse_args(argv)
    try: import jax, haiku
    except ImportError as e: p.exit(2, f"{p.prog}: the reference needs JAX and Haiku ({e}); pip install jax dm-haiku\n")
    x = np.random.default_rng(a.seed + 1).standard_normal((a.images, 32, 32, 3), dtype=np.float32)
    _, init = reference("swish")
    tree, state = init(jax.random.PRNGKey(0), (x[:1], None), True)
    names = [f"{m}/{n}" for m in tree for n in tree[m]]
    shapes = [",".join(str(d) for d in tree[m][n].shape) for m in tree for n in tree[m]]
    params = draw_params(names, shapes, a.seed, a.var)
    rows, logits, t0 = {}, {}, time.time()
    for act in MODELS:
        apply, _ = reference(act)
        ref = np.asarray(apply(params, state, None, (x, None), False)[0])
        ours = ours_logits(act, params, x)
        gap = float(np.abs(ours - ref).max())
        rows[act] = {"bnn_hmc_model": MODELS[act], "max_abs_logit": float(np.abs(ref).max()), "max_abs_diff": gap,
                     "relative": gap / float(np.abs(ref).max()), "same_argmax": float((ours.argmax(1) == ref.argmax(1)).mean())}
        logits[act] = ref
        print(f"{MODELS[act]:20s} logits up to {rows[act]['max_abs_logit']:.2f}; ssbnn differs by {gap:.2e} "
              f"({rows[act]['relative']:.1e} of the largest), same class for {rows[act]['same_argmax']:.0%}", flush=True)
    import torch, ssbnn
    record = {"what": "ssbnn.models.ResNet20FRN against bnn_hmc's Haiku ResNet-20-FRN (Izmailov et al. 2021) on the same "
                      "parameters and images",
              "passed": all(r["relative"] < TOLERANCE for r in rows.values()),
              "tolerance": f"largest logit difference below {TOLERANCE:g} of the largest logit",
              "peer": "tests/peers/bnn_hmc/bnn_hmc/utils/models.py (izmailovpavel/bnn_covariate_shift @ bbfc072)",
              "parameters": f"{sum(v.size for m in params.values() for v in m.values())} drawn from N(0, {a.var:g}) "
                            f"(numpy default_rng({a.seed}))", "images": f"{a.images} standard normal 32x32x3",
              "results": rows, "seconds": round(time.time() - t0, 1), "command": " ".join(sys.argv),
              "versions": {"ssbnn": ssbnn.__version__, "torch": torch.__version__, "jax": jax.__version__,
                           "haiku": haiku.__version__, "numpy": np.__version__, "python": platform.python_version()},
              "machine": platform.processor() or platform.machine()}
    from ssbnn._utils import atomic_write                                 # each file whole or not at all
    if a.out: atomic_write(a.out, lambda f: f.write_text(json.dumps(record, indent=1) + "\n"))
    if a.fixture:
        arrays = dict(names=np.array(names), shapes=np.array(shapes), seed=a.seed, var=a.var,
                      draw_sum=sum(float(np.abs(v).sum()) for m in params.values() for v in m.values()),
                      x=x[:4], **{f"logits_{k}": v[:4] for k, v in logits.items()})
        def write(f):
            with open(f, "wb") as fh: np.savez_compressed(fh, **arrays)    # a file object: numpy adds no .npz to the temporary's name
        atomic_write(a.fixture, write)
    print("passed" if record["passed"] else "FAILED")
    return 0 if record["passed"] else 1


if __name__ == "__main__": sys.exit(main())
