"""The documentation site: it builds without a warning, every public name has an entry (once),
no internal link is broken, and the guides' code runs.

The site is built once per test process into a temporary folder (``make docs`` builds the same
into ``docs/_build/html``).
"""

import os
import re
import shlex
import subprocess
import sys
import zlib

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
sys.path.insert(0, DOCS)

from check_links import broken_links  # noqa: E402
from public_api import MODULES, public_names  # noqa: E402


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    html = out / "html"
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html"]
    command += ["-d", str(out / "doctrees"), DOCS, str(html)]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    return html, result


def _warnings(result):
    return [line for line in result.stderr.splitlines() if "WARNING" in line or "ERROR" in line]


def test_the_site_builds_without_a_warning(site):
    _, result = site
    assert result.returncode == 0 and not [
        w for w in _warnings(result) if "absl::InitializeLog" not in w
    ], result.stderr[-4000:]


def _inventory(html):
    """The names of the site's ``objects.inv``: four header lines, then zlib-compressed
    ``name domain:role priority uri display`` lines."""
    with open(html / "objects.inv", "rb") as f:
        data = f.read()
    body = data.split(b"\n", 4)[4]
    return {line.split(" ", 1)[0] for line in zlib.decompress(body).decode().splitlines()}


def test_every_public_name_has_an_entry(site):
    html, _ = site
    entries = _inventory(html)
    missing = [
        f"{module}.{name}"
        for module in MODULES
        for name in public_names(module)
        if f"{module}.{name}" not in entries
    ]
    assert not missing, f"public names without an entry: {missing}"
    # The deprecated alias of keras_adl.data is not documented a second time.
    assert not [e for e in entries if e.startswith("keras_adl.tasks")]


def test_no_public_object_is_on_two_pages():
    import importlib

    seen = {}
    for module in MODULES:
        exported = importlib.import_module(module)
        for name in public_names(module):
            obj = getattr(exported, name)
            if isinstance(obj, (int, float, str, tuple, frozenset, dict)):
                continue  # constants: equal values are not the same entry
            seen.setdefault(id(obj), []).append(f"{module}.{name}")
    twice = [names for names in seen.values() if len(names) > 1]
    assert not twice, f"exported from two documented modules: {twice}"


def test_no_internal_link_is_broken(site):
    html, result = site
    assert (html / "index.html").is_file(), result.stderr[-2000:]
    assert broken_links(html) == []


def test_the_link_checker_finds_a_broken_link_and_anchor(tmp_path):
    (tmp_path / "index.html").write_text(
        '<a id="here" href="#here">ok</a> <a href="other.html">missing</a>'
        ' <a href="index.html#nowhere">bad anchor</a> <a href="https://example.org">away</a>',
        encoding="utf-8",
    )
    assert sorted(why for _, _, why in broken_links(tmp_path)) == [
        "no such anchor",
        "no such file",
    ]


def test_the_docstring_linter_flags_an_argument_missing_from_args(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        'def f(a, b):\n    """Adds.\n\n    Args:\n        a: a number.\n\n'
        '    Returns:\n        The sum.\n    """\n    return a + b\n',
        encoding="utf-8",
    )
    pydoclint = os.path.join(os.path.dirname(sys.executable), "pydoclint")
    done = subprocess.run(
        [pydoclint, f"--config={ROOT}/pyproject.toml", str(bad)], capture_output=True, text=True
    )
    assert done.returncode == 1 and "DOC101" in done.stdout + done.stderr


# -- the guides ----------------------------------------------------------------------------------

_FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```\s*$", re.S | re.M)


def _pages():
    for folder, dirs, files in os.walk(DOCS):
        dirs[:] = [d for d in dirs if d not in ("_build", "api", "_ext")]
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.relpath(os.path.join(folder, name), DOCS)


def _blocks(page, languages):
    with open(os.path.join(DOCS, page), encoding="utf-8") as f:
        text = f.read()
    return [body for language, body in _FENCE.findall(text) if language in languages]


def _commands(page):
    commands = []
    for block in _blocks(page, ("console", "bash", "shell")):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line.strip().removeprefix("$ "), comments=True)
            while words and re.match(r"^[A-Za-z_][A-Za-z_0-9]*=", words[0]):
                words = words[1:]  # VARIABLE=value before the command
            while words and words[-1] in ("&", ";", "&&"):
                words = words[:-1]
            if words[:1] == ["keras-adl"]:
                commands.append(words)
    return commands


PYTHON_PAGES = [p for p in sorted(_pages()) if _blocks(p, ("python",))]
COMMAND_PAGES = [p for p in sorted(_pages()) if _commands(p)]


def test_the_guides_have_code():
    assert PYTHON_PAGES, "no guide has a ```python block"


@pytest.mark.slow  # 6-30 s a page, end to end like the examples' runs (check-dist also runs
# getting-started's code, in a fresh venv)
@pytest.mark.parametrize("page", PYTHON_PAGES)
def test_a_guides_python_runs(page, tmp_path):
    """Every ```python block of a page runs, in order, in one fresh process (a block shown but
    not run is a ```{code-block} python)."""
    script = tmp_path / "guide.py"
    script.write_text("\n\n".join(_blocks(page, ("python",))), encoding="utf-8")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", MPLBACKEND="Agg")
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=900,
    )
    assert result.returncode == 0, f"{page}:\n{result.stderr[-4000:]}"


@pytest.mark.parametrize("page", COMMAND_PAGES)
def test_a_guides_commands_parse(page):
    """Every ``keras-adl …`` line of a page's console blocks names a real task, model and
    options (the command's own parser reads it; nothing is trained)."""
    from keras_adl.cli import parse_task_command
    from keras_adl.cli.parsing import parser
    from keras_adl.training.rundir import RecipeError

    for words in _commands(page):
        line, argv = " ".join(words), words[1:]
        if argv and argv[0] == "--verbose":
            argv = argv[1:]
        try:
            if len(argv) >= 2 and argv[0] in ("train", "tune"):
                parse_task_command(argv[0], argv[1:])
            else:
                parser().parse_args(argv)
        except RecipeError as error:  # the user's own file (--data my_pairs.tsv) is not here
            if not str(error).endswith("not found"):
                pytest.fail(f"{page}: `{line}`: {error}")
        except SystemExit as exit_:  # --help exits 0 after printing
            if exit_.code in (0, None):
                continue
            pytest.fail(f"{page}: `{line}` does not parse (exit {exit_.code})")
