"""The book's generated pages and page furniture, all read from one source each.

- ``question-map``: questions.yml as one table per source, each ID linked to its chapter.
- ``cheat-sheet``: every chapter's "Short answer" section, taken from the notebook itself.
- ``chapter-index``: chapters grouped by the topic and level named under each chapter's title.
- An execution badge under every executed chapter's title: status, run time, hardware and
  torch version (from the chapter's own "Running on:" output) and the date it executed.
"""

import datetime
import json
import re
from pathlib import Path

import yaml
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parent.parent
MAP_FILE = ROOT / "questions.yml"
TOC_FILE = ROOT / "_toc.yml"
# Header lines under a chapter title: "**Answers:** DS-6 · IQ-5" and "**Topic:** Training · **Level:** Basic".
LINE = {
    "Answers": re.compile(r"^\*\*Answers:\*\*\s*(.+?)\s*$", re.M),
    "Topic": re.compile(r"\*\*Topic:\*\*\s*([^·\n]+?)\s*(?:·|$)", re.M),
    "Level": re.compile(r"\*\*Level:\*\*\s*([^·\n]+?)\s*(?:·|$)", re.M),
}
# The vocabulary of chapter topics and levels, in the order the index page shows them.
TOPICS = ["Foundations", "Training", "Performance", "Models in practice"]
LEVELS = ["Basic", "Intermediate", "Advanced"]


def load_map():
    return yaml.safe_load(MAP_FILE.read_text(encoding="utf-8"))


def chapter_notebooks():
    """(docname, path) of every notebook in the table of contents, in reading order."""
    toc = yaml.safe_load(TOC_FILE.read_text(encoding="utf-8"))
    files = [
        entry["file"] for part in toc.get("parts", []) for entry in part["chapters"]
    ]
    return [(f, ROOT / f"{f}.ipynb") for f in files if (ROOT / f"{f}.ipynb").exists()]


def read_chapter(path):
    """Title, header fields and the Short answer text of a chapter notebook."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    texts = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    first = texts[0]
    info = {"title": first.splitlines()[0].lstrip("# ").strip()}
    for key, pattern in LINE.items():
        match = pattern.search(first)
        info[key.lower()] = match.group(1) if match else None
    body = "\n\n".join(texts)
    match = re.search(r"^## Short answer\s*\n(.*?)(?=^## |\Z)", body, re.M | re.S)
    info["short"] = match.group(1).strip() if match else None
    return info


class _GeneratedMarkdown(SphinxDirective):
    """Base: subclasses return MyST lines; they are parsed into a container."""

    has_content = False

    def lines(self):
        raise NotImplementedError

    def question_chapters(self):
        """(name, info) of every chapter that answers questions, in reading order; the page
        that uses them is rebuilt when one of those notebooks changes."""
        chapters = []
        for docname, path in chapter_notebooks():
            info = read_chapter(path)
            if info["answers"]:
                self.env.note_dependency(str(path))
                chapters.append((docname.rsplit("/", 1)[-1], info))
        return chapters

    def run(self):
        self.env.note_dependency(str(MAP_FILE))
        self.env.note_dependency(str(TOC_FILE))
        container = nodes.container(classes=[self.name])
        text = StringList(self.lines(), source=self.get_source_info()[0])
        self.state.nested_parse(text, self.content_offset, container)
        return [container]


class QuestionMap(_GeneratedMarkdown):
    def lines(self):
        qmap = load_map()
        out = []
        for prefix, title in qmap["sources"].items():
            out += [
                f"**{prefix}: {title}**",
                "",
                "| ID | Question | Answered in |",
                "|---|---|---|",
            ]
            for q in qmap["questions"]:
                if q["id"].split("-")[0] == prefix:
                    where = (
                        "*pending*"
                        if q["chapter"] == "pending"
                        else f"{{doc}}`{q['chapter']}`"
                    )
                    out.append(f"| {q['id']} | {q['question']} | {where} |")
            out.append("")
        return out


class CheatSheet(_GeneratedMarkdown):
    def lines(self):
        out = []
        for name, info in self.question_chapters():
            title = f"{info['title']} ({info['answers']})"
            out += [
                f"::::{{admonition}} {title}",
                info["short"],
                "",
                f"The proof: {{doc}}`{name}`.",
                "::::",
                "",
            ]
        return out


class ChapterIndex(_GeneratedMarkdown):
    def lines(self):
        chapters = self.question_chapters()
        out = ["| Topic | Basic | Intermediate | Advanced |", "|---|---|---|---|"]
        for topic in TOPICS:
            cells = [
                "<br>".join(
                    f"{{doc}}`{name}`"
                    for name, info in chapters
                    if info["topic"] == topic and info["level"] == level
                )
                for level in LEVELS
            ]
            out.append(f"| {topic} | " + " | ".join(cells) + " |")
        return out


def add_execution_badge(app, doctree):
    """Under the title of an executed notebook, say how and where it ran in this build."""
    data = getattr(app.env, "nb_metadata", {}).get(app.env.docname, {}).get("exec_data")
    if not data:
        return
    hardware = next(
        (
            m.group(1).strip()
            for node in doctree.findall(nodes.literal_block)
            if "output" in node["classes"]
            and (m := re.search(r"Running on: (.+)", node.astext()))
        ),
        None,
    )
    if hardware is None:
        return  # pages that report no hardware (the status page) carry the execution table instead
    status = "passed" if data["succeeded"] else "FAILED"
    runtime = (
        f"{data['runtime']:.1f} s"
        if data.get("runtime") is not None
        else "unknown time"
    )
    when = datetime.datetime.fromtimestamp(
        data["mtime"], datetime.timezone.utc
    ).strftime("%Y-%m-%d")
    badge = nodes.paragraph(classes=["exec-badge"])
    badge += nodes.Text(f"Executed: {status} in {runtime} on {when} · {hardware}")
    title_section = next(doctree.findall(nodes.section))
    title_section.insert(1, badge)


def drop_duplicate_scripts(app, pagename, templatename, context, doctree):
    """sphinx-thebe registers its inline config script once per read pass; a page that declares
    `const THEBE_JS_URL` twice throws a JavaScript error in the browser. Keep the first of each."""
    seen, unique = set(), []
    for script in context.get("script_files", []):
        key = (script.filename or "", repr(sorted(script.attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"][:] = unique


def setup(app):
    app.connect(
        "html-page-context", drop_duplicate_scripts, priority=900
    )  # after every script is added
    app.add_directive("question-map", QuestionMap)
    app.add_directive("cheat-sheet", CheatSheet)
    app.add_directive("chapter-index", ChapterIndex)
    app.connect("doctree-read", add_execution_badge)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
