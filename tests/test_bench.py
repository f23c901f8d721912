"The benchmark scripts' own logic, on synthetic records (their GPU runs write bench/results)."
import json, os, subprocess, sys
from pathlib import Path
import pytest
import numpy as np
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from compare_curves import compare, rms_gap  # noqa: E402


def record(seed:int, shift:float=0., spe:float=1.):
    "A pretraining record whose curves are a trend plus seeded noise (+ `shift`)."
    r = np.random.default_rng(seed)
    hist = [{"step": s, "loss": 5 / (1 + s / 50) + 0.05 * r.normal() + shift, "tau": 0.1 + 0.01 * r.normal(),
             "sigma": 0.9 + 0.01 * r.normal()} for s in range(0, 500, 50)]
    return {"history": hist, "seconds_per_epoch": spe}


def test_rms_gap_against_numpy():
    a, b = record(0)["history"], record(1)["history"]
    d = np.array([x["loss"] - y["loss"] for x, y in zip(a, b)])[1:]
    rms, mx, n = rms_gap(a, b, "loss")
    assert n == 9 and np.isclose(rms, np.sqrt((d ** 2).mean())) and np.isclose(mx, np.abs(d).max())


def test_same_learning_passes_and_a_shift_fails():
    ok = compare(record(0, spe=1.7), record(0, spe=1.1), record(1))
    assert ok["passed"] and np.isclose(ok["speedup"], 1.7 / 1.1)
    bad = compare(record(0), record(2, shift=0.5), record(1, shift=0.5))          # the new code learns differently
    assert not bad["passed"] and not bad["curves"]["loss"]["within_noise"] and bad["curves"]["tau"]["within_noise"]


def test_cli_exit_codes(tmp_path, capsys):
    for name, rec in (("b", record(0)), ("a", record(0)), ("n", record(1)), ("s", record(2, shift=0.5)), ("sn", record(1, shift=0.5))):
        (tmp_path / f"{name}.json").write_text(json.dumps(rec))
    script = _in_process("compare_curves.py", capsys)                     # its exit status as `python compare_curves.py` gives it
    run = lambda after, noise="n.json": script("--before", tmp_path / "b.json", "--after", tmp_path / after, "--noise", tmp_path / noise,
                                               "--out", tmp_path / "out.json")
    assert run("a.json").returncode == 0 and json.loads((tmp_path / "out.json").read_text())["passed"]
    shifted = run("s.json", "sn.json")
    assert shifted.returncode == 1 and "loss: " in shifted.stdout and "OUTSIDE noise" in shifted.stdout
    missing = run("nothing.json")
    assert missing.returncode == 2 and "FileNotFoundError" in missing.stderr.splitlines()[-1]
    for name, text in (("list.json", "[1, 2]"), ("other.json", '{"rows": []}'), ("rows.json", '{"history": [1], "seconds_per_epoch": 1.0}')):
        (tmp_path / name).write_text(text)                                 # JSON, but not a pretraining record
        r = run(name); said = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(said) == 1 and f"--after {tmp_path / name} is not a bench/pretrain_cifar.py record" in said[0], said
    rows = record(0)["history"]
    for name, rec, says in (("fast.json", {**record(0), "seconds_per_epoch": 0}, "its seconds_per_epoch 0 is not a positive number"),
                            ("x.json", {**record(0), "history": [{**rows[0], "loss": "x"}, *rows[1:]]}, "a history row has loss 'x', not a finite number"),
                            ("none.json", {**record(0), "history": [{**rows[0], "tau": None}, *rows[1:]]}, "has tau None"),
                            ("step.json", {**record(0), "history": [{**rows[0], "step": [1]}, *rows[1:]]}, "has step [1]")):
        (tmp_path / name).write_text(json.dumps(rec))                      # hand-edited: one line, not a TypeError or ZeroDivisionError
        r = run(name); said = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(said) == 1 and says in said[0], said


def test_compile_graph_refuses_a_task_without_negatives(capsys):
    "A task of fewer than 2 images a rank (no negatives), a rank count that is not one, or an unknown device: one line, exit 2."
    run = _in_process("compile_graph.py", capsys)
    for args, said in ((["--task-images", "1"], "argument --task-images: must be a whole number ≥ 2, got 1"),
                       (["--task-images", "3", "--ranks", "2"], "--task-images 3 leaves a rank fewer than 2 images (a task needs negatives); give at least 4 for 2 ranks"),
                       (["--ranks", "-3"], "argument --ranks"), (["--device", "cdua"], "--device cdua: unknown device 'cdua'")):
        r = run(*args)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and said in r.stderr, (args, r.stderr)


def test_sweep_point_settings_keep_their_types_and_refuse_bad_values():
    import runpy
    bench = runpy.run_path(str(ROOT / "bench" / "pretrain_cifar.py"))
    known = bench["known_settings"]()
    got = bench["parse_point"]("lars_trust=0.02,lars_clip=1,seed=1,crops=clamped,mean=view_a,optimizer=sgd,fused_optimizer=1", known)
    assert got == {"lars_trust": 0.02, "lars_clip": True, "seed": 1, "crops": "clamped", "mean": "view_a", "optimizer": "sgd", "fused_optimizer": True}
    assert type(got["seed"]) is int and type(got["crops"]) is str
    for bad, says in [("crops=clampd", "'torchvision', 'clamped'"), ("mean=avg", "'mean', 'view_a', 'zero'"), ("optimizer=adam", "'adamw', 'lars', 'sgd'"), ("lars_clip=2", "0 or 1"), ("seed=1.5", "whole number"),
                      ("lars_trust=big", "not a number"), ("nope=1", "unknown setting"), ("lars_trust", "KEY=VALUE")]:
        try: bench["parse_point"](bad, known)
        except ValueError as e: assert says in str(e), (bad, str(e))
        else: raise AssertionError(f"{bad} was accepted")


def test_record_files_name_the_gpu_model_or_the_cpu():
    from common import device_tag
    from ssbnn._utils import environment
    names = ("NVIDIA H100 80GB HBM3", "NVIDIA H200", "cpu", "cpu (x86_64)", "mps", "")
    assert [device_tag(n) for n in names] == ["H100", "H200", "cpu", "cpu", "mps", "cpu"]
    assert device_tag(environment("cpu")["device"]) == "cpu"           # what a CPU run's record says gives a *_cpu file


def test_best_point_takes_the_best_ssbnn_record_and_says_when_there_is_none(tmp_path, capsys):
    import runpy
    bench = runpy.run_path(str(ROOT / "bench" / "pretrain_cifar.py"))
    new, old = tmp_path / "new", tmp_path / "old"
    for folder, recs in ((old, [("a", "ss-bnn", 0.6, {"tau_p": 1.0})]),
                         (new, [("b", "ss-bnn", 0.7, {"mean": "view_a"}), ("s", "simclr", 0.9, {}), ("c", "ss-bnn", 0.65, {})])):
        folder.mkdir()
        for name, method, knn, settings in recs:
            prior = {"prior_std": 1 / 0.65} if name == "b" else {}                # a record made when the default prior was the paper's
            (folder / f"{name}.json").write_text(json.dumps({"point": name, "method": method, "knn_accuracy": knn, "settings": settings, **prior}))
    (new / "profile.json").write_text(json.dumps({"profile": {}}))            # not a point: ignored
    paper = dict(optimizer="lars", lr=0.6, weight_decay=1e-6)               # records made before 2026-11-25 do not name their optimiser
    assert bench["best_point"]([old, new]) == ("b", {"mean": "view_a", "tau_p": 0.65, **paper})   # SimCLR's 0.9 is not an SS-BNN; its prior kept
    assert bench["best_point"]([old]) == ("a", {"tau_p": 1.0, **paper})
    (old / "d.json").write_text(json.dumps({"point": "d", "method": "ss-bnn", "knn_accuracy": 0.8, "settings": {"lr": 2.4},
                                            "optimizer": "lars", "lr": 2.4, "weight_decay": 5e-4}))
    assert bench["best_point"]([old]) == ("d", {"lr": 2.4, "optimizer": "lars", "weight_decay": 5e-4})   # as it ran, whatever today's recipe
    run = {"method": "ss-bnn", "optimizer": "lars", "lr": 0.6}
    for name, knn, settings in (("e", 0.79, {"weight_decay": 1e-3}), ("e-s1", 0.83, {"weight_decay": 1e-3, "seed": 1}), ("f", 0.805, {"weight_decay": 2e-3})):
        (old / f"{name}.json").write_text(json.dumps({"point": name, "knn_accuracy": knn, "settings": settings, **run, **settings}))
    assert bench["best_point"]([old]) == ("e", {"weight_decay": 1e-3, "optimizer": "lars", "lr": 0.6})   # e's seeds' mean 0.81 beats d's 0.8 and f's 0.805
    (old / "e-s1.json").unlink()
    assert bench["best_point"]([old])[0] == "f"                                            # seed 0 alone: 0.79
    (tmp_path / "empty").mkdir()
    script = _in_process("pretrain_cifar.py", capsys)
    r = script("--archive", "x.npz", "--best-of", tmp_path / "empty", "--out-dir", tmp_path / "o")
    assert r.returncode == 2 and "no SS-BNN sweep records in" in r.stderr.splitlines()[-1]
    r = script("--archive", "x.npz", "--best-of", old)
    assert r.returncode == 2 and "--point and --best-of need --out-dir" in r.stderr.splitlines()[-1]
    r = script("--archive", "x.npz", "--out-dir", tmp_path / "o")                          # no points: an error, not "all done"
    assert r.returncode == 2 and "name its points with --point or --best-of" in r.stderr.splitlines()[-1]


def test_reencode_jpeg_doses_the_archives_compression():
    import torch
    from common import reencode_jpeg
    from ssbnn.data import splits_from_arrays
    yy, xx = np.mgrid[:32, :32]                                           # smooth images with an edge: what JPEG keeps and loses
    imgs = np.stack([np.stack([(xx * 8 + k) % 256, (yy * 8) % 256, ((xx > 16) * 200 + k) % 256], -1) for k in range(40)]).astype(np.uint8)
    data = splits_from_arrays(imgs, np.arange(40) % 10, val=10, test=10, name="toy")
    err = {}
    for q in (90, 50, 10):
        d = reencode_jpeg(data, q, threads=2)
        assert d.x_train.dtype == torch.uint8 and d.x_train.shape == data.x_train.shape and torch.equal(d.y_test, data.y_test)
        assert torch.equal(d.x_val, reencode_jpeg(data, q, threads=1).x_val)              # deterministic, whatever the threads
        err[q] = (d.x_train.float() - data.x_train.float()).abs().mean().item()
    assert 0 < err[90] < err[50] < err[10], err                          # a lower quality is a larger dose
    with pytest.raises(ValueError, match="jpeg quality 100: choose 1 to 95"): reencode_jpeg(data, 100)


def test_record_name_names_every_setting_that_differs(tmp_path):
    import runpy
    bench = runpy.run_path(str(ROOT / "bench" / "pretrain_cifar.py"))
    known = dict(lars_trust=0.02, lars_clip=True, head_width=512, fused_optimizer=False)
    res = dict(method="ss-bnn", device="NVIDIA H100 80GB HBM3", epochs=200, prior_std=0.25, **known)
    assert bench["record_name"](res, known) == "pretrain_ss-bnn_cifar10_H100_200ep_taup4.json"   # the prior: always named
    res.update(lars_trust=0.01, lars_clip=False, learn_tau=False, tau_init=0.2, head_width=2048, crops="clamped", mean="view_a",
               fused_optimizer=True, jpeg=50)
    assert bench["record_name"](res, known) == ("pretrain_ss-bnn_cifar10_H100_200ep_trust0.01_noclip_taup4_fixedtau0.2_head2048"
                                                "_clampedcrops_jpeg50_meanview_a_fusedopt.json")
    simclr = dict(method="simclr", device="cpu", epochs=0.5, prior_std=None, **known)
    assert bench["record_name"](simclr, known) == "pretrain_simclr_cifar10_cpu_0.5ep.json"          # no W^c prior
    known.update(optimizer="lars", lr=0.6, weight_decay=1e-6)                 # the optimiser's settings, named where they differ
    sgd = dict(simclr, device="NVIDIA H200", epochs=200, ntxent_tau=0.5, optimizer="sgd", lr=0.47, weight_decay=5e-4)
    assert bench["record_name"](sgd, known) == "pretrain_simclr_cifar10_H200_200ep_ntxent0.5_sgd_lr0.47_wd0.0005.json"
    assert bench["record_name"](dict(sgd, optimizer="lars", lr=0.6), known) == "pretrain_simclr_cifar10_H200_200ep_ntxent0.5_wd0.0005.json"
    recipe = dict(res, lars_trust=0.02, lars_clip=True, learn_tau=True, head_width=512, crops="torchvision", mean="mean", fused_optimizer=False,
                  jpeg=0, optimizer="lars", lr=0.6, weight_decay=5e-4, device="NVIDIA H200")
    assert bench["record_name"](recipe, bench["known_settings"]()) == "pretrain_ss-bnn_cifar10_H200_200ep_taup4_wd0.0005.json"   # not the decay-1e-6 run's name

def test_frn_reference_says_what_it_needs():
    run = lambda *a: subprocess.run([sys.executable, str(ROOT / "bench" / "frn_reference.py"), *a], capture_output=True, text=True)
    bad = run("--images", "0")
    assert bad.returncode == 2 and "argument --images: must be a whole number > 0, got 0" in bad.stderr.strip().splitlines()[-1]
    r = run("--images", "2")
    import importlib.util
    if all(importlib.util.find_spec(m) for m in ("jax", "haiku")): assert r.returncode == 0 and r.stdout.strip().endswith("passed")
    else: assert r.returncode == 2 and "pip install jax dm-haiku" in r.stderr.strip().splitlines()[-1]


