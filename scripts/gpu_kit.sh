#!/usr/bin/env bash
# The kit for running every chapter on a GPU machine (README: "Running the chapters on a GPU
# machine"), made where the package registry is reachable: KIT/whl gets the wheels that a CUDA
# image with torch, numpy, matplotlib and lightning but no Jupyter stack lacks (nbclient,
# ipykernel and what they need; myst-nb and docutils, which its `glue` imports, without the
# Sphinx stack), at the versions of the book's environment; KIT/gpu_run.py is the runner and
# KIT/HOWTO.txt the one command to run there.
#
# Usage: scripts/gpu_kit.sh KIT      (about 15 MB; `make gpu-kit` makes _build/gpu-kit)
# GPU_PYTHON: the GPU machine's Python version (default 3.12); PYTHON: the interpreter whose
# installed versions are downloaded (default .venv/bin/python, which `make install` creates).
set -euo pipefail
kit=${1:?usage: scripts/gpu_kit.sh KIT}
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$root/.venv/bin/python}
gpu_python=${GPU_PYTHON:-3.12}
test -x "$python" || { echo "gpu_kit: no $python: run 'make install' first, or set PYTHON" >&2; exit 1; }

version() {  # the version of package $1 installed for $python
    "$python" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$1" \
        || { echo "gpu_kit: $1 is not installed for $python" >&2; exit 1; }
}
nbclient=$(version nbclient)
ipykernel=$(version ipykernel)
myst_nb=$(version myst-nb)
docutils=$(version docutils)

mkdir -p "$kit/whl"
plat=(--only-binary=:all: --python-version "$gpu_python" --implementation cp --platform any
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64
      --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
pip=("$python" -m pip download -q --disable-pip-version-check "${plat[@]}" -d "$kit/whl")
"${pip[@]}" "nbclient==$nbclient" "ipykernel==$ipykernel"
"${pip[@]}" --no-deps "myst-nb==$myst_nb" "docutils==$docutils"
# torch, matplotlib and lightning bring these to the image already: a second copy on
# PYTHONPATH would shadow the version they were installed with.
rm -f "$kit"/whl/{packaging,python_dateutil,typing_extensions}-*.whl
cp "$root/guide/gpu_run.py" "$kit/"
name=$(basename "$kit")
howto="From the book's root, with this kit copied there as $name/: python3 -m pip install -q --no-index --no-deps --target /tmp/site $name/whl/*.whl && PYTHONPATH=/tmp/site python3 $name/gpu_run.py reference/gpu-run-\$(date -u +%F).json --keep-notebooks"
echo "$howto" > "$kit/HOWTO.txt"
echo "$(ls "$kit/whl" | wc -l) wheels, $(du -sh "$kit/whl" | cut -f1) in $kit/whl (nbclient $nbclient, ipykernel $ipykernel, myst-nb $myst_nb, docutils $docutils)"
echo "$howto"
