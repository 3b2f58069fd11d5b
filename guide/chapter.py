"""What the generated pages need from a chapter: title, header fields, Short answer and its
bullets, Check-yourself items and reading time; and the chapters grouped by the toc's parts."""

import math
import re
from pathlib import Path

from guide.book import LINE, ROOT, load_toc
from guide.notebook import FENCE, cell_text, load, tags

# Reading speed used for the reading times: prose words, and lines of visible code, per minute.
WORDS_PER_MINUTE, CODE_LINES_PER_MINUTE = 200, 15
HIDDEN = {"remove-cell", "hide-input", "remove-input"}


def short_answer_parts(short):
    """The bold opening sentence and the 'say this' bullets of a Short answer section."""
    sentence = re.match(r"\*\*(.+?)\*\*", short or "")
    bullets = re.findall(r"^- (.+(?:\n  .+)*)", short or "", re.M)
    return (sentence.group(1) if sentence else None), [
        " ".join(b.split()) for b in bullets
    ]


def exercises(markdown_texts):
    """(label, question, answer) of each Check-yourself item: an {exercise} with its {solution},
    or a predict-the-output item whose answer is explained between solution-start and -end."""
    body = "\n\n".join(markdown_texts)
    questions, answers = {}, {}
    for match in FENCE.finditer(body):
        name, arg, text = match["name"], match["arg"].strip(), match["body"]
        options = dict(re.findall(r"^:(\w+):\s*(.*)$", text, re.M))
        text = re.sub(r"^:\w+:.*\n", "", text, flags=re.M).strip()
        if name == "exercise":
            questions[options.get("label")] = text
        elif name == "solution":
            answers[arg] = text
    for match in re.finditer(
        r"```\{solution-start\}\s+(\S+).*?```\s*$(.*?)```\{solution-end\}",
        body,
        re.M | re.S,
    ):
        answers[match.group(1)] = match.group(2).strip()
    return [(label, q, answers.get(label, "")) for label, q in questions.items()]


def prose_words(cells):
    return sum(len(cell_text(c).split()) for c in cells if c["cell_type"] == "markdown")


def visible_code_lines(cells):
    return sum(
        len([line for line in cell_text(c).splitlines() if line.strip()])
        for c in cells
        if c["cell_type"] == "code" and not HIDDEN & set(tags(c))
    )


def reading_minutes(cells):
    """Minutes to read a chapter: its prose and its visible code (hidden cells excluded)."""
    minutes = (
        prose_words(cells) / WORDS_PER_MINUTE
        + visible_code_lines(cells) / CODE_LINES_PER_MINUTE
    )
    return max(1, math.ceil(minutes))


def read_chapter(path):
    """Title, header fields, Short answer, exercises and reading time of a chapter notebook."""
    cells = load(path)["cells"]
    texts = [cell_text(c) for c in cells if c["cell_type"] == "markdown"]
    first = texts[0]
    info = {"title": first.splitlines()[0].lstrip("# ").strip()}
    for key, pattern in LINE.items():
        match = pattern.search(first)
        info[key.lower()] = match.group(1) if match else None
    body = "\n\n".join(texts)
    match = re.search(r"^## Short answer\s*\n(.*?)(?=^## |\Z)", body, re.M | re.S)
    info["short"] = match.group(1).strip() if match else None
    info["sentence"], info["bullets"] = short_answer_parts(info["short"])
    info["exercises"] = exercises(texts)
    info["minutes"] = reading_minutes(cells)
    return info


def parts(root=ROOT):
    """(caption, [(name, info), ...]) for every numbered part of the toc, in study order."""
    root = Path(root)
    out = []
    for part in load_toc(root)["parts"]:
        if part.get("numbered"):
            chapters = [
                (
                    e["file"].rsplit("/", 1)[-1],
                    read_chapter(root / f"{e['file']}.ipynb"),
                )
                for e in part["chapters"]
            ]
            out.append((part["caption"], chapters))
    return out


# Study plans by the time a reader has: (name, sessions, minutes a session, levels read).
PLANS = [
    ("One evening", 1, 180, ("Basic",)),
    ("Three evenings", 3, 180, ("Basic", "Intermediate")),
    ("Two weeks", 14, 120, ("Basic", "Intermediate", "Advanced")),
]


def cheat_sheet_minutes(chapters):
    """Minutes to read every chapter's sentence and bullets (the cheat sheet)."""
    words = sum(
        len((info["sentence"] or "").split())
        + sum(len(b.split()) for b in info["bullets"])
        for _, info in chapters
    )
    return max(5, math.ceil(words / WORDS_PER_MINUTE))


def study_plan(chapters, sessions, minutes, levels, first=0):
    """Chapters of the given levels, in study order, packed into `sessions` sessions of
    `minutes` each (the first already holds `first` minutes): a list of sessions, each a list
    of (name, minutes), and the chapters that did not fit."""
    plan, left_out, used = [[]], [], first
    for name, info in chapters:
        if info["level"] not in levels:
            continue
        if used + info["minutes"] > minutes and plan[-1]:
            if len(plan) == sessions:
                left_out.append(name)
                continue
            plan.append([])
            used = 0
        if used + info["minutes"] > minutes and len(plan) == sessions and not plan[-1]:
            left_out.append(name)
            continue
        plan[-1].append((name, info["minutes"]))
        used += info["minutes"]
    return plan, left_out