def test_rho_speed_variants_agree_and_bad_variants_exit_2(tmp_path, capsys):
    small = ["--device", "cpu", "--pairs", "6", "--ss-samples", "32", "--bnn-samples", "3", "--bnn-batch", "2"]
    script = _in_process("rho_speed.py", capsys)
    refuse = lambda *a: script(*small, *a)                                   # refused before any work: in this process
    run = lambda *a: subprocess.run([sys.executable, str(ROOT / "bench" / "rho_speed.py"), *small, *a], capture_output=True, text=True)
    bad = refuse("--variants", "vmap-fp32,vmap-fp64")
    assert bad.returncode == 2 and "choose among vmap-fp32" in bad.stderr.strip().splitlines()[-1]
    assert refuse("--bnn-batch", "0").returncode == 2
    (tmp_path / "notes.txt").write_text("mine")
    for out, said in ((tmp_path / "notes.txt", "is not a record of rho_speed.py"), (tmp_path, "is a folder")):   # refused before any work
        r = refuse("--out", str(out)); assert r.returncode == 2 and said in r.stderr, r.stderr
    assert (tmp_path / "notes.txt").read_text() == "mine"
    r = run("--variants", "vmap-fp32,one-by-one-fp32,one-by-one-fp32-channels-last-compiled", "--out", str(tmp_path / "r.json"))
    assert r.returncode == 0, r.stderr
    rec = json.loads((tmp_path / "r.json").read_text())
    assert set(rec["variants"]) == {"vmap-fp32", "one-by-one-fp32", "one-by-one-fp32-channels-last-compiled"} and rec["fastest"] in rec["variants"]
    for v in ("one-by-one-fp32", "one-by-one-fp32-channels-last-compiled"):
        assert rec["variants"][v]["max_rho_change_vs_vmap-fp32"] < 1e-5 < rec["max_rho_change_other_seed"]
    assert rec["variants"]["one-by-one-fp32-channels-last-compiled"]["compile"]


def active_part(seed:int, step:int=10, gain:float=0.05) -> dict:
    "An active_cifar result of one seed: SS-BNN + BALD ahead of random by `gain` at 50, 60 and 70 labels."
    recs = [{"method": m, "seed": seed, "labels": n, "accuracy": 0.4 + n / 1000 + (gain if m == "ss-bnn-bald" else 0), "nll": 1.5, "ece": 0.1}
            for m in ("ss-bnn-bald", "ss-bnn-random") for n in (50, 60, 70)]
    meta = {"config": {"initial": 50, "val": 50, "step": step, "budget": 70, "seeds": 1, "seed": seed, "chunk": 8192}, "dataset": "cifar10",
            "pool": 1000, "eval_images": 100, "methods": {"ss-bnn-bald": {}, "ss-bnn-random": {}}, "total_seconds": 10.0,
            "device": "cpu", "torch": "2", "ssbnn": "0"}
    return {"records": recs, "acquired": {f"{m}/{seed}": list(range(70)) for m in ("ss-bnn-bald", "ss-bnn-random")}, "meta": meta}


def test_active_parts_merge_into_one_result(tmp_path, capsys):
    decayed = active_part(2); decayed["meta"]["pretraining"] = {"ss-bnn": {"epochs": 50, "batch_size": 1000, "weight_decay": 1e-6}}
    for name, part in (("s0", active_part(0)), ("s1", active_part(1)), ("step20", active_part(2, step=20)), ("wd", decayed)):
        part["meta"].setdefault("pretraining", {"ss-bnn": {"epochs": 50, "batch_size": 1000, "weight_decay": 5e-4, "seconds": 60. + part["meta"]["config"]["seed"]}})
        (tmp_path / name).mkdir(); (tmp_path / name / "results.json").write_text(json.dumps(part))
    run = _in_process("active_cifar.py", capsys)                              # a merge needs no data
    r = run("--merge", tmp_path / "s0", tmp_path / "s1", "--out", tmp_path / "all")
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads((tmp_path / "all" / "results.json").read_text())
    assert res["meta"]["seeds_run"] == [0, 1] and res["meta"]["total_seconds"] == 20.0 and len(res["records"]) == 12
    assert "| 50 | +5.00 ± 0.00 | 2/2 |" in r.stdout and "| 70 | +5.00 ± 0.00 | 2/2 |" in r.stdout   # BALD's paired gain, every round up to 100
    assert {p.name for p in (tmp_path / "all").iterdir()} >= {"results.json", "active.md", "active.png"}
    s4 = active_part(4); s4["meta"]["pretraining"] = {"ss-bnn": {"epochs": 50, "batch_size": 1000, "weight_decay": 5e-4, "seed": 4}}
    (tmp_path / "s4").mkdir(); (tmp_path / "s4" / "results.json").write_text(json.dumps(s4))
    again = run("--merge", tmp_path / "all", tmp_path / "s4", "--out", tmp_path / "all+s4")  # a merged result merges again, as a part
    assert again.returncode == 0, again.stderr[-2000:]
    more = json.loads((tmp_path / "all+s4" / "results.json").read_text())
    assert more["meta"]["seeds_run"] == [0, 1, 4] and [p.get("seed") for p in more["meta"]["pretraining"]["ss-bnn"]] == [None, None, 4]
    mixed = run("--merge", tmp_path / "all", tmp_path / "wd", "--out", tmp_path / "bad")   # its parts' recipes are compared too
    assert mixed.returncode == 2 and "pretrained differently (ss-bnn weight_decay: 0.0005, 1e-06)" in mixed.stderr, mixed.stderr
    for args, message in (((tmp_path / "s0", tmp_path / "s0"), "the run method ss-bnn-bald, seed 0 is in parts 1 and 2"),
                          ((tmp_path / "s0", tmp_path / "step20"), "different protocols (step: 10 vs 20)"),
                          ((tmp_path / "s0", tmp_path / "wd"), "pretrained differently (ss-bnn weight_decay: 0.0005, 1e-06)"),
                          ((tmp_path / "s0", tmp_path / "none"), "holds no readable results.json")):
        bad = run("--merge", *args, "--out", tmp_path / "bad")
        assert bad.returncode == 2 and message in bad.stderr.strip().splitlines()[-1] and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "merging needs --out" in run("--merge", tmp_path / "s0").stderr
    edits = ((lambda p: p["meta"].update(images="abc"), "a part cannot be read (AttributeError"),      # hand-edited parts: one line, no folder left
             (lambda p: p["records"][0].update(method=7), "record 1 has method 7, not a method's name"),
             (lambda p: p["records"][0].update(labels=-5), "record 1 has labels -5, fewer than one"),
             (lambda p: p["records"][0].pop("accuracy"), "lacks 'accuracy'"))
    for k, (edit, message) in enumerate(edits):
        part = json.loads((tmp_path / "s1" / "results.json").read_text()); edit(part)
        (tmp_path / f"e{k}").mkdir(); (tmp_path / f"e{k}" / "results.json").write_text(json.dumps(part))
        bad = run("--merge", tmp_path / "s0", tmp_path / f"e{k}", "--out", tmp_path / "bad")
        assert bad.returncode == 2 and message in bad.stderr and len(bad.stderr.strip().splitlines()) == 1, (message, bad.stderr)
        assert not (tmp_path / "bad").exists()
    import ssbnn.experiments.active as active
    def fails(result, out): raise TypeError("a field the checks let through")
    with pytest.MonkeyPatch.context() as mp:                                  # a part that fails only as it is written: the claim undone
        mp.setattr(active, "write_active", fails)
        bad = run("--merge", tmp_path / "s0", tmp_path / "s1", "--out", tmp_path / "bad")
    assert bad.returncode == 2 and "a part cannot be reported (TypeError: a field the checks let through)" in bad.stderr, bad.stderr
    assert not (tmp_path / "bad").exists()                                    # not a folder holding only the claim's mark
    ignored = run("--merge", tmp_path / "s0", tmp_path / "s1", "--out", tmp_path / "bad2", "--epochs", "5", "--device", "foo")
    assert ignored.returncode == 2 and "it runs nothing, so it takes no --epochs, --device" in ignored.stderr, ignored.stderr
    cut = active_part(3); cut["records"] = cut["records"][:3]; cut["acquired"] = {"ss-bnn-bald/3": cut["acquired"]["ss-bnn-bald/3"]}
    cut["meta"].update(runs_planned=6, pretraining=json.loads((tmp_path / "s0" / "results.json").read_text())["meta"]["pretraining"])
    (tmp_path / "s3").mkdir(); (tmp_path / "s3" / "partial.json").write_text(json.dumps(cut))    # a part cut off for good
    r = run("--merge", tmp_path / "s0", tmp_path / "s3", "--out", tmp_path / "with-cut")
    assert r.returncode == 0 and "note: Cut off before it finished: part 2 (s3: 3 of 6 rounds) of 2 parts" in r.stdout, r.stdout + r.stderr
    assert "Cut off before it finished" in (tmp_path / "with-cut" / "active.md").read_text()


STUB = r'''#!/bin/bash
# stands in for the device's python3: logs its arguments; writes what the real command would, where it would
echo "$*" >> "$STUB_LOG"
if [ -n "${STUB_FAIL:-}" ] && [[ "$*" == *"$STUB_FAIL"* ]]; then exit 1; fi   # a command that fails, as a crash on the device would
if [ -n "${STUB_CHECK:-}" ]; then                            # kept for the real parsers (CHECK), which read them all in one process
  case "$*" in *"import json"*|*"import torch"*|"-m pip"*) ;;
    *) printf '%s\0' "$#" "$PWD" "$@" >> "$STUB_CHECK" ;; esac     # argument count, working folder, arguments
fi
out=""; outdir=""; keep=""; prev=""
for a in "$@"; do
  case $prev in --out) out=$a ;; --out-dir) outdir=$a ;; --keep-predictions) keep=$a ;;
    --model|--ssbnn-model|--simclr-model)                    # STUB_MODELS: refused where absent, as the real scripts refuse them
      [ -z "${STUB_MODELS:-}" ] || [ -d "$a" ] || { echo "$prev $a does not exist" >&2; exit 2; } ;; esac; prev=$a
done
if [ -n "${STUB_ARTIFACT:-}" ] && [[ "$1" == bench/compile_cache.py ]]; then      # a compiling process's artifacts, as the runner saves them
  mkdir -p "$COMPILE_CACHE/H100"; echo compiled > "$COMPILE_CACHE/H100/$STUB_ARTIFACT"
  [ -z "${STUB_BIG_ARTIFACT:-}" ] || head -c 17000000 /dev/zero > "$COMPILE_CACHE/H100/$STUB_BIG_ARTIFACT"   # over what a file may come back with
fi
case "$*" in
  *"import json"*) exec "$STUB_REAL" "$@" ;;                 # the script's own small Python: the real one
  *evaluate_main*)
    mkdir -p "$out"
    if [ -f "$out/partial.json" ]; then                      # the second call: finishes what the first started
      echo '{"records": []}' > "$out/results.json"; echo tables > "$out/tables.md"; echo png > "$out/evaluation.png"; rm "$out/partial.json"
    else
      echo '{"records": [], "meta": {"config": {}}}' > "$out/partial.json"
    fi
    if [ -n "$keep" ]; then mkdir -p "$out/predictions"; for i in 0 1 2 3; do head -c 12000000 /dev/urandom > "$out/predictions/ss-bnn_50_s$i.npz"; done; fi
    sleep "${STUB_EVAL_SLEEP:-0}" ;;
  *active_cifar.py*)
    mkdir -p "$out"; run='{"method": "ss-bnn-bald", "labels": 50, "seed": 0}'
    if [ -f "$out/partial.json" ]; then                      # the second call: finishes what the first started
      echo "{\"records\": [$run, $run]}" > "$out/results.json"; echo tables > "$out/active.md"; echo png > "$out/active.png"; rm "$out/partial.json"
    else
      echo "{\"records\": [$run], \"meta\": {\"config\": {}, \"runs_planned\": 2}}" > "$out/partial.json"
    fi
    sleep "${STUB_EVAL_SLEEP:-0}" ;;
  *pretrain_cifar.py*)
    if [ -n "$outdir" ]; then mkdir -p "$outdir"; for p in "$@"; do [ "$p" = taup2 ] && echo '{}' > "$outdir/taup2.json"; done; fi ;;
  *pretrain_main*) sleep "${STUB_SLEEP:-0}"; mkdir -p "$out/model"; echo '{"finished": true}' > "$out/results.json"; echo '[]' > "$out/history.json" ;;
  *laplace_predict.py*) mkdir -p "$(dirname "$out")"; echo '{}' > "$out" ;;
  *rho_speed.py*) mkdir -p "$(dirname "$out")"; echo '{"fastest": "one-by-one-bf16"}' > "$out" ;;
  *prior_cifar.py*|*peer_simclr.py*) mkdir -p "$(dirname "$out")"; echo '{}' > "$out" ;;
esac
exit 0
'''


