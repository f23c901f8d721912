"Load the peer implementations in this folder (verbatim copies, see README.md) without their frameworks."
import runpy, sys, types
from pathlib import Path

HERE = Path(__file__).parent


def solo_learn() -> types.SimpleNamespace:
    "solo-learn's `LARS` and `simclr_loss_func`, as they run in one process (its `gather` is then the identity, its rank 0)."
    misc = types.ModuleType("solo.utils.misc")
    misc.gather, misc.get_rank = (lambda x, dim=0: x), (lambda: 0)
    names = ("solo", "solo.utils", "solo.utils.misc")
    saved = {k: sys.modules.get(k) for k in names}
    sys.modules.update({"solo": types.ModuleType("solo"), "solo.utils": types.ModuleType("solo.utils"), "solo.utils.misc": misc})
    try:
        lars = runpy.run_path(str(HERE / "solo_learn" / "lars.py"))["LARS"]
        loss = runpy.run_path(str(HERE / "solo_learn" / "simclr.py"))["simclr_loss_func"]
    finally:
        for k, v in saved.items():
            if v is None: sys.modules.pop(k, None)
            else: sys.modules[k] = v
    return types.SimpleNamespace(LARS=lars, simclr_loss_func=loss)
