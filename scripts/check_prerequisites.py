"""What `make install` needs from the machine, checked before anything is installed.

Each missing piece gets one line that says what it is for and how to get it. A Python that
is too old stops the install; a missing C++ compiler or Chromium is a warning, because the
book still builds without them (the torch.compile demonstrations print why they are skipped,
and the browser test is skipped outside CI).
"""

import os
import shutil
import sys

MIN_PYTHON = (3, 11)


def cxx_compiler():
    """The C++ compiler torch.compile's Inductor backend would use on the CPU, or None."""
    name = os.environ.get("CXX") or ("clang++" if sys.platform == "darwin" else "g++")
    return shutil.which(name)


def main():
    if sys.version_info < MIN_PYTHON:
        found = ".".join(map(str, sys.version_info[:3]))
        sys.exit(
            f"error: Python {'.'.join(map(str, MIN_PYTHON))} or newer is needed (this is {found});"
            " run with PYTHON=python3.12 (or another) make ..."
        )
    if cxx_compiler() is None:
        how = (
            "xcode-select --install"
            if sys.platform == "darwin"
            else "sudo apt-get install g++"
        )
        print(
            "warning: no C++ compiler found (CXX, or g++/clang++ on the PATH): the torch.compile"
            f" demonstrations will be skipped, each with a printed reason. To run them: {how}"
        )
    if shutil.which("chromium") is None and shutil.which("chromium-browser") is None:
        print(
            "note: Chromium is not installed: `make test` will skip the browser test"
            " (Debian/Ubuntu: sudo apt-get install chromium)"
        )


if __name__ == "__main__":
    main()