CHECK = r'''
# Each command the stub kept, through its script's or CLI's real argument parser, all in this one process (one torch import,
# not one a command): runs the script up to its parse_args, stops there, and prints REFUSED for any that does not parse.
import argparse, contextlib, io, os, runpy, sys
from pathlib import Path
class Parsed(BaseException): "Its arguments parsed: stop before any work (not an exit 0 of its own, such as -h's)."
def parse_only(self, args=None, namespace=None):
    _parse(self, args, namespace); raise Parsed
_parse, argparse.ArgumentParser.parse_args = argparse.ArgumentParser.parse_args, parse_only
fields = Path(sys.argv[1]).read_bytes().decode().split("\0")[:-1]
while fields:
    n, cwd, args, fields = int(fields[0]), fields[1], fields[2:2 + int(fields[0])], fields[2 + int(fields[0]):]
    os.chdir(cwd); err = io.StringIO(); code = "never parsed its arguments"
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            if args[0] == "-c": sys.argv = ["-c", *args[2:]]; exec(compile(args[1], "<-c>", "exec"), {"__name__": "__main__"})
            else: sys.argv = args; sys.path.insert(0, str(Path(args[0]).parent)); runpy.run_path(args[0], run_name="__main__")
    except Parsed: code = 0
    except SystemExit as e: code = f"exit {e.code}"
    except Exception as e: code = repr(e)
    if code != 0: print(f"REFUSED ({cwd}, {code}): {' '.join(args)}\n{err.getvalue()[-2000:]}")
    print("parsed:", " ".join(args))
'''


def _piece(tmp_path, piece:str, *args, **env):
    "Run `bench/gpu_pieces.sh PIECE ARGS` as a device call does: the stub python3, an emptied $OUT, and what it leaves in its session killed; returns (result, OUT)."
    import os, shutil, signal
    stub = tmp_path / "bin"
    stub.mkdir(exist_ok=True)
    (stub / "python3").write_text(STUB); (stub / "python3").chmod(0o755)
    out = tmp_path / "out"
    shutil.rmtree(out, ignore_errors=True); out.mkdir()
    e = {**os.environ, "PATH": f"{stub}:{os.environ['PATH']}", "OUT": str(out), "RUNS": str(tmp_path / "runs"), "KEEP": str(tmp_path / "keep"),
         "STUB_LOG": str(tmp_path / "log"), "STUB_REAL": sys.executable, "SITE": str(tmp_path / "site"), "CARRIED_CACHE": str(tmp_path / "carried"),
         "CONTINUE": str(tmp_path / "continue"), **env}
    call = subprocess.Popen(["bash", str(ROOT / "bench" / "gpu_pieces.sh"), piece, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=e, cwd=ROOT, start_new_session=True)
    stdout, stderr = call.communicate(timeout=120)
    try: os.killpg(call.pid, signal.SIGKILL)                                  # the device kills what a call leaves running,
    except ProcessLookupError: pass                                           # except processes in a session of their own
    return subprocess.CompletedProcess(call.args, call.returncode, stdout, stderr), out


def _comes_back(out) -> list:
    "What the device tool returns of $OUT: at most 8 files of at most 16 MiB, at most two folders down; asserts it, returns them."
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) <= 8 and all(p.stat().st_size <= 16 * 2**20 and len(p.relative_to(out).parts) <= 3 for p in files), files
    return sorted(str(p.relative_to(out)) for p in files)


def test_gpu_pieces_keep_what_later_calls_read_outside_the_emptied_out(tmp_path):
    import tarfile
    env = dict(SEEDS="1", FIRST_SEED="0", LABEL_SEEDS="3", METHODS="ss-bnn,ss-map", KEEP_PREDICTIONS="ss-bnn")
    first, out = _piece(tmp_path, "evaluate", **env)                 # cut off: only partial.json
    assert first.returncode == 0, first.stderr
    assert _comes_back(out)[0] == "evaluate/eval_cifar10_ss-bnn-ss-map_s0_m1/partial.json"
    second, out = _piece(tmp_path, "evaluate", **env)                # the next call finds the partial file and finishes
    back = _comes_back(out)
    part = out / "evaluate" / "eval_cifar10_ss-bnn-ss-map_s0_m1"
    assert {"results.json", "tables.md", "evaluation.png"} <= {p.name for p in part.iterdir()} and not (part / "partial.json").exists()
    tars = sorted(p for p in part.iterdir() if p.name.startswith("predictions.tar."))
    assert len(tars) == 4 and len(back) == 7                        # 48 MB of predictions in parts of 15 MiB
    (tmp_path / "joined.tar").write_bytes(b"".join(p.read_bytes() for p in tars))
    with tarfile.open(tmp_path / "joined.tar") as tf:
        assert sorted(tf.getnames())[1:] == [f"predictions/ss-bnn_50_s{i}.npz" for i in range(4)]
    log = (tmp_path / "log").read_text()
    assert "--model " + str(tmp_path / "runs" / "c10-1000ep-s1" / "model") in log and "--keep-predictions ss-bnn" in log and "--seeds 3" in log
    r, out = _piece(tmp_path, "table1")                             # table1 before rho on this machine: refused
    assert r.returncode == 2 and "run the rho piece first" in r.stdout
    r, out = _piece(tmp_path, "table1", PRIORS="self-supervised")   # ... unless it scores no BNN prior: a part of Table 1
    assert r.returncode == 0 and _comes_back(out) == ["table1/prior_cifar10_200ep_self-supervised.json"]
    assert "--priors self-supervised --epochs 200" in (tmp_path / "log").read_text().splitlines()[-1]
    r, out = _piece(tmp_path, "rho"); assert _comes_back(out) == ["rho/rho_speed.json"]
    r, out = _piece(tmp_path, "table1")                             # reads rho's choice from the machine, not from the emptied $OUT
    assert r.returncode == 0 and "--one-by-one --amp" in (tmp_path / "log").read_text().splitlines()[-1]
    r, out = _piece(tmp_path, "sweep", POINTS="taup2 tau_p=2"); assert _comes_back(out) == ["sweep/taup2.json"]
    r, out = _piece(tmp_path, "long", RECIPE="best")
    assert "--best-of " + str(tmp_path / "keep" / "sweep") in (tmp_path / "log").read_text().splitlines()[-1]


def test_evaluation_parts_are_filed_whole_with_their_predictions_unpacked(tmp_path):
    "tools/file_eval_parts.sh: a part a device call returned is filed once, whole, its predictions unpacked (to be committed); a salvaged part too, until its seed's rerun replaces it; a part its next call continues is skipped; a clashing or incomplete part is refused."
    import shutil
    name, env = "eval_cifar10_ss-bnn-ss-map_s0_m2", dict(SEEDS="2", FIRST_SEED="0", LABEL_SEEDS="3", KEEP_PREDICTIONS="ss-bnn")
    def file(*folders, into="parts"):
        return subprocess.run(["bash", str(ROOT / "tools" / "file_eval_parts.sh"), *map(str, folders)], capture_output=True, text=True,
                              env={**os.environ, "INTO": str(tmp_path / into)})
    _, out = _piece(tmp_path, "evaluate", **env)                              # cut off by its call: partial.json only
    shutil.copytree(out, tmp_path / "cut")
    r = file(tmp_path / "cut")                                                # the next call continues it: not filed
    assert r.returncode == 0 and "cut off by its call" in r.stdout and "0 part(s) filed" in r.stdout and not (tmp_path / "parts").exists(), r.stdout
    salvaged = tmp_path / "cut" / "evaluate" / name
    (salvaged / "salvaged").touch()                                           # as `gpu_pieces.sh salvage` marks what it returns
    (salvaged / "partial.json").write_text(json.dumps({"records": [{"method": "ss-bnn", "labels": 50, "seed": k} for k in (0, 1)]}))
    r = file(tmp_path / "cut", into="salvaged")                               # a file that does not say how its runs were made
    assert r.returncode == 1 and "does not say how its runs were made" in r.stdout and list((tmp_path / "salvaged").iterdir()) == [], r.stdout
    (salvaged / "partial.json").write_text(json.dumps({"records": [{"method": "ss-bnn", "labels": 50, "seed": k} for k in (0, 1)],
                                                       "meta": {"config": {"keep_predictions": ["ss-bnn"]}}}))
    r = file(tmp_path / "cut", into="salvaged")
    assert r.returncode == 0 and "salvaged: its finished runs only" in r.stdout, r.stdout + r.stderr
    assert sorted(p.name for p in (tmp_path / "salvaged" / name).iterdir()) == ["partial.json", "predictions", "salvaged"]
    _, out = _piece(tmp_path, "evaluate", **env)                              # the next call finishes it
    kept = {"meta": {"config": {"keep_predictions": ["ss-bnn"]}}}
    r = file(out, into="salvaged")                                            # one of other settings does not replace it
    assert r.returncode == 1 and "is not the salvaged" in r.stdout and "other settings (keep_predictions)" in r.stdout, r.stdout
    (out / "evaluate" / name / "results.json").write_text(json.dumps({"records": [], **kept}))
    r = file(out, into="salvaged")                                            # a part without the salvaged runs does not either
    assert r.returncode == 1 and "lacks 2 of the salvaged part's runs" in r.stdout, r.stdout
    (out / "evaluate" / name / "results.json").write_text(json.dumps({"records": [{"method": "ss-bnn", "labels": 50, "seed": k} for k in (0, 1, 2)], **kept}))
    r = file(out, into="salvaged")                                            # the seed run again, whole, replaces it
    assert r.returncode == 0 and "replaces the salvaged part" in r.stdout and (tmp_path / "salvaged" / name / "results.json").exists(), r.stdout
    assert "the salvaged one skipped" in file(tmp_path / "cut", into="salvaged").stdout       # and a salvaged copy filed after it is not
    assert not (tmp_path / "salvaged" / name / "salvaged").exists()
    r = file(out)
    assert r.returncode == 0 and "1 part(s) filed" in r.stdout and "--merge" in r.stdout, r.stdout + r.stderr
    part = tmp_path / "parts" / name
    assert sorted(p.name for p in part.iterdir()) == ["evaluation.png", "predictions", "results.json", "tables.md"]
    made = tmp_path / "keep" / "evaluate" / name / "predictions"                # what the evaluation wrote on the machine
    assert sorted(p.name for p in (part / "predictions").iterdir()) == sorted(p.name for p in made.iterdir()) != []
    assert all((part / "predictions" / p.name).read_bytes() == p.read_bytes() for p in made.iterdir())
    assert "filed already" in file(out).stdout
    runs = [{"method": "ss-bnn", "labels": 50, "seed": k} for k in range(4)] + [{"method": "ss-map", "labels": 50, "seed": 0}]
    kept = {"records": runs, "meta": {"config": {"keep_predictions": ["ss-bnn"]}}}
    (out / "evaluate" / name / "results.json").write_text(json.dumps(kept))       # another session's result under the same name
    r = file(out)
    assert r.returncode == 1 and "holds another result" in r.stdout
    assert file(out, into="kept").returncode == 0                             # every kept run has its predictions; ss-map's are not kept
    kept["records"].append({"method": "ss-bnn", "labels": 500, "seed": 0})
    (out / "evaluate" / name / "results.json").write_text(json.dumps(kept))
    r = file(out, into="short")                                                # a kept run without its file: refused, nothing filed
    assert r.returncode == 1 and "kept predictions missing (ss-bnn_500_s0.npz)" in r.stdout and list((tmp_path / "short").iterdir()) == [], r.stdout
    max(out.glob("evaluate/*/predictions.tar.*")).unlink()                     # a tar part that did not come back
    r = file(out, into="other")
    assert r.returncode == 1 and "do not make a whole tar" in r.stdout and list((tmp_path / "other").iterdir()) == [], r.stdout
    script = str(ROOT / "tools" / "file_eval_parts.sh")
    assert subprocess.run(["bash", script], capture_output=True).returncode == 2
    r = subprocess.run(["bash", script, str(tmp_path / "nowhere")], capture_output=True, text=True)
    assert r.returncode == 2 and "is not a folder" in r.stdout
    r = subprocess.run(["bash", script, "cut"], capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "INTO": str(tmp_path / "rel")})
    assert r.returncode == 0 and "1 part(s) filed" in r.stdout, r.stdout                           # a relative path, from elsewhere
    r = subprocess.run(["bash", script, str(tmp_path / "parts")], capture_output=True, text=True)
    assert r.returncode == 1 and "no evaluation parts" in r.stdout
    ignored = lambda path: subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT).returncode == 0
    assert not ignored(f"bench/results/eval_cifar10_parts/{name}/predictions/ss-bnn_50_s0.npz")   # committed: a session's checkout is fresh
    assert ignored("bench/results/some_run/predictions/ss-bnn_50_s0.npz")     # other runs' kept predictions stay out of git


def test_identical_kept_predictions_are_filed_once(tmp_path):
    "tools/file_eval_parts.sh keeps byte-identical prediction files (every label seed's run with all labels) once; the others link to it."
    import tarfile
    part = tmp_path / "got" / "evaluate" / "eval_cifar10_ss-bnn-ss-map_s0_m0"; (part / "predictions").mkdir(parents=True)
    runs = [{"method": "ss-bnn", "labels": n, "seed": k} for n in (50, 40000) for k in (0, 1)]
    (part / "results.json").write_text(json.dumps({"records": runs, "meta": {"config": {"keep_predictions": ["ss-bnn"]}}}))
    for n, k, body in [(50, 0, b"a"), (50, 1, b"b"), (40000, 0, b"all"), (40000, 1, b"all")]:
        (part / "predictions" / f"ss-bnn_{n}_s{k}.npz").write_bytes(body)
    with tarfile.open(part / "predictions.tar.0", "w") as tf: tf.add(part / "predictions", "predictions")
    for f in (part / "predictions").iterdir(): f.unlink()
    (part / "predictions").rmdir()
    r = subprocess.run(["bash", str(ROOT / "tools" / "file_eval_parts.sh"), str(tmp_path / "got")], capture_output=True, text=True,
                       env={**os.environ, "INTO": str(tmp_path / "parts")})
    kept = tmp_path / "parts" / part.name / "predictions"
    assert r.returncode == 0 and "4 runs' kept predictions" in r.stdout, r.stdout + r.stderr
    assert [p.name for p in sorted(kept.iterdir()) if p.is_symlink()] == ["ss-bnn_40000_s1.npz"]
    assert os.readlink(kept / "ss-bnn_40000_s1.npz") == "ss-bnn_40000_s0.npz" and (kept / "ss-bnn_40000_s1.npz").read_bytes() == b"all"
    assert {(kept / f"ss-bnn_50_s{k}.npz").read_bytes() for k in (0, 1)} == {b"a", b"b"}


