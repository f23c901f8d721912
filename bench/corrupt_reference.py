"""ssbnn's CIFAR-10-C corruptions against the authors' own `make_cifar_c.py`, on the same images and the same random draws.

The reference is the original script (hendrycks/robustness, `ImageNet-C/create_c/make_cifar_c.py`, with its frost
photographs beside it), run with the libraries it was written for, none of which ssbnn needs: scikit-image, OpenCV,
and Wand over ImageMagick. Only its distortion section is executed, under the few textual shims `SHIMS` lists for
today's numpy, scikit-image and scipy; the corruptions themselves run unchanged. Both sides draw from one stream: the
script from `np.random` after `np.random.seed(s)`, ssbnn through `LegacyDraws(s)`, which offers the `numpy.random.Generator`
methods its corruptions call on the same legacy stream. Impulse noise draws inside scikit-image from a generator of its
own, so both sides get `numpy.random.default_rng(s)` there. Each image is corrupted on its own, as the script does.

    apt-get install libmagickwand-dev && pip install scikit-image opencv-python-headless Wand
    git clone https://github.com/hendrycks/robustness   # the script and the frost photographs
    python bench/corrupt_reference.py --script robustness/ImageNet-C/create_c/make_cifar_c.py --archive cifar10_train.npz \\
        --out bench/results/corrupt_reference_cpu.json --fixture tests/reference/make_cifar_c.npz

`--fixture` also saves a few images and the script's output for each corruption at every severity (four images at
severity 5, the paper's, two at the others), which `tests/test_corrupt_reference.py` compares ssbnn against on every
test run, without the script's dependencies.
"""
import contextlib, json, os, platform, sys, time
from pathlib import Path
import numpy as np
from ssbnn.experiments.corrupt import CORRUPTIONS   # named as the script names its functions

SHIMS = [  # (what the 2018 script wrote, what today's libraries need): the same computation
    ("np.float_", "np.float64"),                                   # removed in numpy 2
    ("np.fromstring(", "np.frombuffer("),                           # binary fromstring removed in numpy 2
    ("multichannel=True", "channel_axis=-1"),                       # scikit-image 0.19 renamed it
    ("sk.util.random_noise(np.array(x) / 255., mode='s&p', amount=c)",   # scikit-image draws from its own generator:
     "sk.util.random_noise(np.array(x) / 255., mode='s&p', amount=c, rng=np.random.default_rng(IMPULSE_SEED))"),  # seeded
]
START, END = "# /////////////// Distortion Helpers ///////////////", "# /////////////// End Distortions ///////////////"
OWN_GENERATOR = {"impulse_noise"}                                   # draws through numpy.random.default_rng(seed)
TOLERANCE = 1     # uint8 levels: the same value computed in another order of float operations may truncate to one below


class LegacyDraws:
    "The `numpy.random.Generator` methods ssbnn's corruptions call, drawn from numpy's legacy stream as `np.random.seed(seed)` sets it."
    def __init__(self, seed:int): self.rs = np.random.RandomState(seed)
    def normal(self, loc=0.0, scale=1.0, size=None): return self.rs.normal(loc, scale, size)
    def poisson(self, lam=1.0, size=None): return self.rs.poisson(lam, size)
    def uniform(self, low=0.0, high=1.0, size=None): return self.rs.uniform(low, high, size)
    def integers(self, low, high=None, size=None): return self.rs.randint(low, high, size)
    def random(self, size=None): return self.rs.random_sample(size)


FIXTURE_IMAGES = {1: 2, 2: 2, 3: 2, 4: 2, 5: 4}   # images per severity in the test fixture: the paper's severity 5 with the most

def fixture_key(name:str, severity:int) -> str:
    "The fixture's array of the script's outputs for corruption `name` at `severity`; image i was corrupted with seed 1000 * severity + i."
    return f"{name}_s{severity}"


def draws(name:str, seed:int):
    "The random source ssbnn's corruption `name` gets to share the reference's draws for `seed`."
    return np.random.default_rng(seed) if name in OWN_GENERATOR else LegacyDraws(seed)


