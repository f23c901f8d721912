"CIFAR-10 from the packed archive on the build machines (../shared/data): skipped cleanly where it is absent."
import json, os, subprocess, sys
from pathlib import Path
import numpy as np
import pytest
from conftest import ROOT

ARCHIVE = Path(os.environ.get("SSBNN_CIFAR_ARCHIVE", ROOT.parent / "shared" / "data" / "cifar10_train.npz"))
needs_archive = pytest.mark.skipif(not ARCHIVE.exists(), reason=f"no CIFAR-10 archive at {ARCHIVE}")


@needs_archive
def test_archive_decodes_to_cifar10():
    from ssbnn.data import read_jpeg_archive, splits_from_arrays
    x, y = read_jpeg_archive(ARCHIVE)
    assert x.shape == (50_000, 32, 32, 3) and x.dtype == np.uint8
    assert np.bincount(y).tolist() == [5000] * 10
    s = splits_from_arrays(x, y, val=1000, test=5000, name="cifar10")
    assert (len(s.y_train), len(s.y_val), len(s.y_test)) == (44_000, 1000, 5000)
    assert s.x_train.dtype.is_floating_point is False        # kept as uint8
    from ssbnn.models import CIFAR10_MEAN, CIFAR10_STD
    for c in range(3):      # the encoder's normalisation: these images' per-channel statistics (JPEG-75 lowers the std by < 0.002)
        ch = x[..., c].astype(np.float32) / 255
        assert abs(ch.mean() - CIFAR10_MEAN[c]) < 0.001 and abs(ch.std() - CIFAR10_STD[c]) < 0.003
        assert abs(ch.std(axis=(1, 2)).mean() - (0.2023, 0.1994, 0.2010)[c]) < 0.003   # the values often copied: per-image stds averaged


@needs_archive
def test_benchmark_script_runs_on_cpu(tmp_path):
    import fnmatch
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "pretrain_cifar.py"), "--archive", str(ARCHIVE), "--limit", "400",
                        "--eval", "80", "--val", "40", "--epochs", "0.1", "--batch-size", "32", "--budgets", "",
                        "--no-compile", "--device", "cpu", "--profile-steps", "2", "--profile-skip", "1", "--out", f"{tmp_path / 'records'}/"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    [out] = (tmp_path / "records").iterdir()                                # a folder: the record is named by what ran, prior included
    assert fnmatch.fnmatch(out.name, "pretrain_ss-bnn_cifar10_*_0.1ep_taup4_wd0.0005.json"), out.name   # the decay: not the paper's
    res = json.loads(out.read_text())
    assert res["profile"]["steps"] == 1 and res["profile"]["top"][0]["ms_per_step"] > 0
    for k in ("views_per_second", "seconds_per_epoch", "knn_accuracy", "device", "torch", "history", "augment", "command"):
        assert k in res, k
    assert res["views_per_second"] > 0 and 0 <= res["knn_accuracy"] <= 1 and res["device"].split()[0] == "cpu"


