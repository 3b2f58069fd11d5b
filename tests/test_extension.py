"""The book's Sphinx extension (guide/sphinx/) on a two-chapter fixture book, built with
execution off: the generated pages, the ID links, the plain notebooks and the Colab button,
without building (or executing) the real book."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from guide.book import ROOT
from guide.notebook import cell_text, load, save

CHAPTERS = [  # name, title, IDs, topic, level
    ("alpha", "How does alpha work?", "EX-1", "Foundations", "Basic"),
    ("beta", "When is beta faster?", "EX-2 · DS-1", "Training", "Intermediate"),
]
PAGES = {
    "intro": "# Fixture book\n\nTwo chapters.\n\n```{study-plans}\n```\n",
    "question_map": "# Question map\n\n```{question-map}\n```\n",
    "cheat_sheet": "# Cheat sheet\n\n```{cheat-sheet}\n```\n",
    "drill": "# Drill\n\n```{drill}\n```\n",
    "topics": "# Topics\n\n```{chapter-index}\n```\n\n```{study-path}\n```\n",
    "gpu_reference": "# GPU reference\n\n```{gpu-reference}\n```\n",
}
QUESTIONS = {
    "sources": {"EX": "questions beyond the sources", "DS": "a data-science set"},
    "questions": [
        {"id": "EX-1", "question": "How does alpha work?", "chapter": "alpha"},
        {"id": "EX-2", "question": "When is beta faster?", "chapter": "beta"},
        {"id": "DS-1", "question": "Is beta | gamma faster?", "chapter": "beta"},
        {"id": "EX-3", "question": "What is delta?", "chapter": "pending"},
    ],
}
REFERENCE = {
    "machine": ["2026-11-30T10:00:00+00:00", "NVIDIA H200, 139 GiB", "torch 2.11.0"],
    "source": "fixture",
    "torch": "2.11.0",
    "device": "cuda",
    "chapters": {
        "alpha": {
            "status": "passed",
            "seconds": 12.5,
            "glued": {"alpha_ratio": "0.123456", "alpha_hardware": "'an H200'"},
        },
        "beta": {
            "status": "AssertionError: beta lost its bet",
            "seconds": 3.0,
            "glued": {},
        },
    },
}


def chapter(name, title, ids, topic, level):
    """The chapter template filled in as `make chapter` does, without its Measurements (their
    glued numbers need an execution)."""
    nb = load(ROOT / "templates" / "chapter.ipynb")
    cells = []
    skipping = False
    for cell in nb["cells"]:
        text = cell_text(cell)
        if text.startswith("## "):
            skipping = text.startswith("## Measurements")
        if skipping:
            continue
        for key, value in dict(name=name, title=title, ids=ids).items():
            text = text.replace("{{" + key + "}}", value)
        text = text.replace("{{topic}}", topic).replace("{{level}}", level)
        cells.append({**cell, "source": text})
    return {**nb, "cells": cells}


def build_fixture_book(root):
    (root / "chapters").mkdir(parents=True)
    for entry in CHAPTERS:
        save(chapter(*entry), root / "chapters" / f"{entry[0]}.ipynb")
    for name, text in PAGES.items():
        (root / "chapters" / f"{name}.md").write_text(text)
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "off"
    config["title"] = "Fixture book"
    (root / "_config.yml").write_text(yaml.safe_dump(config))
    toc = {
        "format": "jb-book",
        "root": "chapters/intro",
        "parts": [
            {
                "caption": "Start here",
                "chapters": [{"file": f"chapters/{n}"} for n in PAGES if n != "intro"],
            },
            {
                "caption": "Foundations",
                "numbered": 1,
                "chapters": [{"file": "chapters/alpha"}],
            },
            {
                "caption": "Training",
                "numbered": 1,
                "chapters": [{"file": "chapters/beta"}],
            },
        ],
    }
    (root / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
    (root / "questions.yml").write_text(yaml.safe_dump(QUESTIONS, sort_keys=False))
    (root / "reference").mkdir()
    (root / "reference" / "gpu-fixture.json").write_text(json.dumps(REFERENCE))
    shutil.copytree(ROOT / "_static", root / "_static")
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    return subprocess.run(
        [str(jupyter_book), "build", "-W", "-n", "--keep-going", str(root)],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def html(tmp_path_factory):
    root = tmp_path_factory.mktemp("fixture_book")
    result = build_fixture_book(root)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return root / "_build" / "html"


def page(html, name):
    return (html / "chapters" / f"{name}.html").read_text(encoding="utf-8")


def test_question_map_has_an_anchor_per_id_and_a_pending_table(html):
    text = page(html, "question_map")
    for qid in ("ex-1", "ex-2", "ds-1", "ex-3"):
        assert f'id="q-{qid}"' in text
    assert "Is beta \\| gamma" not in text and "Is beta | gamma faster?" in text
    assert text.index("Foundations") < text.index("Training") < text.index("Pending")
    assert 'href="alpha.html"' in text and 'href="beta.html"' in text


def test_cheat_sheet_and_drill_come_from_the_chapters(html):
    cheat = page(html, "cheat_sheet")
    assert "The one sentence you would say first, in bold." in cheat
    assert "The first point to say next" in cheat
    drill = page(html, "drill")
    assert drill.count("drill-item") >= 4  # two exercises in each chapter
    assert "An interview follow-up question." in drill


def test_chapter_index_and_study_path_give_levels_and_reading_times(html):
    text = page(html, "topics")
    assert "Basic" in text and "Intermediate" in text
    assert text.count(" min") >= 4  # each chapter in the index and in the study path


def test_answer_ids_link_to_their_rows(html):
    text = page(html, "beta")
    assert 'href="question_map.html#q-ex-2"' in text
    assert 'href="question_map.html#q-ds-1"' in text


def test_gpu_reference_shows_the_runs_values_but_not_the_hardware_key(html):
    text = page(html, "gpu_reference")
    assert "NVIDIA H200" in text and "0.1235" in text  # a float shown to 4 figures
    assert "alpha_hardware" not in text and "<code" in text
    words = re.sub(r"<[^>]+>", "", text)  # inline code puts each word in a span
    assert "failed: AssertionError: beta lost its bet" in words  # with its error line


def test_plain_notebooks_are_written_and_the_buttons_serve_them(html):
    plain = load(html / "notebooks" / "alpha.ipynb")
    text = "".join(cell_text(c) for c in plain["cells"])
    assert "{exercise}" not in text and "**Exercise.**" in text
    assert "notebooks/alpha.ipynb" in page(html, "alpha")


def test_the_landing_page_offers_plans_built_from_levels_and_reading_times(html):
    text = (html / "chapters" / "intro.html").read_text(encoding="utf-8")
    for plan in ("One evening", "Three evenings", "Two weeks"):
        assert plan in text
    one_evening = text[text.index("One evening") : text.index("Three evenings")]
    assert 'href="alpha.html"' in one_evening  # the Basic chapter
    assert 'href="beta.html"' not in one_evening  # the Intermediate one waits
    assert "cheat_sheet.html" in one_evening


def test_a_plan_packs_chapters_in_study_order_and_names_what_does_not_fit():
    from guide.chapter import study_plan

    chapters = [
        (n, {"level": lv, "minutes": m})
        for n, lv, m in [("a", "Basic", 50), ("b", "Basic", 60), ("c", "Advanced", 10)]
    ]
    assert study_plan(chapters, 1, 120, ("Basic",), first=20) == (
        [[("a", 50)]],
        ["b"],
    )
    plan, left = study_plan(chapters, 2, 70, ("Basic", "Advanced"))
    assert plan == [[("a", 50)], [("b", 60), ("c", 10)]] and left == []


def test_the_cheat_sheet_names_the_book_its_build_date_and_jumps_to_each_topic(html):
    text = page(html, "cheat_sheet")
    assert re.search(
        r"The PyTorch Study Guide · cheat sheet built \d{4}-\d\d-\d\d", text
    )
    for anchor in ("foundations", "training"):
        assert f'href="#{anchor}"' in text and f'id="{anchor}"' in text
