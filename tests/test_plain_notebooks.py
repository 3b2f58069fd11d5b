"""The plain-Jupyter copies (guide/plain_notebooks.py) on small notebooks: glued values as
measured, links that work from Colab, the shared cells collapsed."""

from guide.plain_notebooks import glued_text, plain_notebook

COLAB = "https://colab.research.google.com/github/o/r/blob/gh-pages/notebooks/"


def notebook(*markdown, code=()):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": m} for m in markdown]
    cells += [
        {
            "cell_type": "code",
            "metadata": {},
            "source": c,
            "outputs": [],
            "execution_count": 1,
        }
        for c in code
    ]
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 4}


def test_a_glued_value_reads_as_the_number_the_build_measured():
    nb = notebook(
        "# T", "It took {glue:text}`t_ms:.1f` ms and was {glue:text}`t_verdict`."
    )
    values = {"t_ms": "12.3456", "t_verdict": "'faster'"}
    text = plain_notebook(nb, values=values)["cells"][1]["source"]
    assert text == "It took **12.3** ms and was **faster**."
    unmeasured = plain_notebook(nb)["cells"][1]["source"]
    assert unmeasured == "It took **[t_ms]** ms and was **[t_verdict]**."
    assert (
        "measured when the book's site was built"
        in plain_notebook(nb, values=values)["cells"][0]["source"]
    )


def test_glued_text_formats_numbers_and_unquotes_strings():
    assert glued_text("0.5", ".0%") == "50%"
    assert glued_text("'a sentence'", "") == "a sentence"
    assert glued_text("<Figure size 640x480>", "") == "<Figure size 640x480>"


def test_links_to_other_chapters_point_at_their_colab_copies():
    nb = notebook(
        "# T", "See {doc}`other` and [the other chapter](other.ipynb#step-2)."
    )
    text = plain_notebook(nb, frozenset({"other"}), link_base=COLAB)["cells"][1][
        "source"
    ]
    assert text == (
        f"See [other]({COLAB}other.ipynb) and [the other chapter]({COLAB}other.ipynb#step-2)."
    )
    local = plain_notebook(nb, frozenset({"other"}))["cells"][1]["source"]
    assert "[other](other.ipynb)" in local
    unknown = plain_notebook(nb, frozenset())["cells"][1]["source"]
    assert "other (a page of the book's site)" in unknown


def test_the_shared_cells_are_collapsed_under_a_title_line():
    install = "# ---- shared: install · edit guide/cells/install.py ----\nx = 1"
    nb = notebook("# T", code=[install, "y = 2"])
    cells = plain_notebook(nb)["cells"]
    assert cells[1]["metadata"] == {
        "jupyter": {"source_hidden": True},
        "cellView": "form",
    }
    assert cells[1]["source"].startswith("#@title Install: ")
    assert cells[2]["metadata"] == {} and cells[2]["source"] == "y = 2"
