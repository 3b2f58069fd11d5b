"""The book's structure: table of contents, clean notebooks, chapter anatomy, question map."""

import copy
import re

import pytest
import yaml

from guide.book import (
    CHAPTERS,
    DEEPER_SUFFIX,
    ID,
    LEVELS,
    NO_SHARED_CELLS,
    PROSE_WORD_BUDGET,
    ROOT,
    TOPICS,
    answered_ids,
    deeper_page_of,
    notebooks,
    page_kind,
    toc_files,
)
from guide.chapter import prose_words, read_chapter
from guide.notebook import (
    SHARED_BLOCK,
    blank_shared_blocks,
    cell_text,
    code_cells,
    headings,
    load,
    markdown_cells,
    own_code,
    tags,
)

# Level-2 headings every question chapter has, in this order.
REQUIRED_SECTIONS = [
    "Short answer",
    "What the usual answer gets wrong",
    "Setup",
    "Summary",
    "Check yourself",
    "Further reading",
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
    nb = load(notebook)
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


def anatomy_problems(nb, name):
    """What a page's structure lacks of the anatomy in CONTRIBUTING.md (empty: nothing).
    Code checks read the page's own code: the shared blocks prove nothing of it."""
    problems = []
    kind = page_kind(name)
    first = nb["cells"][0]
    title = cell_text(first) if first["cell_type"] == "markdown" else ""
    if not title.startswith("# "):
        problems.append("the first cell must be the title")
    ids = answered_ids(nb)
    if kind != "question":
        if ids is not None:
            problems.append(f"{name} answers no question and must not claim IDs")
    else:
        if not ids:
            problems.append(
                "a chapter names the IDs it answers on a '**Answers:**' line under its title"
            )
        if not re.search(
            rf"\*\*Topic:\*\* ({'|'.join(TOPICS)}) · \*\*Level:\*\* ({'|'.join(LEVELS)})\s*$",
            title,
            re.M,
        ):
            problems.append(
                f"the title cell needs a line '**Topic:** <one of {TOPICS}> · **Level:** <one of {LEVELS}>'"
            )
    if kind == "deeper":
        chapter = name.removesuffix(DEEPER_SUFFIX)
        if not title.startswith("# Going deeper: "):
            problems.append("a Going deeper page is titled '# Going deeper: ...'")
        if f"**Going deeper into:** {{doc}}`{chapter}`" not in title:
            problems.append(
                f"the title cell links back: '**Going deeper into:** {{doc}}`{chapter}`'"
            )
    found = headings(nb)
    required = {
        "question": REQUIRED_SECTIONS,
        "matter": [
            s for s in REQUIRED_SECTIONS if s != "What the usual answer gets wrong"
        ],
        "deeper": ["Setup", "Summary", "Further reading"],
    }[kind]
    missing = [s for s in required if s not in found]
    problems += [f"missing '## {s}' (found {found})" for s in missing]
    positions = [found.index(s) for s in required if s in found]
    if positions != sorted(positions):
        problems.append(f"sections out of order: {found}")
    if not any(re.match(r"\d+\. ", h) for h in found):
        problems.append("the demonstration is written as numbered steps ('## 1. ...')")
    code = "\n".join(text for _, text in own_code(nb))
    if not re.search(r"^\s*assert\b", code, re.M):
        problems.append("a chapter proves its claims with asserts of its own")
    cells = code_cells(nb)
    if len(cells) < 2 or tags(cells[0]) != ["remove-cell"]:
        problems.append(
            "the first code cell (the install block) is tagged remove-cell, so the site does not show it"
        )
    if len(cells) < 2 or "hide-input" not in tags(cells[1]):
        problems.append(
            "the second code cell (the setup block) is tagged hide-input: code folded, output shown"
        )
    markdown = "\n".join(text for _, text in markdown_cells(nb))
    if kind == "deeper":
        return problems
    if "{exercise}" not in markdown or "{solution}" not in markdown:
        problems.append("Check yourself uses exercise/solution pairs")
    if "{solution-start}" not in markdown or "{solution-end}" not in markdown:
        problems.append(
            "Check yourself has a predict-the-output item whose answer is an executed cell (solution-start/-end)"
        )
    return problems


def test_chapter_follows_the_anatomy(notebook):
    if notebook.stem in NO_SHARED_CELLS:
        assert answered_ids(load(notebook)) is None
        pytest.skip(
            f"{notebook.stem} reports the build with cells of its own: no anatomy"
        )
    problems = anatomy_problems(load(notebook), notebook.stem)
    assert not problems, "\n".join(problems)


def without_own_asserts(nb):
    """A copy of the notebook whose own code has no assert left (the shared blocks keep theirs)."""
    nb = copy.deepcopy(nb)
    for cell in code_cells(nb):
        text = cell_text(cell)
        blocks = SHARED_BLOCK.findall(text)
        own = blank_shared_blocks(text)
        if not blocks and re.search(r"^\s*assert\b", own, re.M):
            cell["source"] = re.sub(r"^(\s*)assert\b", r"\1checked =", own, flags=re.M)
    return nb


def test_a_chapter_without_asserts_of_its_own_fails_the_anatomy():
    nb = load(CHAPTERS / "autograd.ipynb")
    assert anatomy_problems(nb, "autograd") == []
    broken = without_own_asserts(nb)
    assert "assert" in "".join(
        cell_text(c) for c in code_cells(broken)
    )  # the shared blocks'
    assert anatomy_problems(broken, "autograd") == [
        "a chapter proves its claims with asserts of its own"
    ]


def test_a_shown_setup_cell_fails_the_anatomy():
    nb = copy.deepcopy(load(CHAPTERS / "autograd.ipynb"))
    code_cells(nb)[1]["metadata"]["tags"] = []
    assert anatomy_problems(nb, "autograd") == [
        "the second code cell (the setup block) is tagged hide-input: code folded, output shown"
    ]


def id_problems(ids):
    """What is wrong with the list of question IDs: duplicates, malformed IDs, and gaps in
    a source's numbering (the IDs are stable: none is ever dropped or reused)."""
    problems = []
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        problems.append(f"IDs listed twice: {duplicates}")
    malformed = [i for i in ids if not ID.fullmatch(i)]
    if malformed:
        problems.append(f"IDs that are not SOURCE-NUMBER: {malformed}")
    by_source = {}
    for qid in ids:
        if ID.fullmatch(qid):
            source, number = qid.split("-")
            by_source.setdefault(source, set()).add(int(number))
    for source, numbers in sorted(by_source.items()):
        gaps = sorted(set(range(1, max(numbers) + 1)) - numbers)
        if gaps:
            problems.append(f"{source} numbering has gaps: {gaps}")
    return problems


def test_question_map_lists_every_source_question(qmap):
    ids = [q["id"] for q in qmap["questions"]]
    assert not id_problems(ids), id_problems(ids)
    assert {i.split("-")[0] for i in ids} == set(qmap["sources"]), (
        "every ID prefix is a source named in questions.yml, and every source has IDs"
    )
    for q in qmap["questions"]:
        assert q["question"].strip(), f"{q['id']} has no question text"
        assert (
            q["chapter"] == "pending" or (CHAPTERS / f"{q['chapter']}.ipynb").exists()
        ), f"{q['id']} points to a chapter that does not exist: {q['chapter']}"


def test_the_id_check_can_fail():
    assert id_problems(["DS-1", "DS-2", "EX-1"]) == []
    assert id_problems(["DS-1", "DS-3", "DS-3", "EX 2"]) == [
        "IDs listed twice: ['DS-3']",
        "IDs that are not SOURCE-NUMBER: ['EX 2']",
        "DS numbering has gaps: [2]",
    ]


def test_chapters_and_question_map_agree(qmap):
    known = {q["id"]: q["chapter"] for q in qmap["questions"]}
    claimed = {}
    for path in notebooks():
        for qid in answered_ids(load(path)) or []:
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
    assert ID.findall("**Answers:** DS-6 · IQ-5 · RM-10, XX-1") == [
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
    if page_kind(notebook.stem) != "question":
        pytest.skip(f"{notebook.stem} answers no question: no Short answer")
    short = read_chapter(notebook)["short"] + "\n"
    assert SHORT_ANSWER.match(short), (
        "the Short answer opens with one bold sentence, a blank line, then three or four '- ' bullets"
        f" (the cheat sheet shows them):\n{short[:400]}"
    )


def test_short_answer_is_short_enough_to_say_and_to_print(notebook):
    """The cheat sheet prints every chapter's sentence and bullets on four A4 pages: that
    leaves about 110 words a chapter, and a point longer than 28 words is not a point."""
    if page_kind(notebook.stem) != "question":
        pytest.skip(f"{notebook.stem} answers no question: no Short answer")
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


def section(nb, title):
    """The Markdown of a level-2 section, up to the next level-2 heading."""
    body = "\n\n".join(text for _, text in markdown_cells(nb))
    match = re.search(
        rf"^## {re.escape(title)}\s*\n(.*?)(?=^## |\Z)", body, re.M | re.S
    )
    return match.group(1) if match else ""


OFFICIAL_DOCS = re.compile(r"^https://docs\.pytorch\.org/")
INDEX = r"```\{index\}[^\n]*\n```"
MAX_SHOWN_CODE_LINES = 40


def further_reading_problems(text):
    links = re.findall(r"\]\((https?://[^)\s]+)\)", text)
    if not links:
        return ["Further reading has no link"]
    if not OFFICIAL_DOCS.match(links[0]):
        return [
            f"Further reading starts with {links[0]}, not the official documentation"
        ]
    return []


def test_further_reading_starts_with_the_official_documentation(notebook):
    nb = load(notebook)
    if "Further reading" not in headings(nb):
        pytest.skip(f"{notebook.stem} has no Further reading")
    assert not further_reading_problems(section(nb, "Further reading"))


def test_the_further_reading_check_can_fail():
    good = (
        "- [Autograd](https://docs.pytorch.org/docs/stable/autograd.html), then a blog"
    )
    assert further_reading_problems(good) == []
    assert further_reading_problems("- [A blog](https://example.com/post)") != []
    assert further_reading_problems("No links at all.") != []


def index_problems(markdown_texts):
    """Index directives two in a row, in one cell or across two cells."""
    problems = []
    previous_ends_with_index = False
    for i, text in markdown_texts:
        if re.search(rf"{INDEX}\s*{INDEX}", text):
            problems.append(f"cell {i}: two index directives in a row")
        if previous_ends_with_index and text.lstrip().startswith("```{index}"):
            problems.append(f"cell {i}: an index directive follows the previous cell's")
        previous_ends_with_index = bool(re.search(rf"{INDEX}\s*$", text))
    return problems


def test_one_index_directive_at_a_time(notebook):
    assert not index_problems(markdown_cells(load(notebook)))


def test_the_index_check_can_fail():
    one = "## 1. Step\n\n```{index} !zero_grad, accumulation\n```\n\nText."
    two = "## 1. Step\n\n```{index} zero_grad\n```\n```{index} accumulation\n```\n"
    assert index_problems([(0, one)]) == []
    assert index_problems([(0, two)]) == ["cell 0: two index directives in a row"]
    split = [(0, "```{index} zero_grad\n```\n"), (1, "```{index} accumulation\n```")]
    assert index_problems(split) == [
        "cell 1: an index directive follows the previous cell's"
    ]


def long_shown_cells(nb):
    """(cell index, lines) of each code cell a reader sees whose own code is too long to
    read as one idea; hidden bookkeeping cells are folded on the page and not counted."""
    hidden = {"hide-input", "remove-cell", "remove-input"}
    return [
        (i, n)
        for i, code in own_code(nb)
        if not hidden & set(tags(nb["cells"][i]))
        and (n := len([line for line in code.splitlines() if line.strip()]))
        > MAX_SHOWN_CODE_LINES
    ]


def test_shown_code_cells_are_short(notebook):
    long = long_shown_cells(load(notebook))
    assert not long, (
        f"(cell, non-blank lines) over {MAX_SHOWN_CODE_LINES}: {long}; split the cell,"
        " or fold it (hide-input) if it only measures, plots or glues"
    )


def test_the_cell_length_check_can_fail():
    cell = {"cell_type": "code", "metadata": {}, "source": "x = 1\n" * 41}
    nb = {"cells": [cell, {**cell, "metadata": {"tags": ["hide-input"]}}]}
    assert long_shown_cells(nb) == [(0, 41)]


# Pages written before the budget, each over it until the one-question split gives its
# material its own chapters and Going deeper pages. The list only shrinks: a page that
# comes within the budget fails until it is taken off.
OVER_THE_BUDGET_FOR_NOW = {
    "autograd",
    "custom_layers",
    "data_loading",
    "measuring",
    "model_parallelism",
    "profiling",
    "saving_and_loading",
    "torch_compile",
    "trainers_and_ecosystem",
    "training_loop",
    "using_a_gpu",
    "variable_length_sequences",
    "what_is_pytorch",
}


def test_a_page_is_read_in_one_sitting(notebook):
    words = prose_words(load(notebook)["cells"])
    if notebook.stem in OVER_THE_BUDGET_FOR_NOW:
        assert words > PROSE_WORD_BUDGET, (
            f"{notebook.stem} is within the budget now ({words} words):"
            " take it off OVER_THE_BUDGET_FOR_NOW"
        )
        pytest.skip(
            f"{words} words of prose, over the {PROSE_WORD_BUDGET} budget until split"
        )
    assert words <= PROSE_WORD_BUDGET, (
        f"{words} words of prose (at most {PROSE_WORD_BUDGET}): move what goes beyond the"
        f" answer and its core proof to {deeper_page_of(notebook.stem)}.ipynb, or cut it"
    )


def test_a_going_deeper_page_sits_under_its_chapter_which_links_to_it():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    sections = {}
    for part in toc["parts"]:
        for entry in part["chapters"]:
            for section in entry.get("sections", []):
                sections[section["file"]] = entry["file"]
    for path in notebooks():
        if page_kind(path.stem) != "deeper":
            continue
        chapter = path.stem.removesuffix(DEEPER_SUFFIX)
        assert sections.get(f"chapters/{path.stem}") == f"chapters/{chapter}", (
            f"_toc.yml lists {path.stem} as a section under chapters/{chapter}"
        )
        text = "".join(
            cell_text(c) for c in load(CHAPTERS / f"{chapter}.ipynb")["cells"]
        )
        assert f"{{doc}}`{path.stem}`" in text or f"<{path.stem}>`" in text, (
            f"{chapter} links to its Going deeper page"
        )


def test_the_going_deeper_anatomy_can_fail():
    nb = load(CHAPTERS / "autograd.ipynb")
    problems = anatomy_problems(nb, "autograd_deeper")
    assert "a Going deeper page is titled '# Going deeper: ...'" in problems
    assert "autograd_deeper answers no question and must not claim IDs" in problems


def follow_up_count(path):
    """The Check-yourself follow-ups of a chapter: its {exercise} items other than the
    predict-the-output one."""
    return len(
        [e for e in read_chapter(path)["exercises"] if not e[0].endswith("predict")]
    )


def test_check_yourself_has_three_follow_ups_and_a_prediction(notebook):
    if page_kind(notebook.stem) != "question":
        pytest.skip(f"{notebook.stem} answers no question: no Check yourself")
    labels = [e[0] for e in read_chapter(notebook)["exercises"]]
    assert follow_up_count(notebook) >= 3, (
        f"Check yourself holds {follow_up_count(notebook)} follow-ups (at least three): {labels}"
    )
    assert f"{notebook.stem}-predict" in labels, (
        "the predict-the-output item is labelled NAME-predict"
    )
