"""Write the shared cells (cells/*.py) into every chapter, between their markers.

Usage: python scripts/sync_cells.py [--check] [NOTEBOOK ...]   (default: every chapter)

A chapter holds each shared block it uses between two marker lines:

    # ---- shared: setup · edit cells/setup.py, then run make sync ----
    ...
    # ---- end shared: setup ----

`make sync` rewrites what lies between them from the source file, filling in the chapter's
name, the torch version pinned in requirements.txt and, for the install block, the pinned
requirements of the third-party modules the chapter imports. Every chapter has the `install`
block in its first code cell and the `setup` block in its second; others (such as `compile`)
are opt-in. `--check` changes nothing and exits 1, naming each chapter whose copy differs.
"""

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CELLS = ROOT / "cells"
CHAPTERS = ROOT / "chapters"
REQUIRED = ["install", "setup"]  # in the first and second code cells, in this order
EXEMPT = {"status"}  # back matter that reports the build machine with its own cell
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
START = re.compile(r"^# ---- shared: (?P<name>\w+) .*$", re.M)
END = "# ---- end shared: {name} ----"
SHARED_BLOCK = re.compile(
    r"^# ---- shared: (\w+) .*?^# ---- end shared: \1 ----$", re.M | re.S
)


def marker(name):
    return f"# ---- shared: {name} · edit cells/{name}.py, then run make sync ----"


def pins():
    """Distribution name (lower case) -> pinned requirement line, from requirements.txt."""
    found = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            found[line.split("==")[0].strip().lower()] = line
    return found


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def source(cell):
    return (
        cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
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
        text = source(cell)
        for block in START.finditer(text):
            if block.group("name") != "install":
                names |= modules_in((CELLS / f"{block.group('name')}.py").read_text())
        text = SHARED_BLOCK.sub("", text)
        if not text.lstrip().startswith("%%"):
            names |= modules_in(text)
    return names


def needed(nb, chapter):
    """The install block's NEEDED dict, as source text: module -> pinned requirement."""
    pinned = pins()
    code = "\n".join(source(cell) for cell in code_cells(nb))
    entries = []
    for module in sorted(imported_modules(nb) - set(sys.stdlib_module_names)):
        if re.search(rf"\b{module}\.py\b", code):
            continue  # a module the chapter writes itself (a model file, a worker script)
        if module not in DISTRIBUTIONS:
            raise SystemExit(
                f"{chapter}: imports {module!r}, which scripts/sync_cells.py does not know; add it"
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


def render(name, nb, chapter):
    path = CELLS / f"{name}.py"
    if not path.exists():
        raise SystemExit(
            f"{chapter}: no shared block {name!r} (expected {path.relative_to(ROOT)})"
        )
    body = path.read_text().rstrip("\n")
    body = body.replace("{{chapter}}", chapter).replace(
        "{{torch_pin}}", pins()["torch"].split("==")[1]
    )
    if "{{needed}}" in body:
        body = body.replace("{{needed}}", needed(nb, chapter))
    last = ast.parse(body).body[-1]
    gap = (
        "\n\n" if isinstance(last, (ast.FunctionDef, ast.ClassDef)) else ""
    )  # as ruff formats it
    return f"{marker(name)}\n{body}\n{gap}{END.format(name=name)}"


def synced(text, nb, chapter):
    """The cell source with every shared block rewritten from its source file."""
    out, pos = [], 0
    for match in START.finditer(text):
        if match.start() < pos:
            continue
        name = match.group("name")
        end = text.find(END.format(name=name), match.end())
        if end < 0:
            raise SystemExit(f"{chapter}: shared block {name!r} has no end marker")
        out += [text[pos : match.start()], render(name, nb, chapter)]
        pos = end + len(END.format(name=name))
    return "".join(out) + text[pos:]


def problems_and_update(path):
    """(problems, new notebook or None when unchanged) for one chapter."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    chapter = path.stem
    cells = code_cells(nb)
    problems = []
    for index, name in enumerate(REQUIRED):
        if index >= len(cells) or marker(name) not in source(cells[index]):
            problems.append(
                f"code cell {index + 1} must hold the shared '{name}' block"
            )
    changed = False
    for cell in cells:
        text = source(cell)
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
        if path.stem in EXEMPT:
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
                path.write_text(
                    json.dumps(nb, indent=1, ensure_ascii=False) + "\n",
                    encoding="utf-8",
                )
                print("synced", path.relative_to(ROOT))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
