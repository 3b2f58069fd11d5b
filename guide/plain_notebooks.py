"""Plain-Jupyter copies of the chapters, for Colab, JupyterLab without extensions, and download.

The chapters are written in MyST: `{exercise}` and `{solution}` directives, `{glue:text}` roles
that the book fills with measured numbers, `{index}` entries, `{doc}` links. Jupyter and Colab
show those as raw text, so the site serves a copy of each chapter in which
- an exercise becomes a bold "Exercise" paragraph and its solution a collapsed `<details>`
  block (a predict-the-output answer stays an executed cell, announced by a "Solution" line);
- a glued value becomes the value the site's build measured, in bold, so that the prose reads
  as sentences (**[its name]** when no build value is at hand); the cell that computes it
  prints `[name] = value` when the reader runs it (the setup cell's stand-in for myst_nb.glue);
- index entries disappear, a link to another chapter (`{doc}` or `[text](name.ipynb)`) points at
  its plain copy, by an absolute Colab address when the site has one (a relative link breaks
  in Colab), and a page that is not a notebook is named as a page of the book's site; any
  other directive becomes a quoted paragraph headed by its name.
Code cells are copied with outputs cleared; the shared install and setup cells are collapsed
(JupyterLab's `source_hidden`, Colab's form view) under a title line that says what they are.
"""

import ast
import json
import re
from functools import partial
from pathlib import Path

from guide.notebook import FENCE, SHARED_START, cell_text, load, save

OPTION = re.compile(r"^:[\w-]+:.*\n?", re.M)
ROLE = re.compile(r"\{(?P<name>[\w:-]+)\}`(?P<text>[^`]*)`")
TARGET = re.compile(r"^\([\w-]+\)=\s*$\n?", re.M)
INTRO = (
    "*This notebook is a chapter of **The PyTorch Study Guide**, converted for plain Jupyter and"
    " Colab. Run it top to bottom.{shared}{numbers}*"
)
SHARED_NOTE = (
    " The first cell installs what is missing and checks the torch version; it and the"
    " second are collapsed: they are the book's shared setup."
)
NUMBERS_MEASURED = (
    "Numbers in bold in the text were measured when the book's site was built, on the"
    " hardware its setup line named; when you run a cell, it prints your machine's value"
    " as `[name] = value`."
)
NUMBERS_UNKNOWN = (
    "A number shown as **[name]** in the text is measured by the code: the cell that"
    " computes it prints `[name] = value`."
)
# The collapsed shared cells' title lines (Colab shows a `#@title` in place of the code).
SHARED_TITLES = {
    "install": "#@title Install: checks torch, installs what this chapter needs (run it first)",
    "setup": "#@title Setup: the device, the hardware line and the book's shared helpers",
}
MARKDOWN_LINK = re.compile(r"\]\((?P<name>[\w-]+)\.ipynb(?P<anchor>#[^)\s]*)?\)")


def glued_text(text, spec):
    """A glued value as the text shows it: its repr (text/plain) evaluated back, formatted
    with the role's format spec (`key:.1f`), strings unquoted."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    if isinstance(value, str):
        return value
    return format(value, spec) if spec else str(value)


def convert_role(match, notebooks, link, values):
    name, text = match["name"], match["text"]
    if name.startswith("glue"):
        key, _, spec = text.partition(":")
        if key in values:
            return f"**{glued_text(values[key], spec)}**"
        return f"**[{key}]**"
    if name == "doc":
        explicit = re.match(r"\s*(.*?)\s*<([^>]+)>\s*$", text)
        label, target = explicit.groups() if explicit else (text, text)
        if target not in notebooks:
            return f"{label} (a page of the book's site)"
        return f"[{label}]({link(target)})"
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


def plain_markdown(text, notebooks, link=lambda name: f"{name}.ipynb", values=None):
    text = FENCE.sub(convert_fence, text if text.endswith("\n") else text + "\n")
    text = TARGET.sub("", text)
    text = ROLE.sub(
        partial(convert_role, notebooks=notebooks, link=link, values=values or {}), text
    )
    text = MARKDOWN_LINK.sub(
        lambda m: (
            f"]({link(m['name'])}{m['anchor'] or ''})"
            if m["name"] in notebooks
            else m.group(0)
        ),
        text,
    )
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip("\n")


def collapsed(source):
    """A shared install or setup cell, collapsed under its title line; other cells as they are."""
    block = SHARED_START.match(source)
    if block is None or block["name"] not in SHARED_TITLES:
        return source, {}
    metadata = {"jupyter": {"source_hidden": True}, "cellView": "form"}
    return SHARED_TITLES[block["name"]] + "\n" + source, metadata


def plain_notebook(nb, notebooks=frozenset(), link_base=None, values=None):
    """The plain copy of notebook `nb`. `notebooks` names the chapters a link can reach, found
    at `link_base` + name.ipynb (relative to the notebook when None); `values` maps glue keys
    to the text/plain of the value the site's build glued."""

    def link(name):
        return f"{link_base or ''}{name}.ipynb"

    cells = []
    for cell in nb["cells"]:
        cell = dict(cell)
        source = cell_text(cell)
        metadata = {}
        if cell["cell_type"] == "markdown":
            source = plain_markdown(source, notebooks, link, values)
            if not source.strip():
                continue
        else:
            cell["outputs"], cell["execution_count"] = [], None
            source, metadata = collapsed(source)
        cell["source"] = source
        cell["metadata"] = metadata
        cells.append(cell)
    title = cells[0]["source"].split("\n", 1)
    glues = any(
        "{glue" in cell_text(c) for c in nb["cells"] if c["cell_type"] == "markdown"
    )
    numbers = (NUMBERS_MEASURED if values else NUMBERS_UNKNOWN) if glues else ""
    shared = any(
        SHARED_START.match(cell_text(c))
        for c in nb["cells"]
        if c["cell_type"] == "code"
    )
    intro = INTRO.format(
        shared=SHARED_NOTE if shared else "",
        numbers=" " + numbers if numbers else "",
    )
    cells[0]["source"] = (
        title[0]
        + "\n\n"
        + intro
        + ("\n\n" + title[1].strip() if len(title) > 1 else "")
    )
    return {**nb, "cells": cells, "metadata": nb.get("metadata", {})}


def glued_values(path):
    """key -> text/plain of each value myst-nb glued for a page, from the .glue.json file it
    writes beside the executed notebook; {} when the page was not executed."""
    if not Path(path).exists():
        return {}
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {
        key: item["data"]["text/plain"]
        for key, item in data.items()
        if "text/plain" in item.get("data", {})
    }


def write_plain_notebooks(paths, out_dir, link_base=None, glue_files=None):
    """Write the plain copy of each notebook in `paths` to `out_dir`; `glue_files` maps a
    notebook's path to the .glue.json file of its execution in this build."""
    out_dir.mkdir(parents=True, exist_ok=True)
    names = frozenset(Path(path).stem for path in paths)
    for path in paths:
        values = glued_values((glue_files or {}).get(path, ""))
        plain = plain_notebook(load(path), names, link_base, values)
        save(plain, out_dir / Path(path).name)
