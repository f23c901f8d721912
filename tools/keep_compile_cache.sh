#!/bin/bash
# File the torch.compile artifacts that device calls returned (FOLDER/<piece>/compile-cache_<GPU>_<name>.bin, from
# bench/gpu_pieces.sh) into bench/compile_artifacts/<GPU>/<name>.bin, committed: a session's checkout is fresh, so a
# git-ignored folder would not reach the next one. They travel with the tree, and bench/gpu_pieces.sh warms
# torch.compile from them (bench/compile_cache.py). A file whose graphs are kept already (the same <hash> after the
# program's name) is skipped:
#   bash tools/keep_compile_cache.sh FILES_AT...       (each call's files_at; INTO sets another destination)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: bash tools/keep_compile_cache.sh FILES_AT... (folders a device call returned)"; exit 2; }
into=${INTO:-bench/compile_artifacts}
while IFS= read -r -d '' f; do
  n=${f##*/compile-cache_}; gpu=${n%%_*}; name=${n#*_}
  if compgen -G "$into/$gpu/*-${name##*-}" >/dev/null; then echo "$gpu/$name: the same graphs are kept already"; continue; fi
  mkdir -p "$into/$gpu"; cp "$f" "$into/$gpu/$name"; echo "kept $gpu/$name ($(du -h "$f" | cut -f1))"
done < <(find "$@" -name 'compile-cache_*.bin' -print0)
du -sh "$into" 2>/dev/null || true          # tools/device_prep.sh says how much of a call's 64 MiB the carry takes
