#!/bin/bash
# File the torch.compile artifacts that device calls returned (FOLDER/<piece>/compile-cache_<GPU>_<name>.bin, from
# bench/gpu_pieces.sh) into .devdata/compile_cache/<GPU>/<name>.bin, which later sessions carry (bench/compile_cache.py):
#   bash tools/keep_compile_cache.sh FILES_AT...       (each call's files_at; INTO sets another destination)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: bash tools/keep_compile_cache.sh FILES_AT... (folders a device call returned)"; exit 2; }
into=${INTO:-.devdata/compile_cache}
while IFS= read -r -d '' f; do
  n=${f##*/compile-cache_}; gpu=${n%%_*}
  mkdir -p "$into/$gpu"; cp "$f" "$into/$gpu/${n#*_}"; echo "kept $gpu/${n#*_} ($(du -h "$f" | cut -f1))"
done < <(find "$@" -name 'compile-cache_*.bin' -print0)
du -sh "$into" 2>/dev/null || true          # tools/device_prep.sh says how much of a call's 64 MiB the carry takes
