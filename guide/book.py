"""The book's vocabulary and where its parts live, each read from one source: the topics and
levels, the question IDs (questions.yml), the study order (_toc.yml), the pinned versions
(requirements.txt), and the pages that answer no question."""

import re
from pathlib import Path

import yaml

from guide.notebook import cell_text

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
CELLS = Path(__file__).resolve().parent / "cells"
REFERENCE_DIR = ROOT / "reference"
# The topics are the numbered parts of the toc, in study order; levels run within a part.
TOPICS = ["Foundations", "Training", "Performance", "Models in practice"]
LEVELS = ["Basic", "Intermediate", "Advanced"]
# Front and back matter: pages in chapters/ that answer no question ID.
FRONT_AND_BACK_MATTER = {
    "intro",
    "question_map",
    "cheat_sheet",
    "topics",
    "status",
    "measuring",
    "running",
    "drill",
    "gpu_reference",
}
# A "Going deeper" page (NAME_deeper.ipynb) holds what chapter NAME needs beyond its answer
# and core proof; the toc lists it as a section under NAME.
DEEPER_SUFFIX = "_deeper"
# A page is read in one sitting: at most this many words of prose (its Markdown cells).
PROSE_WORD_BUDGET = 3000
# Back matter that reports the build machine with its own cell instead of the shared ones.
NO_SHARED_CELLS = {"status"}
# A chapter's time budget: seconds of execution in the book build on the 2-core CI machine
# (tests/test_site.py checks every chapter's execution badge against it).
CHAPTER_BUDGET_S = 150
ID = re.compile(r"\b(?:DS|IQ|RM|EX)-\d+\b")
# Header lines under a chapter title: "**Answers:** DS-6 · IQ-5" and
# "**Topic:** Training · **Level:** Basic".
LINE = {
    "Answers": re.compile(r"^\*\*Answers:\*\*\s*(.+?)\s*$", re.M),
    "Topic": re.compile(r"\*\*Topic:\*\*\s*([^·\n]+?)\s*(?:·|$)", re.M),
    "Level": re.compile(r"\*\*Level:\*\*\s*([^·\n]+?)\s*(?:·|$)", re.M),
}


def load_map(root=ROOT):
    """questions.yml: the sources and every question with its ID and answering chapter."""
    return yaml.safe_load((Path(root) / "questions.yml").read_text(encoding="utf-8"))


def load_toc(root=ROOT):
    return yaml.safe_load((Path(root) / "_toc.yml").read_text(encoding="utf-8"))


def toc_files(root=ROOT):
    """Every file named in _toc.yml (root included), relative to the book's root."""
    toc = load_toc(root)
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for entry in part["chapters"]:
            files.append(entry["file"])
            files += [section["file"] for section in entry.get("sections", [])]
    return files


def toc_notebooks(root=ROOT):
    """(docname, path) of every notebook in the table of contents, in reading order."""
    root = Path(root)
    return [
        (f, root / f"{f}.ipynb")
        for f in toc_files(root)
        if (root / f"{f}.ipynb").exists()
    ]


def notebooks(root=ROOT):
    """Every notebook in chapters/, sorted by name."""
    return sorted((Path(root) / "chapters").glob("*.ipynb"))


def answered_ids(nb):
    """The IDs on the '**Answers:**' line of a notebook's first cell, or None if it has none."""
    match = LINE["Answers"].search(cell_text(nb["cells"][0]))
    return None if match is None else ID.findall(match.group(1))


def pins(root=ROOT):
    """Distribution name (lower case) -> pinned requirement line, from requirements.txt."""
    found = {}
    for line in (Path(root) / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            found[line.split("==")[0].strip().lower()] = line
    return found


def page_kind(name):
    """'matter' (front or back matter), 'deeper' (a Going deeper page under a chapter,
    NAME_deeper for chapter NAME) or 'question' (a chapter that answers question IDs)."""
    if name in FRONT_AND_BACK_MATTER:
        return "matter"
    if name.endswith(DEEPER_SUFFIX):
        return "deeper"
    return "question"


def deeper_page_of(name):
    """The Going deeper page's name for chapter `name`."""
    return name + DEEPER_SUFFIX
