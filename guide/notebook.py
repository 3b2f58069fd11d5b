"""One notebook's cells, read one way everywhere: text, code, Markdown, headings, the shared
blocks that `make sync` writes, and the chapter's own code with those blocks blanked."""

import json
import re
from pathlib import Path

# A shared block in a code cell, written by `make sync` from guide/cells/NAME.py:
#     # ---- shared: NAME · edit guide/cells/NAME.py, then run make sync ----
#     ...
#     # ---- end shared: NAME ----
SHARED_START = re.compile(r"^# ---- shared: (?P<name>\w+) .*$", re.M)
SHARED_END = "# ---- end shared: {name} ----"
SHARED_BLOCK = re.compile(
    r"^# ---- shared: (\w+) .*?^# ---- end shared: \1 ----$", re.M | re.S
)
# A MyST directive fence: ```{name} arg ... ``` (or with tildes), nested fences use more.
FENCE = re.compile(
    r"^(?P<ticks>`{3,}|~{3,})\{(?P<name>[\w:-]+)\}[ \t]*(?P<arg>[^\n]*)\n(?P<body>.*?)^(?P=ticks)[ \t]*$\n?",
    re.M | re.S,
)

# Terminal colour codes, as tracebacks and some tools print them.
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def load(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def save(nb, path):
    """Write a notebook as the repository stores them (one-space indent, UTF-8, final newline)."""
    text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    Path(path).write_text(text, encoding="utf-8")


def cell_text(cell):
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def markdown_cells(nb):
    """(cell index, text) of every Markdown cell."""
    return [
        (i, cell_text(c))
        for i, c in enumerate(nb["cells"])
        if c["cell_type"] == "markdown"
    ]


def headings(nb, level=2):
    """The text of every heading of `level` in the Markdown cells, in order."""
    prefix = "#" * level + " "
    return [
        line[len(prefix) :].strip()
        for _, text in markdown_cells(nb)
        for line in text.splitlines()
        if line.startswith(prefix)
    ]


def blank_shared_blocks(text):
    """The cell's text with every shared block replaced by as many empty lines."""
    return SHARED_BLOCK.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def own_code(nb):
    """(cell index, code) of every code cell as the chapter wrote it: the shared blocks
    blanked out (they are checked against their source instead), IPython line magics and
    shell lines emptied, and cell-magic cells (%%writefile) left out: the files they write
    are checked as files."""
    out = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        text = blank_shared_blocks(cell_text(cell))
        if text.lstrip().startswith("%%"):
            continue
        lines = [
            "" if line.lstrip().startswith(("%", "!")) else line
            for line in text.splitlines()
        ]
        out.append((i, "\n".join(lines)))
    return out


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])
