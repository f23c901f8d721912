"""Do two pretraining runs learn the same way? Their loss, tau and sigma curves against a same-code, other-seed pair.

    python bench/compare_curves.py --before before.json --after after.json --noise after_seed1.json \\
        --out bench/results/speed_before_after_H100.json

Each input is a `bench/pretrain_cifar.py` record (its `history`). `--before` and `--after` are the same recipe and seed
from two versions of the code; `--noise` is the `--after` code with another seed, so the seed-to-seed difference tells
how far apart two runs that learn the same way may be. A curve passes when its root-mean-square difference between
before and after (over the logged steps both have, the first excluded) is at most twice the seed-to-seed one.
"""
import json, math, sys
from common import command_line, number, out_file, parser
from pathlib import Path

CURVES = ("loss", "tau", "sigma")


def rms_gap(a:list[dict], b:list[dict], key:str, skip:int=1) -> tuple[float, float, int]:
    "(root-mean-square, max) |a - b| of `key` over the steps both histories logged, after the first `skip`; and their count."
    bs = {r["step"]: r[key] for r in b if key in r}
    d = [abs(r[key] - bs[r["step"]]) for r in a if key in r and r["step"] in bs][skip:]
    if not d: raise ValueError(f"the two histories share no logged step with {key!r} after the first {skip}")
    return math.sqrt(sum(x * x for x in d) / len(d)), max(d), len(d)


def compare(before:dict, after:dict, noise:dict, factor:float=2.) -> dict:
    "Per curve: the before/after and seed-to-seed gaps and whether the first is within `factor` times the second; speeds."
    out = {"curves": {}, "factor": factor}
    for key in CURVES:
        ba, ba_max, n = rms_gap(before["history"], after["history"], key)
        seed, seed_max, _ = rms_gap(after["history"], noise["history"], key)
        out["curves"][key] = {"rms_before_after": ba, "max_before_after": ba_max, "rms_seed_to_seed": seed,
                              "max_seed_to_seed": seed_max, "steps": n, "within_noise": ba <= factor * seed}
    out["passed"] = all(c["within_noise"] for c in out["curves"].values())
    for name, r in (("before", before), ("after", after), ("noise", noise)):
        out[name] = {k: r.get(k) for k in ("seconds_per_epoch", "views_per_second", "wall_seconds", "peak_gpu_gb", "knn_accuracy",
                                           "final_tau", "final_sigma", "device", "torch", "command")}
    out["speedup"] = before["seconds_per_epoch"] / after["seconds_per_epoch"]
    return out


def read_run(path:Path, flag:str) -> dict:
    "A `bench/pretrain_cifar.py` record read from `path`: a JSON object with its `history` (rows with a step) and `seconds_per_epoch`."
    from ssbnn._utils import is_number
    rec = json.loads(path.read_text())
    if not (isinstance(rec, dict) and isinstance(rec.get("history"), list) and all(isinstance(r, dict) and "step" in r for r in rec["history"])
            and is_number(rec.get("seconds_per_epoch"))):
        raise ValueError(f"{flag} {path} is not a bench/pretrain_cifar.py record (a JSON object with its history and seconds_per_epoch)")
    if not math.isfinite(rec["seconds_per_epoch"]) or rec["seconds_per_epoch"] <= 0:
        raise ValueError(f"{flag} {path}: its seconds_per_epoch {rec['seconds_per_epoch']!r} is not a positive number")
    for r in rec["history"]:                                      # a hand-edited row: named here, not as a TypeError in the comparison
        if odd := [k for k in ("step", *CURVES) if k in r and not (is_number(r[k]) and math.isfinite(r[k]))]:
            raise ValueError(f"{flag} {path}: a history row has {odd[0]} {r[odd[0]]!r}, not a finite number")
    return rec


PROG = Path(__file__).name

def main(argv=None):
    p = parser(__doc__)
    for name in ("before", "after", "noise"): p.add_argument(f"--{name}", type=Path, required=True)
    p.add_argument("--factor", type=number(float), default=2., help="allowed ratio of the before/after gap to the seed-to-seed one (default 2)")
    p.add_argument("--out", type=Path, default=None, help="JSON record (default: print it)")
    a = p.parse_args(argv)
    out = out_file(PROG, a.out)
    try:
        runs = [read_run(getattr(a, n), f"--{n}") for n in ("before", "after", "noise")]
        res = {**compare(*runs, factor=a.factor), "command": command_line(PROG, argv)}
    except (OSError, ValueError, KeyError) as e: p.error(f"{type(e).__name__}: {e}")
    text = json.dumps(res, indent=1)
    if out:
        from ssbnn._utils import atomic_write
        atomic_write(out, lambda f: f.write_text(text))
    print("\n".join(f"{k}: rms gap before/after {c['rms_before_after']:.4g}, seed to seed {c['rms_seed_to_seed']:.4g} -> "
                    f"{'within' if c['within_noise'] else 'OUTSIDE'} noise" for k, c in res["curves"].items()))
    print(f"{res['before']['seconds_per_epoch']:.3f} -> {res['after']['seconds_per_epoch']:.3f} s/epoch ({res['speedup']:.2f}x)")
    sys.exit(0 if res["passed"] else 1)


if __name__ == "__main__":
    main()
