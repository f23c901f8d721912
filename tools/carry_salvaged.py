"""Put the salvaged parts a later device session can continue where its calls carry them (run by tools/device_prep.sh).

    python tools/carry_salvaged.py [PARTS ...] [--into .devdata/continue]

A part that a session's machine went back before it finished comes back salvaged (`bench/gpu_pieces.sh salvage`:
partial.json, the mark `salvaged`) and is filed with its finished runs (tools/file_eval_parts.sh). Its other runs
used to need the whole part again in a later session. A part that rests on nothing the device keeps only for its own
session can instead continue there: its partial.json goes into `--into`/<evaluate|active>/<name>/, a folder claimed
for the program that continues it (`ssbnn.report.claim_folder`), which calls carry in `.devdata`; the piece of the
same name (same settings) starts from a copy of it, so the session runs only the runs left (`bench/gpu_pieces.sh`,
`continue_from`). That holds for the baselines' evaluation parts and deep-ensemble active learning. It does not hold
for a part that rests on pretrained models, which stay on the machine that pretrained them (the SS-BNN parts: their
seed is pretrained again, and that part replaces the salvaged one), nor for one that kept predictions, which stay here
for the merge. PARTS defaults to bench/results/{eval,active}_cifar10_parts and the copies the runbook holds out of the
tree during a session (/tmp/held, or $HELD).
"""
import argparse, json, os, shutil, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from ssbnn._utils import atomic_write  # noqa: E402
from ssbnn.report import claim_folder, unhold  # noqa: E402

COMMANDS = {"evaluate": "ssbnn-evaluate", "active": "active_cifar.py"}   # what claims each kind's folder, as its program names itself


def why_not(partial:Path, kind:str) -> str|None:
    "Why the salvaged run file `partial` cannot continue on another machine, or None when it can."
    try: saved = json.loads(partial.read_text())
    except (OSError, ValueError) as e: return f"its partial.json is not readable ({type(e).__name__})"
    inputs = saved.get("inputs") if isinstance(saved, dict) else None
    if not isinstance(inputs, dict): return "its partial.json does not say what its runs rest on (written before such files did)"
    if kind == "evaluate":
        if inputs.get("models"): return "it rests on pretrained models, which stay on the machine that made them: run its seed again"
        if (saved.get("meta") or {}).get("config", {}).get("keep_predictions"): return "it kept predictions, which stay here for the merge"
    elif any(isinstance(m, dict) and m.get("weights") for m in (inputs.get("methods") or {}).values()):
        return "it rests on pretrained encoders, which stay on the machine that made them: run its seed again"
    return None


def carry(parts:list, into:Path) -> list:
    "Copy each continuable salvaged part's partial.json into `into`/<kind>/<name>/ (afresh); the lines that say what was done."
    shutil.rmtree(into, ignore_errors=True)
    said, found = [], [p for folder in parts for p in sorted(Path(folder).glob("*"))]
    finished = {p.name: p for p in found if (p / "results.json").is_file() and not (p / "salvaged").exists()}
    for part in found:
        if not ((part / "salvaged").is_file() and (part / "partial.json").is_file()): continue
        kind = "evaluate" if part.name.startswith("eval_") else "active"
        if part.name in finished: said.append(f"{part}: not continued, the part is filed finished ({finished[part.name]})"); continue
        if why := why_not(part / "partial.json", kind): said.append(f"{part}: not continued, {why}"); continue
        dest = into / kind / part.name
        if dest.exists():                                           # the same part in the tree and held out of it: once
            if (dest / "partial.json").read_bytes() != (part / "partial.json").read_bytes():
                said.append(f"{part}: not continued, another part of that name is carried already ({dest})")
            continue
        claim_folder(dest, command=COMMANDS[kind]); unhold(dest)       # a run folder of that command, which continues it
        atomic_write(dest / "partial.json", lambda f: shutil.copyfile(part / "partial.json", f))   # whole or not at all
        said.append(f"{part}: carried to {dest}; the piece of that name, queued with the same settings, continues it "
                    f"(CONTINUE=none in the item starts it afresh)")
    return said


def fail(message:str) -> int:
    "Bad input: one line on stderr, exit status 2 (as ssbnn's commands and the bench scripts)."
    print(f"carry_salvaged.py: {message}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    held = Path(os.environ.get("HELD", "/tmp/held"))
    default = [ROOT / "bench/results/eval_cifar10_parts", ROOT / "bench/results/active_cifar10_parts",
               held / "eval_cifar10_parts", held / "active_cifar10_parts"]
    p = argparse.ArgumentParser(prog="carry_salvaged.py", description=__doc__.splitlines()[0])
    p.add_argument("parts", nargs="*", type=Path, help="folders of filed parts (default: bench/results/*_cifar10_parts and $HELD's)")
    p.add_argument("--into", type=Path, default=ROOT / ".devdata/continue", help="where calls carry them from (.devdata/continue)")
    a = p.parse_args(argv)
    if missing := [str(f) for f in a.parts if not f.is_dir()]:
        return fail(f"no folder {missing[0]}; give folders of filed parts, e.g. bench/results/eval_cifar10_parts")
    if a.into.is_dir() and (other := {p.name for p in a.into.iterdir()} - set(COMMANDS)):
        return fail(f"--into {a.into} holds {sorted(other)[0]}, which this script did not write; give a folder of its own (it is made afresh)")
    said = carry(a.parts or [f for f in default if f.is_dir()], a.into)
    print("\n".join(said) or "carry_salvaged.py: no salvaged part is filed; the next session continues none")
    return 0


if __name__ == "__main__": sys.exit(main())
