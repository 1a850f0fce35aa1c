"""House rules read from the source with ``ast`` (nothing is imported):

- no module imports a private name (a module or attribute starting with ``_``) of another
  keras_adl package: a package is a directory, and ``keras_adl/x.py`` belongs to the package
  ``keras_adl``; what another package needs is public there (`PRIVATE_TO_SUBPACKAGES` lists
  the exceptions);
- no function is longer than `MAX_FUNCTION_LINES` lines, from its ``def`` to its last line
  (docstring included), outside `LONG_FUNCTIONS_ALLOWED_IN`;
- imports go at the top of a module: an import inside a function is for the CLI boundary, an
  optional extra or backend-specific code, and there are at most `MAX_LOCAL_IMPORTS` of them;
- no import cycle among keras_adl's modules, counting the imports that run when a module is
  imported (those outside functions);
- no module of the delivery wing (`DELIVERY`) is longer than `MAX_DELIVERY_LINES` lines (`ops/`
  and `layers/` may keep a long module that is one concept);
- no recipe branches on a task's name: a task is an object (``task == "…"``, ``task in (…)``
  and the like, on a name ending in ``task`` or ``task_name``, compared with strings).
"""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "keras_adl"

# Packages whose own subpackages may import their private names: the family folders of
# keras_adl/recipes/ share its private core (_spec, _recipe, _compile, _development, _tuning,
# _pictures, _train), which is the house of the families and of no one else.
PRIVATE_TO_SUBPACKAGES = ("keras_adl.recipes",)

# Lines of code: a docstring (arguments, an example that runs) documents a function and does not
# count against it.
MAX_FUNCTION_LINES = 80
# Paths (a folder ends with "/") whose functions may be longer: none.
LONG_FUNCTIONS_ALLOWED_IN = ()

MAX_LOCAL_IMPORTS = 30

# The delivery wing: what runs, tunes, serves and draws the models (a folder ends with "/").
DELIVERY = (
    "keras_adl/recipes/",
    "keras_adl/training/",
    "keras_adl/data/",
    "keras_adl/text/",
    "keras_adl/cli/",
    "keras_adl/plotting.py",
    "keras_adl/metrics.py",
)
MAX_DELIVERY_LINES = 500


def _modules():
    return sorted(PACKAGE.rglob("*.py"))


def _docstring_lines(node):
    """The lines of ``node``'s own docstring (a module, class or function), 0 without one."""
    body = getattr(node, "body", None)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        if isinstance(body[0].value.value, str):
            return body[0].end_lineno - body[0].lineno + 1
    return 0


def _code_lines(tree, text):
    """A module's lines less its docstrings' (of the module, its classes and functions)."""
    documented = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    docstrings = sum(_docstring_lines(n) for n in ast.walk(tree) if isinstance(n, documented))
    return len(text.splitlines()) - docstrings


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


def _is_submodule(dotted):
    return _is_package(dotted) or (ROOT / (dotted.replace(".", "/") + ".py")).exists()


def _imports_by_place(tree):
    """``(module-level imports, imports inside a function)`` of a parsed module; an import in
    a class body runs when the module is imported, so it is module-level."""
    top, local = [], []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                (local if in_function else top).append(child)
            function = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            visit(child, in_function or function)

    visit(tree, False)
    return top, local


def _module_graph():
    """``{module: {keras_adl modules its module-level imports run}}``. ``from p import x``
    runs ``p.x`` where ``x`` is a submodule, and ``p`` itself where some name is an attribute
    of ``p``; the parent packages Python imports first are not counted."""
    graph = {}
    for path in _modules():
        top, _ = _imports_by_place(ast.parse(path.read_text(encoding="utf-8")))
        targets = set()
        for node in top:
            for module, name in _imported(node, path):
                if module.split(".")[0] != "keras_adl":
                    continue
                if name is not None and _is_submodule(f"{module}.{name}"):
                    targets.add(f"{module}.{name}")
                else:
                    targets.add(module)
        graph[_dotted(path)] = targets
    return graph


def _cycles(graph):
    """One cycle (a list of modules, the first repeated at the end) through each strongly
    connected group of ``graph`` (Tarjan's algorithm, then a path back to its first member)."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def connect(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while node not in group:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
            if len(group) > 1 or node in graph.get(node, ()):
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return [_cycle_through(graph, group) for group in groups]


def _cycle_through(graph, group):
    start = min(group)
    paths = {start: [start]}
    pending = [start]
    while pending:  # breadth first, inside the group, until an edge leads back to start
        node = pending.pop(0)
        for target in sorted(graph[node] & group):
            if target == start:
                return paths[node] + [start]
            if target not in paths:
                paths[target] = paths[node] + [target]
                pending.append(target)
    raise AssertionError(f"no cycle through {start}")  # a group always has one


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
                lines = node.end_lineno - node.lineno + 1 - _docstring_lines(node)
                if lines > MAX_FUNCTION_LINES:
                    found.append(f"{relative}:{node.lineno} {node.name}: {lines} lines")
    assert not found, f"functions over {MAX_FUNCTION_LINES} lines of code:\n" + "\n".join(found)


def test_few_imports_are_inside_functions():
    found = []
    for path in _modules():
        _, local = _imports_by_place(ast.parse(path.read_text(encoding="utf-8")))
        found += [f"{_relative(path)}:{node.lineno} {ast.unparse(node)}" for node in local]
    assert len(found) <= MAX_LOCAL_IMPORTS, (
        f"{len(found)} imports inside functions (at most {MAX_LOCAL_IMPORTS}: the CLI boundary, "
        "optional extras, backend-specific code):\n" + "\n".join(found)
    )


def test_no_import_cycle():
    cycles = _cycles(_module_graph())
    assert not cycles, "import cycles (module-level imports):\n" + "\n".join(
        " -> ".join(cycle) for cycle in cycles
    )


def test_no_delivery_module_is_longer_than_the_limit():
    found = []
    for path in _modules():
        relative = _relative(path)
        if relative.startswith(DELIVERY):
            text = path.read_text(encoding="utf-8")
            lines = _code_lines(ast.parse(text), text)
            if lines > MAX_DELIVERY_LINES:
                found.append(f"{relative}: {lines} lines")
    assert not found, f"delivery modules over {MAX_DELIVERY_LINES} lines of code:\n" + "\n".join(
        found
    )


def _names_a_task(node):
    """Whether ``node`` is a name or attribute ending in ``task`` or ``task_name``."""
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return name.endswith("task") or name.endswith("task_name")


def _strings(node):
    """Whether ``node`` is a string constant or a tuple, list or set of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_strings(e) for e in node.elts)
    return False


def test_no_recipe_branches_on_a_task_name():
    found = []
    for path in sorted((PACKAGE / "recipes").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            if any(_names_a_task(n) for n in sides) and any(_strings(n) for n in sides):
                found.append(f"{_relative(path)}:{node.lineno}")
    assert not found, "recipes branching on a task's name:\n" + "\n".join(found)


def test_the_rules_see_what_they_forbid():
    """The task-name rule is not vacuous: it sees both forms of the branch it forbids."""
    branches = ast.parse('if run.task == "dates": pass\nif task_name in ("a", "b"): pass')
    compares = [n for n in ast.walk(branches) if isinstance(n, ast.Compare)]
    assert len(compares) == 2
    for node in compares:
        sides = [node.left, *node.comparators]
        assert any(_names_a_task(n) for n in sides) and any(_strings(n) for n in sides)
