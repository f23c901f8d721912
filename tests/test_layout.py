"The package's layout: data flows one way through the modules, and no private name is imported across them."
import ast, json, re
from conftest import ROOT

# The modules in the order data flows (README, "Layout"); a module may import only from modules before it.
ORDER = ["_utils", "data", "augment", "models", "elbo", "metrics", "features", "train", "distributed", "posterior",
         "baselines", "prior", "report", "core", "experiments.corrupt", "experiments.cifar", "experiments.evaluation",
         "experiments.active", "experiments.ablation", "cli"]


def _modules():
    "{dotted name: parsed tree} of every module of the package (the nbdev index and __init__ files aside)."
    out = {}
    for f in (ROOT / "ssbnn").rglob("*.py"):
        name = ".".join(f.relative_to(ROOT / "ssbnn").with_suffix("").parts)
        if name.split(".")[-1] in ("__init__", "_modidx"): continue
        out[name] = ast.parse(f.read_text())
    return out


def _imports(name, tree):
    "(module, names) for every `from ssbnn... import ...` in a module, relative imports resolved."
    pkg = name.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level: mod = ".".join(pkg[:len(pkg) - node.level + 1] + ([node.module] if node.module else []))
            elif node.module and node.module.startswith("ssbnn."): mod = node.module[len("ssbnn."):]
            else: continue
            yield mod, [a.name for a in node.names]


def test_every_module_has_a_place():
    assert sorted(_modules()) == sorted(ORDER)


def _listed(entries) -> list[str]:
    "The notebooks a sidebar's entries list, in order (a section's page, then its contents)."
    out = []
    for e in entries:
        if isinstance(e, str): out.append(e)
        else: out += ([e["href"]] if "href" in e else []) + _listed(e.get("contents", []))
    return out


def test_the_sidebar_lists_every_notebook_once_in_the_order_data_flows():
    "nbs/sidebar.yml is kept by hand (custom_sidebar): no notebook missing or twice, the modules' pages in ORDER."
    import yaml
    assert re.search(r"^custom_sidebar\s*=\s*True", (ROOT / "settings.ini").read_text(), re.M), "nbdev would overwrite nbs/sidebar.yml"
    listed = _listed(yaml.safe_load((ROOT / "nbs" / "sidebar.yml").read_text())["website"]["sidebar"]["contents"])
    nbs = sorted(p.relative_to(ROOT / "nbs").as_posix() for p in (ROOT / "nbs").rglob("*.ipynb")
                 if not any(s.startswith((".", "_")) for s in p.relative_to(ROOT / "nbs").parts))
    assert sorted(listed) == nbs, f"missing: {sorted(set(nbs) - set(listed))}; not notebooks or listed twice: {sorted(set(listed) - set(nbs)) or listed}"
    exp = {nb: m[1] for nb in listed if (m := re.search(r"#\|\s*default_exp\s+([\w.]+)", (ROOT / "nbs" / nb).read_text()))}
    mods = [exp[nb] for nb in listed if nb in exp]
    assert mods == sorted(mods, key=ORDER.index), f"the sidebar's modules {mods} are not in the order data flows {ORDER}"


def test_imports_run_down_the_data_path():
    bad = [f"{name} imports {mod}" for name, tree in _modules().items() for mod, _ in _imports(name, tree)
           if mod in ORDER and ORDER.index(mod) >= ORDER.index(name)]
    assert not bad, bad


def test_no_private_name_crosses_a_module():
    bad = [f"{name}: from {mod} import {n}" for name, tree in _modules().items() for mod, names in _imports(name, tree)
           for n in names if n.startswith("_") and not n.startswith("__")]
    assert not bad, bad


def _mixes_imports(src:str) -> bool:
    "True for a cell nbdev's docs build would execute for its imports although it also computes (nbdev's `_do_eval`)."
    if re.search(r"^#\|\s*(export|exports|exporti|exec_doc|eval:\s*false)", src, re.M): return False
    try: nodes = list(ast.walk(ast.parse(src)))
    except SyntaxError: return False
    return any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in nodes) and any(isinstance(n, (ast.Expr, ast.Assign)) for n in nodes)


