"""The book's generated pages and page furniture, all read from one source each.

Directives (each page that uses one is rebuilt when a chapter it reads changes):
- ``question-map``: questions.yml grouped by topic in study order, one anchor per ID.
- ``cheat-sheet``: each chapter's one-sentence answer and "say this" bullets, by topic.
- ``drill``: every Check-yourself question in the book, solutions collapsed, by topic.
- ``chapter-index`` and ``study-path``: the chapters in study order with level and reading time.
- ``gpu-reference``: what the chapters measured when run on a GPU machine (reference/*.json,
  written by scripts/gpu_reference.py from such a run).

Page furniture:
- The IDs on each chapter's "Answers" line link to their rows on the question map.
- An execution badge under every executed chapter's title: status, run time, hardware and
  torch version (from the chapter's own "Running on:" output) and the date it executed.
- Plain-Jupyter copies of the chapters (notebooks/NAME.ipynb in the site), which the download
  and Colab buttons serve: see plain_notebooks.py.

The study order is the table of contents: its numbered parts are the topics, and within a
part the chapters run from Basic to Advanced (tests/test_structure.py checks both).
"""

import ast
import datetime
import json
import math
import re
from pathlib import Path

import yaml
from docutils import nodes
from docutils.statemachine import StringList
from plain_notebooks import write_plain_notebooks
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parent.parent
MAP_FILE = ROOT / "questions.yml"
REFERENCE_DIR = ROOT / "reference"
TOC_FILE = ROOT / "_toc.yml"
# Header lines under a chapter title: "**Answers:** DS-6 · IQ-5" and "**Topic:** Training · **Level:** Basic".
LINE = {
    "Answers": re.compile(r"^\*\*Answers:\*\*\s*(.+?)\s*$", re.M),
    "Topic": re.compile(r"\*\*Topic:\*\*\s*([^·\n]+?)\s*(?:·|$)", re.M),
    "Level": re.compile(r"\*\*Level:\*\*\s*([^·\n]+?)\s*(?:·|$)", re.M),
}
ID = re.compile(r"\b(?:DS|IQ|RM|EX)-\d+\b")
# The vocabulary of chapter topics (the numbered parts of the toc) and levels, in study order.
TOPICS = ["Foundations", "Training", "Performance", "Models in practice"]
LEVELS = ["Basic", "Intermediate", "Advanced"]
# Reading speed used for the reading times: prose words, and lines of visible code, per minute.
WORDS_PER_MINUTE, CODE_LINES_PER_MINUTE = 200, 15
FENCE = re.compile(
    r"^(`{3,}|~{3,})\{(?P<name>[\w-]+)\}(?P<arg>[^\n]*)\n(?P<body>.*?)^\1\s*$",
    re.M | re.S,
)


def load_map():
    return yaml.safe_load(MAP_FILE.read_text(encoding="utf-8"))


def question_anchor(qid):
    return "q-" + qid.lower()


def chapter_notebooks():
    """(docname, path) of every notebook in the table of contents, in reading order."""
    toc = yaml.safe_load(TOC_FILE.read_text(encoding="utf-8"))
    files = [
        entry["file"] for part in toc.get("parts", []) for entry in part["chapters"]
    ]
    return [(f, ROOT / f"{f}.ipynb") for f in files if (ROOT / f"{f}.ipynb").exists()]


def cell_source(cell):
    return (
        cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    )


def short_answer_parts(short):
    """The bold opening sentence and the 'say this' bullets of a Short answer section."""
    sentence = re.match(r"\*\*(.+?)\*\*", short or "")
    bullets = re.findall(r"^- (.+(?:\n  .+)*)", short or "", re.M)
    return (sentence.group(1) if sentence else None), [
        " ".join(b.split()) for b in bullets
    ]