@needs_archive
def test_benchmark_sweep_writes_one_record_per_point_and_resumes(tmp_path):
    cmd = [sys.executable, str(ROOT / "bench" / "pretrain_cifar.py"), "--archive", str(ARCHIVE), "--limit", "400", "--eval", "80",
           "--val", "40", "--epochs", "0.1", "--batch-size", "32", "--budgets", "", "--no-compile", "--device", "cpu",
           "--profile-steps", "0", "--out-dir", str(tmp_path), "--point", "eta1e-3", "lars_trust=0.001,lars_clip=0",
           "--point", "wide", "head_width=64,tau_p=1,mean=view_a,optimizer=sgd,weight_decay=1e-5,jpeg=50"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    old, wide = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("eta1e-3", "wide"))
    assert (old["lars_trust"], old["lars_clip"], old["head_width"]) == (1e-3, False, 512)
    assert (wide["lars_trust"], wide["lars_clip"], wide["head_width"], wide["prior_std"]) == (0.02, True, 64, 1.0)   # the recipe's
    assert (old["mean"], wide["mean"]) == ("mean", "view_a")
    assert (old["optimizer"], old["weight_decay"], wide["optimizer"], wide["weight_decay"]) == ("lars", 5e-4, "sgd", 1e-5)   # the recipe's; another
    assert all(-1 <= h["align"] <= 1 for r in (old, wide) for h in r["history"]) and wide["final_align"] == wide["history"][-1]["align"]
    assert old["settings"] == {"lars_trust": 0.001, "lars_clip": False} and old["point"] == "eta1e-3"
    assert (old["jpeg"], wide["jpeg"]) == (0, 50)                        # the images as read, and re-encoded as JPEG 50
    (tmp_path / "wide.json").unlink()                                     # as if the time limit had cut the sweep off
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "eta1e-3: " in r.stdout and "exists, skipped" in r.stdout and (tmp_path / "wide.json").exists()
    best = subprocess.run(cmd[:cmd.index("--out-dir")] + ["--out-dir", str(tmp_path / "long"), "--best-of", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)                        # the long piece's RECIPE=best
    top = max((old, wide), key=lambda r: r["knn_accuracy"])
    again = json.loads((tmp_path / "long" / f"{top['point']}-0.1ep.json").read_text())
    recorded = {"tau_p": round(1 / top["prior_std"], 6), **{k: top[k] for k in ("optimizer", "lr", "weight_decay")}}
    assert best.returncode == 0 and again["settings"] == {**recorded, **top["settings"]}   # its prior and optimiser as recorded
    assert (again["mean"], again["prior_std"]) == (top["mean"], top["prior_std"])
    bad = subprocess.run(cmd[:-1] + ["lars_trust"], capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "point wide: point setting 'lars_trust' is not KEY=VALUE" in bad.stderr.splitlines()[-1]
    bad = subprocess.run(cmd[:-1] + ["lars_trst=0.02"], capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "point wide: unknown setting 'lars_trst'; choose from" in bad.stderr.splitlines()[-1]
    bad = subprocess.run(cmd[:-1] + ["jpeg=100"], capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "jpeg quality 100: choose 1 to 95" in bad.stderr.splitlines()[-1]


@needs_archive
def test_peer_simclr_runs_on_the_same_splits_as_ssbnn(tmp_path):
    "The independent SimCLR loop (bench/peer_simclr.py) end to end on the archive; bad input exits 2 with one line."
    cmd = [sys.executable, str(ROOT / "bench" / "peer_simclr.py"), "--archive", str(ARCHIVE), "--limit", "400", "--eval", "80",
           "--val", "40", "--epochs", "1", "--batch-size", "64", "--workers", "1", "--device", "cpu", "--out", str(tmp_path / "peer.json")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads((tmp_path / "peer.json").read_text())
    assert (res["train_images"], res["eval_images"], res["steps"], res["workers"]) == (280, 80, 4, 1)   # ssbnn's splits of 400
    assert 0 <= res["knn_accuracy"] <= 1 and res["history"][0]["loss"] > 0 and res["device"].split()[0] == "cpu"
    for bad, says in [(["--epochs", "0"], "--epochs: must be a whole number > 0, got 0"), (["--batch-size", "500"], "larger than the 280"),
                      (["--device", "gpu"], "unknown device 'gpu'")]:
        r = subprocess.run(cmd + bad, capture_output=True, text=True, timeout=600)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and says in r.stderr, (bad, r.stderr)


@needs_archive
def test_prior_script_runs_on_cpu_whole_and_in_parts(tmp_path):
    script = [sys.executable, str(ROOT / "bench" / "prior_cifar.py")]
    small = ["--archive", str(ARCHIVE), "--limit", "600", "--pairs", "20", "--ss-samples", "64", "--bnn-samples", "4", "--bnn-batch", "4",
             "--one-by-one", "--channels-last", "--device", "cpu"]
    run = lambda *a: subprocess.run([*script, *a], capture_output=True, text=True, timeout=600)
    r = run(*small, "--epochs", "0.5", "--out", str(tmp_path / "whole.json"))
    assert r.returncode == 0, r.stderr[-3000:]
    whole = json.loads((tmp_path / "whole.json").read_text())
    for name in ("self-supervised", "BNN, gaussian", "BNN, laplace"):
        assert 0 <= whole[name]["alpha"] <= 1 and len(whole[name]["interval_95"]) == 2
        assert all(len(whole["rho"][name][k]) == 20 for k in ("augmented", "same class", "different class"))   # every pair's rho
    assert (tmp_path / "whole.png").exists() and whole["bnn_one_by_one"] and whole["bnn_channels_last"]
    assert (whole["ss_prior_std"], whole["ss_weight_decay"]) == (0.25, 5e-4)   # the recipe's W^c prior (tau_p 4) and decay, recorded
    # the same Table 1 in two parts (a device session too short for all of it), joined: the same pairs, the same scores
    assert run(*small, "--priors", "bnn-laplace,bnn-gaussian", "--out", str(tmp_path / "bnn.json")).returncode == 0
    assert run(*small, "--priors", "self-supervised", "--epochs", "0.5", "--out", str(tmp_path / "ss.json")).returncode == 0
    bnn = json.loads((tmp_path / "bnn.json").read_text())
    assert "self-supervised" not in bnn and "ss_prior_std" not in bnn      # no pretraining for the BNN priors
    r = run("--merge", str(tmp_path / "ss.json"), str(tmp_path / "bnn.json"), "--out", str(tmp_path / "joined.json"))
    assert r.returncode == 0, r.stderr[-3000:]
    joined = json.loads((tmp_path / "joined.json").read_text())
    assert (tmp_path / "joined.png").exists() and joined["pairs_source_sha256"] == whole["pairs_source_sha256"]
    for name in ("self-supervised", "BNN, gaussian", "BNN, laplace"):
        assert joined[name] == whole[name] and joined["rho"][name] == whole["rho"][name]
    # parts that do not fit together, and a misspelt prior, say so in one line
    (tmp_path / "other.json").write_text(json.dumps(dict(bnn, pairs_source_sha256="0" * 64)))   # as if scored on other pairs
    for parts, says in (([tmp_path / "ss.json", tmp_path / "whole.json"], "both scored the 'self-supervised' prior"),
                        ([tmp_path / "ss.json", tmp_path / "other.json"], "scored other pairs than"),
                        ([tmp_path / "ss.json"], "--merge needs --out")):
        r = run("--merge", *map(str, parts), *(["--out", str(tmp_path / "x.json")] if len(parts) > 1 else []))
        assert r.returncode == 2 and says in r.stderr.splitlines()[-1], r.stderr
    r = run(*small, "--priors", "bnn-gaussian", "--model", str(tmp_path))
    assert r.returncode == 2 and "add self-supervised to --priors" in r.stderr.splitlines()[-1]
    r = run(*small, "--priors", "bnn-gauss")
    assert r.returncode == 2 and "name each prior once, from self-supervised, bnn-gaussian, bnn-laplace" in r.stderr.splitlines()[-1]


@needs_archive
def test_ddp_overhead_runs_both_paths_and_says_what_ran(tmp_path):
    out = tmp_path / "ddp.json"
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "ddp_overhead.py"), "--archive", str(ARCHIVE), "--limit", "400",
                        "--eval", "80", "--val", "40", "--epochs", "0.1", "--batch-size", "32", "--repeats", "1",
                        "--no-compile", "--device", "cpu", "--out", str(out)], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(out.read_text())
    assert res["ran"]["plain"]["backend"] is None and res["ran"]["torchrun_1"]["backend"] == "gloo"     # the DDP path ran
    assert res["ran"]["torchrun_1"]["compiled_graphs"] == 0 and res["passed"] in (True, False)
    assert all(0 < v < 1 for vs in res["knn_accuracy"].values() for v in vs)     # a random subset: not one class


@needs_archive
def test_active_learning_runs_on_models_from_ssbnn_pretrain(tmp_path):
    "The active-learning row's plumbing: SS-BNN and SimCLR pretrained by ssbnn-pretrain (as the chain does), then active_cifar on them."
    split = ["--archive", str(ARCHIVE), "--limit", "500", "--eval", "50"]
    for name, extra in (("ss", []), ("sc", ["--ntxent-tau", "0.45", "--seed", "1"])):
        r = subprocess.run([sys.executable, "-c", "from ssbnn.cli import pretrain_main; raise SystemExit(pretrain_main())", *split, "--epochs", "0.1",
                            "--batch-size", "32", "--no-compile", "--device", "cpu", "--quiet", "--out", str(tmp_path / name), *extra],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
    active = [sys.executable, str(ROOT / "bench" / "active_cifar.py"), *split, "--val", "1000", "--initial", "10", "--val-labels", "10",
              "--step", "10", "--budget", "20", "--seeds", "1", "--samples", "4", "--device", "cpu", "--no-compile"]
    r = subprocess.run([*active, "--ssbnn-model", str(tmp_path / "ss" / "model"), "--simclr-model", str(tmp_path / "sc" / "model"),
                        "--methods", "ss-bnn-bald,simclr-entropy,ensemble-bald", "--members", "2", "--ensemble-budget", "10",
                        "--out", str(tmp_path / "al")], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads((tmp_path / "al" / "results.json").read_text())
    assert sorted({(x["method"], x["labels"]) for x in res["records"]}) == [("ensemble-bald", 10)] + [(m, n) for m in ("simclr-entropy", "ss-bnn-bald") for n in (10, 20)]
    assert res["meta"]["methods"]["ensemble-bald"]["budget"] == 10 and res["meta"]["methods"]["ensemble-bald"]["members"] == 2
    assert not (tmp_path / "al" / "partial.json").exists()                    # its runs are in results.json
    (tmp_path / "al" / "partial.json").write_text(json.dumps({"config": {"initial": 50}, "records": []}))   # another protocol's runs
    stale = subprocess.run([*active, "--ssbnn-model", str(tmp_path / "ss" / "model"), "--methods", "ss-bnn-bald", "--out", str(tmp_path / "al")],
                           capture_output=True, text=True, timeout=600)
    assert stale.returncode == 2 and "holds an interrupted run with other protocol settings (initial: 50 then, 10 now" in stale.stderr.strip().splitlines()[-1]
    assert [(p["weight_decay"], p["seed"]) for p in res["meta"]["pretraining"].values()] == [(5e-4, 0), (5e-4, 1)]   # as the given models were pretrained
    swapped = subprocess.run([*active, "--ssbnn-model", str(tmp_path / "sc" / "model"), "--methods", "ss-bnn-bald", "--out", str(tmp_path / "x")],
                             capture_output=True, text=True, timeout=600)
    assert swapped.returncode == 2 and "pretrained with SimCLR's NT-Xent loss" in swapped.stderr.strip().splitlines()[-1]


KILL_AFTER_FIRST_RUN = r'''
# active_cifar.py, killed (as a time limit would) once its first run (a method and seed) is finished and kept
import runpy, sys
from pathlib import Path
import ssbnn.experiments.active as active
run, calls = active._run, []
def once(*args, **kwargs):
    calls.append(1)
    if len(calls) > 1: raise KeyboardInterrupt
    return run(*args, **kwargs)
active._run = once
sys.argv = sys.argv[1:]; sys.path.insert(0, str(Path(sys.argv[0]).parent))
runpy.run_path(sys.argv[0], run_name="__main__")
'''


@needs_archive
def test_active_learning_cut_off_continues_from_its_runs_and_its_own_encoder(tmp_path):
    "A call killed after its first run leaves partial.json and the encoder it pretrained in --out; the same command continues from both."
    out = tmp_path / "al"
    active = [str(ROOT / "bench" / "active_cifar.py"), "--archive", str(ARCHIVE), "--limit", "500", "--eval", "50", "--val", "1000",
              "--initial", "10", "--val-labels", "10", "--step", "10", "--budget", "20", "--seeds", "2", "--samples", "4", "--device", "cpu",
              "--no-compile", "--epochs", "0.1", "--batch-size", "32", "--methods", "ss-bnn-bald", "--out", str(out)]
    (tmp_path / "kill.py").write_text(KILL_AFTER_FIRST_RUN)
    killed = subprocess.run([sys.executable, str(tmp_path / "kill.py"), *active], capture_output=True, text=True, timeout=600)
    assert killed.returncode != 0 and (out / "ss-bnn-encoder").is_dir() and not (out / "results.json").exists(), killed.stderr[-3000:]
    kept = json.loads((out / "partial.json").read_text())
    assert list(kept["acquired"]) == ["ss-bnn-bald/0"] and [r["labels"] for r in kept["records"]] == [10, 20]
    assert kept["meta"]["pretraining"]["ss-bnn"]["seconds"] > 0                # how its encoder was pretrained, for --merge's check
    for flag, value, said in (("--epochs", "0.2", "pretrained otherwise (epochs: 0.1 then, 0.2 now)"),   # an encoder pretrained otherwise,
                              ("--eval", "60", "may have seen the evaluation images")):               # or on other images: refused
        at = active.index(flag)
        other = subprocess.run([sys.executable, *active[:at + 1], value, *active[at + 2:]], capture_output=True, text=True, timeout=600)
        assert other.returncode == 2 and said in other.stderr.strip().splitlines()[-1], other.stderr[-2000:]
    again = subprocess.run([sys.executable, *active], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and "the encoder an earlier call pretrained here" in again.stdout, again.stdout[-2000:] + again.stderr[-3000:]
    res = json.loads((out / "results.json").read_text())
    assert res["records"][:2] == kept["records"] and [r["seed"] for r in res["records"]] == [0, 0, 1, 1]   # the first run from the file
    made = res["meta"]["pretraining"]["ss-bnn"]
    assert res["meta"]["runs_planned"] == 4 and made["reused_by_a_later_call"] and made["seconds"] == kept["meta"]["pretraining"]["ss-bnn"]["seconds"]
    assert not (out / "partial.json").exists() and not (out / "ss-bnn-encoder").exists()   # the results hold it all now
