# source tools/device_env.sh   (on the device machine, in the repository root; after tools/device_prep.sh here,
# with .devdata and .whl carried): installs the carried wheels into /tmp/site and makes this tree importable.
SITE=${SITE:-/tmp/site}; wheels=$SITE/.ssbnn-$(ls .whl 2>/dev/null | cksum | cut -d' ' -f1)   # installed once per machine and set of wheels
[ -f "$wheels" ] || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" .whl/*.whl \
  && mkdir -p "$SITE" && touch "$wheels"; } || return 1
export PYTHONPATH=$SITE:$PWD PYTHONUNBUFFERED=1 ARCHIVE=${ARCHIVE:-$PWD/.devdata/cifar10_train.npz}
python3 -c "import torch, laplace, kornia, ssbnn; from importlib.metadata import version as v
print('device env:', torch.__version__, torch.cuda.get_device_name(), 'laplace-torch', v('laplace-torch'), 'kornia', v('kornia'))"
