"""How far a JPEG round trip moves CIFAR-sized images: the scale on which to read the sweep's `jpeg=Q` dose points.

    python bench/jpeg_distortion.py --archive cifar10_train.npz --out bench/results/jpeg_distortion_cpu.json

The archive's images are JPEGs of quality 75 with 4:2:0 chroma, and the originals are out of reach of the device
machines, so what the archive's own compression costs pretraining can only be bracketed: the sweep's points re-encode
the archive at a lower quality (`bench/common.py`'s `reencode_jpeg`) and measure kNN. This script measures the doses
themselves, on the CPU, with the same round trip. PSNR is pooled, 10 log10(255² / MSE) with the mean squared error over
all images, pixels and channels (the mean of per-image PSNRs, which papers often report, is higher):
* `archive`: each quality's re-encoding of the archive's images against the images as read, and bytes per image: what a
  dose point does to the images it trains on; and how the archive was packed (the share of images whose quantisation
  tables are PIL's at quality 75, and whose chroma is 4:2:0);
* `photos`: 32 x 32 images that were never JPEGs at that size (random crops of scikit-learn's two sample photographs,
  32·f pixels wide, box-filtered down by f = 2, 4 and 8; the photographs themselves are JPEGs of high quality, a mean
  luma quantisation step of 4.6 against 29 at quality 75), compressed once at each quality (`first`), and compressed at
  75 and then re-encoded at each quality (`after75`, against the crop at 75 and against the crop itself): the dose
  applied where the originals are known. Two scenes only, so the spread mostly reflects f. The photographs are not
  CIFAR-10: this brackets what the archive's packing cost, it does not measure it.
"""
import json, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from common import fail, jpeg_round_trip, parser, number, check_path, out_file, command_line

SEED = 0


class Error:
    "Running sum of squared differences of uint8 arrays: the pooled MSE and PSNR without holding the arrays."
    def __init__(self): self.sq, self.n = 0, 0
    def add(self, a, b):
        import numpy as np
        d = a.astype(np.int32) - b.astype(np.int32); self.sq += int((d * d).sum()); self.n += d.size
    def record(self) -> dict:
        "{'mse', 'psnr_db'} (PSNR None where nothing moved)."
        import math
        mse = self.sq / self.n
        return {"mse": mse, "psnr_db": 10 * math.log10(255 ** 2 / mse) if mse else None}


def dose(images, quality:int, after:int=0) -> dict:
    "`images` `(N,C,H,W)` uint8 after a JPEG round trip at `quality` (first at `after`, if given): error against the input and bytes."
    import numpy as np
    e, e_after, sizes = Error(), Error(), []
    for x in images:
        start = jpeg_round_trip(x, after)[0] if after else x
        y, n = jpeg_round_trip(start, quality)
        e.add(start, y); sizes.append(n)
        if after: e_after.add(x, y)
    out = {**e.record(), "bytes_mean": float(np.mean(sizes))}
    if after: out["against_the_original"] = e_after.record()
    return out


def photo_crops(factor:int, n:int, seed:int=SEED):
    "`n` uint8 images `(n,3,32,32)`: random crops 32·`factor` pixels wide of scikit-learn's two photographs, box-filtered to 32 x 32."
    import numpy as np
    from PIL import Image
    from sklearn.datasets import load_sample_images
    rng, photos, side = np.random.default_rng(seed), load_sample_images().images, 32 * factor
    out = []
    for i in range(n):
        img = photos[i % len(photos)]
        r, c = rng.integers(0, img.shape[0] - side + 1), rng.integers(0, img.shape[1] - side + 1)
        out.append(np.asarray(Image.fromarray(img[r:r + side, c:c + side]).resize((32, 32), Image.Resampling.BOX)).transpose(2, 0, 1))
    return np.stack(out)


