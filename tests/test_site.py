"""The built site as a reader gets it: every page, no errors, images and links that resolve."""

import html
import re
from urllib.parse import unquote, urlparse

import pytest

from guide.book import (
    CELLS,
    CHAPTER_BUDGET_S,
    FRONT_AND_BACK_MATTER,
    ROOT,
    answered_ids,
    notebooks,
    toc_files,
)
from guide.notebook import cell_text, load

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pages(site):
    return {entry: site / f"{entry}.html" for entry in toc_files()}


def test_the_build_succeeds_with_warnings_as_errors(build):
    assert build.returncode == 0, build.stdout[-6000:] + build.stderr[-6000:]


def test_every_toc_entry_has_a_page(pages):
    missing = [entry for entry, page in pages.items() if not page.exists()]
    assert not missing, f"no HTML page for {missing}"


def test_no_page_shows_an_error_or_traceback(pages):
    for entry, page in pages.items():
        text = page.read_text(encoding="utf-8")
        assert 'class="output traceback' not in text, f"{entry} shows a cell error"
        assert "Traceback (most recent call last)" not in html.unescape(text), (
            f"{entry} shows a traceback"
        )


def test_every_referenced_image_exists(pages):
    for entry, page in pages.items():
        for src in re.findall(
            r'<img[^>]+src="([^"]+)"', page.read_text(encoding="utf-8")
        ):
            if urlparse(src).scheme in {"http", "https", "data"}:
                continue
            target = (page.parent / unquote(src)).resolve()
            assert target.is_file() and target.stat().st_size > 0, (
                f"{entry} references missing image {src}"
            )


def test_executed_chapters_show_outputs_and_an_execution_badge(pages):
    for path in notebooks():
        text = pages[f"chapters/{path.stem}"].read_text(encoding="utf-8")
        assert 'class="cell_output' in text, (
            f"{path.stem} was built without executed outputs"
        )
        reports_hardware = any(
            c["cell_type"] == "code" and "Running on:" in cell_text(c)
            for c in load(path)["cells"]
        )
        if reports_hardware:
            assert "Running on:" in text, (
                f"{path.stem} does not show the hardware it ran on"
            )
            assert re.search(
                r'class="exec-badge">Executed: passed in [\d.]+ s on \d{4}-\d\d-\d\d',
                text,
            ), f"{path.stem} has no execution badge"


def test_each_chapter_executes_within_the_time_budget(pages):
    runtimes = {}
    for path in notebooks():
        text = pages[f"chapters/{path.stem}"].read_text(encoding="utf-8")
        match = re.search(r'class="exec-badge">Executed: passed in ([\d.]+) s', text)
        if match:
            runtimes[path.stem] = float(match.group(1))
    assert runtimes, "no chapter page gives its execution time"
    over = {k: v for k, v in runtimes.items() if v > CHAPTER_BUDGET_S}
    assert not over, f"over the {CHAPTER_BUDGET_S} s budget (seconds): {over}"


def next_page(page_html):
    match = re.search(r'class="right-next"\s+href="([^"]+)"', page_html)
    return match and match.group(1)


def test_next_on_the_landing_page_opens_chapter_one(pages):
    first = toc_files()[1]  # the first chapter after the landing page
    assert first.removeprefix("chapters/") == "what_is_pytorch", (
        f"the toc puts {first} between the landing page and chapter 1"
    )
    assert next_page(pages["chapters/intro"].read_text(encoding="utf-8")) == (
        "what_is_pytorch.html"
    )


def test_the_next_link_check_can_fail():
    html_text = (
        '<a class="right-next"\n       href="running.html"\n       title="next">'
    )
    assert next_page(html_text) == "running.html"


def test_question_map_page_links_every_answering_chapter(pages, qmap):
    text = pages["chapters/question_map"].read_text(encoding="utf-8")
    for q in qmap["questions"]:
        assert q["id"] in text, f"{q['id']} missing from the question map page"
        if q["chapter"] != "pending":
            assert f'href="{q["chapter"]}.html' in text, (
                f"{q['id']} is not linked to {q['chapter']}"
            )


def test_cheat_sheet_and_topic_index_link_every_chapter(pages, qmap):
    chapters = {q["chapter"] for q in qmap["questions"]} - {"pending"}
    for page in ("chapters/cheat_sheet", "chapters/topics"):
        text = pages[page].read_text(encoding="utf-8")
        for chapter in chapters:
            assert f'href="{chapter}.html' in text, f"{page} does not link {chapter}"


def test_status_page_lists_every_executed_notebook(pages):
    text = html.unescape(pages["chapters/status"].read_text(encoding="utf-8"))
    for path in notebooks():
        assert f"chapters/{path.stem}" in text, (
            f"{path.stem} missing from the execution table"
        )
    assert "❌" not in text, "the execution table reports a failed notebook"


def _ids(text):
    return set(re.findall(r'\bid="([^"]+)"', text))


