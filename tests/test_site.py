"""The built site as a reader gets it: every page, no errors, images and links that resolve."""

import html
import re
from urllib.parse import unquote, urlparse

import pytest

from conftest import cell_text, load_notebook, notebooks, toc_files


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
            for c in load_notebook(path)["cells"]
        )
        if reports_hardware:
            assert "Running on:" in text, (
                f"{path.stem} does not show the hardware it ran on"
            )
            assert re.search(
                r'class="exec-badge">Executed: passed in [\d.]+ s on \d{4}-\d\d-\d\d',
                text,
            ), f"{path.stem} has no execution badge"


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
