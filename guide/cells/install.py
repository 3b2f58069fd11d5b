"""The install block: the first code cell of every chapter (tagged remove-cell), for Colab
or any fresh Jupyter. Written into each chapter by `make sync`, which fills in the pinned torch
version and the line `NEEDED = {}`."""

# ---- copied into the chapters from here ----
# For Colab or any fresh Jupyter: checks torch, installs only what this chapter lacks.
# NEEDED is written by `make sync` from the chapter's imports and requirements.txt.
import importlib.metadata
import importlib.util
import subprocess
import sys

BOOK_TORCH = "{{torch_pin}}"
NEEDED = {}
if importlib.util.find_spec("torch") is None:
    raise ModuleNotFoundError(
        f"This chapter needs PyTorch: pip install torch=={BOOK_TORCH} (the version"
        " the book is tested with; on a machine without an NVIDIA GPU, add"
        " --index-url https://download.pytorch.org/whl/cpu for the small CPU build)"
    )
missing = [
    req for module, req in NEEDED.items() if importlib.util.find_spec(module) is None
]
if missing:
    print("Installing what this chapter needs:", " ".join(missing))
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", *missing], check=True
    )
    importlib.invalidate_caches()
installed_torch = importlib.metadata.version("torch")
if installed_torch.split("+")[0] != BOOK_TORCH:
    print(
        f"Note: torch {installed_torch} is installed; the book is tested with"
        f" {BOOK_TORCH}. A cell may fail, or print other numbers, for that reason"
        " alone."
    )
