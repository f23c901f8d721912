#!/bin/bash
# File the evaluation parts that device calls returned (FOLDER/evaluate/<name>/ from bench/gpu_pieces.sh: results.json,
# tables.md, evaluation.png and the kept predictions as predictions.tar.N) into bench/results/eval_cifar10_parts/<name>/,
# each whole or not at all, its predictions unpacked into <name>/predictions/. Those stay git-ignored (about 30 MB a
# session); the SS-BNN ensembles that `ssbnn-evaluate --merge` forms from them are committed with the parts' records:
#   bash tools/file_eval_parts.sh FILES_AT...        (each call's files_at; INTO sets another destination)
# A part cut off before it finished (salvaged: partial.json, no results.json) is filed with its finished runs, which
# --merge takes, if its partial.json says how they were made (its meta). A part is refused if a run it lists as kept
# has no predictions file (a tar part that did not come back). A part filed already is skipped if it holds the same
# records and all their predictions, and refused otherwise.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: bash tools/file_eval_parts.sh FILES_AT... (folders device calls returned)"; exit 2; }
folders=()
for f in "$@"; do
  [ -d "$f" ] || { echo "$f is not a folder; give the files_at folders device calls returned"; exit 2; }
  folders+=("$(cd "$f" && pwd)")
done
cd "$(dirname "$0")/.."
into=${INTO:-bench/results/eval_cifar10_parts}
records() {  # PART: its file of records: results.json, else a partial.json that has its meta (a part cut off), else nothing
  if [ -f "$1/results.json" ]; then echo results.json
  elif [ -f "$1/partial.json" ] && python3 -c 'import json, sys; sys.exit("meta" not in json.load(open(sys.argv[1])))' "$1/partial.json" 2>/dev/null
  then echo partial.json; fi
}
missing() {  # PART FILE: prints the kept runs of PART/FILE without their PART/predictions file (ssbnn's prediction_file names)
  python3 - "$1" "$2" <<'PY'
import json, sys
from pathlib import Path
part = Path(sys.argv[1]); res = json.loads((part / sys.argv[2]).read_text())
kept = set(res.get("meta", {}).get("config", {}).get("keep_predictions", []))
for r in res["records"]:
    f = part / "predictions" / f"{r['method'].replace('*', 'star')}_{r['labels']}_s{r['seed']}.npz"
    if r["method"] in kept and not f.is_file(): print(f.name)
PY
}
filed=0 found=0
while IFS= read -r -d '' d; do
  found=$((found + 1)); d=${d%/}; name=${d##*/}; dest=$into/$name; file=$(records "$d")
  if [ -z "$file" ]; then
    echo "$d holds neither a results.json nor a partial.json that says how its runs were made; nothing filed from it"; exit 1
  fi
  if [ -e "$dest" ]; then
    if cmp -s "$d/$file" "$dest/$file" && [ -z "$(missing "$dest" "$file")" ]; then echo "$name: filed already"; continue; fi
    echo "$dest holds another result, or lacks kept predictions; move it away first, or give INTO=another folder"; exit 1
  fi
  mkdir -p "$into"; tmp=$(mktemp -d "$into/.$name.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  for f in "$file" tables.md evaluation.png; do if [ -f "$d/$f" ]; then cp "$d/$f" "$tmp/"; fi; done
  if compgen -G "$d/predictions.tar.*" >/dev/null; then
    cat "$d"/predictions.tar.? | tar -x -C "$tmp" || { echo "$d: its predictions.tar.N do not make a whole tar (a part missing?)"; exit 1; }
  fi
  lost=$(missing "$tmp" "$file")
  if [ -n "$lost" ]; then echo "$d: kept predictions missing ($(echo $lost | tr ' ' ',')): a predictions.tar.N did not come back?"; exit 1; fi
  mv "$tmp" "$dest"; trap - EXIT; filed=$((filed + 1))
  echo "filed $dest ($(find "$dest/predictions" -type f 2>/dev/null | wc -l) runs' kept predictions$([ "$file" = partial.json ] && echo "; cut off: its finished runs only"))"
done < <(find "${folders[@]}" -type d -path '*/evaluate/eval_cifar10_*' -prune -print0)
[ "$found" -gt 0 ] || { echo "no evaluation parts (evaluate/eval_cifar10_*/) under $*; nothing filed"; exit 1; }
echo "$filed part(s) filed; join them: ssbnn-evaluate --merge $into/* --out bench/results/eval_cifar10 (--overwrite once it holds results)"
