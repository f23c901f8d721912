#!/bin/bash
# Prepare what a GPU session carries to the device machine (run here, in the repository root; all of it is git-ignored):
#   .devdata/cifar10_train.npz   the CIFAR-10 training archive (../shared does not travel)
#   .devdata/before/             the code before the speed work (4e4ebcf: per-tensor LARS, a host sync per step,
#                                encoder-only compilation), for the same-seed before/after comparison of issue 13
#   .devdata/continue/           the salvaged parts a session can continue (the baselines'; tools/carry_salvaged.py)
#   .whl/                        wheels of what the device image lacks: laplace-torch and its curvature backends,
#                                kornia, fastcore (the image has torch, numpy, scipy, scikit-learn, safetensors, ...)
# The torch.compile artifacts of earlier sessions travel committed, in bench/compile_artifacts (tools/keep_compile_cache.sh).
# On the device, `source tools/device_env.sh` installs the wheels and puts this tree on PYTHONPATH.
set -euo pipefail
cd "$(dirname "$0")/.."
ARCHIVE=${SSBNN_CIFAR_ARCHIVE:-../shared/data/cifar10_train.npz}
mkdir -p .devdata .whl
cp -u "$ARCHIVE" .devdata/cifar10_train.npz
rm -rf .devdata/compile_cache                 # before 2026-11-27 the artifacts were kept here; they travel committed now
[ -x .venv/bin/python ] || { echo "device_prep: no .venv here (tools/carry_salvaged.py needs ssbnn): run make install first"; exit 2; }
.venv/bin/python tools/carry_salvaged.py --into .devdata/continue      # from bench/results/*_cifar10_parts and the held copies (/tmp/held)
rm -rf .devdata/before && mkdir -p .devdata/before && git archive 4e4ebcf ssbnn bench | tar -x -C .devdata/before
WHEELS="laplace-torch==0.3 curvlinops-for-pytorch==3.0.1 asdfghjkl==0.1a4 backpack-for-pytorch==1.7.1 unfoldNd==0.2.3 einconv==0.1.0
        kornia==0.9.0 kornia_rs==0.2.0 fastcore==1.14.5"
for w in $WHEELS; do
  ls .whl | grep -qi "^$(echo ${w%%==*} | tr - _)-${w##*==}" && continue
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl "$w"
done
du -sh .devdata .whl
# what a call sends: the tracked files (links as links; one deleted but not `git rm`ed counts nothing), the untracked ones
# git does not ignore, and the carried folders (64 MiB in all)
tree=$( { git ls-files -z; git ls-files -z --others --exclude-standard; } | { xargs -0 -r stat -c %s -- 2>/dev/null || true; } | awk '{s += $1} END {print s + 0}')
carried=$(du -sbc .devdata .whl | tail -1 | cut -f1)
total=$(( (tree + carried) / 1048576 ))
echo "a call sends $total MiB of 64: the tree $(( tree / 1048576 )), .devdata and .whl $(( carried / 1048576 ))"
[ "$total" -le 60 ] || { echo "too close to the 64 MiB a call sends. The kept predictions (bench/results/eval_cifar10_parts/*/predictions, 13 MB a part) are needed here, by the merge, not on the device: move them out of the tree for the session's calls (mkdir -p /tmp/held && mv bench/results/eval_cifar10_parts /tmp/held/; a tracked file deleted but not git rm'ed does not travel) and back after (mv /tmp/held/eval_cifar10_parts bench/results/), then run this again"; exit 1; }
