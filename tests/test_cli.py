"The `ssbnn` console script: help, a short run end to end with its files, resuming, and one-line errors."
import json, subprocess
import pytest
from conftest import console

SHORT = ["--epochs", "2", "--batch-size", "256", "--budgets", "10,30", "--seeds", "2", "--device", "cpu", "--quiet"]


def ssbnn(*args, cwd=None, timeout=600):
    return subprocess.run([console("ssbnn"), *args], capture_output=True, text=True, cwd=cwd, timeout=timeout)


def test_help_explains_options():
    r = ssbnn("--help")
    assert r.returncode == 0
    for opt in ("--epochs", "--budgets", "--seeds", "--seed", "--out", "--device", "--overwrite"): assert opt in r.stdout


def test_short_run_end_to_end(tmp_path):
    out = tmp_path / "run"
    r = ssbnn(*SHORT, "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert {p.name for p in out.iterdir()} == {"results.json", "report.md", "metrics_vs_labels.png", "pretrain.ckpt"}
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
    r = ssbnn(*SHORT, "--out", str(tmp_path))
    assert r.returncode == 2 and "already holds results" in r.stderr
    assert (tmp_path / "results.json").read_text() == '{"mine": 1}'


def test_resumes_from_a_checkpoint(tmp_path):
    "A folder with a pretraining checkpoint and no results (a killed run) is resumed, not restarted."
    out = tmp_path / "run"
    assert ssbnn(*SHORT, "--out", str(out)).returncode == 0
    (out / "results.json").unlink()
    r = ssbnn(*SHORT, "--out", str(out))
    assert r.returncode == 0 and "resuming" in r.stdout


@pytest.mark.parametrize("args,expect", [
    (["--budgets", "ten"], "not a number"),
    (["--budgets", "5000"], "larger than the 1257"),
    (["--epochs", "-3"], "must be positive"),
    (["--seeds", "0"], "must be positive"),
    (["--batch-size", "5000"], "larger than the 1257 unlabelled images"),
    (["--device", "gpu"], "unknown device"),
    (["--frobnicate"], "unrecognized arguments"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, expect):
    r = ssbnn(*args, "--out", str(tmp_path / "o"), "--quiet")
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and expect in lines[0] and "Traceback" not in r.stderr, r.stderr


def test_evaluate_help_and_bad_input(tmp_path):
    from conftest import console
    r = subprocess.run([console("ssbnn-evaluate"), "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "--methods" in r.stdout and "--corruptions" in r.stdout
    for args, expect in ((["--methods", "map,bayes"], "unknown method"), (["--corruptions", "rain"], "unknown corruption"),
                         (["--data", "cifar10"], "needs --root"), (["--data", "cifar10", "--root", str(tmp_path / "none")], "download=True")):
        r = subprocess.run([console("ssbnn-evaluate"), *args, "--out", str(tmp_path / "o"), "--quiet"], capture_output=True, text=True, timeout=300)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and expect in lines[0], r.stderr


def test_evaluate_short_digits_run(tmp_path):
    from conftest import console
    out = tmp_path / "eval"
    r = subprocess.run([console("ssbnn-evaluate"), "--epochs", "3", "--budgets", "20", "--seeds", "1", "--methods", "ss-bnn,map,ll-laplace",
                        "--corruptions", "contrast,fog", "--device", "cpu", "--quiet", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert {p.name for p in out.iterdir()} == {"results.json", "tables.md", "evaluation.png"}
    recs = json.loads((out / "results.json").read_text())["records"]
    assert {x["method"] for x in recs} == {"ss-bnn", "map", "ll-laplace"}
    assert all({"c_accuracy", "c_nll", "ood_auroc"} <= x.keys() for x in recs)
    assert "OOD detection AUROC" in (out / "tables.md").read_text()


def test_pretrain_cli_bad_input(tmp_path):
    from conftest import console
    r = subprocess.run([console("ssbnn-pretrain"), "--root", str(tmp_path / "none"), "--out", str(tmp_path / "o")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--download" in r.stderr
