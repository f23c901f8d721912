"The mutation audit (`tools/mutation_audit.py`): its bugs still apply to the notebooks, and it tells a caught bug from an unseen one."
import runpy, shutil
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
audit_tool = runpy.run_path(str(ROOT/"tools"/"mutation_audit.py"))

def test_every_mutant_still_applies_once():
    "A notebook change that removes a mutant's text must update `tools/mutants.json`, or the audit silently checks less."
    mutants = audit_tool["load_mutants"]()
    assert len(mutants) > 50
    for m in mutants:
        assert m["old"] != m["new"] and m["what"], m
        assert audit_tool["occurrences"](ROOT, m) == 1, f"{m['nb']}: {m['what']!r} no longer applies once; update tools/mutants.json"

def test_the_audit_tells_a_caught_bug_from_an_unseen_one(tmp_path):
    (tmp_path/"nbs").mkdir()
    shutil.copy(ROOT/"settings.ini", tmp_path)
    shutil.copy(ROOT/"nbs"/"00_utils.ipynb", tmp_path/"nbs")
    shutil.copytree(ROOT/"ssbnn", tmp_path/"ssbnn", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path/"tests").mkdir()
    (tmp_path/"tests"/"test_doc.py").write_text(        # sees the exported module: what the notebook's tests never check
        "from ssbnn._utils import pid_alive\n"
        "def test_doc(): assert pid_alive.__doc__ == 'Whether a process with this id is running.'\n")
    before = audit_tool["snapshot"](tmp_path)
    nb = "nbs/00_utils.ipynb"
    caught = {"nb": nb, "what": "infinite numbers pass", "old": "and math.isfinite(value)", "new": ""}
    unseen = {"nb": nb, "what": "a comment changed", "old": "# a member already", "new": "# one member already"}
    by_pytest = {"nb": nb, "what": "a docstring changed", "old": "Whether a process with this id is running.",
                 "new": "Whether a process runs.", "pytest": ["tests/test_doc.py"]}
    stale = {"nb": nb, "what": "text that is not there", "old": "no such code", "new": "x"}
    found = [m for m in (caught, unseen, by_pytest) if audit_tool["occurrences"](tmp_path, m) != 1]
    assert not found, f"00_utils changed: pick other mutants for this test ({found})"
    rows = audit_tool["audit"]([caught, unseen, by_pytest, stale], tmp_path, log=lambda s: None)
    assert [r.get("killed") for r in rows] == [True, False, True, None]
    assert "AssertionError" in rows[0]["by"] and "test_doc" in rows[2]["by"] and "occurs 0 times" in rows[3]["error"]
    assert audit_tool["snapshot"](tmp_path) == before               # every notebook and module restored
    assert audit_tool["summary"](rows)["blind_spots"] == [f"{nb}: a comment changed"]

def test_the_tests_of_a_clone_find_the_cifar_archive(tmp_path, monkeypatch):
    "A clone has no ../shared beside it: the archive tests would skip, and a mutant only they catch would survive unseen."
    monkeypatch.delenv("SSBNN_CIFAR_ARCHIVE", raising=False)
    archive = ROOT.parent/"shared"/"data"/"cifar10_train.npz"
    assert audit_tool["_env"](tmp_path).get("SSBNN_CIFAR_ARCHIVE") == (str(archive) if archive.exists() else None)
    monkeypatch.setenv("SSBNN_CIFAR_ARCHIVE", "/elsewhere.npz")
    assert audit_tool["_env"](tmp_path)["SSBNN_CIFAR_ARCHIVE"] == "/elsewhere.npz"

def test_bad_notebook_name_exits_2(capsys):
    with pytest.raises(SystemExit) as e: audit_tool["main"](["--only", "99_nothing"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no mutants for 99_nothing" in err
