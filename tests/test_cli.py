"The `ssbnn` console script: help, a short run end to end with its files, resuming, and one-line errors."
import json, subprocess
from pathlib import Path
import pytest
from conftest import console, ROOT

SHORT = ["--epochs", "2", "--batch-size", "256", "--budgets", "10,30", "--seeds", "2", "--device", "cpu", "--quiet"]


def ssbnn(*args, cwd=None, timeout=600):
    return subprocess.run([console("ssbnn"), *args], capture_output=True, text=True, cwd=cwd, timeout=timeout)


def test_help_explains_options():
    code, out, _ = call(ssbnn_main, "--help")                       # in this process: the console script runs end to end below
    assert code == 0
    for opt in ("--epochs", "--budgets", "--seeds", "--seed", "--out", "--device", "--overwrite"): assert opt in out


def test_short_run_end_to_end(tmp_path):
    out = tmp_path / "run"
    r = ssbnn(*SHORT, "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert {p.name for p in out.iterdir()} == {".ssbnn-run", "results.json", "report.md", "metrics_vs_labels.png", "pretrain.ckpt", "model"}
    from ssbnn.core import SSBNN, load_digits_splits
    again = SSBNN.load(out / "model", device="cpu")                 # the pretrained encoder, for reuse
    assert again.config_.epochs == 2 and again.features(load_digits_splits().x_test[:5]).shape == (5, again.encoder.dim)
    res = json.loads((out / "results.json").read_text())
    recs = res["records"]
    assert len(recs) == 2 * 2 * 4                                   # budgets x seeds x methods
    assert {r["method"] for r in recs} == {"ss-bnn", "ss-map", "map", "ll-laplace"}
    assert {r["labels"] for r in recs} == {10, 30}
    for rec in recs:
        assert 0 <= rec["accuracy"] <= 1 and rec["nll"] > 0 and 0 <= rec["ece"] <= 1
        assert {"dataset", "method", "labels", "seed"} <= rec.keys()
    assert res["meta"]["config"]["epochs"] == 2 and res["meta"]["device"]
    report = (out / "report.md").read_text()
    assert "NLL" in report and "SS-BNN" in report and "metrics_vs_labels.png" in report
    assert (out / "metrics_vs_labels.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "wall time" in r.stdout and "| labels |" in r.stdout


def test_existing_results_are_never_overwritten(tmp_path):
    (tmp_path / "results.json").write_text('{"mine": 1}')
    code, _, err = call(ssbnn_main, *SHORT, "--out", tmp_path)
    assert code == 2 and "holds files that no ssbnn run wrote" in err
    assert (tmp_path / "results.json").read_text() == '{"mine": 1}'


@pytest.mark.parametrize("args,expect", [
    (["--budgets", "ten"], "not a number"),
    (["--budgets", "5000"], "larger than the 1257"),
    (["--epochs", "-3"], "argument --epochs: must be a finite number > 0"),
    (["--epochs", "inf"], "argument --epochs: must be a finite number"),
    (["--epochs", "nan"], "argument --epochs: must be a finite number"),
    (["--epochs", "1e306"], "≤ 1e+06"),
    (["--seed", "-1"], "argument --seed: must be a whole number ≥ 0"),
    (["--seed", "99999999999999999999"], "argument --seed"),
    (["--budgets", "5"], "--budgets: budget 5 is smaller than the 10 classes"),
    (["--seeds", "0"], "argument --seeds: must be a whole number ≥ 1"),
    (["--batch-size", "5000"], "larger than the 1257 unlabelled images"),
    (["--budgets", "all,all"], "ask for 1257 labels more than once"),
    (["--device", "gpu"], "unknown device"),
    (["--frobnicate"], "unrecognized arguments"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, expect):
    "In this process (the console script is tested in test_pretrain_cli_bad_input and the end-to-end tests)."
    code, _, err = call(ssbnn_main, *args, "--out", tmp_path / "o", "--quiet")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and expect in lines[0] and "Traceback" not in err, (code, err)
    assert not (tmp_path / "o").exists()                                      # refused before its folder is made


def test_evaluate_help_and_bad_input(tmp_path):
    code, out, _ = call(evaluate_main, "--help")                    # the console script runs in test_evaluate_short_digits_run
    assert code == 0 and "--methods" in out and "--corruptions" in out
    for args, expect in ((["--methods", "map,bayes"], "unknown method"), (["--corruptions", "rain"], "unknown corruption"), (["--corruptions", ","], "--corruptions ',' names none; give 'all', 'none' or names"),
                         (["--pretrain-seeds", "0"], "--pretrain-seeds: must be a whole number ≥ 1"),
                         (["--data", "cifar10", "--archive", str(tmp_path / "a.npz"), "--model", str(tmp_path / "m"), "--epochs", "5",
                           "--methods", "ss-bnn,map"], "--epochs with --model sets only SS-BNN*'s pretraining"),
                         (["--data", "cifar10"], "needs --root"), (["--data", "cifar10", "--root", str(tmp_path / "none")], "download=True")):
        one_line_2(call(evaluate_main, *args, "--out", tmp_path / "o", "--quiet"), expect)      # in this process: no start-up each


def test_evaluate_short_digits_run(tmp_path):
    from conftest import console
    out = tmp_path / "eval"
    r = subprocess.run([console("ssbnn-evaluate"), "--epochs", "1", "--budgets", "20", "--seeds", "1", "--methods", "ss-bnn,map,ll-laplace",
                        "--corruptions", "contrast,fog", "--device", "cpu", "--quiet", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert {p.name for p in out.iterdir()} == {".ssbnn-run", "results.json", "tables.md", "evaluation.png"}
    recs = json.loads((out / "results.json").read_text())["records"]
    assert {x["method"] for x in recs} == {"ss-bnn", "map", "ll-laplace"}
    assert all({"c_accuracy", "c_nll", "ood_auroc"} <= x.keys() for x in recs)
    assert "OOD detection AUROC" in (out / "tables.md").read_text()


def test_pretrain_cli_bad_input(tmp_path):
    from conftest import console
    r = subprocess.run([console("ssbnn-pretrain"), "--root", str(tmp_path / "none"), "--out", str(tmp_path / "o")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--download" in r.stderr


# --- The hostile-user audit (issue 14): output folders, files and interrupts -------------------------------------
# In-process calls of the entry points (the same code as the console scripts, without a Python start per case).
import contextlib, io, os, signal, sys
import numpy as np
import torch
from ssbnn.cli import main as ssbnn_main, evaluate_main, pretrain_main, one_line_errors
from ssbnn.report import write_results, RUN_MARK, claim_folder
from ssbnn._utils import Terminated, one_interrupt


def call(entry, *argv):
    "(status, stdout, stderr) of an entry point called in this process."
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try: code = entry([str(a) for a in argv])
        except SystemExit as e: code = e.code
    return code, out.getvalue(), err.getvalue()


def one_line_2(result, expect):
    code, _, err = result
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and expect in lines[0] and "Traceback" not in err, (code, err)


def test_resumes_from_a_checkpoint(tmp_path):
    "A folder with a pretraining checkpoint and no results (a killed run) is resumed, not restarted."
    out, short = tmp_path / "run", [*SHORT[:4], "--budgets", "10", "--seeds", "1", *SHORT[8:]]
    assert call(ssbnn_main, *short, "--out", out)[0] == 0
    (out / "results.json").unlink()
    code, stdout, err = call(ssbnn_main, *short, "--out", out)
    assert code == 0 and "resuming" in stdout, err
    # other settings do not resume it: the advice is this command's; --overwrite starts afresh
    (out / "results.json").unlink()
    longer = ["--epochs", "3", *short[2:]]
    one_line_2(call(ssbnn_main, *longer, "--out", out), "rerun with that run's settings to resume it, or pass --overwrite to start afresh")
    code, stdout, err = call(ssbnn_main, *longer, "--out", out, "--overwrite")
    assert code == 0 and "resuming" not in stdout, err
    assert json.loads((out / "results.json").read_text())["meta"]["config"]["epochs"] == 3


def test_default_folders_of_runs_started_in_the_same_second_differ(tmp_path, monkeypatch):
    from ssbnn.cli import _out_dir
    monkeypatch.chdir(tmp_path)
    a, b = _out_dir(None, False), _out_dir(None, False)
    assert a != b and a.parent == b.parent == Path("ssbnn-runs") and (tmp_path / a / RUN_MARK).exists()


@pytest.mark.parametrize("entry", [ssbnn_main, evaluate_main])
def test_a_folder_with_the_users_files_is_refused(tmp_path, entry):
    (tmp_path / "report.md").write_text("my notes"); (tmp_path / "plot.png").write_bytes(b"png")
    one_line_2(call(entry, "--out", tmp_path, "--quiet", "--device", "cpu"), "holds files that no ssbnn run wrote (plot.png, report.md)")
    assert (tmp_path / "report.md").read_text() == "my notes" and sorted(p.name for p in tmp_path.iterdir()) == ["plot.png", "report.md"]


def test_pretrain_refuses_a_folder_with_an_older_model(tmp_path):
    (tmp_path / "model.pt").write_bytes(b"old model"); (tmp_path / "history.json").write_text("[]")
    one_line_2(call(pretrain_main, "--root", tmp_path / "none", "--out", tmp_path), "holds files that no ssbnn run wrote")
    assert (tmp_path / "model.pt").read_bytes() == b"old model"


@pytest.mark.parametrize("entry", [ssbnn_main, evaluate_main, pretrain_main])
def test_a_users_folder_with_a_file_named_pretrain_ckpt_is_not_taken_for_an_older_run(tmp_path, entry):
    "Only a folder that holds nothing but what an older ssbnn run wrote is taken over (--overwrite, or ssbnn-pretrain resuming)."
    torch.save({"step": 1}, tmp_path / "pretrain.ckpt")                       # a real torch file, but the user's
    (tmp_path / "results.json").write_text('{"mine": 1}'); (tmp_path / "model").mkdir(); (tmp_path / "model" / "weights.bin").write_text("w")
    args = ("--root", tmp_path / "none") if entry is pretrain_main else ("--quiet", "--device", "cpu", "--overwrite")
    one_line_2(call(entry, *args, "--out", tmp_path), "holds files that no ssbnn run wrote (model, pretrain.ckpt, results.json)")
    assert (tmp_path / "model" / "weights.bin").read_text() == "w" and json.loads((tmp_path / "results.json").read_text()) == {"mine": 1}
    (tmp_path / "model" / "config.json").write_text("{}"); (tmp_path / "thesis.tex").write_text("mine")   # a model folder, and the user's file
    one_line_2(call(entry, *args, "--out", tmp_path), "holds files that no ssbnn run wrote (model, pretrain.ckpt, results.json, thesis.tex)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model", "pretrain.ckpt", "results.json", "thesis.tex"]   # no mark left


def test_flags_that_would_be_ignored_are_refused(tmp_path):
    arch = tmp_path / "a.npz"; _archive(arch)
    one_line_2(call(pretrain_main, "--archive", arch, "--download", "--out", tmp_path / "o"), "--download fetches CIFAR-10 into --root")
    one_line_2(call(pretrain_main, "--root", tmp_path / "none", "--limit", "5", "--out", tmp_path / "o"), "--eval and --limit split an --archive")
    one_line_2(call(pretrain_main, "--archive", arch, "--sync-bn", "--device", "cpu", "--out", tmp_path / "o"), "--sync-bn synchronises batch norm across torchrun's processes")
    one_line_2(call(evaluate_main, "--data", "cifar10", "--archive", arch, "--download", "--out", tmp_path / "e"), "--download fetches into --root (CIFAR-10) or --svhn-root")
    one_line_2(call(evaluate_main, "--seeds", "2", "--pretrain-seeds", "5", "--methods", "ss-bnn", "--out", tmp_path / "e"), "pretrain_seeds 5 pretrains models no run uses")
    assert not (tmp_path / "o").exists() and not (tmp_path / "e").exists()    # refused before any folder is made


def test_a_broken_checkpoint_of_the_main_job_says_how_to_start_afresh(tmp_path):
    from ssbnn.report import unhold
    out = claim_folder(tmp_path / "run"); unhold(out)                           # the main job's own folder
    (out / "pretrain.ckpt").write_bytes(b"PK\x03\x04 cut short")                # a copy cut short
    one_line_2(call(ssbnn_main, "--out", out, "--quiet", "--device", "cpu"), "is not a readable ssbnn checkpoint")
    one_line_2(call(ssbnn_main, "--out", out, "--quiet", "--device", "cpu"), "or pass --overwrite to start afresh")
    assert (out / "pretrain.ckpt").read_bytes() == b"PK\x03\x04 cut short"     # kept until --overwrite says otherwise


@pytest.mark.parametrize("stop,code,word", [(KeyboardInterrupt, 130, "interrupted"), (Terminated, 143, "terminated")])
def test_ctrl_c_of_the_main_job_names_the_folder_to_resume(tmp_path, monkeypatch, stop, code, word):
    "A Ctrl-C, or a SIGTERM (`Terminated`): the message names the folder to resume from, and the exit status is 128 + the signal's number."
    import ssbnn.cli as cli
    from ssbnn._utils import save_checkpoint
    from ssbnn.report import unhold
    out = claim_folder(tmp_path / "run"); unhold(out)
    save_checkpoint(out / "pretrain.ckpt", {"step": 1})                         # what an earlier, interrupted run left
    def stopped(*args, **kw): raise stop
    monkeypatch.setattr(cli, "run_evaluation", stopped)
    got, _, err = call(ssbnn_main, "--out", out, "--quiet", "--device", "cpu")
    assert got == code and err.strip().splitlines()[-1] == f"ssbnn: {word}; run again with --out {out} to resume", err
    assert (out / "pretrain.ckpt").exists()


def test_an_out_under_a_file_is_refused_before_any_work(tmp_path):
    (tmp_path / "f").write_text("")
    one_line_2(call(ssbnn_main, "--out", tmp_path / "f" / "run", "--quiet"), "cannot be written")
    one_line_2(call(pretrain_main, "--root", tmp_path / "none", "--out", tmp_path / "f"), "is a file")


def test_ctrl_c_while_results_are_written_leaves_the_whole_set(tmp_path, monkeypatch):
    "A Ctrl-C during the writing of a result set is held back until the set is complete; the JSON comes last."
    real, moved = os.replace, []
    def replace_then_interrupt(a, b):
        real(a, b); moved.append(os.path.basename(b))
        if len(moved) == 1: os.kill(os.getpid(), signal.SIGINT)
    monkeypatch.setattr(os, "replace", replace_then_interrupt)
    with pytest.raises(KeyboardInterrupt), one_interrupt():              # a command's handler (pytest-xdist's workers ignore SIGINT)
        write_results(tmp_path, {"records": []}, "# report")
    assert moved == ["report.md", "results.json"] and sorted(p.name for p in tmp_path.iterdir()) == ["report.md", "results.json"]


def test_a_second_ctrl_c_does_not_cut_the_clean_up_short():
    status, err = None, io.StringIO()
    with contextlib.redirect_stderr(err):
        with one_line_errors("demo", "run again") as status:
            try: os.kill(os.getpid(), signal.SIGINT)
            except KeyboardInterrupt:
                os.kill(os.getpid(), signal.SIGINT)                       # impatient: during the clean-up
                raise
    assert status.code == 130 and err.getvalue().splitlines() == ["demo: stopping, please wait", "demo: interrupted; run again"]


def test_a_sigterm_during_the_clean_up_of_a_stopped_run_is_only_noted():
    "Pretraining raises `Terminated` itself after its checkpoint: a second SIGTERM during the clean-up that follows is noted, not raised."
    status, err = None, io.StringIO()
    with contextlib.redirect_stderr(err):
        with one_line_errors("demo", "run again") as status:
            status.on_failure(lambda: os.kill(os.getpid(), signal.SIGTERM))   # impatient: while the folder is given back
            raise Terminated("stopped by a SIGTERM at step 4 of 10")          # as pretrain raises it
    assert status.code == 143 and err.getvalue().splitlines() == ["demo: stopping, please wait", "demo: terminated; run again"]


def test_a_sigterm_stops_pretraining_at_a_checkpoint_it_resumes_from(tmp_path, monkeypatch):
    "A scheduler's SIGTERM at its time limit: ssbnn-pretrain checkpoints at its next log step, says how to go on and exits with 143."
    import ssbnn.cli as cli
    from ssbnn._utils import load_checkpoint
    common = ["--archive", _archive(tmp_path / "a.npz", n=31), "--eval", "6", "--epochs", "3", "--batch-size", "8", "--device", "cpu",
              "--no-compile", "--quiet", "--out", tmp_path / "o"]
    real, sent = cli.KNNMonitor, []
    def monitor_then_sigterm(*a, **kw):
        knn = real(*a, **kw)
        def monitor(encoder):
            if not sent: sent.append(1); os.kill(os.getpid(), signal.SIGTERM)     # at the first monitored step, as `timeout` would
            return knn(encoder)
        return monitor
    monkeypatch.setattr(cli, "KNNMonitor", monitor_then_sigterm)
    before = signal.getsignal(signal.SIGTERM)
    code, _, err = call(pretrain_main, *common)
    assert code == 143 and err.strip().splitlines()[-1] == "ssbnn-pretrain: terminated; run the same command again to resume from its checkpoint", err
    assert signal.getsignal(signal.SIGTERM) is before                          # the command's handlers are put back
    saved = load_checkpoint(tmp_path / "o" / "pretrain.ckpt")
    assert 0 < saved["step"] < 9 and saved["history"][-1]["step"] == saved["step"], saved["step"]   # at the signal's step
    monkeypatch.undo()
    code, stdout, err = call(pretrain_main, *common)
    assert code == 0 and "resuming" in stdout, err
    assert json.loads((tmp_path / "o" / "results.json").read_text())["steps"] == 9


def _archive(path, n=30, corrupt=None):
    from PIL import Image
    blobs = []
    for i in range(n):
        b = io.BytesIO(); Image.fromarray(np.full((32, 32, 3), 8 * i, np.uint8)).save(b, format="JPEG"); blobs.append(np.frombuffer(b.getvalue(), np.uint8))
    jpeg, offsets, labels = np.concatenate(blobs).copy(), np.cumsum([0] + [len(b) for b in blobs]), np.arange(n) % 3
    if corrupt == "jpeg": jpeg[:50] = 0
    arrays = dict(jpeg=jpeg, offsets=offsets, labels=labels)
    if corrupt == "keys": arrays.pop("labels")
    np.savez(path, **arrays)
    if corrupt == "truncated": path.write_bytes(path.read_bytes()[:300])
    if corrupt == "empty": path.write_bytes(b"")
    return path


@pytest.mark.parametrize("corrupt,expect", [("dir", "is a folder"), ("truncated", "not a readable .npz"), ("empty", "not a readable .npz"),
                                            ("keys", "has no array 'labels'"), ("jpeg", "is not a valid JPEG")])
def test_bad_archives(tmp_path, corrupt, expect):
    archive = tmp_path if corrupt == "dir" else _archive(tmp_path / "a.npz", corrupt=corrupt)
    one_line_2(call(pretrain_main, "--archive", archive, "--out", tmp_path / "o", "--device", "cpu"), expect)


def test_pretrain_refuses_another_commands_folder(tmp_path):
    "A main job's folder is not ssbnn-pretrain's to write over, with or without results."
    out = tmp_path / "job"; claim_folder(out, command="ssbnn"); (out / "results.json").write_text('{"main": 1}')
    one_line_2(call(pretrain_main, "--archive", _archive(tmp_path / "a.npz"), "--device", "cpu", "--out", out), "holds what ssbnn wrote, and ssbnn-pretrain does not write over it")
    assert (out / "results.json").read_text() == '{"main": 1}'


def test_pretrain_resumes_only_on_the_images_it_started_on(tmp_path):
    "A checkpoint made on one subset is refused by a run on another (its held-out images could have been trained on)."
    common = ["--archive", _archive(tmp_path / "a.npz", n=31), "--eval", "6", "--epochs", "1", "--batch-size", "8", "--device", "cpu",
              "--no-compile", "--quiet", "--out", tmp_path / "o"]
    assert call(pretrain_main, *common)[0] == 0
    one_line_2(call(pretrain_main, "--limit", "30", *common), "was made on other images (22 uint8 of shape [3, 32, 32]")
    assert "use a new --out" in call(pretrain_main, "--limit", "30", *common)[2]       # this command's words, not the library's
    code, stdout, err = call(pretrain_main, *common)
    assert code == 0 and "resuming" in stdout, err


def test_pretrain_weight_decay_flag_and_resuming_as_made(tmp_path):
    "--weight-decay reaches the run (the recipe's 5e-4 by default); a checkpoint made with another is refused with the flag that resumes it."
    common = ["--archive", _archive(tmp_path / "a.npz", n=31), "--eval", "6", "--epochs", "1", "--batch-size", "8", "--device", "cpu",
              "--no-compile", "--quiet", "--out", tmp_path / "o"]
    assert call(pretrain_main, *common, "--weight-decay", "1e-6")[0] == 0
    assert json.loads((tmp_path / "o" / "results.json").read_text())["config"]["weight_decay"] == 1e-6
    code, _, err = call(pretrain_main, *common)                              # the default: the recipe's 5e-4
    one_line_2((code, _, err), "weight_decay: 1e-06 in the checkpoint vs 0.0005 now); resume it as it was made (--weight-decay 1e-06), or use a new --out")
    assert err.strip().endswith("--resume-changing weight-decay")


def test_pretrain_flags_are_checked(tmp_path):
    a = _archive(tmp_path / "a.npz")
    one_line_2(call(pretrain_main, "--archive", a, "--limit", "-5", "--out", tmp_path / "o"), "argument --limit: must be a whole number ≥ 0")
    one_line_2(call(pretrain_main, "--archive", a, "--epochs", "nan", "--out", tmp_path / "o"), "argument --epochs")
    one_line_2(call(pretrain_main, "--archive", a, "--resume-changing", "seed", "--out", tmp_path / "o", "--device", "cpu"), "--resume-changing: seed cannot change on resuming; choose from epochs, lr, var-lr")
    one_line_2(call(pretrain_main, "--archive", a, "--eval", "6", "--batch-size", "500", "--out", tmp_path / "o", "--device", "cpu"),
               "--batch-size: batch_size 500 is larger than the")              # found once the archive is read, after the claim:
    assert not (tmp_path / "o").exists()                                     # the folder it made is given back
    (tmp_path / "mine").mkdir()
    one_line_2(call(pretrain_main, "--archive", a, "--eval", "6", "--batch-size", "500", "--out", tmp_path / "mine", "--device", "cpu"), "--batch-size")
    assert (tmp_path / "mine").is_dir() and not any((tmp_path / "mine").iterdir())   # the user's empty folder stays, empty


def test_offline_download(tmp_path, monkeypatch):
    import urllib.error
    from torchvision import datasets
    def offline(*a, **kw): raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")
    monkeypatch.setattr(datasets, "CIFAR10", offline)
    one_line_2(call(pretrain_main, "--root", tmp_path / "data", "--download", "--out", tmp_path / "o", "--device", "cpu"),
               "could not download cifar10")


@pytest.mark.parametrize("content,expect", [
    (b"", "not a readable ssbnn checkpoint"),
    (os.urandom(2048), "not a readable ssbnn checkpoint"),
    ("malicious", "Python objects, which are never loaded"),
    ("training", "is a training checkpoint"),
    ("folder", "is not an ssbnn model folder: it has no config.json"),
])
def test_bad_model_files(tmp_path, content, expect):
    model = tmp_path / "model.pt"
    if content == "malicious": torch.save(print, model)
    elif content == "training": torch.save({"encoder": {}, "optimizer": {}, "step": 1}, model)
    elif content == "folder": model = tmp_path / "model"; model.mkdir(); (model / "model.safetensors").write_bytes(b"")
    else: model.write_bytes(content)
    one_line_2(call(evaluate_main, "--data", "cifar10", "--archive", _archive(tmp_path / "a.npz"), "--model", model, "--budgets", "3",
                    "--seeds", "1", "--methods", "ss-bnn", "--corruptions", "none", "--device", "cpu", "--out", tmp_path / "o", "--quiet"), expect)


def test_evaluate_refuses_flags_it_would_ignore(tmp_path):
    one_line_2(call(evaluate_main, "--data", "digits", "--model", tmp_path / "nonexistent.pt", "--out", tmp_path / "o"),
               "--model applies to --data cifar10 only")


@pytest.mark.parametrize("content,expect", [(b"", "not a readable ssbnn checkpoint"), (os.urandom(4096), "not a readable ssbnn checkpoint"),
                                            ("tensor", "holds a Tensor")])
def test_resuming_from_a_file_that_is_not_a_checkpoint(tmp_path, content, expect):
    out = tmp_path / "run"; out.mkdir(); (out / RUN_MARK).write_text("")
    if content == "tensor": torch.save(torch.ones(3), out / "pretrain.ckpt")
    else: (out / "pretrain.ckpt").write_bytes(content)
    one_line_2(call(ssbnn_main, *SHORT, "--out", out), expect)


def test_stale_temporary_files_are_removed(tmp_path):
    import subprocess as sp
    out = tmp_path / "run"; out.mkdir(); (out / RUN_MARK).write_text("")
    dead = sp.Popen(["true"]); dead.wait()
    (out / f".pretrain.ckpt.tmp{dead.pid}").write_bytes(b"half a checkpoint")
    code, _, err = call(ssbnn_main, "--epochs", "1", "--batch-size", "256", "--budgets", "10", "--seeds", "1", "--device", "cpu",
                        "--quiet", "--out", out)
    assert code == 0, err
    assert not list(out.glob(".*.tmp*")) and (out / "results.json").exists()


KILLER = r"""
import os, sys, torch
from ssbnn._utils import save_checkpoint
for _ in sys.stdin:                                  # one saving process a line, forked: torch is imported once, not once each
    pid = os.fork()
    if pid == 0:
        state = {"w": torch.randn(2_000_000), "step": 0}
        print("ready", os.getpid(), flush=True)
        for step in range(10**6):
            state["step"] = step; save_checkpoint(sys.argv[1], state)
        os._exit(0)
    os.waitpid(pid, 0); print("gone", flush=True)     # killed by the test, and reaped here, so its pid is free
"""


def test_kills_during_saves_leave_a_loadable_checkpoint(tmp_path):
    "SIGKILL a process that saves an 8 MB checkpoint in a loop, at a few moments: the file always loads, and temp files go."
    import random, subprocess as sp, time
    from ssbnn._utils import load_checkpoint, remove_stale_temps
    path, rng, steps = tmp_path / "ck.pt", random.Random(0), []
    savers = sp.Popen([sys.executable, "-c", KILLER, str(path)], stdin=sp.PIPE, stdout=sp.PIPE, text=True)
    try:
        for k in range(6):
            savers.stdin.write("\n"); savers.stdin.flush()                     # start a saving process
            said, pid = savers.stdout.readline().split()
            assert said == "ready"
            time.sleep(0.2 + rng.random() * 0.6)
            os.kill(int(pid), signal.SIGKILL)
            assert savers.stdout.readline().strip() == "gone"
            if path.exists(): steps.append(load_checkpoint(path)["step"])      # never a half-written file
            remove_stale_temps(path)
            assert not list(tmp_path.glob(".ck.pt.tmp*"))
        savers.stdin.close(); assert savers.wait(timeout=60) == 0
    finally: savers.kill()
    assert steps and path.exists()


def test_evaluation_parts_merge_into_the_whole_runs_tables(tmp_path):
    "The recorded digits evaluation split by label seed into three parts, as separate jobs would write them, joins back into its own tables."
    from ssbnn.experiments.evaluation import evaluation_tables
    whole = json.loads((ROOT / "bench" / "results" / "digits_evaluation" / "results.json").read_text())
    for k in range(3):
        (tmp_path / f"s{k}").mkdir()
        recs = [r for r in whole["records"] if r["seed"] == k]                   # each job planned its own seed's runs
        part = {"records": recs, "meta": {**whole["meta"], "total_seconds": 10.0, "runs_planned": len(recs)}}
        (tmp_path / f"s{k}" / "results.json").write_text(json.dumps(part))
    code, out, err = call(evaluate_main, "--merge", tmp_path / "s0", tmp_path / "s1", tmp_path / "s2", "--out", tmp_path / "all")
    assert code == 0, err
    merged = json.loads((tmp_path / "all" / "results.json").read_text())
    assert evaluation_tables(merged["records"]) == evaluation_tables(whole["records"]) and merged["meta"]["total_seconds"] == 30.0
    assert "3 parts" in out and (tmp_path / "all" / "tables.md").exists()
    cut = json.loads((tmp_path / "s2" / "results.json").read_text())
    (tmp_path / "s2" / "partial.json").write_text(json.dumps({**cut, "meta": {**cut["meta"], "runs_planned": 30}}))   # a part cut off:
    (tmp_path / "s2" / "results.json").unlink()                                   # its finished runs and meta so far, 2 runs short
    code, out, err = call(evaluate_main, "--merge", tmp_path / "s0", tmp_path / "s1", tmp_path / "s2", "--out", tmp_path / "cut")
    assert code == 0, err
    assert evaluation_tables(json.loads((tmp_path / "cut" / "results.json").read_text())["records"]) == evaluation_tables(whole["records"])
    assert "Cut off before it finished: part 3 (s2: 28 of 30 runs) of 3 parts" in (tmp_path / "cut" / "tables.md").read_text()
    assert "ssbnn-evaluate: note: Cut off before it finished: part 3" in out
    older = {k: v for k, v in cut["meta"].items() if k != "runs_planned"}         # written before parts said what they planned
    (tmp_path / "s2" / "partial.json").write_text(json.dumps({**cut, "meta": older}))
    code, out, err = call(evaluate_main, "--merge", tmp_path / "s0", tmp_path / "s1", tmp_path / "s2", "--out", tmp_path / "older")
    assert code == 0 and "part 3 (s2: 28 of an unknown number of runs)" in (tmp_path / "older" / "tables.md").read_text(), err
    one_line_2(call(evaluate_main, "--merge", tmp_path / "s0", tmp_path / "s0", "--out", tmp_path / "twice"), "is in parts 1 and 2")
    one_line_2(call(evaluate_main, "--merge", tmp_path / "s0", tmp_path / "none", "--out", tmp_path / "x"), "holds no readable results.json")
    one_line_2(call(evaluate_main, "--merge", tmp_path / "s0"), "merging needs --out")
    one_line_2(call(evaluate_main, "--merge", tmp_path / "s0", tmp_path / "s1", "--out", tmp_path / "s1"), "is one of the parts")