def test_internal_links_resolve(site):
    """An offline link check: every relative href/src in every page points to a file that exists,
    and every #fragment to an element id on the target page."""
    broken = []
    ids_cache = {}
    for page in sorted(site.rglob("*.html")):
        if any(
            part in {"_static", "_sources"} for part in page.relative_to(site).parts
        ):
            continue
        text = page.read_text(encoding="utf-8")
        for link in re.findall(r'(?:href|src)="([^"]+)"', text):
            parsed = urlparse(html.unescape(link))
            if parsed.scheme or link.startswith("//"):
                continue  # external: not checked offline
            target = (
                (page.parent / unquote(parsed.path)).resolve() if parsed.path else page
            )
            if not target.exists():
                broken.append(f"{page.relative_to(site)} -> {link}")
                continue
            if parsed.fragment and target.suffix == ".html":
                if target not in ids_cache:
                    ids_cache[target] = _ids(target.read_text(encoding="utf-8"))
                if unquote(parsed.fragment) not in ids_cache[target]:
                    broken.append(
                        f"{page.relative_to(site)} -> {link} (no such anchor)"
                    )
    assert not broken, "broken internal links:\n" + "\n".join(broken[:50])


# ---------------------------------------------------------------------------------------------
# Pages generated for readers: plain notebooks, study path, cheat sheet, drill, question map

RAW_MYST = re.compile(r"\{[\w:-]+\}`|^(```|~~~)\{", re.M)


def test_plain_notebooks_hold_no_myst_markup(site):
    """Downloaded and Colab notebooks show no raw directive or role (Jupyter cannot render them)."""
    for path in notebooks():
        plain = site / "notebooks" / path.name
        assert plain.exists(), f"no plain-Jupyter copy of {path.stem}"
        nb = load(plain)
        source = load(path)
        assert len([c for c in nb["cells"] if c["cell_type"] == "code"]) == len(
            [c for c in source["cells"] if c["cell_type"] == "code"]
        ), f"{path.stem}: the plain copy lost code cells"
        for cell in nb["cells"]:
            text = cell_text(cell)
            if cell["cell_type"] == "markdown":
                assert not RAW_MYST.search(text), (
                    f"{path.stem}: raw MyST left in {text[:200]!r}"
                )
            else:
                assert cell["outputs"] == [], (
                    f"{path.stem}: the plain copy carries outputs"
                )


LOCAL_NOTEBOOK_LINK = re.compile(
    r"\]\((?:https://colab\.research\.google\.com/github/[^)\s]*/notebooks/)?([^)#\s/:]+\.ipynb)"
)


def test_plain_notebooks_link_only_to_copies_served_beside_them(site):
    """A link from a downloaded chapter to another notebook must reach a plain copy."""
    folder = site / "notebooks"
    for plain in sorted(folder.glob("*.ipynb")):
        for cell in load(plain)["cells"]:
            if cell["cell_type"] == "markdown":
                for target in LOCAL_NOTEBOOK_LINK.findall(cell_text(cell)):
                    assert (folder / target).exists(), (
                        f"{plain.stem} links to {target}, which is not served"
                    )


def test_plain_notebooks_read_as_sentences_with_the_shared_cells_collapsed(site):
    """The prose carries the values this build measured, not placeholders; the first two code
    cells are collapsed under a line that says what they are."""
    for path in notebooks():
        nb = load(site / "notebooks" / path.name)
        prose = "\n".join(
            cell_text(c) for c in nb["cells"] if c["cell_type"] == "markdown"
        )
        left = re.findall(r"\*\*\[(\w+)\]\*\*", prose)
        assert not left, (
            f"{path.stem}: glued values without their measured number: {left[:5]}"
        )
        shared = [c for c in nb["cells"] if c["cell_type"] == "code"][:2]
        if path.stem != "status":
            for cell in shared:
                assert cell["metadata"].get("jupyter", {}).get("source_hidden") is True
                assert cell_text(cell).startswith("#@title ")


def test_the_plain_notebook_check_can_fail():
    assert RAW_MYST.search("A value of {glue:text}`x_ms:.1f` ms")
    assert RAW_MYST.search("```{exercise}\n:label: a\nq\n```")
    assert not RAW_MYST.search("**Exercise.** q\n<details><summary>Solution</summary>")


def test_cheat_sheet_and_drill_hold_every_chapter(pages):
    from guide.chapter import read_chapter

    cheat = html.unescape(pages["chapters/cheat_sheet"].read_text(encoding="utf-8"))
    drill = html.unescape(pages["chapters/drill"].read_text(encoding="utf-8"))
    for path in notebooks():
        info = read_chapter(path)
        if not info["answers"]:
            continue
        assert f'href="{path.stem}.html' in cheat and f'href="{path.stem}.html' in drill
        opening = " ".join(re.sub(r"[`*]", "", info["sentence"] or "").split()[:4])
        shown = " ".join(re.sub(r"<[^>]+>", "", cheat).replace("\u2019", "'").split())
        assert opening and opening in shown, (
            f"{path.stem}: its bold sentence is not on the cheat sheet"
        )
        assert len(info["exercises"]) >= 4, (
            f"{path.stem}: Check yourself needs 3 exercises and a predict item"
        )
    items = drill.count('class="drill-item')
    from guide.chapter import parts

    expected = sum(
        len(info["exercises"]) for _, chapters in parts() for _, info in chapters
    )
    assert items == expected, (
        f"the drill page shows {items} questions; the chapters hold {expected}"
    )


