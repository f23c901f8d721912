"""Cells that CI skips (settings.ini's tst_flags: notest, slow, cuda; and `#| eval: false`) still match the package.

They run only on a GPU or by hand, so a renamed argument or function would first fail there, on lent GPU minutes: the
readout cell of experiments/02_cifar still called `_laplace_records(..., seed=0)` after the argument had become
`seeds`. Their calls of ssbnn functions are checked against the functions' signatures, and their names against
what the notebook defines, without running them.
"""
import ast, configparser, importlib, inspect, json, re
from pyflakes import messages
from pyflakes.checker import Checker
from conftest import ROOT

FLAGS = configparser.ConfigParser()
FLAGS.read(ROOT / "settings.ini")
SKIPPED = FLAGS["DEFAULT"]["tst_flags"].split()


def _code(src: str) -> str:
    "A cell's source as Python: `%time` and `%timeit` lines keep their statement; other magics and shell lines become `pass`."
    lines = (re.sub(r"^(\s*)%time(it)?\s+", r"\1", l) for l in src.splitlines())
    return "\n".join("pass" if l.lstrip().startswith(("%", "!")) else l for l in lines)


def _cells(nb: dict) -> list:
    "[(source, skipped on CI)] of a notebook's code cells: flagged with a test flag, or `#| eval: false` (examples for users)."
    flag = re.compile(rf"^#\|\s*(({'|'.join(SKIPPED)})\b|eval:\s*false)", re.M)
    return [(s, bool(flag.search(s))) for c in nb["cells"] if c["cell_type"] == "code" for s in ["".join(c["source"])]]


def _namespace(cells: list) -> dict:
    "The notebook's module and everything its cells import, by name."
    ns = {}
    exp = next((m[1] for s, _ in cells for m in [re.search(r"^#\|\s*default_exp\s+(\S+)", s, re.M)] if m), None)
    if exp: ns.update(vars(importlib.import_module(f"ssbnn.{exp}")))
    for s, _ in cells:
        for node in ast.parse(_code(s)).body:
            if isinstance(node, (ast.Import, ast.ImportFrom)): exec(compile(ast.Module([node], []), "<imports>", "exec"), ns)
    return ns


def _resolve(f, ns):
    "The object a call's function names: a name, or an attribute of a class or module; None where it takes running."
    if isinstance(f, ast.Name): return ns.get(f.id)
    if isinstance(f, ast.Attribute):
        base = _resolve(f.value, ns)
        if inspect.isclass(base) or inspect.ismodule(base): return getattr(base, f.attr, None)


def bad_calls(cells: list, ns: dict) -> tuple[list, int]:
    "(calls in skipped cells that ssbnn's functions in `ns` (`_namespace`) would refuse, with why; how many calls were checked)."
    out, checked = [], 0
    for s, skipped in cells:
        if not skipped: continue
        for call in (n for n in ast.walk(ast.parse(_code(s))) if isinstance(n, ast.Call)):
            fn = _resolve(call.func, ns)
            if not callable(fn) or not (getattr(fn, "__module__", None) or "").startswith("ssbnn"): continue
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords): continue
            checked += 1
            try: inspect.signature(fn).bind(*call.args, **{k.arg: k.value for k in call.keywords})
            except TypeError as e: out.append(f"{ast.unparse(call)[:100]}: {e}")
    return out, checked


def undefined_names(cells: list, ns: dict) -> list:
    "Names that skipped cells use and neither the notebook's cells nor its module (`ns`, `_namespace`) define."
    lines, owner = [], []
    for i, (s, _) in enumerate(cells):
        for l in _code(s).splitlines(): lines.append(l); owner.append(i)
    found = Checker(ast.parse("\n".join(lines)), builtins={"display", "get_ipython", *ns}).messages
    return [str(m.message_args[0]) for m in found if isinstance(m, messages.UndefinedName) and cells[owner[m.lineno - 1]][1]]


NOTEBOOKS = sorted((ROOT / "nbs").rglob("*.ipynb"))


def test_skipped_cells_call_ssbnn_as_it_is():
    bad, checked = {}, 0
    for p in NOTEBOOKS:
        cells = _cells(json.loads(p.read_text()))
        ns = _namespace(cells)                           # its imports run once, for both checks
        calls, n = bad_calls(cells, ns)
        checked += n
        problems = calls + [f"undefined name {name!r}" for name in undefined_names(cells, ns)]
        if problems: bad[str(p.relative_to(ROOT))] = problems
    assert not bad, bad
    assert checked >= 30, checked                      # the check reaches the skipped cells' calls (65 when written)


def test_the_check_sees_a_stale_call():
    "A skipped cell with an argument the function no longer takes, one too many, one missing, and a name nothing defines."
    nb = {"cells": [{"cell_type": "code", "source": ["#| default_exp experiments.cifar"]},
                    {"cell_type": "code", "source": ["#| cuda\n", "%time recs = _laplace_records(demo, cifar, (50,), seed=0)\n",
                                                     "paper_tau_p(10, 100)\n", "paper_tau_p()\n", "paper_tau_p(num_classes=10)\n", "print(gone)"]}]}
    cells = _cells(nb)
    ns = _namespace(cells)
    calls, checked = bad_calls(cells, ns)
    assert checked == 4 and len(calls) == 3, calls
    assert "unexpected keyword argument 'seed'" in calls[0] and "too many positional" in calls[1] and "missing a required" in calls[2], calls
    assert undefined_names(cells, ns) == ["demo", "cifar", "gone"]
