"""Turn a run of the chapters on a GPU machine into the book's GPU reference data.

Usage: python -m guide.gpu_reference OUT.json MACHINE.txt SOURCE EXECUTED_DIR [EXECUTED_DIR ...]

SOURCE says which version of the chapters ran (a commit, and any work in progress).

EXECUTED_DIR holds executed notebooks (with outputs) and the summary.json that
run_chapters.py writes beside them, as a GPU run returns them. OUT.json keeps, for each
chapter, whether it passed, how long it took, and every value it glued (the numbers and
sentences the prose cites), so that the site can show what the same pages measured on a GPU.
The reference page (chapters/gpu_reference.md) renders the file.
"""

import json
import sys
from pathlib import Path

from guide.notebook import ANSI


def glued_values(nb):
    """key -> the glued value's text, from a notebook executed by myst-nb's glue."""
    values = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            text = out.get("data", {}).get("application/papermill.record/text/plain")
            if name and text is not None:
                values[name] = text
    return values


def main(out, machine, source, *folders):
    lines = Path(machine).read_text().strip().splitlines()
    reference = {"machine": lines, "source": source, "chapters": {}}
    for folder in map(Path, folders):
        summary = json.loads((folder / "summary.json").read_text())
        reference["torch"], reference["device"] = summary["torch"], summary["device"]
        for name, result in summary["chapters"].items():
            nb = json.loads((folder / f"{name}.ipynb").read_text())
            status = ANSI.sub("", result["status"]).split("\n")[0]
            reference["chapters"][name] = {
                "status": "passed" if status == "passed" else "failed",
                "error": None if status == "passed" else status[:300],
                "seconds": result["seconds"],
                "glued": glued_values(nb),
            }
    Path(out).write_text(
        json.dumps(reference, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    )
    print(f"{len(reference['chapters'])} chapters written to {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
