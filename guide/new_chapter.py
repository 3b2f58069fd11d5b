"""Start a chapter from templates/chapter.ipynb, with its table-of-contents and question-map entries.

Usage (or `make chapter NAME=... TITLE=... IDS=... TOPIC=... LEVEL=...`):
    python -m guide.new_chapter NAME --title "How do ...?" --ids "EX-1 EX-16" \\
        --topic Training --level Intermediate

Writes chapters/NAME.ipynb with the shared cells filled in, adds it to its topic's part in
_toc.yml after the chapters of the same or a lower level, and points the IDs at it in
questions.yml (they must be `pending` there).
"""

import argparse
import re

import yaml

from guide.book import LEVELS, ROOT, TOPICS
from guide.chapter import read_chapter
from guide.sync import main as sync


def toc_with(name, topic, level):
    """_toc.yml's text with chapters/NAME inserted into the part captioned `topic`."""
    text = (ROOT / "_toc.yml").read_text()
    toc = yaml.safe_load(text)
    part = next((p for p in toc["parts"] if p["caption"] == topic), None)
    if part is None:
        raise SystemExit(f"_toc.yml has no part captioned {topic!r}")
    after = None  # the last chapter of the part whose level is not above the new one
    for entry in part["chapters"]:
        info = read_chapter(ROOT / f"{entry['file']}.ipynb")
        if LEVELS.index(info["level"]) <= LEVELS.index(level):
            after = entry["file"]
    lines = text.splitlines(keepends=True)
    start = next(
        i for i, line in enumerate(lines) if line.strip() == f"- caption: {topic}"
    )
    files = [i for i in range(start + 1, len(lines)) if "- file: " in lines[i]]
    files = [
        i
        for i in files
        if not any("- caption:" in lines[j] for j in range(start + 1, i))
    ]
    where = (
        files[0]
        if after is None
        else next(i for i in files if lines[i].strip() == f"- file: {after}") + 1
    )
    indent = re.match(r"\s*", lines[files[0]]).group(0)
    lines.insert(where, f"{indent}- file: chapters/{name}\n")
    return "".join(lines)


def questions_with(name, ids):
    text = (ROOT / "questions.yml").read_text()
    for qid in ids:
        pattern = re.compile(
            rf"(- id: {re.escape(qid)}\n(?:    .*\n)*?    chapter: )pending\n"
        )
        if not pattern.search(text):
            raise SystemExit(f"{qid} is not a pending question in questions.yml")
        text = pattern.sub(rf"\g<1>{name}\n", text, count=1)
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="snake_case file name, without .ipynb")
    parser.add_argument(
        "--title", required=True, help="the question the chapter answers"
    )
    parser.add_argument(
        "--ids", required=True, help="question IDs, separated by spaces or commas"
    )
    parser.add_argument("--topic", required=True, choices=TOPICS)
    parser.add_argument("--level", required=True, choices=LEVELS)
    args = parser.parse_args()
    if not re.fullmatch(r"[a-z][a-z0-9_]*", args.name):
        raise SystemExit(
            "NAME must be snake_case: lower-case letters, digits and underscores"
        )
    path = ROOT / "chapters" / f"{args.name}.ipynb"
    if path.exists():
        raise SystemExit(f"{path.relative_to(ROOT)} exists already")
    ids = re.split(r"[\s,]+", args.ids.strip())
    toc, questions = (
        toc_with(args.name, args.topic, args.level),
        questions_with(args.name, ids),
    )
    text = (ROOT / "templates" / "chapter.ipynb").read_text()
    fields = {"name": args.name, "title": args.title, "ids": " · ".join(ids)}
    fields |= {"topic": args.topic, "level": args.level}
    for key, value in fields.items():
        text = text.replace("{{" + key + "}}", value.replace('"', '\\"'))
    path.write_text(text)
    (ROOT / "_toc.yml").write_text(toc)
    (ROOT / "questions.yml").write_text(questions)
    sync([str(path)])
    print(
        f"Created {path.relative_to(ROOT)}, listed it in _toc.yml under {args.topic!r},"
    )
    print(
        f"and pointed {', '.join(ids)} at it in questions.yml. Next: write it, then `make test`."
    )


if __name__ == "__main__":
    main()