def test_active_parts_continue_on_the_machine_and_a_salvaged_one_is_filed(tmp_path):
    "The active piece works on the machine (KEEP): a call cut off is continued by the next; queued and cut off for good, or salvaged, its finished runs come back marked and are filed for active_cifar.py --merge."
    import time
    name = "active_cifar10_500ep_s0"
    def file(*folders):
        return subprocess.run(["bash", str(ROOT / "tools" / "file_eval_parts.sh"), *map(str, folders)], capture_output=True, text=True,
                              env={**os.environ, "ACTIVE_INTO": str(tmp_path / "parts")})
    _, out = _piece(tmp_path, "active")                                       # cut off by its call: partial.json only, unmarked
    assert _comes_back(out) == [f"active/{name}/partial.json"]
    assert "0 part(s) filed" in file(out).stdout and not (tmp_path / "parts").exists()
    _, out = _piece(tmp_path, "active")                                       # the next call finishes it
    assert _comes_back(out) == [f"active/{name}/{f}" for f in ("active.md", "active.png", "results.json")]
    r = file(out)
    assert r.returncode == 0 and "active_cifar.py --merge" in r.stdout and "ssbnn-evaluate" not in r.stdout, r.stdout + r.stderr
    assert sorted(p.name for p in (tmp_path / "parts" / name).iterdir()) == ["active.md", "active.png", "results.json"]
    (tmp_path / "c10.npz").write_bytes(b"archive")
    r, out = _piece(tmp_path, "queue", "SEED=1 METHODS=ensemble-bald active", STUB_EVAL_SLEEP="8", ARCHIVE=str(tmp_path / "c10.npz"))
    assert r.returncode == 0, r.stderr
    time.sleep(2)                                                             # its first run finished, and it runs on
    r, out = _piece(tmp_path, "salvage")
    part = "active/active_cifar10_500ep_s1_ensemble-bald"
    assert _comes_back(out) == [f"{part}/partial.json", f"{part}/salvaged"], r.stdout
    r = file(out)
    assert r.returncode == 0 and "salvaged: its finished runs only" in r.stdout, r.stdout + r.stderr
    assert "--methods ensemble-bald" in (tmp_path / "log").read_text().splitlines()[-1]
    for env, part in ((dict(METHODS="ensemble-bald", ENSEMBLE_BUDGET="200"), "active_cifar10_500ep_s0_ensemble-bald_to200"),   # named by what it runs
                      (dict(METHODS="ss-bnn-bald,ss-bnn-random,simclr-entropy"), name),                                      # the default, named as such
                      (dict(ENSEMBLE_BUDGET="200"), name)):                                                                   # no ensemble: no budget of its own
        _, out = _piece(tmp_path, "active", **env)
        assert _comes_back(out)[0].startswith(f"active/{part}/"), _comes_back(out)


def test_active_piece_reads_only_the_chained_encoders_its_methods_use(tmp_path):
    "The active piece names the encoders its methods use, those the `chain` pieces of its SEED wrote: the deep ensemble alone needs no chain (active_cifar.py refuses a model folder that does not exist)."
    def models(**env):
        _piece(tmp_path, "active", **env)
        args = (tmp_path / "log").read_text().splitlines()[-1].split()
        return {f: args[args.index(f) + 1] for f in ("--ssbnn-model", "--simclr-model") if f in args}
    assert models(METHODS="ensemble-bald") == {}
    for objective in ("ss-bnn", "simclr"): _piece(tmp_path, "chain", OBJECTIVE=objective, SEED="1", EPOCHS="500")
    ss = models(SEED="1", METHODS="ss-bnn-bald,ss-bnn-random")                # an SS-BNN session's chain: no SimCLR needed
    assert list(ss) == ["--ssbnn-model"] and Path(ss["--ssbnn-model"]).parent == tmp_path / "runs" / "c10-500ep-s1"
    both = models(SEED="1")
    assert Path(both["--simclr-model"]).parent == tmp_path / "runs" / "c10-simclr-500ep-s1" and both["--ssbnn-model"] == ss["--ssbnn-model"]
    assert models(METHODS="simclr-entropy,ensemble-bald").keys() == {"--simclr-model"}
    _, out = _piece(tmp_path, "active", SEED="1", METHODS="ss-bnn-bald,ss-bnn-random")
    assert _comes_back(out)[0].split("/")[1] == "active_cifar10_500ep_s1_ss-bnn-bald_ss-bnn-random"   # plain characters, which come back


def test_evaluate_piece_names_models_only_for_methods_that_use_them(tmp_path):
    "The evaluate piece passes SEEDS' chained models only where METHODS use a pretrained SS-BNN (evaluation.POOLED): SS-BNN* alone, which pretrains its own, needs no chain (ssbnn-evaluate refuses a model folder that does not exist)."
    import re
    from ssbnn.experiments.evaluation import POOLED
    pooled = re.search(r"=~ ,\(([a-z|-]+)\),", (ROOT / "bench" / "gpu_pieces.sh").read_text()).group(1).split("|")
    assert sorted(pooled) == sorted(POOLED)                                  # the piece's list is the package's
    def models(**env):
        _, out = _piece(tmp_path, "evaluate", **env)
        args = (tmp_path / "log").read_text().splitlines()[-1].split()
        return [args[i + 1] for i, a in enumerate(args) if a == "--model"], _comes_back(out)[0].split("/")[1]
    assert models(METHODS="ss-bnn*", STAR_EPOCHS="150", BUDGETS="50") == ([], "eval_cifar10_ss-bnnstar_s0_b50")   # its budgets name it
    _piece(tmp_path, "chain", SEED="1", EPOCHS="500")
    used, part = models(SEEDS="1", EPOCHS="500", METHODS="ss-bnn,ss-bnn*", STAR_EPOCHS="150")
    assert [Path(m).parent for m in used] == [tmp_path / "runs" / "c10-500ep-s1"] and part == "eval_cifar10_ss-bnn-ss-bnnstar_s1_m1"
    (tmp_path / "c10.npz").write_bytes(b"archive")                            # the runbook's SS-BNN* queue, its * kept
    assert _piece(tmp_path, "queue", "METHODS=ss-bnn* STAR_EPOCHS=150 BUDGETS=50 evaluate", ARCHIVE=str(tmp_path / "c10.npz"))[0].returncode == 0
    r, out = _piece(tmp_path, "wait", "60")
    last = (tmp_path / "log").read_text().splitlines()[-1]
    assert "--methods ss-bnn* --budgets 50" in last and "--epochs 150" in last and "--model" not in last, r.stdout


PIECES = ("speed", "modes", "optim", "sweep", "long", "peer", "rho", "table1", "ddp", "chain", "evaluate", "active", "laplace")

def runbook_plans() -> list:
    "Every device plan bench/results/README.md gives, each a list of (settings, piece) in the order a session runs them; K is 1."
    import re, shlex
    plans = []
    for span in re.findall(r"`([^`]*)`", (ROOT / "bench" / "results" / "README.md").read_text()):
        span = " ".join(span.split())
        if span.startswith('run(command="'): span = span.removeprefix('run(command="').split('"')[0].replace("\\'", "'")
        if "gpu_pieces.sh" not in span and not span.startswith("queue "): continue
        words = shlex.split(span)
        at = words.index("bench/gpu_pieces.sh") + 1 if "bench/gpu_pieces.sh" in words else 0
        if at >= len(words): continue                                          # the script named, not a call of it
        env, piece, items = words[:max(at - 2, 0)], words[at], words[at + 1:]
        steps = [shlex.split(i) for i in items] if piece == "queue" else [env + [piece]]
        if any(not st or st[-1] not in PIECES or not all(re.fullmatch(r"[A-Z_]+=.*", w) for w in st[:-1]) for st in steps): continue   # '...'
        plans.append([(dict(w.split("=", 1) for w in st[:-1]), st[-1]) for st in steps])
    return [[({k: "1" if v == "K" else v for k, v in env.items()}, p) for env, p in plan] for plan in plans]


def test_runbook_queues_are_one_line_each():
    "A queue command of the runbook is one line, so that it is copied whole: a line break inside a quoted item would reach the device."
    import re
    spans = [s for s in re.findall(r"`([^`]*)`", (ROOT / "bench" / "results" / "README.md").read_text()) if s.startswith("queue '")]
    assert spans and not [s for s in spans if "\n" in s], [s for s in spans if "\n" in s]


def test_every_runbook_plan_runs_through_the_stand_in(tmp_path):
    "Each plan the runbook gives runs on a fresh stand-in machine, its pieces in order, with every model a piece names made by an earlier one (a plan that names a model no piece of its session made is refused on the device)."
    plans = runbook_plans()
    assert len(plans) >= 20 and {p for plan in plans for _, p in plan} >= {"chain", "evaluate", "active", "table1", "rho", "sweep", "long"}
    found = [s for plan in plans for s in plan if s[1] == "active" and s[0].get("METHODS", "").startswith("ss-bnn-")]
    assert found and {env.get("SEED") for env, _ in found} <= {"1", "2"} and all(   # the plan's (K as 1), and the sessions' that ran it
        {k: v for k, v in env.items() if k != "SEED"} == {"EPOCHS": "500", "METHODS": "ss-bnn-bald,ss-bnn-random"} for env, _ in found), found
    (tmp_path / "c10.npz").write_bytes(b"archive")
    for i, plan in enumerate(plans):
        machine = tmp_path / f"m{i}"; machine.mkdir()
        for env, piece in plan:
            r, _ = _piece(machine, piece, **env, STUB_MODELS="1", ARCHIVE=str(tmp_path / "c10.npz"), BEFORE=str(ROOT))
            assert r.returncode == 0, (plan, piece, r.stdout[-1500:], r.stderr[-1500:])


def test_gpu_pieces_return_new_compile_artifacts_once(tmp_path):
    "Artifacts a piece's processes compiled come back once, beside its records; carried ones are used, not returned."
    carried = tmp_path / "carried" / "H100"; carried.mkdir(parents=True); (carried / "pretrain_main-old.bin").write_text("old")
    r, out = _piece(tmp_path, "rho", STUB_ARTIFACT="rho_speed-new.bin")
    assert r.returncode == 0 and _comes_back(out) == ["rho/compile-cache_H100_rho_speed-new.bin", "rho/rho_speed.json"], r.stdout + r.stderr
    assert (tmp_path / "keep" / "compile_cache" / "H100" / "pretrain_main-old.bin").read_text() == "old"     # the carried ones, for the runner
    assert "bench/compile_cache.py bench/rho_speed.py --bnn-samples 512" in (tmp_path / "log").read_text()
    r, out = _piece(tmp_path, "rho", STUB_ARTIFACT="rho_speed-new.bin", STUB_BIG_ARTIFACT="rho_speed-big.bin")
    assert _comes_back(out) == ["rho/rho_speed.json"] and "rho_speed-big.bin is over the 16 MiB" in r.stdout, r.stdout   # returned already; too big
    r, out = _piece(tmp_path, "laplace", STUB_ARTIFACT="x.bin")                # a piece that compiles nothing runs without the runner
    assert _comes_back(out) == ["laplace/laplace_predict.json"]
    (tmp_path / "got" / "rho").mkdir(parents=True); (tmp_path / "got" / "rho" / "compile-cache_H100_rho_speed-new.bin").write_text("compiled")
    kept = subprocess.run(["bash", str(ROOT / "tools" / "keep_compile_cache.sh"), str(tmp_path / "got")], capture_output=True, text=True,
                          env={**os.environ, "INTO": str(tmp_path / "carried")})
    assert kept.returncode == 0 and (carried / "rho_speed-new.bin").read_text() == "compiled", kept.stdout + kept.stderr
    (tmp_path / "got" / "rho" / "compile-cache_H100_pretrain_main-new.bin").write_text("the same graphs, another program")
    kept = subprocess.run(["bash", str(ROOT / "tools" / "keep_compile_cache.sh"), str(tmp_path / "got")], capture_output=True, text=True,
                          env={**os.environ, "INTO": str(tmp_path / "carried")})
    assert "H100/pretrain_main-new.bin: the same graphs are kept already" in kept.stdout and not (carried / "pretrain_main-new.bin").exists()
    assert subprocess.run(["bash", str(ROOT / "tools" / "keep_compile_cache.sh")], capture_output=True, text=True).returncode == 2