def test_no_cell_mixes_imports_with_code():
    "The docs build runs every cell that imports; one that also computes would run again there, out of order."
    bad = [f"{p.relative_to(ROOT)} cell {i}" for p in sorted((ROOT / "nbs").rglob("*.ipynb")) if ".ipynb_checkpoints" not in str(p)
           for i, c in enumerate(json.loads(p.read_text())["cells"]) if c["cell_type"] == "code" and _mixes_imports("".join(c["source"]))]
    assert not bad, f"put the imports of these cells in a cell of their own: {bad}"


def test_saved_outputs_are_light_and_not_repeated():
    "No saved output over 150 kB (tools/run_nbs.py re-encodes large figures), and no large output (an animation) saved twice."
    import hashlib
    big, seen, twice = [], {}, []
    for p in sorted((ROOT / "nbs").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in str(p): continue
        for i, c in enumerate(json.loads(p.read_text())["cells"]):
            for o in c.get("outputs", []):
                where = f"{p.relative_to(ROOT)} cell {i}"
                if len(json.dumps(o)) > 150_000: big.append(where)
                data = {k: v for k, v in o.get("data", {}).items() if k != "text/plain"}
                if len(json.dumps(data)) > 20_000:
                    h = hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()
                    if h in seen: twice.append(f"{where} repeats {seen[h]}")
                    seen[h] = where
    assert not big, f"outputs over 150 kB (re-run with tools/run_nbs.py, or make the figure smaller): {big}"
    assert not twice, twice


def test_saved_outputs_hold_no_progress_bar_frames():
    "What a page shows of a progress bar is its last state, as in a terminal, not every frame ('\\r') it drew (tools/run_nbs.py settles them)."
    framed = [f"{p.relative_to(ROOT)} cell {i}" for p in sorted((ROOT / "nbs").rglob("*.ipynb")) if ".ipynb_checkpoints" not in str(p)
              for i, c in enumerate(json.loads(p.read_text())["cells"]) for o in c.get("outputs", [])
              if o.get("output_type") == "stream" and "\r" in "".join(o["text"])]
    assert not framed, f"progress-bar frames saved (re-run with tools/run_nbs.py): {framed}"


def test_settle_progress_keeps_a_bars_last_state_and_drops_a_cleared_one():
    import runpy
    settle = runpy.run_path(str(ROOT / "tools" / "run_nbs.py"))["settle_progress"]
    stream = lambda text, name="stderr": {"output_type": "stream", "name": name, "text": text}
    nb = {"cells": [{"cell_type": "code", "outputs": [stream(["\rfit 0%\rfit 50%\rfit 100%\n", "done\n"]), stream("\rx 1\rx 2\r     \r"),
                                                      stream(["plain\n"], "stdout")]}, {"cell_type": "markdown", "source": "text"}]}
    assert settle(nb) == 2
    assert nb["cells"][0]["outputs"] == [stream(["fit 100%\n", "done\n"]), stream(["plain\n"], "stdout")], nb["cells"][0]["outputs"]


def test_run_nbs_replaces_every_run_cells_outputs_and_keeps_skipped_ones(tmp_path):
    "tools/run_nbs.py: a cell that now prints nothing loses its old output (execnb alone keeps it); a skipped cell keeps its saved one."
    import runpy
    cell = lambda src, out: {"cell_type": "code", "execution_count": 1, "id": f"c{abs(hash(src)) % 10**6}", "metadata": {}, "source": src,
                             "outputs": [{"name": "stderr", "output_type": "stream", "text": [out]}]}
    nb = {"cells": [cell("x = 1", "UserWarning: from an older version of this cell\n"), cell("print(x + 1)", "stale\n"),
                    cell("#| cuda\nprint('on a GPU')", "on a GPU\n")],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "n.ipynb").write_text(json.dumps(nb))
    runpy.run_path(str(ROOT / "tools" / "run_nbs.py"))["run"](tmp_path / "n.ipynb", {"cuda"})
    outs = [c.get("outputs", []) for c in json.loads((tmp_path / "n.ipynb").read_text())["cells"]]
    assert outs[0] == [] and [o.get("text") for o in outs[1]] == [["2\n"]] and outs[2][0]["text"] == ["on a GPU\n"], outs
