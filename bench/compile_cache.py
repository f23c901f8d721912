"""Run a Python script (or `-c CODE`) with torch.compile warmed from earlier sessions' compiled graphs: device sessions' first compile.

    python bench/compile_cache.py SCRIPT [ARGS ...]        # as `python SCRIPT ARGS`
    python bench/compile_cache.py -c CODE [ARGS ...]       # as `python -c CODE ARGS`

A device session is a fresh machine, so the first compiled process of each session compiles from nothing: in the
CIFAR-10 records, 33-87 s pass before the first logged step of a session's first run, and about a second in a later run
on the same machine, which finds its graphs in Inductor's on-disk cache. PyTorch's portable cache
(`torch.compiler.save_cache_artifacts` / `load_cache_artifacts`: Inductor's graphs with their compiled Triton kernels,
AOTAutograd's) carries that cache from one session to the next. With `COMPILE_CACHE` set to a folder, this runner
loads every `<folder>/<GPU>/*.bin` before the target runs (`<GPU>`: `bench.common.device_tag` of the device's name, or
'cpu': the cache's keys name the device, so artifacts of another GPU model would only miss) and, at exit, saves the
artifacts the process compiled or used as `<folder>/<GPU>/<program>-<hash of their keys>.bin` (zlib-compressed), unless
it loaded them all (nothing new) or a file of any program holds the same set: the folder only grows when something new
was compiled. It also saves when the process is ended by SIGTERM (`timeout`'s signal, which skips Python's exit
handlers otherwise), so a piece cut off at its time limit keeps what it compiled. Without `COMPILE_CACHE`, or
where PyTorch lacks the API, it only runs the target. A file that cannot be read or loaded is said on stderr and
skipped: the cache can cost a compilation, never a run. `bench/gpu_pieces.sh` runs its compiling pieces through it
(bench/results/README.md, "A warm start for torch.compile").
"""
import atexit, hashlib, os, runpy, signal, sys, zlib
from pathlib import Path


def gpu_name() -> str:
    "The device the artifacts belong to: the CUDA GPU's model as a record names it ('H100'), else 'cpu'."
    import torch
    if not torch.cuda.is_available(): return "cpu"
    from common import device_tag                                  # bench/ is sys.path[0] until the target runs
    return device_tag(torch.cuda.get_device_name())


def _keys(info) -> set:
    "The cache keys a `torch.compiler` CacheInfo names."
    return {k for ks in info.artifacts.values() for k in ks} if info is not None else set()


def load(folder:Path) -> tuple:
    "Load every artifact file in `folder` into this process's compile caches; (files loaded, the keys they held)."
    import torch
    n, keys = 0, set()
    for f in sorted(folder.glob("*.bin")):
        try: keys |= _keys(torch.compiler.load_cache_artifacts(zlib.decompress(f.read_bytes()))); n += 1
        except Exception as e: print(f"compile_cache: skipped {f} ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})", file=sys.stderr)
    return n, keys


def save(folder:Path, program:str, loaded:set=frozenset()):
    "Write the artifacts this process compiled or used to `folder`, named by the program and their keys, unless all were `loaded`."
    import torch
    try:
        got = torch.compiler.save_cache_artifacts()
        if not got or not any(got[1].artifacts.values()): return
        data, info = got
        keys = sorted(_keys(info))
        if set(keys) <= loaded: return                                  # nothing compiled here that the folder lacks
        digest = hashlib.sha256(' '.join(keys).encode()).hexdigest()[:12]
        if any(folder.glob(f"*-{digest}.bin")): return                  # the same graphs, saved before (by any program)
        path = folder / f"{program}-{digest}.bin"
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
        tmp.write_bytes(zlib.compress(data, 6)); os.replace(tmp, path)     # whole or not at all
        print(f"compile_cache: saved {len(keys)} artifacts to {path} ({path.stat().st_size / 2**20:.1f} MiB)", file=sys.stderr)
    except Exception as e: print(f"compile_cache: nothing saved ({type(e).__name__}: {e})", file=sys.stderr)


def _exit_on_term(*_):
    "SIGTERM: exit as Python does (the exit handlers, the save among them, run), ignoring a second one, which would cut the save short."
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.exit(128 + signal.SIGTERM)


def main(argv:list):
    "Run the target of `argv` (SCRIPT ARGS or -c CODE ARGS) as `python` would, with the cache around it."
    if argv[:1] in (["-h"], ["--help"]):                                 # its own help; a target's --help follows the target
        print(__doc__.strip()); raise SystemExit(0)
    if not argv or argv[0] == "-c" and len(argv) < 2:
        print("compile_cache: give a script and its arguments, or -c CODE", file=sys.stderr); raise SystemExit(2)
    if argv[0] != "-c" and not Path(argv[0]).is_file():
        print(f"compile_cache: no script at {argv[0]}; give a script and its arguments, or -c CODE", file=sys.stderr); raise SystemExit(2)
    code = argv[1] if argv[0] == "-c" else None
    program = "c-" + hashlib.sha256(code.encode()).hexdigest()[:6] if code else Path(argv[0]).stem
    for word in (code or "").replace("(", " ").replace(";", " ").split():     # `-c "from ssbnn.cli import pretrain_main; ..."`
        if word.endswith("_main"): program = word; break
    root = os.environ.get("COMPILE_CACHE")
    if root and hasattr(__import__("torch").compiler, "save_cache_artifacts"):
        folder = Path(root) / gpu_name()
        n, loaded = load(folder) if folder.is_dir() else (0, set())
        print(f"compile_cache: {n} artifact file(s) loaded from {folder}", file=sys.stderr)
        atexit.register(save, folder, program, loaded)
        signal.signal(signal.SIGTERM, _exit_on_term)            # `timeout` (or `gpu_pieces.sh salvage`): exit as Python does, saving first
    if code is not None:
        sys.argv, sys.path[0] = ["-c", *argv[2:]], ""                   # as `python -c` sets them
        exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})
    else:
        sys.argv = list(argv)
        sys.path[0] = str(Path(argv[0]).resolve().parent)                # as `python SCRIPT` sets it
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__": main(sys.argv[1:])
