"""The book's structure: table of contents, clean notebooks, chapter anatomy, question map."""

import re

import yaml

from book_pages import LEVELS, TOPICS, read_chapter
from conftest import (
    CHAPTERS,
    ID_PATTERN,
    NON_QUESTION_PAGES,
    ROOT,
    answered_ids,
    cell_text,
    load_notebook,
    notebooks,
    toc_files,
)

EXPECTED_IDS = (
    {f"DS-{i}" for i in range(1, 11)}
    | {f"IQ-{i}" for i in range(1, 6)}
    | {f"RM-{i}" for i in range(1, 10)}
    | {f"EX-{i}" for i in range(1, 21)}
)
# Level-2 headings every question chapter has, in this order.
REQUIRED_SECTIONS = [
    "Short answer",
    "Setup",
    "Summary",
    "Check yourself",
    "Further reading",
]


def headings(nb):
    return [
        line[3:].strip()
        for cell in nb["cells"]
        if cell["cell_type"] == "markdown"
        for line in cell_text(cell).splitlines()
        if line.startswith("## ")
    ]


def test_toc_and_chapters_folder_agree():
    listed = toc_files()
    assert len(listed) == len(set(listed)), (
        f"a page is listed twice in _toc.yml: {listed}"
    )
    for entry in listed:
        matches = [
            p for p in (ROOT / f"{entry}.ipynb", ROOT / f"{entry}.md") if p.exists()
        ]
        assert len(matches) == 1, (
            f"_toc.yml entry {entry!r} must match exactly one .ipynb or .md file"
        )
    on_disk = {
        str(p.relative_to(ROOT).with_suffix(""))
        for p in CHAPTERS.glob("*")
        if p.suffix in {".ipynb", ".md"}
    }
    missing = on_disk - set(listed)
    assert not missing, (
        f"pages in chapters/ that _toc.yml does not list: {sorted(missing)}"
    )


def test_notebook_is_stored_clean(notebook):
    nb = load_notebook(notebook)
    assert nb["metadata"].get("kernelspec", {}).get("name") == "python3", (
        "kernelspec must be python3"
    )
    extra = set(nb["metadata"]) - {"kernelspec", "language_info"}
    assert not extra, f"per-machine notebook metadata {sorted(extra)}: run `make strip`"
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, (
                f"cell {i} has outputs: `make strip`"
            )
        assert set(cell.get("metadata", {})) <= {"tags", "mystnb"}, (
            f"cell {i} carries metadata other than tags and myst-nb options"
        )


def test_chapter_follows_the_anatomy(notebook):
    nb = load_notebook(notebook)
    first = nb["cells"][0]
    assert first["cell_type"] == "markdown" and cell_text(first).startswith("# "), (
        "first cell must be the title"
    )
    ids = answered_ids(nb)
    if notebook.stem in NON_QUESTION_PAGES:
        assert ids is None, (
            f"{notebook.stem} is front/back matter and must not claim question IDs"
        )
        if notebook.stem == "status":
            return
    else:
        assert ids, (
            "a chapter names the IDs it answers on a '**Answers:**' line under its title"
        )
        header = cell_text(first)
        assert re.search(
            rf"\*\*Topic:\*\* ({'|'.join(TOPICS)}) · \*\*Level:\*\* ({'|'.join(LEVELS)})\s*$",
            header,
            re.M,
        ), (
            f"the title cell needs a line '**Topic:** <one of {TOPICS}> · **Level:** <one of {LEVELS}>'"
        )
    found = headings(nb)
    positions = []
    for section in REQUIRED_SECTIONS:
        assert section in found, f"missing '## {section}' (found {found})"
        positions.append(found.index(section))
    assert positions == sorted(positions), f"sections out of order: {found}"
    steps = [h for h in found if re.match(r"\d+\. ", h)]
    assert steps, "the demonstration is written as numbered steps ('## 1. ...')"
    code = "\n".join(cell_text(c) for c in nb["cells"] if c["cell_type"] == "code")
    assert re.search(r"^\s*assert\b", code, re.M), (
        "a chapter proves its claims with asserts"
    )
    assert "torch.accelerator" in code and "Running on:" in code, (
        "the setup cell chooses the device and prints it"
    )
    first_code = next(c for c in nb["cells"] if c["cell_type"] == "code")
    assert "find_spec" in cell_text(first_code) and first_code["metadata"].get(
        "tags"
    ) == ["remove-cell"], (
        "the first code cell installs what Colab lacks (tagged remove-cell, so the site does not show it)"
    )
    markdown = "\n".join(
        cell_text(c) for c in nb["cells"] if c["cell_type"] == "markdown"
    )
    assert "{exercise}" in markdown and "{solution}" in markdown, (
        "Check yourself uses exercise/solution pairs"
    )
    assert "{solution-start}" in markdown and "{solution-end}" in markdown, (
        "Check yourself has a predict-the-output item whose answer is an executed cell (solution-start/-end)"
    )


