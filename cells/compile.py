# What torch.compile's default backend (Inductor) needs from this machine, checked before the
# chapter compiles anything, so that a missing compiler gives a reason instead of a traceback.
import shutil

from torch._inductor import exc as inductor_exc
from torch._inductor.cpp_builder import get_cpp_compiler


def compile_skip_reason():
    """Why Inductor cannot compile here, or None when it can: it builds CPU kernels with a C++
    compiler, and Triton, which writes the GPU kernels, needs a C compiler for its launcher."""
    try:
        get_cpp_compiler()
    except inductor_exc.InvalidCxxCompiler:
        return (
            "no C++ compiler was found (Inductor tries $CXX, then g++, or clang++ on macOS), so"
            " torch.compile's default backend cannot build kernels here; install one (Debian:"
            " apt-get install g++) to run this demonstration"
        )
    if device.type == "cuda" and not any(
        shutil.which(cc) for cc in ("cc", "gcc", "clang")
    ):
        return "Triton needs a C compiler (cc, gcc or clang) to build its GPU kernel launcher"
    return None


COMPILE_SKIP = compile_skip_reason()
print("torch.compile (Inductor):", COMPILE_SKIP or "available")