def test_compile_cache_warms_a_fresh_process(tmp_path):
    "bench/compile_cache.py: a second process, with an empty Inductor cache, finds the first one's compiled graph in the saved artifacts."
    runner = str(ROOT / "bench" / "compile_cache.py")
    code = ("import sys, torch; from torch._dynamo.utils import counters; f = torch.compile(lambda x: (x * 2).sin() + x.sum()); "
            "f(torch.ones(5)); c = counters['inductor']; print('hits', c['fxgraph_cache_hit'], 'misses', c['fxgraph_cache_miss'], sys.argv[1:])")
    def run(*args, inductor="i1", **env):
        return subprocess.run([sys.executable, runner, *args], capture_output=True, text=True, cwd=tmp_path,
                              env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / inductor), **env})
    cold = run("-c", code, "--flag", COMPILE_CACHE=str(tmp_path / "cc"))
    assert cold.returncode == 0 and "hits 0 misses 1 ['--flag']" in cold.stdout, cold.stdout + cold.stderr
    saved = list((tmp_path / "cc" / "cpu").glob("c-*.bin"))
    assert len(saved) == 1 and "saved" in cold.stderr, cold.stderr
    (tmp_path / "cc" / "cpu" / "junk.bin").write_bytes(b"not a cache")          # an unreadable file costs a compilation, never the run
    (tmp_path / "same.py").write_text(code)                                        # another program (same-*.bin), the same graph
    warm = run("same.py", inductor="i2", COMPILE_CACHE=str(tmp_path / "cc"))       # a fresh machine's empty Inductor cache
    assert warm.returncode == 0 and "hits 1 misses 0" in warm.stdout and "1 artifact file(s) loaded" in warm.stderr, warm.stdout + warm.stderr
    assert "skipped" in warm.stderr and "junk.bin" in warm.stderr, warm.stderr
    assert sorted((tmp_path / "cc" / "cpu").glob("*-*.bin")) == saved              # the same graphs, by any program: no second file
    (tmp_path / "slow.py").write_text("import time, torch; torch.compile(lambda x: x.cos() * 3)(torch.ones(4)); print('ready', flush=True); time.sleep(120)")
    slow = subprocess.Popen([sys.executable, runner, "slow.py"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "i1"), "COMPILE_CACHE": str(tmp_path / "cc")})
    assert slow.stdout.readline().strip() == "ready"
    slow.terminate()                                                               # as `timeout` ends a piece at its limit
    import time; time.sleep(0.3); slow.terminate()                                 # a second one (salvage) leaves the save alone
    err = slow.communicate(timeout=120)[1]
    assert slow.returncode == 128 + 15 and len(list((tmp_path / "cc" / "cpu").glob("slow-*.bin"))) == 1, err   # what it compiled is kept
    (tmp_path / "script.py").write_text("import sys; print(sys.argv); raise SystemExit(3)")
    script = run("script.py", "--x", "1")                                            # no COMPILE_CACHE: only runs it, as python would
    assert script.returncode == 3 and script.stdout.strip() == "['script.py', '--x', '1']" and not script.stderr, script.stderr
    assert run().returncode == 2 and run("-c").returncode == 2


def test_laplace_predict_bench_agrees_with_laplace_torch_and_refuses_bad_sizes(tmp_path, capsys):
    script = _in_process("laplace_predict.py", capsys)
    ok = script("--dim", "8", "--classes", "3", "--train", "30", "--inputs", "1500", "--device", "cpu", "--out", tmp_path / "r.json")
    assert ok.returncode == 0, ok.stderr
    r = json.loads((tmp_path / "r.json").read_text())
    assert (r["params"], r["inputs"], r["device"]) == (27, 1500, "cpu") and r["max_abs_diff"] < 1e-5 and r["ssbnn_s"] > 0
    assert (r["ggn_scale"], r["dtype"]) == (1., "float32") and r["scale_max_abs_diff"] < 1e-5 and r["scale_ssbnn_s"] > 0   # the two factorisations agree
    tiny = script("--dim", "8", "--classes", "3", "--train", "30", "--inputs", "10", "--ggn-scale", "1e-16", "--device", "cpu", "--out", tmp_path / "t.json")
    t = json.loads((tmp_path / "t.json").read_text())
    assert tiny.returncode == 0 and t["ggn_scale"] == 1e-16 and t["scale_max_abs_diff"] < 1e-5 and t["max_abs_diff"] < 1e-5, tiny.stderr
    for argv, message in ((["--classes", "1"], "argument --classes: must be a whole number ≥ 2"), (["--ggn-scale", "2"], "argument --ggn-scale: must be a finite number > 0 and ≤ 1")):
        bad = script(*argv)
        assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and message in bad.stderr, bad.stderr


def test_laplace_factored_bench_agrees_with_laplace_torch(tmp_path, capsys):
    "bench/laplace_factored.py: ssbnn's closed forms (Kronecker factors, diagonals) give laplace-torch's predictive and search NLLs."
    script = _in_process("laplace_factored.py", capsys)
    for hessian in ("kron", "diag"):
        ok = script("--dim", "8", "--classes", "12", "--train", "60", "--inputs", "40", "--val", "30", "--hessian", hessian, "--device", "cpu",
                    "--out", tmp_path / f"{hessian}.json")
        r = json.loads((tmp_path / f"{hessian}.json").read_text())
        assert ok.returncode == 0 and (r["hessian"], r["params"], r["candidates"]) == (hessian, 108, 41), ok.stderr
        assert r["max_abs_diff"] < 1e-5 and r["search_nll_max_abs_diff"] < 1e-5 and r["pick"] == r["pick_exhaustive"], r


def test_gpu_pieces_queue_outlives_its_call_and_each_wait_returns_one_piece(tmp_path):
    import re, time
    r, out = _piece(tmp_path, "wait")
    assert r.returncode == 2 and "no queue on this machine" in r.stdout
    assert _piece(tmp_path, "queue")[0].returncode == 2                       # nothing named
    r, out = _piece(tmp_path, "queue", "SEED=1 EPOCHS=500\n     chain")       # a plan copied with a line break inside an item
    assert r.returncode == 2 and "spans lines" in r.stdout and not (tmp_path / "keep" / "queue").exists(), r.stdout
    r, out = _piece(tmp_path, "queue", "laplace", "SEED=1 EPOCHS=500")      # an item that names no piece: nothing starts
    assert r.returncode == 2 and "'SEED=1 EPOCHS=500' does not end in a piece" in r.stdout and not (tmp_path / "keep" / "queue").exists()
    (tmp_path / "c10.npz").write_bytes(b"archive")
    env = dict(STUB_SLEEP="4", ARCHIVE=str(tmp_path / "c10.npz"))
    t = time.monotonic()
    r, out = _piece(tmp_path, "queue", "SEED=3 EPOCHS=20 chain", "SEEDS='3' EPOCHS=20 FIRST_SEED=0 evaluate", "laplace", **env)
    assert r.returncode == 0 and "queued 3 pieces" in r.stdout and time.monotonic() - t < 4, r.stdout + r.stderr   # back before the chain ends
    r, out = _piece(tmp_path, "queue", "laplace")
    assert r.returncode == 2 and "one is running already" in r.stdout
    r, out = _piece(tmp_path, "wait")                                         # the chain, pretraining on after its call was killed
    assert _comes_back(out) == ["chain/history_c10-20ep-s3.json", "chain/results_c10-20ep-s3.json"], r.stdout
    assert re.search(r"[1-3] of 3 pieces done, 1 returned", r.stdout) and "1: exit 0" in r.stdout and not r.stderr, r.stdout + r.stderr
    chain = [l for l in (tmp_path / "log").read_text().splitlines() if "pretrain_main" in l][-1]
    assert "--max-minutes 27" in chain and "--seed 3" in chain and "--epochs 20" in chain    # queued: not cut at 8 minutes
    assert f"--archive {tmp_path / 'keep' / 'queue' / 'c10.npz'} " in chain                  # its copy: later calls may drop .devdata
    r, out = _piece(tmp_path, "wait")
    assert _comes_back(out) == ["evaluate/eval_cifar10_ss-bnn-ss-map_s0_m3/partial.json", "evaluate/eval_cifar10_ss-bnn-ss-map_s0_m3/salvaged"], r.stdout
    assert "--model " + str(tmp_path / "runs" / "c10-20ep-s3" / "model") in (tmp_path / "log").read_text()
    r, out = _piece(tmp_path, "wait")
    assert _comes_back(out) == ["laplace/laplace_predict.json"] and "3 of 3 pieces done, 3 returned" in r.stdout
    r, out = _piece(tmp_path, "wait")                                         # all returned: at once, nothing new
    assert _comes_back(out) == [] and "queue finished" not in r.stdout.split("--- queue")[0]
    r, out = _piece(tmp_path, "queue", "laplace", **env)                       # the finished queue gives way to a new one
    assert r.returncode == 0, r.stderr
    r, out = _piece(tmp_path, "wait"); assert _comes_back(out) == ["laplace/laplace_predict.json"]


def test_gpu_pieces_report_the_status_of_a_failed_command(tmp_path):
    "A piece whose Python fails exits with that status, called alone and queued, where it reported its last line's 0."
    r, out = _piece(tmp_path, "laplace", STUB_FAIL="laplace_predict.py")
    assert r.returncode == 1, r.stdout + r.stderr
    r, out = _piece(tmp_path, "chain", STUB_FAIL="pretrain_main")          # its files are still copied where they exist
    assert r.returncode == 1
    (tmp_path / "c10.npz").write_bytes(b"archive")
    r, out = _piece(tmp_path, "queue", "laplace", "rho", ARCHIVE=str(tmp_path / "c10.npz"), STUB_FAIL="laplace_predict.py")
    assert r.returncode == 0, r.stderr
    for _ in range(2): r, out = _piece(tmp_path, "wait")
    assert "1: exit 1 after" in r.stdout and "2: exit 0 after" in r.stdout, r.stdout
    assert _piece(tmp_path, "peer", PEER="--lr=0.3 --joint-bn")[0].returncode == 0   # the record's name: only what the device returns
    assert (tmp_path / "log").read_text().splitlines()[-1].endswith("peer_simclr_cifar10_50ep_lr0.3jointbn.json")


def test_gpu_pieces_commands_are_ones_their_scripts_accept(tmp_path):
    "Every piece's Python commands, as the pieces write them with their settings, through the real argument parsers."
    import os, runpy
    (tmp_path / "check.py").write_text(CHECK)
    (tmp_path / "c10.npz").write_bytes(b"archive")
    env = dict(STUB_CHECK=str(tmp_path / "kept"), ARCHIVE=str(tmp_path / "c10.npz"))
    runs = [("speed", dict(BEFORE=str(ROOT))), ("modes", {}), ("optim", {}), ("sweep", {}), ("long", {}), ("long", dict(RECIPE="--tau-p 1 --lars-trust 0.01")), ("long", dict(RECIPE="--ntxent-tau 0.2")), ("long", dict(POINT="simclr-sgd optimizer=sgd,lr=0.47,weight_decay=5e-4,ntxent_tau=0.5")), ("rho", {}),
            ("table1", {}), ("table1", dict(PRIORS="bnn-gaussian,bnn-laplace")), ("ddp", {}), ("chain", {}), ("chain", dict(OBJECTIVE="simclr", EPOCHS="500", SEED="1")),
            ("evaluate", dict(SEEDS="0 1", METHODS="ss-bnn,ss-bnn-ensemble,ss-bnn*", STAR_EPOCHS="150", LABEL_SEEDS="3", KEEP_PREDICTIONS="ss-bnn")),
            ("evaluate", dict(SEEDS="", METHODS="map,ll-laplace,swag,deep-ensemble", BUDGETS="50")), ("active", {}), ("active", dict(METHODS="ensemble-bald", ENSEMBLE_BUDGET="200")),
            ("active", dict(SEED="1", METHODS="ss-bnn-bald,ss-bnn-random")), ("laplace", {}),
            ("peer", {}), ("peer", dict(EPOCHS="200", PEER="--joint-bn --knn-every 20"))]
    for piece, settings in runs:
        r, _ = _piece(tmp_path, piece, **env, **settings)
        assert r.returncode == 0, (piece, r.stdout[-2000:], r.stderr[-2000:])
    checked = subprocess.run([sys.executable, str(tmp_path / "check.py"), str(tmp_path / "kept")], capture_output=True, text=True)
    assert checked.returncode == 0 and "REFUSED" not in checked.stdout, (checked.stdout[-3000:], checked.stderr[-3000:])
    commands = [l for l in (tmp_path / "log").read_text().splitlines() if not l.startswith(("-m pip", "-c import torch", "-c import json"))]
    scripts = {"pretrain_cifar.py", "compare_curves.py", "rho_speed.py", "prior_cifar.py", "ddp_overhead.py", "pretrain_main", "evaluate_main",
               "active_cifar.py", "laplace_predict.py", "peer_simclr.py"}
    assert all(any(s in c for c in commands) for s in scripts), commands          # each script was reached
    runs_of_ours = [c for c in commands if c.startswith(("bench/", "-c from ssbnn.cli"))]     # every one was parsed
    assert checked.stdout.count("\nparsed: ") + checked.stdout.startswith("parsed: ") == len(runs_of_ours) > 20, checked.stdout[-3000:]
    bench = runpy.run_path(str(ROOT / "bench" / "pretrain_cifar.py"))                # and the sweep's default points are ones it takes
    text = (ROOT / "bench" / "gpu_pieces.sh").read_text()
    points = text.split('POINTS:-')[1].split('}')[0].split()
    for name, setting in zip(points[::2], points[1::2]): bench["parse_point"](setting, bench["known_settings"]())
    assert points and len(points) % 2 == 0 and os.path.exists(tmp_path / "keep" / "rho" / "rho_speed.json")
    peer = [c for c in commands if "peer_simclr.py" in c]                            # the simclr-sgd point's warm-up: a tenth, at most 10
    assert "--epochs 50 --warmup-epochs 5 --decay weights --knn-every 5 --out" in peer[0] and peer[0].endswith("/peer/peer_simclr_cifar10_50ep.json")
    assert "--epochs 200 --warmup-epochs 10 --decay weights --knn-every 5 --joint-bn --knn-every 20" in peer[1] and peer[1].endswith("_200ep_jointbnknnevery20.json")


