"""Write the shared cells (guide/cells/*.py) into every chapter, between their markers.

Usage: python -m guide.sync [--check] [NOTEBOOK ...]   (default: every chapter; `make sync`)

A chapter holds each shared block it uses between two marker lines:

    # ---- shared: setup · edit guide/cells/setup.py, then run make sync ----
    ...
    # ---- end shared: setup ----

`make sync` rewrites what lies between them from the module's body (what follows its
`# ---- copied into the chapters from here ----` line; the lines above it exist so that the
module imports, lints and tests on its own). It fills in the chapter's name ("{{chapter}}"
in a string), the torch version pinned in requirements.txt ("{{torch_pin}}") and, for the
install block, the line `NEEDED = {}` with the pinned requirements of the third-party
modules the chapter imports. Every chapter has the `install`
block in its first code cell and the `setup` block in its second; others (such as `compile`)
are opt-in. `--check` changes nothing and exits 1, naming each chapter whose copy differs.
"""

import ast
import re
import sys
from pathlib import Path

from guide.book import CELLS, CHAPTERS, NO_SHARED_CELLS, ROOT, pins
from guide.notebook import (
    SHARED_BLOCK,
    SHARED_END,
    SHARED_START,
    cell_text,
    code_cells,
    load,
    save,
)

REQUIRED = ["install", "setup"]  # in the first and second code cells, in this order
COPIED_FROM = "# ---- copied into the chapters from here ----\n"
NEEDED_LINE = re.compile(r"^NEEDED = \{\}$", re.M)
# Third-party modules a chapter may import, and the distribution in requirements.txt that
# provides each; torch is checked, not installed, by the install block.
DISTRIBUTIONS = {
    "numpy": "numpy",
    "matplotlib": "matplotlib",
    "matplotlib_inline": None,  # comes with every IPython kernel
    "lightning": "lightning",
    "safetensors": "safetensors",
    "IPython": None,  # part of every Jupyter kernel
    "myst_nb": None,  # optional: the setup block falls back to a plain glue without it
    "torch": None,
}


def marker(name):
    return (
        f"# ---- shared: {name} · edit guide/cells/{name}.py, then run make sync ----"
    )


def modules_in(text):
    """Top-level names of the modules a piece of Python imports."""
    names = set()
    lines = [
        line for line in text.splitlines() if not line.lstrip().startswith(("%", "!"))
    ]
    for node in ast.walk(ast.parse("\n".join(lines))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def imported_modules(nb):
    """Modules a notebook imports: in its own code, and in the shared blocks it uses (read
    from cells/, so that a chapter whose blocks are still empty gets the same answer)."""
    names = set()
    for cell in code_cells(nb):
        text = cell_text(cell)
        for block in SHARED_START.finditer(text):
            if block.group("name") != "install":
                names |= modules_in(body(block.group("name")))
        text = SHARED_BLOCK.sub("", text)
        if not text.lstrip().startswith("%%"):
            names |= modules_in(text)
    return names


def needed(nb, chapter):
    """The install block's NEEDED dict, as source text: module -> pinned requirement."""
    pinned = pins()
    code = "\n".join(cell_text(cell) for cell in code_cells(nb))
    entries = []
    for module in sorted(imported_modules(nb) - set(sys.stdlib_module_names)):
        if re.search(rf"\b{module}\.py\b", code):
            continue  # a module the chapter writes itself (a model file, a worker script)
        if module not in DISTRIBUTIONS:
            raise SystemExit(
                f"{chapter}: imports {module!r}, which guide/sync.py does not know; add it"
                " to requirements.txt and to DISTRIBUTIONS there"
            )
        distribution = DISTRIBUTIONS[module]
        if distribution is not None:
            if distribution.lower() not in pinned:
                raise SystemExit(
                    f"{chapter}: {distribution} is not pinned in requirements.txt"
                )
            entries.append(f'    "{module}": "{pinned[distribution.lower()]}",\n')
    return "{\n" + "".join(entries) + "}" if entries else "{}"


def body(name, chapter="?"):
    """The part of guide/cells/NAME.py that a chapter holds, placeholders not yet filled."""
    path = CELLS / f"{name}.py"
    if not path.exists():
        raise SystemExit(
            f"{chapter}: no shared block {name!r} (expected {path.relative_to(ROOT)})"
        )
    text = path.read_text()
    if COPIED_FROM not in text:
        raise SystemExit(f"{path.relative_to(ROOT)} lacks the line {COPIED_FROM!r}")
    return text.split(COPIED_FROM, 1)[1].strip("\n")


def render(name, nb, chapter):
    text = body(name, chapter)
    text = text.replace("{{chapter}}", chapter).replace(
        "{{torch_pin}}", pins()["torch"].split("==")[1]
    )
    text = NEEDED_LINE.sub(lambda _: "NEEDED = " + needed(nb, chapter), text)
    last = ast.parse(text).body[-1]
    gap = (
        "\n\n" if isinstance(last, (ast.FunctionDef, ast.ClassDef)) else ""
    )  # as ruff formats it
    return f"{marker(name)}\n{text}\n{gap}{SHARED_END.format(name=name)}"


def synced(text, nb, chapter):
    """The cell source with every shared block rewritten from its source file."""
    out, pos = [], 0
    for match in SHARED_START.finditer(text):
        if match.start() < pos:
            continue
        name = match.group("name")
        end = text.find(SHARED_END.format(name=name), match.end())
        if end < 0:
            raise SystemExit(f"{chapter}: shared block {name!r} has no end marker")
        out += [text[pos : match.start()], render(name, nb, chapter)]
        pos = end + len(SHARED_END.format(name=name))
    return "".join(out) + text[pos:]


def problems_and_update(path):
    """(problems, new notebook or None when unchanged) for one chapter."""
    nb = load(path)
    chapter = path.stem
    cells = code_cells(nb)
    problems = []
    for index, name in enumerate(REQUIRED):
        blocks = (
            [] if index >= len(cells) else SHARED_START.findall(cell_text(cells[index]))
        )
        if name not in blocks:
            problems.append(
                f"code cell {index + 1} must hold the shared '{name}' block"
            )
    changed = False
    for cell in cells:
        text = cell_text(cell)
        new = synced(text, nb, chapter)
        if new != text:
            cell["source"] = new.splitlines(keepends=True)
            changed = True
    return problems, (nb if changed else None)


def main(argv):
    check = "--check" in argv
    paths = [Path(a).resolve() for a in argv if a != "--check"] or sorted(
        CHAPTERS.glob("*.ipynb")
    )
    failed = False
    for path in paths:
        if path.stem in NO_SHARED_CELLS:
            continue
        problems, nb = problems_and_update(path)
        for problem in problems:
            print(f"{path.relative_to(ROOT)}: {problem}")
            failed = True
        if nb is not None:
            if check:
                print(
                    f"{path.relative_to(ROOT)}: a shared block differs from cells/; run `make sync`"
                )
                failed = True
            else:
                save(nb, path)
                print("synced", path.relative_to(ROOT))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
