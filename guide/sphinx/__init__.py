"""The book's Sphinx extension (``guide.sphinx`` in _config.yml): the generated pages
(pages.py) and the furniture of the chapters' pages (furniture.py)."""

from guide.sphinx import furniture
from guide.sphinx.pages import DIRECTIVES


def setup(app):
    app.add_config_value("book_site_branch", "gh-pages", "html")
    # After every script is added, and after the theme's buttons:
    app.connect("html-page-context", furniture.drop_duplicate_scripts, priority=900)
    app.connect("html-page-context", furniture.serve_plain_notebooks, priority=900)
    for name, directive in DIRECTIVES.items():
        app.add_directive(name, directive)
    app.connect("doctree-read", furniture.add_execution_badge)
    app.connect("doctree-read", furniture.link_answer_ids)
    app.connect("build-finished", furniture.build_plain_notebooks)
    app.add_js_file("whole-word-highlight.js")
    app.add_js_file("menu-buttons.js")
    app.add_js_file("drill-controls.js")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