def test_study_path_gives_every_chapter_a_reading_time(pages):
    text = re.sub(
        r"<[^>]+>",
        " ",
        html.unescape(pages["chapters/intro"].read_text(encoding="utf-8")),
    )
    text = " ".join(text.replace("\u2019", "'").split())  # Sphinx's curly apostrophes
    from guide.chapter import parts

    for _, chapters in parts():
        for _, info in chapters:
            title = " ".join(info["title"].replace("`", " ").split())[:30]
            assert re.search(re.escape(title) + r".*?\d+ min", text, re.S), (
                f"the study path lacks a reading time for {info['title']!r}"
            )


def test_question_map_rows_have_anchors_and_chapters_link_to_them(pages, qmap):
    text = pages["chapters/question_map"].read_text(encoding="utf-8")
    for q in qmap["questions"]:
        assert f'id="q-{q["id"].lower()}"' in text, (
            f"no anchor for {q['id']} on the question map"
        )
    for path in notebooks():
        ids = answered_ids(load(path)) or []
        page = pages[f"chapters/{path.stem}"].read_text(encoding="utf-8")
        for qid in ids:
            assert f'href="question_map.html#q-{qid.lower()}"' in page, (
                f"{path.stem}: {qid} is not linked"
            )


def test_the_index_of_terms_lists_entries(site):
    text = (site / "genindex.html").read_text(encoding="utf-8")
    entries = re.findall(r'<li><a href="chapters/[^"]+#', text)
    assert len(entries) >= 10 * len(notebooks()) // 2, (
        f"the index of terms has only {len(entries)} entries"
    )


def test_figures_are_svg_with_alt_text_and_captions(pages):
    for path in notebooks():
        page = pages[f"chapters/{path.stem}"].read_text(encoding="utf-8")
        for img in re.findall(r"<img [^>]+>", page):
            src = re.search(r'src="([^"]+)"', img).group(1)
            if "_images/" not in src:
                continue  # theme images (logos)
            assert src.endswith(".svg"), f"{path.stem}: plot {src} is not an SVG"
            alt = re.search(r'alt="([^"]*)"', img)
            assert (
                alt
                and len(alt.group(1)) >= 20
                and not re.fullmatch(r"[0-9a-f]{20,}", alt.group(1))
            ), f"{path.stem}: plot {src} has no real alt text"
        assert page.count("<figcaption") >= len(
            re.findall(r'<img [^>]+src="[^"]*_images/', page)
        ), f"{path.stem}: a plot without a caption"


CELL_START = re.compile(r'<div class="(cell [^"]*)"')


def setup_cell_classes(page):
    """The class list of the page's cell that prints the hardware line (the setup cell)."""
    starts = list(CELL_START.finditer(page))
    for here, after in zip(starts, starts[1:] + [None]):
        chunk = page[here.start() : after.start() if after else len(page)]
        if "Running on:" in chunk:
            return here.group(1).split()
    return None


def test_setup_code_is_folded_but_its_output_shown(pages):
    for path in notebooks():
        if path.stem in FRONT_AND_BACK_MATTER:
            continue
        page = pages[f"chapters/{path.stem}"].read_text(encoding="utf-8")
        classes = setup_cell_classes(page)
        assert classes is not None, f"{path.stem}: no cell shows the hardware line"
        assert "tag_hide-input" in classes, f"{path.stem}: the setup code is shown"
        assert "shared: install" not in page, (
            f"{path.stem}: the install cell is on the page"
        )


def test_the_folded_setup_check_can_fail():
    folded = '<div class="cell tag_hide-input docutils container"><p>Running on: cpu</p></div>'
    shown = '<div class="cell tag_hide-input docutils container"><p>x</p></div>' + (
        '<div class="cell docutils container"><p>Running on: cpu</p></div>'
    )
    assert "tag_hide-input" in setup_cell_classes(folded)
    assert "tag_hide-input" not in setup_cell_classes(shown)  # another cell is folded


def test_running_page_names_every_path_and_what_the_reader_sees(pages):
    import yaml

    text = html.unescape(
        re.sub(r"<[^>]+>", "", pages["chapters/running"].read_text(encoding="utf-8"))
    )
    text = " ".join(text.split())
    repo = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    install_cell = " ".join((CELLS / "install.py").read_text().replace('"', "").split())
    for needle in [
        f"git clone {repo}",
        "make book",
        "make lab",
        "make test",
        "make book TORCH=cpu",
        "https://download.pytorch.org/whl/cpu",
        "Runtime → Change runtime type → GPU",
        "no C++ compiler was found",
        "Installing what this chapter needs",
        "spawn",
        "forkserver",
        "Debian",
    ]:
        assert needle in text, f"the Running page does not say {needle!r}"
    # What the page quotes from the notebooks' first cell is what that cell prints.
    assert "Installing what this chapter needs:" in install_cell
    assert (
        "A cell may fail, or print other numbers, for that reason"
        in install_cell.replace("  ", " ")
    )