def load_reference(script:Path) -> dict:
    "The distortion functions of `make_cifar_c.py`, executed with `SHIMS`: {name: f(PIL image, severity)}."
    src = script.read_text()
    if START not in src or END not in src: raise ValueError(f"{script} has no distortion section; is it make_cifar_c.py?")
    body = src[src.index(START):src.index(END)]
    for old, new in SHIMS:
        if old not in body: raise ValueError(f"{script} differs from the version these shims were written for (no {old!r})")
        body = body.replace(old, new)
    ns = {"__name__": "make_cifar_c"}
    exec(compile("import numpy as np\nfrom PIL import Image\n" + body, str(script), "exec"), ns)
    return ns


@contextlib.contextmanager
def cwd(path:Path):
    "Run in `path` (the script reads its frost photographs from './'); `contextlib.chdir` needs Python 3.11, ssbnn supports 3.10."
    old = os.getcwd(); os.chdir(path)
    try: yield
    finally: os.chdir(old)


def reference_output(ref:dict, name:str, img:np.ndarray, severity:int, seed:int, folder:Path) -> np.ndarray:
    "The script's corruption of one uint8 image `(32,32,3)` as its main loop stores it: `np.uint8(f(PIL image, severity))`."
    from PIL import Image
    np.random.seed(seed); ref["IMPULSE_SEED"] = seed
    with cwd(folder): return np.uint8(ref[name](Image.fromarray(img), severity))


def ours_output(name:str, img:np.ndarray, severity:int, seed:int) -> np.ndarray:
    "ssbnn's corruption of the same image with the same draws."
    return CORRUPTIONS[name](img[None], severity, draws(name, seed))[0]


def compare(ref:np.ndarray, ours:np.ndarray, clean:np.ndarray) -> dict:
    "How far ssbnn's images `(N,32,32,3)` are from the script's, in uint8 levels, and how strongly each changes the clean ones."
    d = np.abs(ref.astype(int) - ours.astype(int))
    return {"identical_images": float((d.reshape(len(d), -1).max(1) == 0).mean()), "max_abs": int(d.max()),
            "mean_abs": float(d.mean()), "values_differing": float((d > 0).mean()),
            "change_reference": float(np.abs(ref.astype(int) - clean).mean()), "change_ours": float(np.abs(ours.astype(int) - clean).mean())}


def images(archive, n:int, seed:int) -> tuple[np.ndarray, str]:
    "`n` uint8 CIFAR-10 images `(n,32,32,3)` from the archive (a seeded random subset), or smooth and textured synthetic ones."
    if archive:
        from ssbnn.data import read_jpeg_archive
        return read_jpeg_archive(archive, subset=n, seed=seed)[0], f"{n} random images of {Path(archive).name} (seed {seed})"
    r = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:32, 0:32]
    ramps = np.stack([(xx * 8) % 256, (yy * 8) % 256, ((xx + yy) * 4) % 256], -1)
    x = np.stack([np.clip(ramps * r.uniform(0.3, 1) + r.normal(0, r.uniform(0, 40), ramps.shape), 0, 255) for _ in range(n)])
    return x.astype(np.uint8), f"{n} synthetic ramps with noise (seed {seed})"


def severities(text:str) -> list[int]:
    "Comma-separated severities, each a whole number 1 to 5 (an argparse type)."
    import argparse
    try: out = [int(s) for s in text.split(",")]
    except ValueError: out = []
    if not out or any(s not in range(1, 6) for s in out):
        raise argparse.ArgumentTypeError(f"{text!r}: give comma-separated severities, each a whole number 1 to 5, e.g. 1,3,5")
    return out


