#!/bin/bash
# File the evaluation parts that device calls returned (FOLDER/evaluate/<name>/ from bench/gpu_pieces.sh: results.json,
# tables.md, evaluation.png and the kept predictions as predictions.tar.N) into bench/results/eval_cifar10_parts/<name>/,
# each whole or not at all, its predictions unpacked into <name>/predictions/ (identical files once, the others linking
# to it). Commit those with the part's records (about 13 MB a session): a session's checkout is fresh, and the SS-BNN
# ensembles that `ssbnn-evaluate --merge` forms need every pretraining's predictions, which come from three sessions.
# Active-learning parts (FOLDER/active/<name>/: results.json, active.md, active.png) go the same way into
# bench/results/active_cifar10_parts/<name>/, joined by bench/active_cifar.py --merge:
#   bash tools/file_eval_parts.sh FILES_AT...        (each call's files_at; INTO and ACTIVE_INTO set other destinations)
# A salvaged part (`gpu_pieces.sh salvage`, or a queued evaluation its time limit ended: partial.json and the mark
# `salvaged`, no results.json) is filed with its finished runs, which --merge takes; a later part of the same name, run
# with the same settings, that holds all of those runs (that seed run again, or the part continued in a later session:
# tools/carry_salvaged.py), finished or salvaged again, replaces it. A partial.json without the mark is an evaluation its
# next call continues: skipped (`touch FOLDER/salvaged` files one that no call will continue). A part is refused if a
# run it lists as kept has no predictions file (a tar part that did not come back). A part filed already is skipped if
# it holds the same records and all their predictions, and refused otherwise.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: bash tools/file_eval_parts.sh FILES_AT... (folders device calls returned)"; exit 2; }
folders=()
for f in "$@"; do
  [ -d "$f" ] || { echo "$f is not a folder; give the files_at folders device calls returned"; exit 2; }
  folders+=("$(cd "$f" && pwd)")
