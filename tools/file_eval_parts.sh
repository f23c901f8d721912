#!/bin/bash
# File the evaluation parts that device calls returned (FOLDER/evaluate/<name>/ from bench/gpu_pieces.sh: results.json,
# tables.md, evaluation.png and the kept predictions as predictions.tar.N) into bench/results/eval_cifar10_parts/<name>/,
# each whole or not at all, its predictions unpacked into <name>/predictions/. Those stay git-ignored (about 30 MB a
# session); the SS-BNN ensembles that `ssbnn-evaluate --merge` forms from them are committed with the parts' records:
#   bash tools/file_eval_parts.sh FILES_AT...        (each call's files_at; INTO sets another destination)
# A part filed already is skipped if it holds the same results.json and refused otherwise; a part that was cut off
# (partial.json, no results.json) is refused: continue it on the warm machine first.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: bash tools/file_eval_parts.sh FILES_AT... (folders device calls returned)"; exit 2; }
into=${INTO:-bench/results/eval_cifar10_parts}
filed=0
while IFS= read -r -d '' d; do
  name=${d##*/}; dest=$into/$name
  if [ ! -f "$d/results.json" ]; then
    echo "$d holds no results.json (a cut-off evaluation: continue it on the warm machine); nothing filed from it"; exit 1
  fi
  if [ -e "$dest" ]; then
    if cmp -s "$d/results.json" "$dest/results.json"; then echo "$name: filed already"; continue; fi
    echo "$dest holds another result; move it away first, or give INTO=another folder"; exit 1
  fi
  mkdir -p "$into"; tmp=$(mktemp -d "$into/.$name.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  for f in results.json tables.md evaluation.png; do if [ -f "$d/$f" ]; then cp "$d/$f" "$tmp/"; fi; done
  if compgen -G "$d/predictions.tar.*" >/dev/null; then
    cat "$d"/predictions.tar.? | tar -x -C "$tmp" || { echo "$d: its predictions.tar.N do not make a whole tar (a part missing?)"; exit 1; }
  fi
  mv "$tmp" "$dest"; trap - EXIT; filed=$((filed + 1))
  echo "filed $dest ($(find "$dest/predictions" -type f 2>/dev/null | wc -l) runs' kept predictions)"
done < <(find "$@" -type d -path '*/evaluate/eval_cifar10_*' -prune -print0)
echo "$filed part(s) filed; join them: ssbnn-evaluate --merge $into/* --out bench/results/eval_cifar10 (--overwrite once it holds results)"