def test_question_map_lists_every_source_question(qmap):
    ids = [q["id"] for q in qmap["questions"]]
    assert len(ids) == len(set(ids)), "an ID appears twice in questions.yml"
    assert set(ids) == EXPECTED_IDS, (
        f"questions.yml must hold exactly the source IDs; diff: {set(ids) ^ EXPECTED_IDS}"
    )
    for q in qmap["questions"]:
        assert q["question"].strip(), f"{q['id']} has no question text"
        assert (
            q["chapter"] == "pending" or (CHAPTERS / f"{q['chapter']}.ipynb").exists()
        ), f"{q['id']} points to a chapter that does not exist: {q['chapter']}"


def test_chapters_and_question_map_agree(qmap):
    known = {q["id"]: q["chapter"] for q in qmap["questions"]}
    claimed = {}
    for path in notebooks():
        for qid in answered_ids(load_notebook(path)) or []:
            assert qid in known, (
                f"{path.name} answers {qid}, which is not in questions.yml"
            )
            assert qid not in claimed, (
                f"{qid} is answered twice: {claimed.get(qid)} and {path.stem}"
            )
            claimed[qid] = path.stem
    for qid, chapter in known.items():
        if chapter == "pending":
            assert qid not in claimed, (
                f"{qid} is marked pending but {claimed.get(qid)} answers it"
            )
        else:
            assert claimed.get(qid) == chapter, (
                f"questions.yml says {chapter} answers {qid}; the chapters say {claimed.get(qid)}"
            )


def test_id_pattern_matches_only_real_ids():
    assert ID_PATTERN.findall("**Answers:** DS-6 · IQ-5 · RM-10, XX-1") == [
        "DS-6",
        "IQ-5",
        "RM-10",
    ]


def test_parts_are_the_topics_and_run_from_basic_to_advanced():
    """The sidebar's numbered parts are the Topic vocabulary, each chapter sits in the part its
    Topic line names, and within a part the levels never go down: one study path for the
    sidebar, the topic index and the question map."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    numbered = [part for part in toc["parts"] if part.get("numbered")]
    assert [part["caption"] for part in numbered] == TOPICS
    for part in numbered:
        levels = []
        for entry in part["chapters"]:
            info = read_chapter(ROOT / f"{entry['file']}.ipynb")
            assert info["topic"] == part["caption"], (
                f"{entry['file']} says Topic {info['topic']!r} but sits in part {part['caption']!r}"
            )
            levels.append(LEVELS.index(info["level"]))
        assert levels == sorted(levels), (
            f"part {part['caption']!r} is not ordered Basic to Advanced"
        )


SHORT_ANSWER = re.compile(r"\A\*\*[^*\n]+\*\*\n\n(?:- .+\n(?:  .+\n)*){3,4}", re.M)


def test_short_answer_opens_with_a_sentence_and_three_or_four_bullets(notebook):
    if notebook.stem in NON_QUESTION_PAGES:
        return
    short = read_chapter(notebook)["short"] + "\n"
    assert SHORT_ANSWER.match(short), (
        "the Short answer opens with one bold sentence, a blank line, then three or four '- ' bullets"
        f" (the cheat sheet shows them):\n{short[:400]}"
    )


def test_short_answer_is_short_enough_to_say_and_to_print(notebook):
    """The cheat sheet prints every chapter's sentence and bullets on three A4 pages: that
    leaves about 110 words a chapter, and a point longer than 28 words is not a point."""
    if notebook.stem in NON_QUESTION_PAGES:
        return
    info = read_chapter(notebook)
    words = [len(b.split()) for b in info["bullets"]]
    sentence = len((info["sentence"] or "").split())
    assert sentence <= 30, f"the bold sentence has {sentence} words (at most 30)"
    assert max(words, default=0) <= 28, (
        f"'say this' bullets of {words} words (at most 28 each)"
    )
    assert sentence + sum(words) <= 115, (
        f"{sentence + sum(words)} words in sentence and bullets (at most 115)"
    )