def test_a_salvaged_part_of_no_pretrained_model_continues_in_a_later_session(tmp_path):
    "tools/carry_salvaged.py carries the salvaged baseline and deep-ensemble parts (not those resting on models or kept predictions); the piece of that name continues them, queued too; the result, or a part salvaged further on, replaces the filed one."
    import re, shutil
    run = lambda m, n, k: {"method": m, "labels": n, "seed": k}
    base, active = "eval_cifar10_map-ll-laplace_s0_b50-500", "active_cifar10_500ep_s0_ensemble-bald"
    data = {"data": {"train": "a", "val": "b", "test": "c"}}
    parts = {base: {"inputs": {**data, "map": {}}, "records": [run("map", 50, 0)], "meta": {"config": {"keep_predictions": []}}},
             active: {"inputs": {**data, "methods": {"ensemble-bald": {"weights": None}}}, "records": [run("ensemble-bald", 50, 0)], "meta": {"config": {}}},
             "eval_cifar10_ss-bnn-ss-map_s0_m0": {"inputs": {**data, "models": ["f00"]}, "records": [run("ss-bnn", 50, 0)], "meta": {"config": {}}},
             "eval_cifar10_map_s0_b50": {"inputs": data, "records": [run("map", 50, 0)], "meta": {"config": {"keep_predictions": ["map"]}}},
             "active_cifar10_500ep_s0_ss-bnn-bald": {"inputs": {**data, "methods": {"ss-bnn-bald": {"weights": "e3b"}}}, "records": [], "meta": {}},
             "eval_cifar10_old_s0": {"records": []}, "eval_cifar10_unmarked_s0": {"inputs": data, "records": []}}
    for name, saved in parts.items():
        (tmp_path / "filed" / name).mkdir(parents=True); (tmp_path / "filed" / name / "partial.json").write_text(json.dumps(saved))
        if name != "eval_cifar10_unmarked_s0": (tmp_path / "filed" / name / "salvaged").touch()
    shutil.copytree(tmp_path / "filed" / base, tmp_path / "held" / base)       # the runbook holds the parts out of the tree: one copy carried
    shutil.copytree(tmp_path / "filed" / base, tmp_path / "filed" / "eval_cifar10_done_s0")    # salvaged, but filed finished elsewhere
    (tmp_path / "held" / "eval_cifar10_done_s0").mkdir(); (tmp_path / "held" / "eval_cifar10_done_s0" / "results.json").write_text("{}")
    carry = lambda *a: subprocess.run([sys.executable, str(ROOT / "tools" / "carry_salvaged.py"), *map(str, a)], capture_output=True, text=True)
    (tmp_path / "continue" / "evaluate" / "stale").mkdir(parents=True)
    r = carry(tmp_path / "filed", tmp_path / "held", "--into", tmp_path / "continue")
    assert r.returncode == 0, r.stderr
    assert sorted(str(p.relative_to(tmp_path / "continue")) for p in (tmp_path / "continue").rglob("*.json")) == [
        f"active/{active}/partial.json", f"evaluate/{base}/partial.json"] and not (tmp_path / "continue" / "evaluate" / "stale").exists()
    prog = re.search(r'^PROG = "(.+)"$', (ROOT / "bench" / "active_cifar.py").read_text(), re.M).group(1)
    for kind, name, program in (("evaluate", base, "ssbnn-evaluate"), ("active", active, prog)):   # folders that program continues
        assert f"written by ssbnn's {program};" in (tmp_path / "continue" / kind / name / ".ssbnn-run").read_text()
    said = r.stdout.splitlines()
    assert len(said) == 7 and sum("carried to" in l for l in said) == 2, r.stdout               # the held copy of the same part: once
    for part, why in (("done_s0", "the part is filed finished"), ("s0_m0", "rests on pretrained models"), ("map_s0_b50", "kept predictions"), ("ss-bnn-bald", "rests on pretrained encoders"),
                      ("old_s0", "does not say what its runs rest on")):
        assert any(part + ":" in l and why in l for l in said), (part, r.stdout)
    bad = carry(tmp_path / "nowhere")
    assert bad.returncode == 2 and bad.stderr.startswith("carry_salvaged.py: no folder") and len(bad.stderr.splitlines()) == 1, bad.stderr
    bad = carry(tmp_path / "filed", "--into", tmp_path)                        # a folder of other things is not emptied
    assert bad.returncode == 2 and "which this script did not write" in bad.stderr and len(bad.stderr.splitlines()) == 1 and (tmp_path / "filed").is_dir()
    env = dict(CONTINUE=str(tmp_path / "continue"), SEEDS="", METHODS="map,ll-laplace", BUDGETS="50,500")
    r, out = _piece(tmp_path, "evaluate", **env)                               # the stub finishes what it finds begun
    assert f"continuing {base}" in r.stdout and _comes_back(out) == [f"evaluate/{base}/{f}" for f in ("evaluation.png", "results.json", "tables.md")], r.stdout
    assert (tmp_path / "keep" / "evaluate" / base / ".ssbnn-run").is_file()    # the claimed folder, copied whole
    r, out = _piece(tmp_path, "active", CONTINUE=str(tmp_path / "continue"), METHODS="ensemble-bald")
    assert f"continuing {active}" in r.stdout and f"active/{active}/results.json" in _comes_back(out), r.stdout
    r, out = _piece(tmp_path, "evaluate", **{**env, "BUDGETS": "50"})          # another part: nothing to continue, begun afresh
    assert "continuing" not in r.stdout and _comes_back(out) == ["evaluate/eval_cifar10_map-ll-laplace_s0_b50/partial.json"]
    shutil.rmtree(tmp_path / "keep")                                           # a fresh machine, queued: the queue's own copy is read
    (tmp_path / "c10.npz").write_bytes(b"archive")
    r, _ = _piece(tmp_path, "queue", "EPOCHS=20 chain", "SEEDS= METHODS=map,ll-laplace BUDGETS=50,500 evaluate",
                  CONTINUE=str(tmp_path / "continue"), ARCHIVE=str(tmp_path / "c10.npz"), STUB_SLEEP="3")
    assert r.returncode == 0, r.stdout + r.stderr
    shutil.rmtree(tmp_path / "continue")                                       # a later call that carries no .devdata
    said = [_piece(tmp_path, "wait") for _ in range(2)]                       # the log comes with the wait that finds it
    assert f"continuing {base}" in said[0][0].stdout + said[1][0].stdout and f"evaluate/{base}/results.json" in _comes_back(said[1][1]), said
    def file(folder):
        return subprocess.run(["bash", str(ROOT / "tools" / "file_eval_parts.sh"), str(folder)], capture_output=True, text=True,
                              env={**os.environ, "INTO": str(tmp_path / "parts")})
    further = tmp_path / "further" / "evaluate" / base
    further.mkdir(parents=True); (further / "salvaged").touch()
    shutil.copytree(tmp_path / "filed" / base, tmp_path / "parts" / base)
    (further / "partial.json").write_text(json.dumps({**parts[base], "records": [run("map", 50, 0), run("ll-laplace", 50, 0)]}))
    r = file(tmp_path / "further")                                             # continued, and salvaged again further on: replaces it
    assert r.returncode == 0 and "replaces the salvaged part" in r.stdout, r.stdout
    assert len(json.loads((tmp_path / "parts" / base / "partial.json").read_text())["records"]) == 2
    shutil.copytree(tmp_path / "filed" / base, tmp_path / "again" / "evaluate" / base)
    r = file(tmp_path / "again")                                               # the shorter salvaged copy, filed again: skipped
    assert f"{base}: a salvaged part holding all of its runs is filed already" in r.stdout, r.stdout
    (further / "partial.json").write_text(json.dumps({**parts[base], "records": [run("swag", 50, 0)]}))
    r = file(tmp_path / "further")                                             # one that lacks its runs: refused
    assert r.returncode == 1 and "lacks 2 of the salvaged part's runs" in r.stdout, r.stdout
    (further / "partial.json").write_text(json.dumps({**parts[base], "inputs": {**data, "map": {"epochs": 1}}, "records": [run("map", 50, 0)] * 3}))
    r = file(tmp_path / "further")                                             # a part of that name made otherwise: neither skipped nor filed
    assert r.returncode == 1 and "is not the salvaged" in r.stdout and "other inputs (map)" in r.stdout, r.stdout


def test_gpu_pieces_salvage_ends_the_running_piece_and_returns_what_it_finished(tmp_path):
    "salvage stops the queue, ends its running piece (SIGTERM), and returns what it finished, marked salvaged, with what it compiled; a piece that does not end in time gives its finished runs alone."
    import time
    (tmp_path / "c10.npz").write_bytes(b"archive")
    env = dict(STUB_EVAL_SLEEP="60", ARCHIVE=str(tmp_path / "c10.npz"), STUB_ARTIFACT="evaluate_main-new.bin")
    r, out = _piece(tmp_path, "salvage")
    assert r.returncode == 2 and "no queue on this machine" in r.stdout
    r, out = _piece(tmp_path, "queue", "SEEDS=0 LABEL_SEEDS=3 KEEP_PREDICTIONS=ss-bnn evaluate", "laplace", **env)
    assert r.returncode == 0
    time.sleep(2)                                                             # the evaluation has runs, and is still running
    t = time.monotonic()
    r, out = _piece(tmp_path, "salvage")
    name = "evaluate/eval_cifar10_ss-bnn-ss-map_s0_m0"
    back = _comes_back(out)                                                   # its part, 4 tar parts, the mark, and what it compiled
    assert back[0] == "evaluate/compile-cache_H100_evaluate_main-new.bin" and back[1] == f"{name}/partial.json" and len(back) == 7, (back, r.stdout)
    assert back[-1] == f"{name}/salvaged" and time.monotonic() - t < 30, r.stdout       # ended, not waited out
    assert "salvage of 1: SEEDS=0 LABEL_SEEDS=3 KEEP_PREDICTIONS=ss-bnn evaluate (ended by SIGTERM" in r.stdout, r.stdout
    filed = subprocess.run(["bash", str(ROOT / "tools" / "file_eval_parts.sh"), str(out)], capture_output=True, text=True,
                           env={**os.environ, "INTO": str(tmp_path / "parts")})
    assert filed.returncode == 0 and "salvaged: its finished runs only" in filed.stdout, filed.stdout + filed.stderr
    for _ in range(300):                                                      # the queue starts nothing after it
        if (tmp_path / "keep" / "queue" / "finished").exists(): break
        time.sleep(0.2)
    r, out = _piece(tmp_path, "wait")
    assert "1 of 2 pieces done, 1 returned" in r.stdout and _comes_back(out) == [], r.stdout
    assert "=== stopped by salvage before: laplace" in (tmp_path / "keep" / "queue" / "log").read_text()
    assert "laplace_predict.py" not in (tmp_path / "log").read_text()
    r, out = _piece(tmp_path, "queue", "SEEDS=1 LABEL_SEEDS=3 KEEP_PREDICTIONS=ss-bnn evaluate", **env)   # another part, begun afresh
    time.sleep(2)
    r, out = _piece(tmp_path, "salvage", SALVAGE_WAIT="0")                   # not ended in time: its finished runs, as they are
    assert "did not end within 0 s" in r.stdout and len(_comes_back(out)) == 6, r.stdout
    for _ in range(600):                                                      # the piece not waited for ends, and its queue with it
        if (tmp_path / "keep" / "queue" / "finished").exists(): break         # (a queue refuses to start while one runs)
        time.sleep(0.1)
    r, out = _piece(tmp_path, "queue", "laplace", "SEEDS=2 LABEL_SEEDS=3 evaluate", "rho", **env)   # the first ends before the salvage
    assert r.returncode == 0, r.stdout
    log = tmp_path / "keep" / "queue" / "log"
    for _ in range(600):                                                      # this queue's second piece begun (not the last queue's status)
        if log.exists() and "=== 2: SEEDS=2" in log.read_text(): break
        time.sleep(0.1)
    else: raise AssertionError(f"the queue's second piece did not begin within 60 s: {log.read_text() if log.exists() else 'no log'}")
    time.sleep(1)
    r, out = _piece(tmp_path, "salvage")                                      # comes back first, as a wait would return it
    assert r.returncode == 0 and _comes_back(out) == ["laplace/laplace_predict.json"] and "1 of 3 pieces done, 1 returned" in r.stdout, r.stdout
    assert "call salvage again for the piece still running, 2: SEEDS=2" in r.stdout, r.stdout
    r, out = _piece(tmp_path, "salvage")                                      # then the running one, ended
    assert "salvage of 2: SEEDS=2 LABEL_SEEDS=3 evaluate (ended by SIGTERM" in r.stdout and "2 of 3 pieces done, 2 returned" in r.stdout, r.stdout
    assert _comes_back(out)[-1] == "evaluate/eval_cifar10_ss-bnn-ss-map_s2_m2/salvaged" and "rho_speed.py" not in (tmp_path / "log").read_text()
    r, out = _piece(tmp_path, "salvage")                                      # nothing left
    assert r.returncode == 2 and "no queued piece is running" in r.stdout, r.stdout


def _peer():
    import runpy
    return runpy.run_path(str(ROOT / "bench" / "peer_simclr.py"))


