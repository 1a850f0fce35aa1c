"""House rules read from the source with ``ast`` (nothing is imported):

- no module imports a private name (a module or attribute starting with ``_``) of another
  keras_adl package: a package is a directory, and ``keras_adl/x.py`` belongs to the package
  ``keras_adl``; what another package needs is public there (`PRIVATE_TO_SUBPACKAGES` lists
  the exceptions);
- no function is longer than `MAX_FUNCTION_LINES` lines, from its ``def`` to its last line
  (docstring included), outside `LONG_FUNCTIONS_ALLOWED_IN`.
"""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "keras_adl"

# Packages whose own subpackages may import their private names: the family folders of
# keras_adl/recipes/ share its private core (_spec, _recipe, _compile, _development, _tuning,
# _pictures) while the recipes are restructured; remove the entry once that core is public.
PRIVATE_TO_SUBPACKAGES = ("keras_adl.recipes",)

MAX_FUNCTION_LINES = 80
# Paths (a folder ends with "/") still being split into shorter functions; remove an entry once
# its functions are short.
LONG_FUNCTIONS_ALLOWED_IN = ("keras_adl/recipes/", "keras_adl/cli/")


def _modules():
    return sorted(PACKAGE.rglob("*.py"))


def _relative(path):
    return path.relative_to(ROOT).as_posix()


def _dotted(path):
    """The dotted name of a module file (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_package(dotted):
    return (ROOT / dotted.replace(".", "/") / "__init__.py").exists()


def _private(name):
    return name.startswith("_") and not name.startswith("__")


def _imported(node, path):
    """``(module, name)`` pairs of an import statement: ``name`` is None for ``import m``."""
    if isinstance(node, ast.Import):
        return [(alias.name, None) for alias in node.names]
    module = node.module or ""
    if node.level:  # relative: resolved against the importing module's package
        base = _dotted(path).split(".")
        base = base if path.name == "__init__.py" else base[:-1]
        base = base[: len(base) - node.level + 1]
        module = ".".join(base + ([module] if module else []))
    return [(module, alias.name) for alias in node.names]


def _private_owners(module, name):
    """The package owning each private name in ``from module import name`` (or
    ``import module``): the package that holds the private module or attribute."""
    parts = module.split(".")
    owners = [".".join(parts[:i]) for i in range(1, len(parts)) if _private(parts[i])]
    if name is not None and _private(name):
        owners.append(module if _is_package(module) else ".".join(parts[:-1]))
    return owners


def test_no_private_name_is_imported_from_another_package():
    found = []
    for path in _modules():
        package = _dotted(path) if path.name == "__init__.py" else _dotted(path).rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for module, name in _imported(node, path):
                if module.split(".")[0] != "keras_adl":
                    continue
                for owner in _private_owners(module, name):
                    shared = owner in PRIVATE_TO_SUBPACKAGES and package.startswith(owner + ".")
                    if owner != package and not shared:
                        what = module if name is None else f"{module}.{name}"
                        found.append(f"{_relative(path)}:{node.lineno} imports {what}")
    assert not found, "private names imported across packages:\n" + "\n".join(found)


def test_no_function_is_longer_than_the_limit():
    found = []
    for path in _modules():
        relative = _relative(path)
        if relative.startswith(LONG_FUNCTIONS_ALLOWED_IN):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    found.append(f"{relative}:{node.lineno} {node.name}: {lines} lines")
    assert not found, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(found)
