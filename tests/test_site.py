"""Build the site exactly as `make book` does, then check what a reader will get."""

import html
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from conftest import ROOT, load_notebook, notebooks, question_map, toc_files

HTML = ROOT / "_build" / "html"


@pytest.fixture(scope="module")
def build():
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jupyter_book), "build", "-W", "-n", "--keep-going", str(ROOT)]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=3600)


@pytest.fixture(scope="module")
def pages(build):
    assert build.returncode == 0, "the book build failed:\n" + build.stdout[-6000:] + build.stderr[-6000:]
    return {entry: (HTML / f"{entry}.html") for entry in toc_files()}


def test_the_build_succeeds_with_warnings_as_errors(build):
    assert build.returncode == 0, build.stdout[-6000:] + build.stderr[-6000:]


def test_every_toc_entry_has_a_page(pages):
    missing = [entry for entry, page in pages.items() if not page.exists()]
    assert not missing, f"no HTML page for {missing}"


def test_no_page_shows_an_error_or_traceback(pages):
    for entry, page in pages.items():
        text = page.read_text(encoding="utf-8")
        assert 'class="output traceback' not in text, f"{entry} shows a cell error"
        assert "Traceback (most recent call last)" not in html.unescape(text), f"{entry} shows a traceback"


def test_every_referenced_image_exists(pages):
    for entry, page in pages.items():
        for src in re.findall(r'<img[^>]+src="([^"]+)"', page.read_text(encoding="utf-8")):
            if urlparse(src).scheme in {"http", "https", "data"}:
                continue
            target = (page.parent / unquote(src)).resolve()
            assert target.is_file() and target.stat().st_size > 0, f"{entry} references missing image {src}"


def test_executed_chapters_show_their_outputs(pages):
    for path in notebooks():
        text = pages[f"chapters/{path.stem}"].read_text(encoding="utf-8")
        assert 'class="cell_output' in text, f"{path.stem} was built without executed outputs"
        if any(c["cell_type"] == "code" and "Running on:" in "".join(c["source"]) for c in load_notebook(path)["cells"]):
            assert "Running on:" in text, f"{path.stem} does not show the hardware it ran on"


def test_question_map_page_links_every_answering_chapter(pages):
    text = pages["chapters/question_map"].read_text(encoding="utf-8")
    for q in question_map()["questions"]:
        assert q["id"] in text, f"{q['id']} missing from the question map page"
        if q["chapter"] != "pending":
            assert f'href="{q["chapter"]}.html' in text, f"{q['id']} is not linked to {q['chapter']}"


def test_status_page_lists_every_executed_notebook(pages):
    text = html.unescape(pages["chapters/status"].read_text(encoding="utf-8"))
    for path in notebooks():
        assert f"chapters/{path.stem}" in text, f"{path.stem} missing from the execution table"
    assert "❌" not in text, "the execution table reports a failed notebook"