def test_peer_simclr_parts_equal_their_references():
    "The independent loop's loss, network, head and schedule against solo-learn's loss, ssbnn's network and torch's scheduler."
    import math, runpy, torch
    from ssbnn.models import CIFARResNet18
    from ssbnn.train import warmup_cosine
    peer = _peer()
    solo = runpy.run_path(str(ROOT / "tests" / "peers" / "load.py"))["solo_learn"]()
    ua, ub = (torch.randn(64, 128, generator=torch.Generator().manual_seed(i), requires_grad=True) for i in range(2))
    ours, theirs = peer["nt_xent"](ua, ub, 0.5), solo.simclr_loss_func(torch.cat([ua, ub]), torch.arange(64).repeat(2), temperature=0.5)
    assert torch.allclose(ours, theirs, atol=1e-6)
    for g, h in zip(torch.autograd.grad(ours, (ua, ub)), torch.autograd.grad(theirs, (ua, ub))): assert torch.allclose(g, h, atol=1e-6)
    net, count = peer["resnet18"](), lambda m: sum(p.numel() for p in m.parameters())
    assert count(net) == count(CIFARResNet18()) == 11_168_832 and net(torch.rand(2, 3, 32, 32)).shape == (2, 512)
    assert count(peer["head"]()) == 512 * 512 + 2 * 512 + 512 * 128 + 128                  # lightly's SimCLRProjectionHead(512, 512, 128)
    per_epoch, epochs = 7, 6                                # no warm-up: lightly's CosineAnnealingLR, stepped once an epoch
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    for e in range(epochs):
        for s in range(e * per_epoch, (e + 1) * per_epoch):
            assert math.isclose(peer["lr_factor"](s, epochs * per_epoch, 0, 0.01, per_epoch), opt.param_groups[0]["lr"], abs_tol=1e-12)
        opt.step(); sched.step()
    ssbnn = warmup_cosine(42, 4, 1e-3 / 0.6)                # with warm-up: ssbnn's schedule, step for step
    assert all(math.isclose(peer["lr_factor"](s, 42, 4, 1e-3 / 0.6, per_epoch), ssbnn(s), abs_tol=1e-12) for s in range(42))
    import numpy as np, torchvision.transforms as T                       # lightly's ToTensor and Normalize, moved to the device
    from PIL import Image
    views = np.random.default_rng(0).integers(0, 256, (3, 32, 32, 3), dtype=np.uint8)
    theirs = torch.stack([T.Compose([T.ToTensor(), T.Normalize(*peer["IMAGENET"])])(Image.fromarray(v)) for v in views])
    assert torch.equal(peer["to_input"](torch.from_numpy(views), peer["normaliser"]("cpu")), theirs)
    chunks = list(peer["ChunkedEpochs"](103, 20, 7, torch.Generator().manual_seed(0)))   # 5 batches of 20, in chunks of 7, 7, 6
    assert [len(c) for c in chunks] == [7, 7, 6] * 5 and len(chunks) == len(peer["ChunkedEpochs"](103, 20, 7, None))
    flat = sum(chunks, [])
    assert len(set(flat)) == 100 and set(flat) <= set(range(103))                            # distinct: 3 images dropped


def test_peer_simclr_trains_repeatably_and_splits_decay_as_ssbnn():
    import math, types, torch
    g = torch.Generator().manual_seed(0)
    y = torch.arange(24) % 2
    x = (torch.rand(24, 3, 32, 32, generator=g) * 120 + 100 * y.view(-1, 1, 1, 1)).to(torch.uint8)    # two classes, one brighter
    data = types.SimpleNamespace(x_train=x[:16], y_train=y[:16], x_test=x[16:], y_test=y[16:], num_classes=2)
    run = lambda **kw: _peer()["train"](data, epochs=2, batch_size=8, knn_every=1, progress=False, **kw)
    a, b = run(), run()
    assert a["steps"] == 4 and [r["loss"] for r in a["history"]] == [r["loss"] for r in b["history"]]     # same seed, same run
    assert all("knn_accuracy" in r for r in a["history"]) and 0 <= a["knn_accuracy"] <= 1 and a["knn_accuracy"] == b["knn_accuracy"]
    chunked = run(chunk=5)                                  # workers' chunks of 5 images make the same batches of 8
    assert [r["loss"] for r in chunked["history"]] == [r["loss"] for r in a["history"]]
    c = run(decay="weights", joint_bn=True, warmup_epochs=1.)
    start = 1e-3 / 0.6                                                          # epoch 1 (2 steps) is all warm-up
    assert c["history"][0]["loss"] != a["history"][0]["loss"] and math.isclose(c["history"][0]["lr"], c["lr"] * (start + (1 - start) * 1 / 2))
    from ssbnn.train import _split_decay
    peer = _peer()
    modules = (peer["resnet18"](), peer["head"]())
    weights, others = peer["param_groups"](modules, "weights")
    assert [id(p) for p in weights["params"]] == [id(p) for p in _split_decay(modules)[0]] and others["weight_decay"] == 0
    assert [id(p) for p in others["params"]] == [id(p) for p in _split_decay(modules)[1]]


def test_jpeg_distortion_measures_the_doses(tmp_path, capsys):
    "bench/jpeg_distortion.py on a small archive of smooth images: a lower quality moves them further; bad input exits 2 in one line."
    import io, math, runpy
    from PIL import Image
    yy, xx = np.mgrid[:32, :32]
    imgs = [np.stack([(xx * 8 + k) % 256, (yy * 8) % 256, ((xx > 16) * 200 + k) % 256], -1).astype(np.uint8) for k in range(12)]
    blobs = [np.frombuffer(_jpeg(img, 75), np.uint8) for img in imgs]     # packed as the archive is: PIL's JPEG 75
    np.savez(tmp_path / "a.npz", jpeg=np.concatenate(blobs), offsets=np.cumsum([0] + [len(b) for b in blobs]), labels=np.arange(12) % 3)
    script = runpy.run_path(str(ROOT / "bench" / "jpeg_distortion.py"))
    e = script["Error"](); e.add(np.zeros(10, np.uint8), np.ones(10, np.uint8)); e.add(np.full(10, 255, np.uint8), np.full(10, 254, np.uint8))
    assert math.isclose(e.record()["psnr_db"], 20 * math.log10(255)) and e.record()["mse"] == 1    # and no uint8 wrap-around
    main = script["main"]
    main(["--archive", str(tmp_path / "a.npz"), "--images", "10", "--crops", "4", "--out", str(tmp_path / "r.json")])
    rec = json.loads((tmp_path / "r.json").read_text())
    arch = rec["archive"]["qualities"]
    assert rec["archive"]["images"] == 10 and rec["archive"]["pil_quality75_tables"] == rec["archive"]["chroma_420"] == 1
    as_read = np.stack([np.asarray(Image.open(io.BytesIO(b.tobytes()))) for b in blobs[:10]]).astype(float)
    again = np.stack([np.asarray(Image.open(io.BytesIO(_jpeg(x, 50)))) for x in as_read.astype(np.uint8)]).astype(float)
    assert math.isclose(arch["50"]["mse"], ((again - as_read) ** 2).mean())                  # the dose, computed here independently
    assert arch["75"]["psnr_db"] > arch["50"]["psnr_db"] > arch["25"]["psnr_db"] > 20
    assert arch["75"]["psnr_db"] > 35                                     # the archive's own quality, again: almost nothing moves
    assert abs(arch["75"]["bytes_mean"] - rec["archive"]["bytes_mean_as_read"]) < 0.05 * rec["archive"]["bytes_mean_as_read"]
    for f in ("2", "4", "8"):                                             # the photographs' crops, compressed once and twice
        first, twice = rec["photos"]["factors"][f]["first"], rec["photos"]["factors"][f]["after75"]
        assert first["75"]["psnr_db"] > first["50"]["psnr_db"] > first["25"]["psnr_db"] and first["75"]["bytes_mean"] > first["25"]["bytes_mean"]
        assert twice["50"]["against_the_original"]["mse"] > max(first["75"]["mse"], twice["50"]["mse"])   # a second pass adds error
    capsys.readouterr()
    (tmp_path / "folder").mkdir()
    for argv, message in ((["--qualities", "100"], "give integers 1-95"), (["--qualities", "0"], "give integers 1-95"),
                          (["--qualities", "x"], "give integers 1-95"), (["--images", "-1"], "argument --images: must be a whole number ≥ 0"), (["--crops", "0"], "argument --crops: must be a whole number > 0"),
                          (["--archive", str(tmp_path / "none.npz")], "no archive at"), (["--out", str(tmp_path / "folder")], "is a folder")):
        with pytest.raises(SystemExit) as e: main(["--archive", str(tmp_path / "a.npz"), "--out", str(tmp_path / "bad.json"), *argv])
        err = capsys.readouterr().err.strip().splitlines()
        assert e.value.code == 2 and len(err) == 1 and message in err[0], err
    assert not (tmp_path / "bad.json").exists()


def _jpeg(img, quality:int) -> bytes:
    "An `(H,W,3)` uint8 image as a JPEG of `quality`, with PIL's defaults."
    import io
    from PIL import Image
    b = io.BytesIO(); Image.fromarray(img).save(b, "JPEG", quality=quality); return b.getvalue()


def _script_main(name:str):
    "A benchmark script's `main`, run in this process."
    import runpy
    return runpy.run_path(str(ROOT / "bench" / name))["main"]


def _in_process(name:str, capsys):
    "A function running the benchmark script `name` with ARGS in this process (no Python start-up each): its exit status and output."
    main = _script_main(name)
    def run(*args) -> subprocess.CompletedProcess:
        capsys.readouterr()
        try: code = main(list(map(str, args))) or 0
        except SystemExit as e: code = e.code
        said = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, said.out, said.err)
    return run


def test_scripts_refuse_bad_input_in_one_line_before_any_work(tmp_path, capsys):
    "The scripts a user runs: bad numbers, paths, devices and outputs exit 2 in one line, before the archive is read (a garbage one shows it)."
    from ssbnn.report import claim_folder
    junk, folder, user = tmp_path / "junk.npz", tmp_path / "folder", tmp_path / "mine.json"
    junk.write_bytes(b"not an archive"); folder.mkdir(); user.write_text('{"my": "notes"}')
    job = claim_folder(tmp_path / "job", command="ssbnn"); (job / "results.json").write_text("{}")
    (tmp_path / "part").mkdir(); (tmp_path / "part" / "results.json").write_text('{"records": []}')
    g = ["--archive", str(junk)]
    cases = {"active_cifar.py": [(g + ["--seeds", "0"], "argument --seeds: must be a whole number > 0"),
                                 (g + ["--budget", "-10"], "argument --budget"), (g + ["--initial", "60", "--budget", "50"], "need initial <= budget"),
                                 (["--archive", str(folder)], "is a folder"), (g + ["--device", "gpu"], "--device gpu: unknown device"),
                                 (g + ["--ssbnn-model", str(tmp_path / "none")], "--ssbnn-model " + str(tmp_path / "none") + " does not exist"),
                                 (g + ["--out", str(folder.parent / "mine.json")], "is a file"), (g + ["--out", str(job)], "holds what ssbnn wrote"),
                                 (["--archiv", str(junk)], "unrecognized arguments: --archiv"),
                                 (["--merge", str(tmp_path / "part"), "--out", str(tmp_path / "m")], "part 1 has no meta.config"),
                                 (g + ["--out", str(tmp_path / "a")], "junk.npz")],
             "prior_cifar.py": [(g + ["--pairs", "0"], "argument --pairs"), (g + ["--model", str(tmp_path / "none")], "does not exist"),
                                (g + ["--device", "gpu"], "--device gpu"), (["--archive", str(folder)], "is a folder; give a file"),
                                (g + ["--out", str(user)], "exists and is not a record of prior_cifar.py"), (g, "junk.npz")],
             "pretrain_cifar.py": [(g + ["--epochs", "-1"], "argument --epochs"), (g + ["--budgets", "foo"], "argument --budgets"),
                                   (["--archive", str(folder)], "is a folder; give a file"), (g + ["--device", "gpu"], "--device gpu"),
                                   (g + ["--out", str(user)], "exists and is not a record of pretrain_cifar.py"),
                                   (g + ["--dump-features", str(user)], "--dump-features " + str(user) + " is a file"), (g, "junk.npz")],
             "laplace_predict.py": [(["--device", "gpu"], "--device gpu"), (["--out", str(folder)], "is a folder"),
                                    (["--out", str(user)], "exists and is not a record of laplace_predict.py"), (["--dim", "nan"], "argument --dim")],
             "laplace_factored.py": [(["--hessian", "full"], "argument --hessian: invalid choice: 'full'"), (["--val", "0"], "argument --val"),
                                     (["--out", str(user)], "exists and is not a record of laplace_factored.py"), (["--device", "gpu"], "--device gpu")],
             "jpeg_distortion.py": [(g + ["--out", str(user)], "exists and is not a record of jpeg_distortion.py")],
             "digits_map_calibration.py": [(["--budgets", "10,foo"], "--budgets: budget 'foo' is not a number"), (["--seeds", "0"], "argument --seeds"),
                                           (["--out", str(user)], "exists and is not a record of digits_map_calibration.py"), (["--out", str(folder)], "is a folder"),
                                           (["--budgets", "10,5000"], "--budgets: budget 5000 is larger than the 1257 training images"),
                                           (["--budgets", "10,10"], "ask for 10 labels more than once")],
             "digits_readouts.py": [(["--budgets", "5000"], "--budgets: budget 5000 is larger than the 1257 training images"),   # before pretraining
                                    (["--seeds", "0"], "argument --seeds"), (["--out", str(user)], "exists and is not a record of digits_readouts.py")],
             "digits_recipe.py": [(["--seeds", "0"], "argument --seeds"), (["--out", str(user)], "exists and is not a record of digits_recipe.py")],
             "swag_grid.py": [(["--budgets", "5000"], "--budgets: budget 5000 is larger than the 1257 training images"), (["--samples", "0"], "argument --samples")],
             "compare_curves.py": [(["--before", str(user), "--after", str(user), "--noise", str(user), "--out", str(user)], "exists and is not a record of compare_curves.py"),
                                   (["--before", str(user), "--after", str(user), "--noise", str(user), "--factor", "0"], "argument --factor")],
             "corrupt_reference.py": [(["--script", "s.py", "--nope"], "unrecognized arguments: --nope"),   # the references too: one line
                                      (["--script", "s.py", "--severities", "1,x"], "argument --severities: '1,x': give comma-separated severities")],
             "frn_reference.py": [(["--nope"], "unrecognized arguments: --nope"), (["--var", "nan"], "argument --var")],
             "peer_simclr.py": [(g + ["--nope"], "unrecognized arguments: --nope"), (g + ["--temperature", "0"], "argument --temperature"),
                                (g + ["--seed", "-1"], "argument --seed"), (g + ["--device", "gpu"], "--device gpu"), (["--archive", str(folder)], "is a folder"),
                                (g + ["--out", str(user)], "exists and is not a record of peer_simclr.py"), (g + ["--device", "cpu"], "junk.npz")],
             "compile_cache.py": [([str(tmp_path / "none.py")], "no script at")]}
    for script, runs in cases.items():
        main = _script_main(script)
        for argv, expect in runs:
            capsys.readouterr()
            with pytest.raises(SystemExit) as e: main(argv)
            err = capsys.readouterr().err.strip().splitlines()
            assert e.value.code == 2 and len(err) == 1 and expect in err[0], (script, argv, err)
    assert user.read_text() == '{"my": "notes"}' and (job / "results.json").read_text() == "{}" and not (tmp_path / "m").exists()


