"""Rules for what the chapters say and how their code proves it, checked without running them.

Each rule exists because an expert review found the book breaking it in a way that no `assert`
caught: an error demonstration that passes when no error comes, a number typed into prose next
to a measurement that said otherwise, a CUDA-only synchronization, a glue key nobody cites.
"""

import ast
import re
import subprocess
import sys

import pytest

from guide.book import ROOT
from guide.notebook import cell_text, load, markdown_cells, own_code

# A try/except that is not a demonstration (a fallback, a probe of what the machine has) says so.
NOT_A_DEMO = "# not a demonstration"


def tool(name):
    return (
        str(ROOT / ".venv" / "bin" / name)
        if (ROOT / ".venv" / "bin" / name).exists()
        else name
    )


def per_cell(notebook, check):
    """'cell i, problem' for every problem `check(code)` finds in a chapter's code cells."""
    return [
        f"cell {i}, {p}" for i, code in own_code(load(notebook)) for p in check(code)
    ]


# ---------------------------------------------------------------------------------------------
# The shared cells, lint and spelling


def test_shared_cells_match_their_source():
    result = subprocess.run(
        [sys.executable, "-m", "guide.sync", "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_and_lint():
    for args in (["format", "--check", "."], ["check", "."]):
        result = subprocess.run(
            [tool("ruff"), *args], cwd=ROOT, capture_output=True, text=True
        )
        assert result.returncode == 0, (
            f"ruff {' '.join(args)}:\n{result.stdout}{result.stderr}"
        )


def test_spelling():
    result = subprocess.run(
        [tool("codespell")], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, (
        "codespell (fix the word, or add it to .codespellrc):\n"
        + (result.stdout + result.stderr)
    )


# ---------------------------------------------------------------------------------------------
# Error demonstrations


def loose_trys(code):
    """Line numbers of try/except statements that would pass in silence if no error came."""
    lines = code.splitlines()
    found = []
    for node in ast.walk(ast.parse(code)):
        if not isinstance(node, ast.Try) or not node.handlers:
            continue
        if NOT_A_DEMO in lines[node.lineno - 1]:
            continue
        last = node.body[-1]
        fails_without_error = isinstance(last, ast.Raise) or any(
            isinstance(n, ast.Raise) for n in node.orelse
        )
        if not fails_without_error:
            found.append(node.lineno)
    return found


def test_error_demonstrations_fail_when_no_error_comes(notebook):
    problems = per_cell(notebook, lambda code: [f"line {n}" for n in loose_trys(code)])
    assert not problems, (
        "a try/except that passes when no error is raised (use `with expect_error(...)`, end the"
        f" try body with `raise AssertionError(...)`, or mark a probe '{NOT_A_DEMO}: why'): "
        + "; ".join(problems)
    )


def test_the_loose_try_check_can_fail():
    assert loose_trys("try:\n    f()\nexcept ValueError:\n    pass\n") == [1]
    assert (
        loose_trys(
            "try:\n    f()\n    raise AssertionError\nexcept ValueError:\n    pass\n"
        )
        == []
    )
    assert (
        loose_trys(f"try:  {NOT_A_DEMO}: a probe\n    f()\nexcept OSError:\n    pass\n")
        == []
    )
    assert loose_trys("try:\n    f()\nfinally:\n    g()\n") == []


# ---------------------------------------------------------------------------------------------
# Measurements: numbers and verdicts come from the code

STRIP_FROM_PROSE = [
    re.compile(r"^(```|~~~).*?^\1", re.M | re.S),  # fenced blocks and directives
    re.compile(
        r"\{[\w:-]+\}`[^`]*`"
    ),  # roles: {glue:text}`key:.2f`, {doc}`x`, {index}`y`
    re.compile(r"`[^`]*`"),  # inline code
    re.compile(r"\$\$.*?\$\$|\$[^$]*\$", re.S),  # math
    re.compile(r"\]\([^)]*\)"),  # link targets
    re.compile(r"<[^>]+>"),  # HTML tags
    re.compile(r"^#+ .*$", re.M),  # headings
    re.compile(
        r"\bsteps? \d+(?:(?:,| and| to|-)\s*\d+)*"
    ),  # references to steps of the chapter
]
TYPED_NUMBER = re.compile(r"(?<![\w.\-/])\d+(?:[.,]\d+)*(?![\w])")
COMPARATIVE = re.compile(
    r"\b(faster|slower|speed-?ups?|quicker|cheaper|costlier)\b", re.I
)
GLUE = re.compile(r"\{glue(?::\w+)?\}`")


def measurement_prose(nb):
    """The Markdown text of the chapter's Measurements section, with code, math, roles and
    links removed: what is left is the sentences a reader takes as the finding."""
    text = "\n\n".join(t for _, t in markdown_cells(nb))
    match = re.search(r"^## Measurements\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    return match.group(1) if match else ""


def prose_problems(section):
    sentences = re.split(r"(?<=[.!?:])\s+", section)
    problems = []
    for sentence in sentences:
        bare = sentence
        for pattern in STRIP_FROM_PROSE:
            bare = pattern.sub(" ", bare)
        if TYPED_NUMBER.search(bare):
            problems.append(
                f"typed number {TYPED_NUMBER.search(bare).group(0)!r} in: {sentence.strip()[:160]}"
            )
        if COMPARATIVE.search(bare) and not GLUE.search(sentence):
            problems.append(
                f"comparison without a glued value in: {sentence.strip()[:160]}"
            )
    return problems


def test_measurement_prose_holds_no_typed_number_or_verdict(notebook):
    problems = prose_problems(measurement_prose(load(notebook)))
    assert not problems, (
        "the Measurements section must take its numbers and verdicts from the code (glue them;"
        " write units and sizes as code or math): " + " | ".join(problems)
    )


def test_the_measurement_prose_check_can_fail():
    assert prose_problems("It took 3.5 ms.")
    assert prose_problems("The compiled model is faster.")
    assert not prose_problems(
        "It took {glue:text}`x_ms:.1f` ms, {glue:text}`x_verdict`."
    )
    assert not prose_problems(
        "A `float32` matrix of size $2n^3$ in [step](a1.ipynb), bf16 and H200."
    )


# ---------------------------------------------------------------------------------------------
# Glue keys: literal, prefixed with the chapter, cited, and glued where cited

CITED = re.compile(r"\{glue(?::\w+)?\}`([\w-]+)|^```\{glue(?::\w+)?\}\s+([\w-]+)", re.M)


def glued_keys(nb):
    keys, problems = set(), []
    for i, code in own_code(nb):
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "glue":
                first = node.args[0] if node.args else None
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    keys.add(first.value)
                else:
                    problems.append(
                        f"cell {i}, line {node.lineno}: the key is not a literal string"
                    )
    return keys, problems


def test_glue_keys_are_literal_cited_and_glued(notebook):
    nb = load(notebook)
    glued, problems = glued_keys(nb)
    glued.add(f"{notebook.stem}_hardware")  # glued by the shared setup cell
    cited = {a or b for _, text in markdown_cells(nb) for a, b in CITED.findall(text)}
    problems += [
        f"{k}: glued key without the '{notebook.stem}_' prefix"
        for k in glued
        if not k.startswith(f"{notebook.stem}_")
    ]
    problems += [f"{k}: cited but never glued" for k in sorted(cited - glued)]
    problems += [
        f"{k}: glued but never cited"
        for k in sorted(glued - cited - {f"{notebook.stem}_hardware"})
    ]
    assert not problems, "; ".join(problems)


# ---------------------------------------------------------------------------------------------
# Device-agnostic code: every accelerator, not only CUDA

CUDA_ONLY_SYNC = re.compile(r"torch\.cuda\.synchronize\(")
FLOAT64_ON_DEVICE = re.compile(
    r"(float64|\.double\(\)).*\b(device=device|\.to\(device)\b|\b(device=device|\.to\(device)\b.*(float64|\.double\(\))"
)
ALLOWED = "# cuda only"  # a line inside a CUDA-only branch that must use a CUDA API


def device_problems(code):
    problems = []
    for n, line in enumerate(code.splitlines(), 1):
        if ALLOWED in line:
            continue
        if CUDA_ONLY_SYNC.search(line):
            problems.append(
                f"line {n}: torch.cuda.synchronize() (use sync() or torch.accelerator.synchronize())"
            )
        if FLOAT64_ON_DEVICE.search(line):
            problems.append(
                f"line {n}: float64 on `device` (MPS has none: compute it on the CPU)"
            )
    return problems


def test_code_is_right_on_every_accelerator(notebook):
    problems = per_cell(notebook, device_problems)
    assert not problems, (
        f"mark a line inside a CUDA-only branch with '{ALLOWED}': "
        + "; ".join(problems)
    )


def test_the_device_check_can_fail():
    assert device_problems("torch.cuda.synchronize()")
    assert device_problems("x = torch.ones(2, dtype=torch.float64, device=device)")
    assert device_problems("net.to(device).double()")
    assert not device_problems("x = torch.ones(2, dtype=torch.float64)")
    assert not device_problems(f"torch.cuda.synchronize()  {ALLOWED}")


COUNTS_FLOPS = re.compile(r"FlopCounterMode\(|with_flops=True")
ON_A_NAMED_DEVICE = re.compile(r"""["'](cpu|meta)["']|\.cpu\(\)|\bdevice\.type\b""")


def flop_count_problems(code):
    """FLOP counts depend on which kernels a device dispatches to (on MPS `aten::linear` has
    its own kernel, with no FLOP formula), so a cell that counts them runs on a CPU or
    `meta` copy, or branches on `device.type`."""
    if COUNTS_FLOPS.search(code) and not ON_A_NAMED_DEVICE.search(code):
        return ["counts FLOPs on `device`: count them on a CPU or meta copy"]
    return []


def test_flops_are_counted_on_the_device_they_are_about(notebook):
    problems = per_cell(notebook, flop_count_problems)
    assert not problems, "; ".join(problems)


def test_the_flop_count_check_can_fail():
    assert flop_count_problems("with FlopCounterMode(display=False) as c:\n    net(X)")
    assert flop_count_problems("with profile(activities=a, with_flops=True) as p:")
    assert not flop_count_problems(
        'net_cpu = copy.deepcopy(net).to("cpu")\nwith FlopCounterMode() as c:'
    )


# ---------------------------------------------------------------------------------------------
# Figures: a caption, a name prose can reference, alt text, no title drawn inside the image

DRAWS = re.compile(r"\bplt\.(subplots|figure|show)\(")


def test_every_figure_has_a_caption_name_and_alt_text(notebook):
    problems = []
    for i, cell in enumerate(load(notebook)["cells"]):
        text = cell_text(cell)
        if cell["cell_type"] != "code" or not DRAWS.search(text):
            continue
        meta = cell["metadata"].get("mystnb", {})
        figure, image = meta.get("figure", {}), meta.get("image", {})
        if not figure.get("caption") or not figure.get("name", "").startswith(
            f"fig-{notebook.stem}-"
        ):
            problems.append(
                f"cell {i}: needs mystnb.figure.caption and .name 'fig-{notebook.stem}-...'"
            )
        if len(image.get("alt", "")) < 20:
            problems.append(
                f"cell {i}: needs mystnb.image.alt, a sentence describing the plot"
            )
        if "suptitle(" in text or (
            "set_title(" in text and not re.search(r"subplots\(\s*\d", text)
        ):
            problems.append(
                f"cell {i}: a title drawn inside a one-panel image (use the caption)"
            )
    assert not problems, "; ".join(problems)


# ---------------------------------------------------------------------------------------------
# Code a chapter writes to files with %%writefile (worker modules, scripts) is code too

WRITEFILE = re.compile(
    r"\A%%writefile(?P<append>\s+-a)?\s+(?P<path>\S+)[ \t]*\n(?P<body>.*)\Z", re.S
)


def written_files(nb):
    """file name -> the code that %%writefile (and %%writefile -a) cells write into it."""
    files = {}
    for cell in nb["cells"]:
        match = (
            WRITEFILE.match(cell_text(cell)) if cell["cell_type"] == "code" else None
        )
        if match:
            name = re.split(r"[/}]", match["path"])[-1]
            body = (
                match["body"] if match["body"].endswith("\n") else match["body"] + "\n"
            )
            files[name] = (files.get(name, "") if match["append"] else "") + body
    return files


def test_code_written_by_writefile_is_linted_and_formatted(notebook, tmp_path):
    files = written_files(load(notebook))
    if not files:
        pytest.skip(f"{notebook.stem} writes no file with %%writefile")
    for name, body in files.items():
        (tmp_path / name).write_text(body)
    # The modules import each other: sort them as the chapter's own (local) modules.
    local = ", ".join(f'"{name.removesuffix(".py")}"' for name in files)
    config = [
        "--config",
        str(ROOT / "ruff.toml"),
        "--config",
        f"lint.isort.known-local-folder = [{local}]",
    ]
    for args in (["check", *config], ["format", "--check", "--diff", *config]):
        result = subprocess.run(
            [tool("ruff"), *args, str(tmp_path)], capture_output=True, text=True
        )
        assert result.returncode == 0, (
            f"ruff {args[0]} on the files {notebook.stem} writes:\n{result.stdout}{result.stderr}"
        )


def test_the_writefile_extraction_can_fail(tmp_path):
    nb = {
        "cells": [
            {"cell_type": "code", "source": "%%writefile {workdir}/m.py\nimport os\n"}
        ]
    }
    assert written_files(nb) == {"m.py": "import os\n"}
    nb["cells"].append(
        {"cell_type": "code", "source": "%%writefile -a {workdir}/m.py\nx = 1\n"}
    )
    assert written_files(nb) == {"m.py": "import os\nx = 1\n"}
    nb["cells"][0]["source"] = (
        "%%writefile {workdir}/m.py\nimport os"  # no final newline
    )
    assert written_files(nb) == {"m.py": "import os\nx = 1\n"}


# ---------------------------------------------------------------------------------------------
# Code quoted in the prose (predict-the-output snippets, examples) fits its box on the page

PROSE_CODE = re.compile(r"^(`{3,})(?:python|py)[ \t]*\n(.*?)^\1[ \t]*$", re.M | re.S)
PROSE_CODE_WIDTH = 80  # exercise boxes are narrower than the page's column of 88


def long_prose_code_lines(text):
    return [
        line
        for m in PROSE_CODE.finditer(text)
        for line in m.group(2).splitlines()
        if len(line) > PROSE_CODE_WIDTH
    ]


def test_code_quoted_in_markdown_fits_its_box(notebook):
    long = [
        line
        for _, text in markdown_cells(load(notebook))
        for line in long_prose_code_lines(text)
    ]
    assert not long, f"lines of quoted code over {PROSE_CODE_WIDTH} characters: {long}"


def test_the_quoted_code_check_can_fail():
    assert long_prose_code_lines("```python\n" + "x" * 81 + "\n```\n")
    assert not long_prose_code_lines("```python\nx = 1\n```\n")
