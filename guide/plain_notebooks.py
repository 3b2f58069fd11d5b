"""Plain-Jupyter copies of the chapters, for Colab, JupyterLab without extensions, and download.

The chapters are written in MyST: `{exercise}` and `{solution}` directives, `{glue:text}` roles
that the book fills with measured numbers, `{index}` entries, `{doc}` links. Jupyter and Colab
show those as raw text, so the site serves a copy of each chapter in which
- an exercise becomes a bold "Exercise" paragraph and its solution a collapsed `<details>`
  block (a predict-the-output answer stays an executed cell, announced by a "Solution" line);
- a glued value becomes **[its name]**: the cell that computes it prints `[name] = value` there
  (the setup cell's stand-in for myst_nb.glue does it when myst_nb is absent);
- index entries disappear, a `{doc}` link points at the sibling notebook (a page that is not
  a notebook is named as a page of the book's site), and any other directive becomes a quoted
  paragraph headed by its name.
Code cells are copied unchanged, outputs cleared.
"""

import re
from functools import partial
from pathlib import Path

from guide.notebook import FENCE, cell_text, load, save

OPTION = re.compile(r"^:[\w-]+:.*\n?", re.M)
ROLE = re.compile(r"\{(?P<name>[\w:-]+)\}`(?P<text>[^`]*)`")
TARGET = re.compile(r"^\([\w-]+\)=\s*$\n?", re.M)
INTRO = (
    "*This notebook is a chapter of **The PyTorch Study Guide**, converted for plain Jupyter and"
    " Colab. Run it top to bottom: the first cell installs what is missing and checks the torch"
    " version. A number shown as **[name]** in the text is measured by the code: the cell that"
    " computes it prints `[name] = value`.*"
)


def convert_role(match, notebooks):
    name, text = match["name"], match["text"]
    if name.startswith("glue"):
        return f"**[{text.split(':')[0]}]**"
    if name == "doc":
        explicit = re.match(r"\s*(.*?)\s*<([^>]+)>\s*$", text)
        label, target = explicit.groups() if explicit else (text, text)
        if target not in notebooks:
            return f"{label} (a page of the book's site)"
        return f"[{label}]({target}.ipynb)"
    if name == "index":
        return text
    return f"`{text}`" if name in {"code", "kbd", "file", "samp"} else text


def convert_fence(match):
    name, arg = match["name"], match["arg"].strip()
    body = OPTION.sub("", match["body"]).strip("\n")
    body = FENCE.sub(convert_fence, body + "\n").strip("\n")
    if name == "index" or name.startswith("glue:figure"):
        return ""
    if name == "exercise":
        return f"\n**Exercise.** {body}\n\n"
    if name == "solution":
        return f"\n<details><summary>Solution</summary>\n\n{body}\n\n</details>\n\n"
    if name == "solution-start":
        return "**Solution:** run the next cell; the explanation follows it.\n"
    if name == "solution-end":
        return ""
    title = f"{name.capitalize()}" + (f": {arg}" if arg else "")
    quoted = "\n".join("> " + line if line else ">" for line in body.splitlines())
    return f"> **{title}.**\n>\n{quoted}\n"


def plain_markdown(text, notebooks):
    text = FENCE.sub(convert_fence, text if text.endswith("\n") else text + "\n")
    text = TARGET.sub("", text)
    text = ROLE.sub(partial(convert_role, notebooks=notebooks), text)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip("\n")


def plain_notebook(nb, notebooks=frozenset()):
    """The plain copy of notebook `nb`; `notebooks` names the chapters a `{doc}` link can reach."""
    cells = []
    for cell in nb["cells"]:
        cell = dict(cell)
        source = cell_text(cell)
        if cell["cell_type"] == "markdown":
            source = plain_markdown(source, notebooks)
            if not source.strip():
                continue
        else:
            cell["outputs"], cell["execution_count"] = [], None
        cell["source"] = source
        cell["metadata"] = {}
        cells.append(cell)
    title = cells[0]["source"].split("\n", 1)
    cells[0]["source"] = (
        title[0]
        + "\n\n"
        + INTRO
        + ("\n\n" + title[1].strip() if len(title) > 1 else "")
    )
    return {**nb, "cells": cells, "metadata": nb.get("metadata", {})}


def write_plain_notebooks(paths, out_dir):
    out_dir.mkdir(parents=True, exist_ok=True)
    names = frozenset(Path(path).stem for path in paths)
    for path in paths:
        save(plain_notebook(load(path), names), out_dir / Path(path).name)