done
cd "$(dirname "$0")/.."
kinds=()                                            # the kinds of part found: their merge commands are printed at the end
covers() {  # NEW OLD: fails unless the records of NEW (a results.json or partial.json) hold every run of OLD (a salvaged partial.json)
  python3 - "$1" "$2" <<'PY'
import json, sys
runs = lambda f: {(r["method"], r["labels"], r["seed"]) for r in json.load(open(f))["records"]}
missing = runs(sys.argv[2]) - runs(sys.argv[1])
if missing: sys.exit(f"it lacks {len(missing)} of the salvaged part's runs, e.g. {min(missing)}")
PY
}
alike() {  # NEW OLD: fails, saying how, unless the two result files were run with the same settings (and, where both say, inputs)
  python3 - "$1" "$2" <<'PY'
import json, sys
said = [json.load(open(f)) for f in sys.argv[1:]]
config = [(s.get("meta") or {}).get("config") or {} for s in said]
if other := sorted(k for k in {*config[0], *config[1]} if config[0].get(k) != config[1].get(k)):
    sys.exit(f"it was run with other settings ({', '.join(other[:3])})")
inputs = [s.get("inputs") for s in said]
if None not in inputs and inputs[0] != inputs[1]:
    sys.exit(f"it rests on other inputs ({', '.join(sorted(k for k in {*inputs[0], *inputs[1]} if inputs[0].get(k) != inputs[1].get(k))[:3])})")
PY
}
check() {  # PART FILE: fails, saying why, if PART/FILE is no result file, a partial.json lacks its meta, or a kept run lacks its predictions
  python3 - "$1" "$2" <<'PY'
import json, sys
from pathlib import Path
part, name = Path(sys.argv[1]), sys.argv[2]
try:
    res = json.loads((part / name).read_text()); meta = res.get("meta") or {}
    kept = set(meta.get("config", {}).get("keep_predictions", []))
    files = [f"{r['method'].replace('*', 'star')}_{r['labels']}_s{r['seed']}.npz" for r in res["records"] if r["method"] in kept]
except Exception as e: sys.exit(f"{part / name} is not a result file ssbnn wrote ({type(e).__name__}: {e})")
if name == "partial.json" and not meta: sys.exit(f"{part / name} does not say how its runs were made (written before such files did): --merge cannot take it")
lost = [f for f in files if not (part / "predictions" / f).is_file()]
if lost: sys.exit(f"kept predictions missing ({','.join(lost)}): a predictions.tar.N did not come back?")
PY
}
filed=0 found=0
while IFS= read -r -d '' d; do
  found=$((found + 1)); d=${d%/}; name=${d##*/}
  case $name in eval_*) into=${INTO:-bench/results/eval_cifar10_parts} flag=INTO ;; *) into=${ACTIVE_INTO:-bench/results/active_cifar10_parts} flag=ACTIVE_INTO ;; esac
  dest=$into/$name
  if [ -f "$d/results.json" ]; then file=results.json
  elif [ -f "$d/partial.json" ] && [ -f "$d/salvaged" ]; then file=partial.json
  elif [ -f "$d/partial.json" ]; then echo "$name: cut off by its call, which the next call continues (its results.json files it): skipped"; continue
  else echo "$name: holds neither a results.json nor a salvaged partial.json (nothing had finished?): skipped"; continue; fi
  kinds+=("${name%%_*}")                            # a part to merge: its merge command is printed, whether filed now or before
  replacing=""
  if [ -e "$dest" ]; then
    if cmp -s "$d/$file" "$dest/$file" && check "$dest" "$file" >/dev/null 2>&1; then echo "$name: filed already"; continue; fi
    if [ "$file" = partial.json ] && [ -f "$dest/results.json" ] && [ ! -f "$dest/salvaged" ]; then
      echo "$name: its finished part is filed already: the salvaged one skipped"; continue; fi
    if [ -f "$dest/salvaged" ]; then            # the same part run further: finished, or salvaged again (tools/carry_salvaged.py)
      why=$(alike "$d/$file" "$dest/partial.json" 2>&1) || { echo "$d is not the salvaged $dest run further: $why; give $flag=another folder"; exit 1; }
      if [ "$file" = partial.json ] && covers "$dest/partial.json" "$d/partial.json" >/dev/null 2>&1; then
        echo "$name: a salvaged part holding all of its runs is filed already: skipped"; continue; fi
      why=$(covers "$d/$file" "$dest/partial.json" 2>&1) || { echo "$d cannot replace the salvaged $dest: $why; give $flag=another folder"; exit 1; }
      replacing=1
    else echo "$dest holds another result, or lacks kept predictions; move it away first, or give $flag=another folder"; exit 1; fi
  fi
  mkdir -p "$into"; tmp=$(mktemp -d "$into/.$name.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  for f in "$file" tables.md evaluation.png active.md active.png; do if [ -f "$d/$f" ]; then cp "$d/$f" "$tmp/"; fi; done
  [ "$file" = results.json ] || cp "$d/salvaged" "$tmp/"
  if compgen -G "$d/predictions.tar.*" >/dev/null; then
    cat "$d"/predictions.tar.? | tar -x -C "$tmp" || { echo "$d: its predictions.tar.N do not make a whole tar (a part missing?)"; exit 1; }
  fi
  unset seen; declare -A seen=()            # identical runs' predictions (every label seed's with all labels) kept once:
  for f in "$tmp"/predictions/*.npz; do       # the others link to it, so that the repository, which travels, holds one copy
    [ -f "$f" ] || continue; h=$(sha256sum "$f" | cut -d' ' -f1)
    if [ -n "${seen[$h]:-}" ]; then ln -sf "${seen[$h]}" "$f"; else seen[$h]=$(basename "$f"); fi
  done
  why=$(check "$tmp" "$file" 2>&1) || { echo "$d: $why"; exit 1; }
  [ -z "$replacing" ] || rm -rf "$dest"
  mv "$tmp" "$dest"; trap - EXIT; filed=$((filed + 1))
  echo "filed $dest ($(find "$dest/predictions" \( -type f -o -type l \) 2>/dev/null | wc -l) runs' kept predictions$([ "$file" = partial.json ] && echo "; salvaged: its finished runs only")$([ -n "$replacing" ] && echo "; replaces the salvaged part"))"
done < <(find "${folders[@]}" -type d \( -path '*/evaluate/eval_cifar10_*' -o -path '*/active/active_cifar10_*' \) -prune -print0)
[ "$found" -gt 0 ] || { echo "no evaluation parts (evaluate/eval_cifar10_*/, active/active_cifar10_*/) under $*; nothing filed"; exit 1; }
echo "$filed part(s) filed; join them:"
if [[ " ${kinds[*]:-} " == *" eval "* ]]; then
  echo "  ssbnn-evaluate --merge ${INTO:-bench/results/eval_cifar10_parts}/* --out bench/results/eval_cifar10 (--overwrite once it holds results)"; fi
if [[ " ${kinds[*]:-} " == *" active "* ]]; then
  echo "  python bench/active_cifar.py --merge ${ACTIVE_INTO:-bench/results/active_cifar10_parts}/* --out bench/results/active_cifar10"; fi