def packing(path, n:int) -> dict:
    "Shares of the first `n` archive JPEGs whose quantisation tables are PIL's at quality 75, and whose chroma is 4:2:0."
    import io
    import numpy as np
    from PIL import Image, JpegImagePlugin
    buf = io.BytesIO(); Image.fromarray(np.zeros((32, 32, 3), np.uint8)).save(buf, "JPEG", quality=75)
    pil75 = Image.open(buf).quantization
    z = np.load(path)
    jpeg, offsets = z["jpeg"], z["offsets"]
    same = sub = 0
    for i in range(n):
        im = Image.open(io.BytesIO(jpeg[offsets[i]:offsets[i + 1]].tobytes()))
        same += im.quantization == pil75; sub += JpegImagePlugin.get_sampling(im) == 2
    return {"pil_quality75_tables": same / n, "chroma_420": sub / n, "bytes_mean_as_read": float(np.diff(offsets)[:n].mean())}


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--archive", type=Path, required=True, help="packed-JPEG archive of the CIFAR-10 training images")
    p.add_argument("--qualities", default="75,50,25", help="comma-separated JPEG qualities, 1-95 (default 75,50,25)")
    p.add_argument("--images", type=number(int, low=0), default=0, help="archive images to use, the first N (default 0: all)")
    p.add_argument("--crops", type=number(int), default=1000, help="photograph crops per downsampling factor (default 1000)")
    p.add_argument("--out", type=Path, required=True, help="JSON record to write")
    a = p.parse_args(argv)
    prog = "jpeg_distortion.py"
    try: qualities = [int(q) for q in a.qualities.split(",")]
    except ValueError: qualities = []
    if not qualities or not all(1 <= q <= 95 for q in qualities): fail(prog, f"--qualities {a.qualities!r}: give integers 1-95, e.g. 75,50,25")
    if not a.archive.exists(): fail(prog, f"no archive at {a.archive}")
    check_path(prog, "--archive", a.archive, folder=False)
    out = out_file(prog, a.out)
    import PIL, sklearn
    from ssbnn.data import read_jpeg_archive
    from ssbnn._utils import atomic_write
    t = time.time()
    try: x, _ = read_jpeg_archive(a.archive, threads=2)
    except ValueError as e: fail(prog, str(e))
    x = x.transpose(0, 3, 1, 2)[:a.images or None]                      # (N,C,H,W), as reencode_jpeg's round trip takes them
    crops = {f: photo_crops(f, a.crops) for f in (2, 4, 8)}
    rec = {"archive": {"images": len(x), **packing(a.archive, len(x)), "qualities": {q: dose(x, q) for q in qualities}},
           "photos": {"crops": a.crops, "seed": SEED, "factors": {f: {"first": {q: dose(c, q) for q in qualities},
                                                                      "after75": {q: dose(c, q, after=75) for q in qualities}}
                                                                  for f, c in crops.items()}},
           "psnr": "pooled: 10 log10(255^2 / MSE), the MSE over all images, pixels and channels",
           "command": command_line("jpeg_distortion.py", argv),
           "device": "cpu", "pillow": PIL.__version__, "scikit-learn": sklearn.__version__, "seconds": time.time() - t}
    atomic_write(out, lambda tmp: Path(tmp).write_text(json.dumps(rec, indent=1, allow_nan=False) + "\n"))
    fmt = lambda r: "unchanged" if r["psnr_db"] is None else f"{r['psnr_db']:.1f} dB"
    for q in qualities:
        ph = ", ".join(f"f{f} {fmt(v['first'][q])} / {fmt(v['after75'][q]['against_the_original'])}" for f, v in rec["photos"]["factors"].items())
        print(f"JPEG {q}: archive re-encoded {fmt(rec['archive']['qualities'][q])} ({rec['archive']['qualities'][q]['bytes_mean']:.0f} bytes); "
              f"photographs' crops at {q} / at 75 then {q}, against the crops: {ph}")


if __name__ == "__main__":
    main()
