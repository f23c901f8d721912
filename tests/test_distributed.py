"Pretraining on several processes: a killed 2-rank run resumes exactly, `ssbnn-pretrain` runs under torchrun (gloo, CPU), and the gathered task compiles into one graph."
import io, json, subprocess
import numpy as np
import pytest
from conftest import console

EPOCHS, BATCH = 3, 64                            # 200 digits, tasks of 64 images (32 per rank): 10 steps


def _run(folder, checkpoint=None, crash_at=None, seed=0, every=2, term_at=None, log_every=1):
    "A tiny digits pretraining on this rank, optionally killed at its `crash_at`-th step or sent a SIGTERM in its `term_at`-th; returns (state dicts, history)."
    import os, signal, torch
    from ssbnn.data import load_digits_splits
    from ssbnn.augment import DigitsAugment
    from ssbnn.models import DigitsCNN, ProjectionHead
    from ssbnn.elbo import ContrastiveELBO
    from ssbnn.train import PretrainConfig, pretrain
    from ssbnn.distributed import DDPRun
    torch.manual_seed(seed)
    f, g, e = DigitsCNN(width=8, dim=16), ProjectionHead(16, out_dim=8), ContrastiveELBO()
    if crash_at or term_at:
        real, calls = e.forward, {"n": 0}
        def hook(*a, **k):
            calls["n"] += 1
            if calls["n"] == crash_at: raise KeyboardInterrupt("killed")
            if calls["n"] == term_at: os.kill(os.getpid(), signal.SIGTERM)     # as a scheduler (or torchrun) sends it
            return real(*a, **k)
        e.forward = hook
    cfg = PretrainConfig(epochs=EPOCHS, batch_size=BATCH, checkpoint_every=every, log_every=log_every, device="cpu")
    x = load_digits_splits().x_train[:200]
    try: hist = pretrain(f, g, e, x, DigitsAugment(), cfg, checkpoint=None if checkpoint is None else f"{folder}/{checkpoint}", progress=False,
                         run=DDPRun())
    except KeyboardInterrupt:
        if not crash_at: raise                                           # a SIGTERM's `Terminated` goes to the caller
        hist = None
    return {k: v.clone() for m in (f, g, e) for k, v in m.state_dict().items()}, hist


def _kill_and_resume(folder):
    "On every rank: an uninterrupted run, a run killed after its step-4 checkpoint, and its resumption."
    import torch
    full, hist_full = _run(folder)
    _run(folder, "run.pt", crash_at=5)
    step_killed = torch.load(f"{folder}/run.pt", weights_only=True)["step"]
    resumed, hist_resumed = _run(folder, "run.pt", seed=7)             # other initial weights: all comes from the checkpoint
    return {"full": full, "resumed": resumed, "hist_full": hist_full, "hist_resumed": hist_resumed, "killed_at": step_killed}


def test_two_rank_run_resumes_exactly(tmp_path):
    from ssbnn.distributed import run_local
    ranks = run_local(_kill_and_resume, 2, str(tmp_path), timeout=240)
    assert [p.name for p in tmp_path.iterdir()] == ["run.pt"]           # one checkpoint, written by rank 0, no leftovers
    assert ranks[0]["killed_at"] == 4 and len(__import__("torch").load(tmp_path / "run.pt", weights_only=True)["ranks"]) == 2
    for r in ranks:
        for k, v in r["full"].items():
            assert (v == r["resumed"][k]).all(), k                       # bit for bit, every rank's random stream restored
            if "running_" not in k: assert (v == ranks[0]["full"][k]).all(), k   # the ranks hold the same weights (batch-norm
                                                                                     # statistics are each rank's own until DDP
                                                                                     # broadcasts rank 0's at the next step)
    drop = lambda h: [{k: v for k, v in row.items() if k != "seconds"} for row in h]
    assert drop(ranks[0]["hist_resumed"]) == drop(ranks[0]["hist_full"]) == drop(ranks[1]["hist_full"])
    assert ranks[0]["hist_full"][-1]["step"] == 10


def _sigterm_and_resume(folder, signalled):
    "On every rank: an uninterrupted run, a run whose rank `signalled` alone gets a SIGTERM in its fifth step (log steps: every 2nd), and its resumption."
    import torch
    from ssbnn._utils import Terminated
    full, _ = _run(folder)
    mine = 5 if torch.distributed.get_rank() == signalled else None
    try: _run(folder, "term.pt", every=100, term_at=mine, log_every=2); said = None   # checkpoints by count: never
    except Terminated as e: said = str(e)
    saved = torch.load(f"{folder}/term.pt", weights_only=True)
    resumed, _ = _run(folder, "term.pt", seed=7, every=100)
    return {"full": full, "resumed": resumed, "said": said, "step": saved["step"], "ranks": len(saved["ranks"])}