def test_digits_map_calibration_record(tmp_path, capsys, monkeypatch):
    "A variant's row: the MAP network's confidence gap and its Laplace posterior's prior; a record its script may replace."
    from common import out_file
    main = _script_main("digits_map_calibration.py")
    assert list(main.__globals__["VARIANTS"]) == ["mild, best epoch", "mild, at the stop", "none, best epoch", "none, at the stop", "mild, all 300 epochs"]
    monkeypatch.setitem(main.__globals__, "VARIANTS", {"mild, best epoch": ("mild", True, 25)})    # the main job's, alone: seconds
    capsys.readouterr()
    main(["--budgets", "10", "--seeds", "1", "--out", str(tmp_path / "cal.json")])
    assert "mild, best epoch      10 labels: accuracy" in capsys.readouterr().out
    rec = json.loads((tmp_path / "cal.json").read_text())
    (row,) = rec["rows"]; (run,) = row["runs"]
    assert row["labels"] == 10 and abs(run["map_gap_pts"] - 100 * (run["map_confidence"] - run["map_accuracy"])) < 1e-9
    assert run["prior_precision"] > 0 and isinstance(run["prior_on_edge"], bool) and row["edge_picks"] == int(run["prior_on_edge"])
    assert 25 <= run["epochs"] < 300 and row["min_epochs"] == 25                                    # stopped early
    assert out_file("digits_map_calibration.py", tmp_path / "cal.json") == tmp_path / "cal.json"   # names its command: replaceable


def test_pretraining_scripts_refuse_tasks_larger_than_the_training_split(tmp_path, capsys):
    "A task, a labelled subset or a torchrun split that --limit, --val and --eval leave no room for: one line, exit 2, before any pretraining."
    from test_distributed import _tiny_archive
    archive = str(_tiny_archive(tmp_path / "tiny.npz", n=100))
    small = ["--archive", archive, "--eval", "20", "--val", "20", "--device", "cpu", "--epochs", "1"]
    cases = {"pretrain_cifar.py": [(["--batch-size", "80", "--budgets", "10", "--out", str(tmp_path / "p.json")], "--batch-size 80 is larger than the"),
                                   (["--batch-size", "16", "--budgets", "10,500", "--out", str(tmp_path / "p.json")], "--budgets 500 is larger than the"),
                                   (["--batch-size", "16", "--budgets", "", "--star-labels", "90", "--out", str(tmp_path / "p.json")], "--star-labels 90 is larger"),
                                   (["--batch-size", "16", "--budgets", "", "--out-dir", str(tmp_path / "d"), "--point", "big", "batch_size=95"],
                                    "point big: --batch-size 95 is larger than the")],
             "ddp_overhead.py": [(["--batch-size", "80", "--out", str(tmp_path / "d.json")], "--batch-size 80 is larger than the 60 training images"),
                                 (["--batch-size", "16", "--gpus", "3", "--out", str(tmp_path / "d.json")], "not divisible by the 3 processes"),
                                 (["--batch-size", "16", "--limit", "30", "--out", str(tmp_path / "d.json")], "val + test = 40 leaves no training images out of 30")]}
    for script, runs in cases.items():
        run = _in_process(script, capsys)
        for args, said in runs:
            r = run(*small, *args)
            assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and said in r.stderr, (script, args, r.stderr)
    assert not any((tmp_path / f).exists() for f in ("p.json", "d.json")) and not any((tmp_path / "d").iterdir())   # the sweep's folder: made, empty


def test_out_file_replaces_only_the_scripts_own_records(tmp_path):
    from common import out_file, writable
    rec = tmp_path / "r.json"; rec.write_text(json.dumps({"command": "python bench/laplace_predict.py --out r.json"}))
    assert out_file("laplace_predict.py", rec) == rec                                   # its own record: replaced
    with pytest.raises(SystemExit): out_file("prior_cifar.py", rec)                      # another script's: kept
    notes = tmp_path / "notes.json"; notes.write_text(json.dumps({"command": "notes about laplace_predict.py and its runs"}))
    with pytest.raises(SystemExit): out_file("laplace_predict.py", notes)               # names the script, but it did not run it
    for ran in ("python3 bench/laplace_predict.py", "bench/laplace_predict.py --out x", "python /abs/bench/laplace_predict.py"):
        notes.write_text(json.dumps({"command": ran})); assert out_file("laplace_predict.py", notes) == notes
    assert writable(tmp_path) and not writable("/proc")                                  # tried, not os.access (which says yes to root)
    assert out_file("laplace_predict.py", tmp_path / "new" / "r.json").parent.is_dir()   # a new folder is made


def test_ddp_overhead_checks_its_input_before_any_work(tmp_path, capsys):
    "One line and exit 2 for a missing archive, bad --gpus or an --out that is a folder or a user's file; nothing is read or run first."
    run = _in_process("ddp_overhead.py", capsys)
    (tmp_path / "a.npz").write_bytes(b"not read"); (tmp_path / "notes.txt").write_text("mine")
    for args, said in ((["--archive", str(tmp_path / "none.npz")], "does not exist"), (["--archive", str(tmp_path / "a.npz"), "--gpus", "x"], "--gpus x"),
                       (["--archive", str(tmp_path / "a.npz"), "--out", str(tmp_path)], "is a folder"),
                       (["--archive", str(tmp_path / "a.npz"), "--out", str(tmp_path / "notes.txt")], "is not a record of ddp_overhead.py")):
        r = run(*args); assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and said in r.stderr, r.stderr
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_swag_grid_picks_what_swag_fit_picks_and_refuses_bad_rates(tmp_path, capsys):
    "The script's pick on the paper's grid is `SWAG.fit`'s own (each rate fitted alone draws as in the grid); bad rates exit 2 in one line."
    from ssbnn.baselines import SWAG, SWAGConfig
    from ssbnn.experiments.evaluation import EvalConfig, digits_setup, labelled
    script = _in_process("swag_grid.py", capsys)
    ok = script("--budgets", "10", "--seeds", "1", "--lrs", "1e-1,1e-2,1e-3,1e-4", "--samples", "2", "--out", tmp_path / "g.json")
    assert ok.returncode == 0, ok.stderr
    r = json.loads((tmp_path / "g.json").read_text())
    row, setup = r["rows"][0], digits_setup(device="cpu")
    sub = labelled(setup, EvalConfig(budgets=(10,), seeds=1), 10, 0, [])
    fitted = SWAG(sub.map(), SWAGConfig(samples=2)).fit(*sub.data())
    assert row["paper_pick"] == fitted.lr_ and row["paper_pick_on_edge"] == fitted.info()["swag_lr_on_edge"]
    assert set(row["rates"]) == {"0.1", "0.01", "0.001", "0.0001"}
    assert str(row["wide_pick"]) == min(row["rates"], key=lambda k: row["rates"][k]["val_nll"])    # the lowest validation NLL of all rates
    assert r["summary"][0]["runs"] == 1 and "swag_grid.py" in r["command"]
    for args, said in ((["--lrs", "1e-2,x"], "argument --lrs"), (["--lrs", "-1,1e-2"], "argument --lrs"),
                       (["--lrs", "1e-1,1e-2"], "leaves out the paper's rate(s) 0.001, 0.0001")):
        bad = script(*args)
        assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and said in bad.stderr, (args, bad.stderr)


def test_prior_parts_merge_and_a_hand_edited_part_is_named(tmp_path, capsys):
    "prior_cifar.py --merge joins parts that scored different priors; a part it cannot read is named in one line, and nothing is written."
    script = _in_process("prior_cifar.py", capsys)
    shared = {"pairs_per_group": 3, "pairs_source_sha256": "ab12", "eval_images": 9000, "limit": 0, "interval": 0.95, "device": "cpu",
              "command": "python bench/prior_cifar.py --priors self-supervised"}          # a part: this script's record
    groups = lambda k: {"augmented": [0.9 - 0.1 * k, 0.8, 0.7], "same class": [0.5, 0.4, 0.45], "different class": [0.1, 0.2, 0.15]}
    for k, name in enumerate(("self-supervised", "BNN, gaussian")):
        (tmp_path / f"p{k}.json").write_text(json.dumps({**shared, "rho": {name: groups(k)}, name: {"alpha": 0.5 + 0.1 * k}}))
    r = script("--merge", tmp_path / "p0.json", tmp_path / "p1.json", "--out", tmp_path / "all.json")
    assert r.returncode == 0, r.stderr
    merged = json.loads((tmp_path / "all.json").read_text())
    assert sorted(merged["rho"]) == ["BNN, gaussian", "self-supervised"] and (tmp_path / "all.png").exists()
    for k, (edit, says) in enumerate(((lambda p: 5, "has no rho values"), (lambda p: {**p, "rho": {"BNN, gaussian": {}}}, "are not a list of numbers"),
                                      (lambda p: {**p, "rho": 5}, "has no rho values"), (lambda p: {k: v for k, v in p.items() if k != "interval"}, "interval"),
                                      (lambda p: {**p, "BNN, gaussian": {}}, "has no alpha for the 'BNN, gaussian' prior"),
                                      (lambda p: {**p, "rho": {"BNN, gaussian": {**groups(1), "augmented": [-1, 0.8, 0.7]}}}, "are not a list of numbers in [0, 1]"),
                                      (lambda p: {**p, "rho": {"BNN, gaussian": {**groups(1), "augmented": [float("nan"), 0.8, 0.7]}}}, "in [0, 1]"),
                                      (lambda p: {**p, "rho": {"BNN, gaussian": {"foo": [0.5] * 3}}}, "for each group of pairs (augmented, same class"),
                                      (lambda p: {**p, "rho": {"BNN, gaussian": {**groups(1), "augmented": [0.5]}}}, "are not 3 a group, as its pairs_per_group says"),
                                      (lambda p: {**p, "rho": {"BNN, gauss": groups(1)}}, "scored the unknown prior 'BNN, gauss'"),
                                      (lambda p: {**p, "device": ["cpu"]}, "its device ['cpu'] is not a device's name"))):
        bad = tmp_path / f"bad{k}.json"; bad.write_text(json.dumps(edit(json.loads((tmp_path / "p1.json").read_text()))))
        r = script("--merge", tmp_path / "p0.json", bad, "--out", tmp_path / f"m{k}.json")
        said = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(said) == 1 and says in said[0] and f"bad{k}.json is not a part of Table 1" in said[0], said
        assert not (tmp_path / f"m{k}.json").exists() and not (tmp_path / f"m{k}.png").exists()
    (tmp_path / "mine.png").write_text("my figure"); (tmp_path / "dir.png").mkdir(); (tmp_path / "junk.txt").write_text("not JSON")
    parts = ["--merge", tmp_path / "p0.json", tmp_path / "p1.json"]
    for args, says in (([*parts, "--out", tmp_path / "mine.json"], "mine.png exists beside no record of prior_cifar.py"),   # a user's figure kept
                       ([*parts, "--out", tmp_path / "m.png"], "is the figure's name; give the record a .json name"),
                       ([*parts, "--out", tmp_path / "dir.json"], "its figure " + str(tmp_path / "dir.png") + " would replace a folder"),
                       ([*parts, "--out", tmp_path / "p0.json"], "is one of the parts"), ([*parts, "--out", tmp_path / "n.json", "--pairs", "7"], "takes no --pairs"),
                       (["--merge", tmp_path / "junk.txt", tmp_path / "p1.json", "--out", tmp_path / "n.json"], "junk.txt is not a readable JSON record")):
        r = script(*args); said = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(said) == 1 and says in said[0], (args, said)
    assert (tmp_path / "mine.png").read_text() == "my figure" and not (tmp_path / "n.json").exists() and "rho" in json.loads((tmp_path / "p0.json").read_text())
    assert script(*parts, "--out", tmp_path / "all.json").returncode == 0                  # its own record and figure: replaced
