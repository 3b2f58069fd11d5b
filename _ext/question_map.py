"""Sphinx directive ``question-map``: renders questions.yml as one table per source.

Every question links to the chapter that answers it, so the page can never
disagree with the map the tests check. Pending questions are marked as such.
"""

from pathlib import Path

import yaml
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

MAP_FILE = Path(__file__).resolve().parent.parent / "questions.yml"


def load_map():
    with open(MAP_FILE, encoding="utf-8") as f:
        return yaml.safe_load(f)


class QuestionMap(SphinxDirective):
    has_content = False

    def run(self):
        self.env.note_dependency(str(MAP_FILE))
        qmap = load_map()
        lines = []
        for prefix, title in qmap["sources"].items():
            lines += [f"**{prefix}: {title}**", "", "| ID | Question | Answered in |", "|---|---|---|"]
            for q in qmap["questions"]:
                if q["id"].split("-")[0] != prefix:
                    continue
                chapter = q["chapter"]
                where = "*pending*" if chapter == "pending" else f"{{doc}}`{chapter}`"
                lines.append(f"| {q['id']} | {q['question']} | {where} |")
            lines.append("")
        container = nodes.container(classes=["question-map"])
        self.state.nested_parse(StringList(lines, source=str(MAP_FILE)), self.content_offset, container)
        return [container]


def setup(app):
    app.add_directive("question-map", QuestionMap)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