def exercises(markdown_texts):
    """(label, question, answer) of each Check-yourself item: an {exercise} with its {solution},
    or a predict-the-output item whose answer is explained between solution-start and -end."""
    body = "\n\n".join(markdown_texts)
    questions, answers = {}, {}
    for match in FENCE.finditer(body):
        name, arg, text = match["name"], match["arg"].strip(), match["body"]
        options = dict(re.findall(r"^:(\w+):\s*(.*)$", text, re.M))
        text = re.sub(r"^:\w+:.*\n", "", text, flags=re.M).strip()
        if name == "exercise":
            questions[options.get("label")] = text
        elif name == "solution":
            answers[arg] = text
    for match in re.finditer(
        r"```\{solution-start\}\s+(\S+).*?```\s*$(.*?)```\{solution-end\}",
        body,
        re.M | re.S,
    ):
        answers[match.group(1)] = match.group(2).strip()
    return [(label, q, answers.get(label, "")) for label, q in questions.items()]


def reading_minutes(cells):
    """Minutes to read a chapter: its prose and its visible code (hidden cells excluded)."""
    words = code_lines = 0
    for cell in cells:
        tags = cell.get("metadata", {}).get("tags", [])
        text = cell_source(cell)
        if cell["cell_type"] == "markdown":
            words += len(text.split())
        elif not {"remove-cell", "hide-input", "remove-input"} & set(tags):
            code_lines += len([line for line in text.splitlines() if line.strip()])
    return max(
        1, math.ceil(words / WORDS_PER_MINUTE + code_lines / CODE_LINES_PER_MINUTE)
    )


def read_chapter(path):
    """Title, header fields, Short answer, exercises and reading time of a chapter notebook."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    texts = [cell_source(c) for c in cells if c["cell_type"] == "markdown"]
    first = texts[0]
    info = {"title": first.splitlines()[0].lstrip("# ").strip()}
    for key, pattern in LINE.items():
        match = pattern.search(first)
        info[key.lower()] = match.group(1) if match else None
    body = "\n\n".join(texts)
    match = re.search(r"^## Short answer\s*\n(.*?)(?=^## |\Z)", body, re.M | re.S)
    info["short"] = match.group(1).strip() if match else None
    info["sentence"], info["bullets"] = short_answer_parts(info["short"])
    info["exercises"] = exercises(texts)
    info["minutes"] = reading_minutes(cells)
    return info


def parts():
    """(caption, [(name, info), ...]) for every numbered part of the toc, in study order."""
    toc = yaml.safe_load(TOC_FILE.read_text(encoding="utf-8"))
    out = []
    for part in toc["parts"]:
        if part.get("numbered"):
            chapters = [
                (
                    e["file"].rsplit("/", 1)[-1],
                    read_chapter(ROOT / f"{e['file']}.ipynb"),
                )
                for e in part["chapters"]
            ]
            out.append((part["caption"], chapters))
    return out


class _GeneratedMarkdown(SphinxDirective):
    """Base: subclasses return MyST lines; they are parsed (headings allowed) in place."""

    has_content = False

    def lines(self):
        raise NotImplementedError

    def study_parts(self):
        """The toc's parts; the page is rebuilt when a chapter or the toc changes."""
        for _, path in chapter_notebooks():
            self.env.note_dependency(str(path))
        return parts()

    def run(self):
        self.env.note_dependency(str(MAP_FILE))
        self.env.note_dependency(str(TOC_FILE))
        container = nodes.container(classes=[self.name])
        text = StringList(self.lines(), source=self.get_source_info()[0])
        self.state.nested_parse(text, self.content_offset, container, match_titles=True)
        return container.children


def escape_cell(text):
    return text.replace("|", "\\|")


