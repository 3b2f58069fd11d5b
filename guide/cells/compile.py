"""The compile block, for chapters that compile with Inductor. In a chapter it runs after the
setup block, whose names it uses; as a module it imports them from there."""

import time  # noqa: F401 (in a chapter: the setup cell's)

from guide.cells.setup import device, sync  # noqa: F401 (in a chapter: the setup cell's)

# isort: split
# ---- copied into the chapters from here ----
# For chapters that compile with Inductor, torch.compile's default backend: whether this
# machine can build kernels (a missing compiler gives a reason, not a traceback); a new,
# empty cache folder, so that the chapter's first compile is cold on every run; and a
# clock for first calls that reports what Inductor's on-disk caches did.
import atexit
import os
import shutil
import tempfile

from torch._dynamo.utils import counters
from torch._inductor import exc as inductor_exc
from torch._inductor.cpp_builder import get_cpp_compiler
from torch._inductor.runtime.cache_dir_utils import default_cache_dir


def compile_skip_reason():
    """Why Inductor cannot compile here, or None when it can: it builds CPU kernels with
    a C++ compiler, and Triton, which writes GPU kernels, needs a C compiler too."""
    try:
        get_cpp_compiler()
    except inductor_exc.InvalidCxxCompiler:
        return (
            "no C++ compiler was found (Inductor tries $CXX, then g++, or clang++ on"
            " macOS), so torch.compile's default backend cannot build kernels here;"
            " install one (Debian: apt-get install g++) to run this demonstration"
        )
    if device.type == "cuda" and not any(
        shutil.which(cc) for cc in ("cc", "gcc", "clang")
    ):
        return (
            "Triton needs a C compiler (cc, gcc or clang) to build its kernel launcher"
        )
    return None


COMPILE_SKIP = compile_skip_reason()
print("torch.compile (Inductor):", COMPILE_SKIP or "available")

# Inductor keeps compiled graphs on disk (the FX graph and AOTAutograd caches, with the
# C++ or Triton kernels) and reuses them in later processes, so a second run of a page
# would time a warm cache. This kernel writes to a new folder, deleted when it exits.
inductor_cache = tempfile.mkdtemp(prefix="{{chapter}}_inductor_")
atexit.register(shutil.rmtree, inductor_cache, ignore_errors=True)
os.environ["TORCHINDUCTOR_CACHE_DIR"] = inductor_cache
os.environ["TRITON_CACHE_DIR"] = os.path.join(inductor_cache, "triton")
# No cache setting moves one file: the precompiled header that CPU kernels include,
# built once per machine and compiler in Inductor's default folder, and kept there.
header_dir = os.path.join(default_cache_dir(), "precompiled_headers")
header_built = os.path.isdir(header_dir) and any(
    name.endswith(".gch") for name in os.listdir(header_dir)
)
print(
    "Inductor caches: a new, empty folder for this run; precompiled C++ header:",
    "left by an earlier run" if header_built else "none yet (a CPU compile builds it)",
)


def time_first_call(fn):
    """Seconds taken by `fn()`, a call that compiles, with the device synchronized
    around it, and what Inductor's on-disk caches did: 'miss' (a cold compile), 'hit' (a
    warm one) or 'not used'."""
    counters.clear()
    sync()
    start = time.perf_counter()
    fn()
    sync()
    seconds = time.perf_counter() - start
    inductor, aot = counters["inductor"], counters["aot_autograd"]
    if inductor["fxgraph_cache_miss"] or aot["autograd_cache_miss"]:
        return seconds, "miss"
    hit = inductor["fxgraph_cache_hit"] or aot["autograd_cache_hit"]
    return seconds, "hit" if hit else "not used"