def main(argv=None):
    from common import parser, number, seed_arg           # run as a script: bench/ is on the path
    p = parser(__doc__)                                   # one-line errors, exit status 2, as every script here
    p.add_argument("--script", type=Path, required=True, help="make_cifar_c.py, with the frost photographs beside it")
    p.add_argument("--archive", type=Path, help="packed-JPEG CIFAR-10 archive (default: synthetic images)")
    p.add_argument("--images", type=number(int), default=100, help="images per corruption and severity")
    p.add_argument("--severities", type=severities, default="1,2,3,4,5", help="comma-separated, each 1 to 5 (default all five)")
    p.add_argument("--seed", type=seed_arg(), default=0)
    p.add_argument("--out", type=Path, help="JSON record")
    p.add_argument("--fixture", type=Path, help="also save 4 images and the script's outputs here (.npz): all 4 at severity 5, 2 at 1-4")
    a = p.parse_args(argv)
    try:
        sev = a.severities
        if not a.script.is_file(): raise ValueError(f"no script at {a.script}; it is ImageNet-C/create_c/make_cifar_c.py of hendrycks/robustness")
        if a.archive and not a.archive.is_file(): raise ValueError(f"no archive at {a.archive}")
        ref = load_reference(a.script)
    except ImportError as e:
        p.exit(2, f"{p.prog}: the reference needs its own libraries ({e}); pip install scikit-image opencv-python-headless Wand, "
                  "and ImageMagick (apt-get install libmagickwand-dev)\n")
    except ValueError as e: p.exit(2, f"{p.prog}: {e}\n")
    x, source = images(a.archive, a.images, a.seed)
    folder, t0, rows = a.script.resolve().parent, time.time(), {}
    for name in CORRUPTIONS:
        for s in sev:
            seeds = [1000 * s + i for i in range(len(x))]
            ref_y = np.stack([reference_output(ref, name, im, s, k, folder) for im, k in zip(x, seeds)])
            ours_y = np.stack([ours_output(name, im, s, k) for im, k in zip(x, seeds)])
            rows.setdefault(name, {})[str(s)] = compare(ref_y, ours_y, x.astype(int))
        r, top = rows[name].values(), rows[name][str(max(sev))]
        print(f"{name:18s} identical images {min(o['identical_images'] for o in r):5.0%}  max |diff| {max(o['max_abs'] for o in r):2d}"
              f"  mean |diff| {max(o['mean_abs'] for o in r):.3f}   change at severity {max(sev)}: reference "
              f"{top['change_reference']:.1f}, ours {top['change_ours']:.1f}", flush=True)
    import cv2, scipy, skimage, wand.version, PIL, ssbnn
    worst = max(r["max_abs"] for c in rows.values() for r in c.values())
    record = {"what": "ssbnn.experiments.corrupt against make_cifar_c.py (hendrycks/robustness) on the same images and draws",
              "passed": worst <= TOLERANCE, "tolerance": f"every value within {TOLERANCE} uint8 level (rounding before truncation)",
              "images": source, "severities": sev, "seeds": "1000 * severity + image index", "shims": [list(s) for s in SHIMS],
              "corruptions": rows, "seconds": round(time.time() - t0, 1), "machine": platform.processor() or platform.machine(),
              "versions": {"numpy": np.__version__, "scipy": scipy.__version__, "pillow": PIL.__version__,
                           "scikit-image": skimage.__version__, "opencv": cv2.__version__, "imagemagick": wand.version.MAGICK_VERSION,
                           "ssbnn": ssbnn.__version__}, "command": "python " + " ".join(sys.argv)}
    from ssbnn._utils import atomic_write
    if a.out: atomic_write(a.out, lambda f: f.write_text(json.dumps(record, indent=1)))
    if a.fixture:
        k = x[:4]
        outs = {fixture_key(n, s): np.stack([reference_output(ref, n, im, s, 1000 * s + i, folder) for i, im in enumerate(k[:FIXTURE_IMAGES[s]])])
                for n in CORRUPTIONS for s in FIXTURE_IMAGES}
        def write(f):
            with open(f, "wb") as fh: np.savez_compressed(fh, images=k, **outs)
        atomic_write(a.fixture, write)
    print(f"{'passed' if record['passed'] else 'FAILED'}: largest difference {worst} level(s) in {len(CORRUPTIONS)} corruptions "
          f"x severities {a.severities} x {len(x)} images ({record['seconds']} s)")
    return record


if __name__ == "__main__": sys.exit(0 if main()["passed"] else 1)