class QuestionMap(_GeneratedMarkdown):
    def lines(self):
        qmap = load_map()
        by_chapter = {}
        for q in qmap["questions"]:
            by_chapter.setdefault(q["chapter"], []).append(q)
        out = []
        for caption, chapters in self.study_parts():
            out += [
                f"## {caption}",
                "",
                "| ID | Question | Answered in |",
                "|---|---|---|",
            ]
            for name, _info in chapters:
                for q in by_chapter.get(name, []):
                    qid = f'<span id="{question_anchor(q["id"])}" class="qid">{q["id"]}</span>'
                    out.append(
                        f"| {qid} | {escape_cell(q['question'])} | {{doc}}`{name}` |"
                    )
            out.append("")
        pending = by_chapter.get("pending", [])
        if pending:
            out += [
                "## Pending",
                "",
                "| ID | Question | Answered in |",
                "|---|---|---|",
            ]
            for q in pending:
                qid = f'<span id="{question_anchor(q["id"])}" class="qid">{q["id"]}</span>'
                out.append(f"| {qid} | {escape_cell(q['question'])} | *pending* |")
            out.append("")
        out.append(
            "Sources: "
            + "; ".join(f"**{k}** {v}" for k, v in qmap["sources"].items())
            + "."
        )
        return out


class CheatSheet(_GeneratedMarkdown):
    def lines(self):
        out = []
        for caption, chapters in self.study_parts():
            out += [f"## {caption}", ""]
            for name, info in chapters:
                out += [f"### {info['title']}", "", f"**{info['sentence']}**", ""]
                out += [f"- {bullet}" for bullet in info["bullets"]]
                out += ["", f"{{doc}}`The proof <{name}>` · {info['answers']}", ""]
        return out


class Drill(_GeneratedMarkdown):
    def lines(self):
        out = []
        for caption, chapters in self.study_parts():
            out += [f"## {caption}", ""]
            for name, info in chapters:
                out += [f"### {info['title']}", ""]
                for _label, question, answer in info["exercises"]:
                    out += [
                        "````{div} drill-item",
                        question,
                        "",
                        "```{admonition} Answer",
                        ":class: dropdown",
                        "",
                    ]
                    out += [
                        answer or f"See the chapter {{doc}}`{name}`.",
                        "```",
                        "````",
                        "",
                    ]
                out += [f"In the chapter: {{doc}}`{name}`.", ""]
        return out


class ChapterIndex(_GeneratedMarkdown):
    def lines(self):
        out = []
        for caption, chapters in self.study_parts():
            out += [f"## {caption}", ""]
            for name, info in chapters:
                out.append(
                    f"1. {{doc}}`{name}` · {info['level']} · {info['minutes']} min · {info['answers']}"
                )
            out.append("")
        return out


class StudyPath(_GeneratedMarkdown):
    def lines(self):
        rows = ["| | Chapter | Level | Reading time |", "|---|---|---|---|"]
        number = 0
        total = 0
        for caption, chapters in self.study_parts():
            rows.append(f"| | **{caption}** | | |")
            for name, info in chapters:
                number += 1
                total += info["minutes"]
                rows.append(
                    f"| {number} | {{doc}}`{name}` | {info['level']} | {info['minutes']} min |"
                )
        hours = total / 60
        return rows + [
            "",
            f"In all about {hours:.0f} hours of reading, before running anything yourself.",
        ]


