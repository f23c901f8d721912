#!/bin/bash
# Prepare what a GPU session carries to the device machine (run here, in the repository root; all of it is git-ignored):
#   .devdata/cifar10_train.npz   the CIFAR-10 training archive (../shared does not travel)
#   .devdata/before/             the code before the speed work (4e4ebcf: per-tensor LARS, a host sync per step,
#                                encoder-only compilation), for the same-seed before/after comparison of issue 13
#   .whl/                        wheels of what the device image lacks: laplace-torch and its curvature backends,
#                                kornia, fastcore (the image has torch, numpy, scipy, scikit-learn, safetensors, ...)
#   .devdata/compile_cache/      torch.compile artifacts of earlier sessions (bench/compile_cache.py), copied from the
#                                committed bench/compile_artifacts, where tools/keep_compile_cache.sh files them
# On the device, `source tools/device_env.sh` installs the wheels and puts this tree on PYTHONPATH.
set -euo pipefail
cd "$(dirname "$0")/.."
ARCHIVE=${SSBNN_CIFAR_ARCHIVE:-../shared/data/cifar10_train.npz}
mkdir -p .devdata .whl
cp -u "$ARCHIVE" .devdata/cifar10_train.npz
mkdir -p .devdata/compile_cache bench/compile_artifacts && cp -r bench/compile_artifacts/. .devdata/compile_cache/
rm -rf .devdata/before && mkdir -p .devdata/before && git archive 4e4ebcf ssbnn bench | tar -x -C .devdata/before
WHEELS="laplace-torch==0.3 curvlinops-for-pytorch==3.0.1 asdfghjkl==0.1a4 backpack-for-pytorch==1.7.1 unfoldNd==0.2.3 einconv==0.1.0
        kornia==0.9.0 kornia_rs==0.2.0 fastcore==1.14.5"
for w in $WHEELS; do
  ls .whl | grep -qi "^$(echo ${w%%==*} | tr - _)-${w##*==}" && continue
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl "$w"
done
du -sh .devdata .whl
total=$(du -smc .devdata .whl | tail -1 | cut -f1)
[ "$total" -le 56 ] || echo "warning: .devdata and .whl hold $total MiB of the 64 a call carries: delete older files in bench/compile_artifacts and .devdata/compile_cache"
