"""The documentation site: it builds without a warning, every public name has an entry (once),
every layer a page of its own, no internal link is broken, code blocks have a copy button, and
the guides' code runs and prints what the guides show.

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
from public_api import LAYER_KINDS, MODULES, layer_file, public_names  # noqa: E402


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


def _inventory_uris(html):
    """``{name: uri}`` of the site's ``objects.inv``: four header lines, then zlib-compressed
    ``name domain:role priority uri display`` lines (a ``$`` in the uri stands for the name)."""
    with open(html / "objects.inv", "rb") as f:
        data = f.read()
    body = data.split(b"\n", 4)[4]
    uris = {}
    for line in zlib.decompress(body).decode().splitlines():
        name, _, _, uri = line.split(" ", 4)[:4]
        uris[name] = uri.replace("$", name) if uri.endswith("$") else uri
    return uris


def _inventory(html):
    """The names of the site's ``objects.inv``."""
    return set(_inventory_uris(html))


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


def test_every_layer_has_a_page_of_its_own(site):
    """As on keras.io: ``api/layers/<source file>.html`` documents one layer, and its kind's
    page and the layers page link to it."""
    html, _ = site
    uris = _inventory_uris(html)
    for name in public_names("keras_adl.layers"):
        page = f"api/layers/{layer_file(name)}.html"
        assert uris[f"keras_adl.layers.{name}"] == f"{page}#keras_adl.layers.{name}", name
        text = (html / page).read_text(encoding="utf-8")
        classes = re.findall(r'<dl class="py class">', text)
        assert len(classes) == 1, (page, len(classes))
    layers_page = (html / "api/layers.html").read_text(encoding="utf-8")
    for kind, _, _, names in LAYER_KINDS:
        kind_page = (html / "api/layers" / f"{kind}.html").read_text(encoding="utf-8")
        for name in names:
            assert f'href="{layer_file(name)}.html#keras_adl.layers.{name}"' in kind_page
            assert f'href="layers/{layer_file(name)}.html#keras_adl.layers.{name}"' in layers_page


def test_every_layer_is_in_one_kind():
    listed = [name for _, _, _, names in LAYER_KINDS for name in names]
    assert sorted(listed) == sorted(public_names("keras_adl.layers"))


def test_code_blocks_have_a_copy_button_that_leaves_out_prompts_and_output(site):
    """sphinx-copybutton copies a block's code: the lines after a ``>>> ``, ``... `` or ``$ ``
    prompt without it, and no output line; an ```output block has no button."""
    html, _ = site
    script = (html / "_static" / "copybutton.js").read_text(encoding="utf-8")
    assert r"'>>> |\\.\\.\\. |\\$ ', true, true" in script
    assert "div:not(.highlight-output) > div.highlight > pre" in script
    page = (html / "getting-started.html").read_text(encoding="utf-8")
    assert "copybutton.js" in page and "adl.css" in page
    assert 'class="highlight-output' in page


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


def _fences(page):
    """``[(language, body, the text between this fence and the one before)]`` of a page."""
    with open(os.path.join(DOCS, page), encoding="utf-8") as f:
        text = f.read()
    fences, end = [], 0
    for match in _FENCE.finditer(text):
        fences.append((match[1], match[2], text[end : match.start()]))
        end = match.end()
    return fences


def _blocks(page, languages):
    return [body for language, body, _ in _fences(page) if language in languages]


def _shown_outputs(page):
    """``{i: text}``: the ```output block right after the page's ``i``-th ```python block
    (nothing but blank lines between them)."""
    shown, python = {}, -1
    fences = _fences(page)
    for n, (language, body, before) in enumerate(fences):
        if language == "python":
            python += 1
        elif language == "output":
            follows = n > 0 and fences[n - 1][0] == "python" and not before.strip()
            assert follows, f"{page}: an ```output block that does not follow a ```python block"
            shown[python] = body
    return shown


# What a guide's ```output block shows is compared with what its ```python block prints:
# line by line (trailing blank lines and each line's surrounding spaces aside), a run of spaces
# matching any run of spaces, and
# - ``...`` matches any text within a line, and a line of only ``...`` any number of lines
#   (doctest's ELLIPSIS);
# - a decimal number (``0.84``, ``1.5e-07``) matches a printed number that differs from it by at
#   most one unit of its last digit (``0.84`` matches 0.83 to 0.85, ``0.835`` included): the
#   figures of a short seeded training vary in their last digit between machines and thread
#   counts. Integers, shapes and words match exactly.
_TOKEN = re.compile(r"(\.\.\.)|(-?\d+\.\d+(?:e[-+]?\d+)?)|(\s+)", re.I)
_PRINTED_NUMBER = r"(-?\d+(?:\.\d*)?(?:e[-+]?\d+)?)"


