"""The generated pages: each directive writes MyST from the book's own sources and parses it
in place, and the page is rebuilt when a source it reads changes.

- ``question-map``: questions.yml grouped by topic in study order, one anchor per ID.
- ``cheat-sheet``: each chapter's one-sentence answer and "say this" bullets, by topic.
- ``drill``: every Check-yourself question in the book, solutions collapsed, by topic.
- ``chapter-index`` and ``study-path``: the chapters in study order with level and reading time.
- ``gpu-reference``: what the chapters measured when run on a GPU machine (reference/*.json,
  each written by ``python -m guide.gpu_run`` on such a machine).

The study order is the table of contents: its numbered parts are the topics, and within a
part the chapters run from Basic to Advanced (tests/test_structure.py checks both).
"""

import ast
import datetime
import json
import os
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

from guide.book import load_map, toc_notebooks
from guide.chapter import PLANS, cheat_sheet_minutes, parts, study_plan


def question_anchor(qid):
    return "q-" + qid.lower()


class _GeneratedMarkdown(SphinxDirective):
    """Base: subclasses return MyST lines; they are parsed (headings allowed) in place."""

    has_content = False

    def lines(self):
        raise NotImplementedError

    @property
    def root(self):
        """The book being built: its toc, questions.yml and chapters."""
        return Path(self.env.srcdir)

    def study_parts(self):
        """The toc's parts; the page is rebuilt when a chapter or the toc changes."""
        for _, path in toc_notebooks(self.root):
            self.env.note_dependency(str(path))
        return parts(self.root)

    def run(self):
        self.env.note_dependency(str(self.root / "questions.yml"))
        self.env.note_dependency(str(self.root / "_toc.yml"))
        container = nodes.container(classes=[self.name])
        text = StringList(self.lines(), source=self.get_source_info()[0])
        self.state.nested_parse(text, self.content_offset, container, match_titles=True)
        return container.children


def escape_cell(text):
    return text.replace("|", "\\|")


class QuestionMap(_GeneratedMarkdown):
    def lines(self):
        qmap = load_map(self.root)
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


def build_date():
    """The build's date (UTC), or SOURCE_DATE_EPOCH's for a reproducible build."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (
        datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc)
        if epoch
        else datetime.datetime.now(datetime.timezone.utc)
    )
    return when.strftime("%Y-%m-%d")


class CheatSheet(_GeneratedMarkdown):
    """Every chapter's sentence and bullets by topic, under a line that gives the book, the
    build date and a jump list of the topics (printed too)."""

    def lines(self):
        parts = self.study_parts()
        jumps = " · ".join(
            f"[{caption}](#{nodes.make_id(caption)})" for caption, _ in parts
        )
        out = [
            f"*The PyTorch Study Guide · cheat sheet built {build_date()} · {jumps}*",
            "",
        ]
        for caption, chapters in parts:
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


class StudyPlans(_GeneratedMarkdown):
    """Plans by the time a reader has, from the chapters' levels and reading times: the
    sessions each holds, in study order; a long plan's sessions are folded."""

    def lines(self):
        chapters = [c for _, part in self.study_parts() for c in part]
        cheat = cheat_sheet_minutes(chapters)
        out = []
        for plan_name, sessions, minutes, levels in PLANS:
            plan, left_out = study_plan(
                chapters, sessions, minutes, levels, first=cheat
            )
            read = cheat + sum(m for session in plan for _, m in session)
            kinds = ", ".join(level.lower() for level in levels)
            each = (
                f"{sessions} {'evenings' if minutes >= 180 else 'days'} of"
                if sessions > 1
                else ""
            )
            drill = ", then the {doc}`drill <drill>`" if sessions > 1 else ""
            out += [
                f"**{plan_name}** ({each or 'about'} {minutes / 60:g} hours{' each' if each else ''}):"
                f" the {{doc}}`cheat sheet <cheat_sheet>`, then the {kinds} chapters in study"
                f" order{drill}; {read // 60} h {read % 60:02d} min of reading.",
                "",
            ]
            word = "Evening" if minutes >= 180 else "Day"
            rows = [
                (f"{word} {i}: " if sessions > 1 else "")
                + ", ".join(f"{{doc}}`{name}`" for name, _ in session)
                for i, session in enumerate(plan, 1)
            ]
            if left_out:
                rows.append(
                    "With more time: " + ", ".join(f"{{doc}}`{n}`" for n in left_out)
                )
            if sessions > 3:
                out += [f"````{{dropdown}} {plan_name}, session by session", ""]
            out += [f"- {row}" for row in rows] + [""]
            if sessions > 3:
                out += ["````", ""]
        return out


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
        for path in sorted((self.root / "reference").glob("*.json")):
            self.env.note_dependency(str(path))
            ref = json.loads(path.read_text(encoding="utf-8"))
            when, gpu, software = ref["machine"][:3]
            out += [f"## {gpu.split(',')[0]}, {when[:10]}", ""]
            jobs = ref.get("jobs")
            at_once = f" {jobs} chapters ran at a time." if jobs else ""
            out += [
                f"Run started {when}: {gpu}; {software}; chapters from `{path.name}`.{at_once}",
                "",
            ]
            for _caption, chapters in self.study_parts():
                for name, info in chapters:
                    result = ref["chapters"].get(name)
                    if result is None:
                        continue
                    status = result["status"]  # "passed", or the error's last line
                    outcome = status if status == "passed" else f"failed: `{status}`"
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


DIRECTIVES = {
    "question-map": QuestionMap,
    "cheat-sheet": CheatSheet,
    "drill": Drill,
    "chapter-index": ChapterIndex,
    "study-path": StudyPath,
    "study-plans": StudyPlans,
    "gpu-reference": GpuReference,
}
