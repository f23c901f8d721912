"""Execute notebooks and save their outputs in place, so that the docs and the README show real results.

    python tools/run_nbs.py nbs/07_train.ipynb ...      # run every cell, `#| slow` ones included
    python tools/run_nbs.py --skip cuda --skip slow nbs/*.ipynb
    python tools/run_nbs.py --skip cuda --skip slow --also CELL_ID ... NB.ipynb   # new slow cells (and the slow cells they need)

Cells marked `#| eval: false` never run; cells with a flag named in --skip keep their saved outputs (by default `cuda`
cells are skipped where no GPU is present, so outputs saved from a GPU run survive a CPU re-run). Uses execnb, the
engine behind nbdev_test.
"""
import argparse, time
from pathlib import Path


def run(path:Path, skip:set, also:set=frozenset()) -> float:
    "Execute the notebook at `path` (from its folder), skipping `skip`-flagged cells unless their id is in `also`, and save it; returns seconds."
    from execnb.nbio import read_nb, write_nb
    from execnb.shell import CaptureShell
    from fastcore.xtras import working_directory
    from nbdev.process import extract_directives

    def _skip(cell):
        if cell.cell_type != "code": return True
        d = extract_directives(cell, remove=False)
        if d.get("eval:", [""])[0].lower() == "false": return True
        return bool(skip & d.keys()) and cell.get("id") not in also

    nb = read_nb(path)
    for cell in nb.cells:                                       # execnb keeps a cell's saved outputs when its run prints nothing:
        if not _skip(cell): cell.outputs, cell.execution_count = [], None   # a stale warning would outlive the code that gave it
    t = time.time()
    with working_directory(path.parent):
        CaptureShell(path).run_all(nb, exc_stop=True, preproc=_skip)
    shrink_pngs(nb); settle_progress(nb)
    write_nb(nb, path)
    return time.time() - t


def settle_progress(nb) -> int:
    "Keep what a terminal shows of each stream output: a line a progress bar rewrote ('\\r') as its last state; drop outputs left blank; returns how many changed."
    n = 0
    for c in nb["cells"]:
        outs = []
        for o in c.get("outputs", []):
            text = "".join(o["text"]) if o.get("output_type") == "stream" else None
            if text is None or "\r" not in text: outs.append(o); continue
            raw = text.split("\n")                                  # a line a bar left blank (tqdm's leave=False) goes
            shown, n = "\n".join(s for r in raw if (s := r.rsplit("\r", 1)[-1]).strip() or "\r" not in r), n + 1
            if shown.strip(): o["text"] = shown.splitlines(keepends=True); outs.append(o)
        if "outputs" in c: c["outputs"] = outs
    return n


def shrink_pngs(nb, limit:int=100_000) -> int:
    "Re-encode saved PNG figures larger than `limit` base64 bytes: at most 2000 px wide, 256 colours (about 3x smaller); returns how many."
    import base64, io
    from PIL import Image
    n = 0
    for c in nb.cells:
        for o in c.get("outputs", []):
            png = o.get("data", {}).get("image/png")
            if png is None or len(png) <= limit: continue
            rgb = Image.open(io.BytesIO(base64.b64decode(png))).convert("RGB")
            if rgb.width > 2000: rgb = rgb.resize((2000, round(rgb.height * 2000 / rgb.width)), Image.Resampling.LANCZOS)
            buf = io.BytesIO(); rgb.quantize(256, method=Image.Quantize.MEDIANCUT).save(buf, format="PNG", optimize=True)
            small = base64.b64encode(buf.getvalue()).decode()
            if len(small) < len(png): o["data"]["image/png"], n = small + "\n", n + 1
    return n


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("notebooks", nargs="+", type=Path)
    p.add_argument("--skip", action="append", default=None, help="flags whose cells are not run (default: cuda without a GPU)")
    p.add_argument("--also", action="append", default=[], help="id of a cell to run although its flags are skipped (repeatable)")
    a = p.parse_args()
    if a.skip is None:
        import torch
        a.skip = [] if torch.cuda.is_available() else ["cuda"]
    for nb in a.notebooks:
        print(f"{nb}: {run(nb, set(a.skip), set(a.also)):.0f} s", flush=True)