def _line_pattern(line):
    """A shown line as a regex, and its decimal numbers in order."""
    pattern, numbers, end = "", [], 0
    for match in _TOKEN.finditer(line):
        pattern += re.escape(line[end : match.start()])
        if match[1]:
            pattern += ".*?"
        elif match[2]:
            pattern += _PRINTED_NUMBER
            numbers.append(match[2])
        else:
            pattern += r"\s+"
        end = match.end()
    return pattern + re.escape(line[end:]), numbers


def _line_matches(shown, printed):
    pattern, numbers = _line_pattern(shown.strip())
    match = re.fullmatch(pattern, printed.strip())
    if match is None:
        return False
    for number, value in zip(numbers, match.groups()):
        mantissa, _, exponent = number.lower().partition("e")
        unit = 10.0 ** (int(exponent or 0) - len(mantissa.split(".")[1]))
        if abs(float(value) - float(number)) > unit * (1 + 1e-9):
            return False
    return True


def output_matches(shown, printed):
    """Whether ``printed`` (a block's output) is what ``shown`` (its ```output block) shows,
    by the rule above."""
    shown_lines = shown.rstrip().splitlines()
    printed_lines = printed.rstrip().splitlines()

    def match(i, j):
        if i == len(shown_lines):
            return j == len(printed_lines)
        if shown_lines[i].strip() == "...":
            return any(match(i + 1, k) for k in range(j, len(printed_lines) + 1))
        return (
            j < len(printed_lines)
            and _line_matches(shown_lines[i], printed_lines[j])
            and match(i + 1, j + 1)
        )

    return match(0, 0)


def test_the_output_rule_allows_ellipses_and_the_last_digit():
    assert output_matches("accuracy: 0.84\n", "accuracy: 0.85")
    assert output_matches("accuracy: 0.84", "accuracy: 0.835")
    assert not output_matches("accuracy: 0.84", "accuracy: 0.82")
    assert output_matches("loss 1.5e-07", "loss 1.6e-07")
    assert not output_matches("shape (4, 11)", "shape (4, 12)")  # integers are exact
    assert output_matches("{'loss': 8.5...}", "{'loss': 8.5384712}")
    assert output_matches("[[0.    0.999 0.   ]]", "[[0.  0.999   0. ]]")
    assert output_matches("first\n...\nlast", "first\na\nb\nlast")
    assert output_matches("first\n...\nlast", "first\nlast")
    assert not output_matches("first\nlast", "first\nmore\nlast")
    assert not output_matches("a", "a\nb")


def test_every_output_block_follows_a_python_block():
    for page in _pages():
        _shown_outputs(page)  # asserts


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


_END = "#-- the end of block {} --#"


def run_page(page, folder):
    """Runs every ```python block of ``page``, in order, in one fresh process in ``folder``;
    returns the finished process and what each block printed (a list, one str per block)."""
    blocks = _blocks(page, ("python",))
    script = os.path.join(folder, "guide.py")
    with open(script, "w", encoding="utf-8") as f:
        for i, block in enumerate(blocks):
            f.write(f"{block}\nprint({_END.format(i)!r}, flush=True)\n\n")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", MPLBACKEND="Agg")
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run(
        [sys.executable, script],
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
        timeout=900,
    )
    printed, rest = [], result.stdout
    for i in range(len(blocks)):
        before, found, rest = rest.partition(_END.format(i) + "\n")
        printed.append(before if found else None)
    return result, printed


# 15-50 s a page on 2 cores, end to end like the examples' runs (check-dist also runs
# getting-started's code, in a fresh venv).
@pytest.mark.slow
@pytest.mark.parametrize("page", PYTHON_PAGES)
def test_a_guides_python_runs(page, tmp_path):
    """Every ```python block of a page runs, in order, in one fresh process (a block shown but
    not run is a ```{code-block} python), and prints what the ```output block after it shows
    (by the rule of `output_matches`); a block that prints has an ```output block."""
    result, printed = run_page(page, str(tmp_path))
    assert result.returncode == 0, f"{page}:\n{result.stderr[-4000:]}"
    shown = _shown_outputs(page)
    for i, output in enumerate(printed):
        where = f"{page}, python block {i + 1}"
        if i in shown:
            assert output_matches(shown[i], output), (
                f"{where} shows\n{shown[i]}\nbut printed\n{output}"
            )
        else:
            assert not output.strip(), f"{where} prints, and shows no ```output:\n{output}"


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
