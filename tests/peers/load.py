"Load the peer implementations in this folder (verbatim copies, see README.md) without their frameworks."
import contextlib, importlib, runpy, sys, types
import torch
from pathlib import Path

HERE = Path(__file__).parent


def solo_learn() -> types.SimpleNamespace:
    "solo-learn's `LARS` and `simclr_loss_func`, as they run in one process (its `gather` is then the identity, its rank 0)."
    misc = types.ModuleType("solo.utils.misc")
    misc.gather, misc.get_rank = (lambda x, dim=0: x), (lambda: 0)
    with _modules({"solo": types.ModuleType("solo"), "solo.utils": types.ModuleType("solo.utils"), "solo.utils.misc": misc}):
        lars = runpy.run_path(str(HERE / "solo_learn" / "lars.py"))["LARS"]
        loss = runpy.run_path(str(HERE / "solo_learn" / "simclr.py"))["simclr_loss_func"]
    return types.SimpleNamespace(LARS=lars, simclr_loss_func=loss)


@contextlib.contextmanager
def _modules(fake:dict):
    "Put the modules `fake` ({name: module}) into `sys.modules` for the duration, then restore what was there."
    saved = {k: sys.modules.get(k) for k in fake}
    sys.modules.update(fake)
    try: yield
    finally:
        for k, v in saved.items():
            if v is None: sys.modules.pop(k, None)
            else: sys.modules[k] = v


def _package(name:str, path:Path) -> types.ModuleType:
    "An empty package `name` whose submodules are the files under `path` (in place of the original's `__init__.py`)."
    m = types.ModuleType(name)
    m.__path__ = [str(path)]
    return m


@contextlib.contextmanager
def without_cuda():
    "Make `Tensor.cuda` the identity: swa_gaussian's `sample` and `bn_update` call it unconditionally."
    cuda = torch.Tensor.cuda
    torch.Tensor.cuda = lambda self, *a, **k: self
    try: yield
    finally: torch.Tensor.cuda = cuda


def swa_gaussian() -> types.SimpleNamespace:
    "swa_gaussian's `SWAG` and `bn_update`; gpytorch, imported by `swag.py` for its log-likelihoods only, is a stub that raises."
    def unavailable(*a, **k): raise RuntimeError("gpytorch is not installed for the peer checks")
    gpytorch, lazy, dist = (types.ModuleType(n) for n in ("gpytorch", "gpytorch.lazy", "gpytorch.distributions"))
    lazy.RootLazyTensor = lazy.DiagLazyTensor = lazy.AddedDiagLazyTensor = dist.MultivariateNormal = unavailable
    gpytorch.lazy, gpytorch.distributions = lazy, dist
    root = HERE / "swa_gaussian" / "swag"
    with _modules({"gpytorch": gpytorch, "gpytorch.lazy": lazy, "gpytorch.distributions": dist,
                   "swag": _package("swag", root), "swag.posteriors": _package("swag.posteriors", root / "posteriors")}):
        for k in ("swag.utils", "swag.posteriors.swag"): sys.modules.pop(k, None)
        utils, swag = importlib.import_module("swag.utils"), importlib.import_module("swag.posteriors.swag")
        for k in ("swag.utils", "swag.posteriors.swag"): sys.modules.pop(k, None)
    return types.SimpleNamespace(SWAG=swag.SWAG, bn_update=utils.bn_update)


def baal() -> types.SimpleNamespace:
    "baal's acquisition heuristics `BALD` and `Entropy` (predictions `(N,C,iterations)`), without the rest of baal."
    root = HERE / "baal" / "baal"
    names = ("baal.utils.array_utils", "baal.active.heuristics.heuristics")
    with _modules({"baal": _package("baal", root), "baal.utils": _package("baal.utils", root / "utils"),
                   "baal.active": _package("baal.active", root / "active"),
                   "baal.active.heuristics": _package("baal.active.heuristics", root / "active" / "heuristics")}):
        for k in names: sys.modules.pop(k, None)
        h = importlib.import_module("baal.active.heuristics.heuristics")
        for k in names: sys.modules.pop(k, None)
    return types.SimpleNamespace(BALD=h.BALD, Entropy=h.Entropy)
