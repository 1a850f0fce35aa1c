"""The docstring linter of the public API: pydoclint, and ruff's summary-line and section rules.

Usage::

    .venv/bin/python tests/docstring_lint.py  # exit status 0 when every docstring passes

pydoclint (``[tool.pydoclint]`` in pyproject.toml: Google style, and the files it checks)
compares each docstring with its signature: ``Args`` names every argument, in order and no
other (DOC101-DOC104), and a function that returns something has ``Returns`` (DOC201). Its
native mode has no switch to leave out single rules; two kinds are dropped here (`IGNORED`).
ruff then checks, on the same files, that each docstring opens with a summary line ending in
punctuation and that its sections are well formed (`RUFF_RULES`), not the rest of its style.
"""

import pathlib
import re
import subprocess
import sys

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = pathlib.Path(sys.executable).parent

IGNORED = {
    # Type hints in signatures: not a docstring matter (pydoclint asks for all or none).
    "DOC106",
    "DOC107",
    "DOC108",
    # A layer's class docstring documents what calling it returns under ``Returns:``
    # (STYLE.md); pydoclint reads that section as the constructor's.
    "DOC302",
}

RUFF_RULES = (
    "D210",  # no blank space around the text inside the quotes
    "D212",  # the summary starts on the first line
    "D214",  # a section header is not indented more than the docstring
    "D300",  # triple double quotes
    "D405",  # section names capitalised (``Args:``, not ``args:``)
    "D410",  # a blank line after each section
    "D411",  # a blank line before each section
    "D414",  # no empty section
    "D415",  # the summary ends with punctuation
    "D416",  # a section header ends with a colon
    "D419",  # no empty docstring
)

_VIOLATION = re.compile(r"^(\S+\.py):(\d+): (DOC\d+): ")


def public_files():
    """The files of ``keras_adl`` that ``[tool.pydoclint]``'s ``exclude`` does not exclude."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        exclude = re.compile(tomllib.load(f)["tool"]["pydoclint"]["exclude"])
    files = sorted((ROOT / "keras_adl").rglob("*.py"))
    return [
        p.relative_to(ROOT) for p in files if not exclude.search(p.relative_to(ROOT).as_posix())
    ]


def pydoclint_violations():
    """pydoclint's violations, one str each, but the `IGNORED` ones."""
    done = subprocess.run(
        [
            str(BIN / "pydoclint"),
            "--config=pyproject.toml",
            "--quiet",
            "--show-filenames-in-every-violation-message=True",
            "keras_adl",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode not in (0, 1):
        sys.exit(f"pydoclint failed (exit {done.returncode}):\n{done.stdout}{done.stderr}")
    violations = []
    for line in (done.stdout + done.stderr).splitlines():
        if _VIOLATION.match(line):
            violations.append(line)
        elif violations and line.strip():  # a message that spans lines
            violations[-1] += " " + line.strip()
    if done.returncode == 1 and not violations:
        sys.exit(f"pydoclint failed, and no violation was read:\n{done.stdout}{done.stderr}")
    return [v for v in violations if _VIOLATION.match(v)[3] not in IGNORED]


def main():
    violations = pydoclint_violations()
    print("\n".join(violations) or "pydoclint: all checks passed")
    ruff = subprocess.run(
        [str(BIN / "ruff"), "check", "--no-cache", "--select", ",".join(RUFF_RULES)]
        + [str(p) for p in public_files()],
        cwd=ROOT,
    )
    return 1 if violations or ruff.returncode else 0


if __name__ == "__main__":
    sys.exit(main())
