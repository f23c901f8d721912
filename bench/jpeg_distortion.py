"""How far a JPEG round trip moves CIFAR-sized images: the scale on which to read the sweep's `jpeg=Q` dose points.

    python bench/jpeg_distortion.py --archive cifar10_train.npz --out bench/results/jpeg_distortion_cpu.json

The archive's images are JPEGs of quality 75 with 4:2:0 chroma, and the originals are out of reach of the device
machines, so what the archive's own compression costs pretraining can only be bracketed: the sweep's points re-encode
the archive at a lower quality (`bench/common.py`'s `reencode_jpeg`) and measure kNN. This script measures the doses
themselves, on the CPU, with the same round trip:
* `archive`: each quality's re-encoding of the archive's images against the images as read (PSNR over all pixels and
  channels, and bytes per image): what a dose point adds to the archive's own compression;
* `photos`: a first compression at each quality of 32 x 32 images that were never JPEGs at that size (random crops of
  scikit-learn's two sample photographs, 32·f pixels wide, box-filtered down by f = 2, 4 and 8, which averages away
  their own full-size JPEG blocks): on that scale, roughly what quality 75 cost the CIFAR-10 images when they were
  packed. The photographs are not CIFAR-10, so this brackets the archive's loss; it does not measure it.
"""
import argparse, json, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from common import fail, jpeg_round_trip, check_jpeg_quality


def psnr(a, b) -> float:
    "Peak signal-to-noise ratio (dB) of uint8 arrays `b` against `a`, over all their values."
    import numpy as np
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return float("inf") if mse == 0 else 10 * np.log10(255 ** 2 / mse)


def dose(images, quality:int) -> dict:
    "PSNR (dB) of `images` `(N,C,H,W)` uint8 after a JPEG round trip at `quality`, and the JPEGs' mean size in bytes."
    import numpy as np
    out = [jpeg_round_trip(x, quality) for x in images]
    return {"psnr_db": psnr(images, np.stack([o[0] for o in out])), "bytes_mean": float(np.mean([o[1] for o in out]))}


def photo_crops(factor:int, n:int, seed:int=0):
    "`n` uint8 images `(n,3,32,32)`: random crops 32·`factor` pixels wide of scikit-learn's two photographs, box-filtered to 32 x 32."
    import numpy as np
    from PIL import Image
    from sklearn.datasets import load_sample_images
    rng, photos, side = np.random.default_rng(seed), load_sample_images().images, 32 * factor
    out = []
    for i in range(n):
        img = photos[i % len(photos)]
        r, c = rng.integers(0, img.shape[0] - side + 1), rng.integers(0, img.shape[1] - side + 1)
        out.append(np.asarray(Image.fromarray(img[r:r + side, c:c + side]).resize((32, 32), Image.BOX)).transpose(2, 0, 1))
    return np.stack(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--archive", type=Path, required=True, help="packed-JPEG archive of the CIFAR-10 training images")
    p.add_argument("--qualities", default="75,50,25", help="comma-separated JPEG qualities, 1-95 (default 75,50,25)")
    p.add_argument("--images", type=int, default=0, help="archive images to use, the first N (default 0: all)")
    p.add_argument("--crops", type=int, default=1000, help="photograph crops per downsampling factor (default 1000)")
    p.add_argument("--out", type=Path, required=True, help="JSON record to write")
    a = p.parse_args(argv)
    prog = "jpeg_distortion.py"
    try: qualities = [check_jpeg_quality(int(q)) for q in a.qualities.split(",")]
    except ValueError as e: fail(prog, f"--qualities {a.qualities!r}: {e}" if "choose" in str(e) else f"--qualities {a.qualities!r}: give integers 1-95, e.g. 75,50,25")
    if 0 in qualities: fail(prog, "--qualities: 0 is the images as read, which need no round trip; give 1-95")
    if a.images < 0 or a.crops < 1: fail(prog, "--images must be 0 (all) or more, --crops 1 or more")
    if not a.archive.exists(): fail(prog, f"no archive at {a.archive}")
    import numpy as np, PIL
    from ssbnn.data import read_jpeg_archive
    from ssbnn._utils import atomic_write
    t = time.time()
    try: x, _ = read_jpeg_archive(a.archive, threads=2)
    except ValueError as e: fail(prog, str(e))
    x = x.transpose(0, 3, 1, 2)[:a.images or None]                      # (N,C,H,W), as reencode_jpeg's round trip takes them
    packed = np.load(a.archive)["offsets"]
    rec = {"archive": {"images": len(x), "bytes_mean_as_read": float(np.diff(packed)[:len(x)].mean()),
                       "qualities": {q: dose(x, q) for q in qualities}},
           "photos": {"crops": a.crops, "factors": {f: {q: dose(photo_crops(f, a.crops), q) for q in qualities} for f in (2, 4, 8)}},
           "command": "python bench/jpeg_distortion.py " + " ".join(sys.argv[1:] if argv is None else argv),
           "device": "cpu", "pillow": PIL.__version__, "seconds": time.time() - t}
    atomic_write(a.out, lambda tmp: Path(tmp).write_text(json.dumps(rec, indent=1) + "\n"))
    for q in qualities:
        ph = ", ".join(f"f{f} {rec['photos']['factors'][f][q]['psnr_db']:.1f}" for f in (2, 4, 8))
        print(f"JPEG {q}: archive re-encoded {rec['archive']['qualities'][q]['psnr_db']:.1f} dB "
              f"({rec['archive']['qualities'][q]['bytes_mean']:.0f} bytes); photographs' first compression {ph} dB")


if __name__ == "__main__":
    main()
