"""Page furniture added to the chapters' pages.

- The IDs on each chapter's "Answers" line link to their rows on the question map.
- An execution badge under every executed chapter's title: status, run time, hardware and
  torch version (from the chapter's own "Running on:" output) and the date it executed.
- Plain-Jupyter copies of the chapters (notebooks/NAME.ipynb in the site), which the download
  and Colab buttons serve: see guide/plain_notebooks.py.
- A workaround for sphinx-thebe's duplicated inline script.
"""

import datetime
import re
from pathlib import Path

from docutils import nodes

from guide.book import ID, toc_notebooks
from guide.plain_notebooks import write_plain_notebooks
from guide.sphinx.pages import question_anchor


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
    if not (Path(app.srcdir) / f"{pagename}.ipynb").exists() or not pagename.startswith(
        "chapters/"
    ):
        return
    folder = colab_folder(app)

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
            elif button.get("text") == "Colab" and folder:
                button["url"] = f"{folder}{name}.ipynb"
            visit(button.get("buttons", []))

    visit(context.get("header_buttons", []))


def colab_folder(app):
    """The Colab address of the site's notebooks/ folder, or None without a repository."""
    repo = app.config.html_theme_options.get("repository_url", "").removeprefix(
        "https://github.com/"
    )
    if not repo:
        return None
    branch = app.config.book_site_branch
    return f"https://colab.research.google.com/github/{repo}/blob/{branch}/notebooks/"


def build_plain_notebooks(app, exception):
    """Write the plain copies, with the values this build glued (myst-nb writes each executed
    page's glue data to jupyter_execute/DOCNAME.glue.json beside the build folder)."""
    if exception is None and app.builder.format == "html":
        executed = Path(app.outdir).parent / "jupyter_execute"
        pages = toc_notebooks(app.srcdir)
        write_plain_notebooks(
            [path for _, path in pages],
            Path(app.outdir) / "notebooks",
            link_base=colab_folder(app),
            glue_files={path: executed / f"{doc}.glue.json" for doc, path in pages},
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
