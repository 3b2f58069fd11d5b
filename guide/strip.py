"""Clear outputs, execution counts and per-machine metadata from notebooks.

Usage: python -m guide.strip [NOTEBOOK ...]   (default: every notebook in chapters/)
Keeps only cell tags, myst-nb's figure and image options, and the python3 kernelspec, so
diffs show content alone.
"""

import json
import sys
from pathlib import Path

from guide.book import notebooks

KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def strip(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    nb = json.loads(text)
    nb["metadata"] = {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    for cell in nb["cells"]:
        kept = {key: cell.get("metadata", {}).get(key) for key in ("tags", "mystnb")}
        cell["metadata"] = {key: value for key, value in kept.items() if value}
        cell.pop("id", None)
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    nb["nbformat"], nb["nbformat_minor"] = 4, 4
    new = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    if new != text:
        path.write_text(new, encoding="utf-8")
        return True
    return False


def main(argv):
    for p in [Path(a) for a in argv] or notebooks():
        if strip(p):
            print("stripped", p)


if __name__ == "__main__":
    main(sys.argv[1:])