@pytest.mark.parametrize("signalled", [0, 1])
def test_a_sigterm_on_any_rank_stops_every_rank_at_one_checkpoint(tmp_path, signalled):
    "A SIGTERM to rank 0, or to rank 1 alone, stops both ranks at the next log step, after one checkpoint of both ranks' states, which resumes exactly."
    from ssbnn.distributed import run_local
    ranks = run_local(_sigterm_and_resume, 2, str(tmp_path), signalled, timeout=240)
    for r in ranks:
        assert r["said"] == f"stopped by a SIGTERM at step 6 of 10; checkpoint {tmp_path}/term.pt saved" and (r["step"], r["ranks"]) == (6, 2), r
        for k, v in r["full"].items(): assert (v == r["resumed"][k]).all(), k


def _tiny_archive(path, n=120, size=16):
    "A packed-JPEG archive of `n` random `size`x`size` images in ten classes (the format of `read_jpeg_archive`)."
    from PIL import Image
    rng = np.random.default_rng(0)
    blobs = []
    for _ in range(n):
        buf = io.BytesIO()
        Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)).save(buf, format="JPEG")
        blobs.append(np.frombuffer(buf.getvalue(), dtype=np.uint8))
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in blobs])])
    np.savez(path, jpeg=np.concatenate(blobs), offsets=offsets, labels=np.arange(n) % 10, classes=np.array([str(c) for c in range(10)]))
    return path


def test_torchrun_launches_ssbnn_pretrain(tmp_path):
    "`torchrun --nproc_per_node=2` runs the CLI on two gloo processes; rank 0 alone prints and writes; a second launch resumes."
    archive, out = _tiny_archive(tmp_path / "tiny.npz"), tmp_path / "run"
    cmd = [console("torchrun"), "--standalone", "--nproc_per_node=2", "--no-python", console("ssbnn-pretrain"),
           "--archive", str(archive), "--eval", "20", "--epochs", "0.5", "--batch-size", "16", "--no-compile",
           "--device", "cpu", "--quiet", "--tensorboard", "--out", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.count("ssbnn-pretrain:") == 1 and "on 2 processes" in r.stdout and r.stdout.count("done:") == 1, r.stdout
    assert {p.name for p in out.iterdir()} == {".ssbnn-run", "pretrain.ckpt", "model", "history.json", "results.json", "tensorboard"}
    assert len(list((out / "tensorboard").iterdir())) == 1                  # one event file: rank 0 alone writes
    from ssbnn.core import SSBNN
    saved = SSBNN.load(out / "model", device="cpu")                          # the folder names its recipe and its data
    assert (saved.data_["name"], saved.data_["size"], saved.config_.epochs, type(saved.encoder).__name__) == ("cifar10", 88, 0.5, "CIFARResNet18")
    hist = json.loads((out / "history.json").read_text())
    assert hist[-1]["step"] == 3 and "knn_accuracy" in hist[-1]           # half of 88 training images, tasks of 16: 3 global steps
    r2 = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r2.returncode == 0 and "(resuming)" in r2.stdout, r2.stderr[-3000:]


def _compiled_gather():
    "On this rank: dynamo's graph breaks in the gathered task loss, and its loss and gradients compiled (aot_eager) and eager."
    import copy, torch
    from ssbnn.models import DigitsCNN, ProjectionHead
    from ssbnn.elbo import ContrastiveELBO
    from ssbnn.distributed import GatheredTask
    torch.manual_seed(0)
    task = GatheredTask(DigitsCNN(width=4, dim=8), ProjectionHead(8, out_dim=4), ContrastiveELBO(), amp=False)
    views = torch.rand(8, 1, 8, 8, generator=torch.Generator().manual_seed(torch.distributed.get_rank()))   # 4 images, 2 views
    noise = task.elbo.draw_noise(8, 4, torch.Generator().manual_seed(7))                                # the task's 8 images
    breaks = [r.reason for r in torch._dynamo.explain(copy.deepcopy(task))(views, 4, noise).break_reasons]
    eager = copy.deepcopy(task)
    out = {"breaks": breaks, "eager": eager(views, 4, noise)[0], "compiled": torch.compile(task, backend="aot_eager")(views, 4, noise)[0]}
    out["eager"].backward(); out["compiled"].backward()
    out["grads"] = [(p.grad, q.grad) for p, q in zip(eager.parameters(), task.parameters()) if p.grad is not None]
    return out


def test_the_gathered_task_compiles_into_one_graph():
    "torch.compile traces the all-gather of the representations (a functional collective) and its backward: no graph break."
    import torch
    from ssbnn.distributed import run_local
    for r in run_local(_compiled_gather, 2, timeout=240):
        assert r["breaks"] == [], r["breaks"]
        assert torch.allclose(r["eager"], r["compiled"], atol=1e-6) and len(r["grads"]) > 4
        for g_eager, g_compiled in r["grads"]: assert torch.allclose(g_eager, g_compiled, atol=1e-6, rtol=1e-5)