def shown_value(text):
    """A glued value's repr as a reader wants it: strings unquoted, floats to 4 figures."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text  # not a literal (an object's repr): show it as it is
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


class GpuReference(_GeneratedMarkdown):
    def lines(self):
        out = []
        for path in sorted(REFERENCE_DIR.glob("*.json")):
            self.env.note_dependency(str(path))
            ref = json.loads(path.read_text(encoding="utf-8"))
            when, gpu, software = ref["machine"][:3]
            out += [f"## {gpu.split(',')[0]}, {when[:10]}", ""]
            out += [
                f"Run started {when}: {gpu}; {software}; chapters from `{path.name}`.",
                "",
            ]
            for _caption, chapters in self.study_parts():
                for name, info in chapters:
                    result = ref["chapters"].get(name)
                    if result is None:
                        continue
                    outcome = (
                        "passed"
                        if result["status"] == "passed"
                        else f"failed: `{result['error']}`"
                    )
                    out += [
                        f"### {info['title']}",
                        "",
                        f"{{doc}}`{name}` · {outcome} · {result['seconds']} s",
                        "",
                    ]
                    values = {
                        k: v
                        for k, v in result["glued"].items()
                        if not k.endswith("_hardware")
                    }
                    if values:
                        out += ["| value | on this GPU machine |", "|---|---|"]
                        for key, text in sorted(values.items()):
                            shown = escape_cell(shown_value(text).replace("\n", " "))
                            out.append(
                                f"| `{key.removeprefix(name + '_')}` | {shown} |"
                            )
                        out.append("")
        return out or ["No GPU reference run is stored in `reference/` yet."]


def link_answer_ids(app, doctree):
    """Turn the IDs on a chapter's 'Answers:' line into links to their question-map rows."""
    for strong in list(doctree.findall(nodes.strong)):
        if strong.astext() != "Answers:" or not isinstance(
            strong.parent, nodes.paragraph
        ):
            continue
        for text in [n for n in strong.parent.children if isinstance(n, nodes.Text)]:
            pieces, pos = [], 0
            for match in ID.finditer(text.astext()):
                pieces.append(nodes.Text(text.astext()[pos : match.start()]))
                ref = nodes.reference(
                    "",
                    match.group(0),
                    refuri=f"question_map.html#{question_anchor(match.group(0))}",
                )
                pieces.append(ref)
                pos = match.end()
            if pieces:
                pieces.append(nodes.Text(text.astext()[pos:]))
                text.parent.replace(text, pieces)


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


def serve_plain_notebooks(app, pagename, templatename, context, doctree):
    """Point the page's .ipynb download and Colab buttons at the plain-Jupyter copy."""
    name = pagename.rsplit("/", 1)[-1]
    if not (ROOT / f"{pagename}.ipynb").exists() or not pagename.startswith(
        "chapters/"
    ):
        return
    repo = app.config.html_theme_options.get("repository_url", "").removeprefix(
        "https://github.com/"
    )
    branch = app.config.book_site_branch

    def visit(buttons):
        for button in buttons:
            is_download = button.get("label") in {
                "download-notebook-button",
                "download-source-button",
            }
            if is_download and str(button.get("url", "")).endswith(".ipynb"):
                button["url"] = f"{context['pathto']('notebooks', 1)}/{name}.ipynb"
                button["tooltip"] = (
                    "Download the notebook (plain Jupyter: runs on Colab or locally)"
                )
            elif button.get("text") == "Colab" and repo:
                button["url"] = (
                    f"https://colab.research.google.com/github/{repo}/blob/{branch}/notebooks/{name}.ipynb"
                )
            visit(button.get("buttons", []))

    visit(context.get("header_buttons", []))


def build_plain_notebooks(app, exception):
    if exception is None and app.builder.format == "html":
        write_plain_notebooks(
            [p for _, p in chapter_notebooks()], Path(app.outdir) / "notebooks"
        )


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
    app.add_config_value("book_site_branch", "gh-pages", "html")
    app.connect(
        "html-page-context", drop_duplicate_scripts, priority=900
    )  # after every script is added
    app.connect(
        "html-page-context", serve_plain_notebooks, priority=900
    )  # after the theme's buttons
    app.add_directive("question-map", QuestionMap)
    app.add_directive("cheat-sheet", CheatSheet)
    app.add_directive("drill", Drill)
    app.add_directive("chapter-index", ChapterIndex)
    app.add_directive("study-path", StudyPath)
    app.add_directive("gpu-reference", GpuReference)
    app.connect("doctree-read", add_execution_badge)
    app.connect("doctree-read", link_answer_ids)
    app.connect("build-finished", build_plain_notebooks)
    app.add_js_file("whole-word-highlight.js")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
