"""The support matrix of ``docs/backends.md`` (public layer / op × Keras backend), from ``make test-backends``.

``make test-backends`` runs the portable tests once per backend with JUnit reports in
``runs/backends/<backend>.xml`` (each layer's full harness, the ops tests, RAM's and CVT's ``fit``,
the import check) and ``runs/backends/<backend>-load.xml`` (the ``.keras`` files of the other
backends). A cell is ✓ when at least one test of that layer or op ran on that backend and
every one passed:

- a layer: the portable tests of its test file (its full harness) and the loading of its
  ``.keras`` files saved on each other backend;
- an op: every portable test in ``tests/ops`` whose code names it.

Usage::

    python tests/backends/support_matrix.py runs/backends --check docs/backends.md  # make test-backends
    python tests/backends/support_matrix.py runs/backends --write docs/backends.md  # refresh the table
"""

import argparse
import ast
import os
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

BACKENDS = ("tensorflow", "jax", "torch")
ROOT = pathlib.Path(__file__).resolve().parents[2]
START, END = "<!-- support-matrix:start -->", "<!-- support-matrix:end -->"
# Models with their own training rule: ✓ when every portable test of their file passed.
MODEL_ROWS = (
    ("`RecurrentAttentionModel.fit` (REINFORCE)", "tests.models.test_ram"),
    ("`CrossViewTagger.fit` (CVT's alternation)", "tests.models.test_cross_view"),
)


def _public(module):
    """``__all__`` of a keras_adl module, read from its source (no Keras import needed)."""
    tree = ast.parse((ROOT / module).read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__":
            return [ast.literal_eval(e) for e in node.value.elts]
    raise ValueError(f"{module} has no __all__")


def _layer_modules():
    """``{layer: module file stem}`` from the imports of keras_adl/layers/__init__.py."""
    tree = ast.parse((ROOT / "keras_adl/layers/__init__.py").read_text())
    return {
        alias.name: node.module.rsplit(".", 1)[1]
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def _ops_named_by_tests():
    """``{(test module, test function): {op names}}`` over tests/ops."""
    ops = set(_public("keras_adl/ops/__init__.py"))
    named = {}
    for path in sorted((ROOT / "tests/ops").glob("test_*.py")):
        module = f"tests.ops.{path.stem}"
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                names = {getattr(n, "id", getattr(n, "attr", None)) for n in ast.walk(node)}
                named[(module, node.name)] = names & ops
    return named


def _results(path):
    """``[(classname, test function, parameters, passed)]`` of a JUnit report."""
    if not path.exists():
        return []
    rows = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name")
        function, _, params = name.partition("[")
        failed = any(child.tag in ("failure", "error", "skipped") for child in case)
        rows.append((case.get("classname"), function, params.rstrip("]"), not failed))
    return rows


def matrix(folder):
    """``{row: {backend: bool}}`` for every public layer and op."""
    folder = pathlib.Path(folder)
    layers, ops = _layer_modules(), _public("keras_adl/ops/__init__.py")
    named = _ops_named_by_tests()
    table = {}
    for backend in BACKENDS:
        ran = _results(folder / f"{backend}.xml")
        loads = _results(folder / f"{backend}-load.xml")
        others = len(BACKENDS) - 1
        for layer, module in layers.items():
            mine = [ok for cls, _, _, ok in ran if cls == f"tests.layers.test_{module}"]
            loaded = [ok for *_, params, ok in loads if params.startswith(f"{layer}-")]
            good = bool(mine) and all(mine) and len(loaded) == others and all(loaded)
            table.setdefault(f"layer `{layer}`", {})[backend] = good
        for op in ops:
            mine = [ok for cls, fn, _, ok in ran if op in named.get((cls, fn), ())]
            table.setdefault(f"op `{op}`", {})[backend] = bool(mine) and all(mine)
        for title, module in MODEL_ROWS:
            mine = [ok for cls, fn, _, ok in ran if cls == module]
            table.setdefault(title, {})[backend] = bool(mine) and all(mine)
    return table


def markdown(table):
    lines = ["| | TensorFlow | JAX | PyTorch |", "|---|:-:|:-:|:-:|"]
    for row, cells in table.items():
        marks = " | ".join("✓" if cells[b] else "✗" for b in BACKENDS)
        lines.append(f"| {row} | {marks} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="the folder of the JUnit reports (runs/backends)")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", metavar="PAGE", help="fail unless PAGE holds the table")
    action.add_argument("--write", metavar="PAGE", help="write the table into PAGE")
    args = parser.parse_args(argv)
    table = matrix(args.folder)
    text = markdown(table)
    pathlib.Path(args.folder, "support_matrix.md").write_text(text + "\n")
    readme_path = pathlib.Path(args.check or args.write)
    readme = readme_path.read_text()
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    if not pattern.search(readme):
        sys.exit(f"{readme_path} has no {START} … {END} section")
    updated = pattern.sub(lambda _: f"{START}\n{text}\n{END}", readme)
    red = [row for row, cells in table.items() if not all(cells.values())]
    if args.write:
        readme_path.write_text(updated)
        print(f"wrote the support matrix ({len(table)} rows) into {readme_path}")
    elif updated != readme:
        sys.exit(
            f"{readme_path}'s support matrix differs from this run's "
            f"({os.path.join(args.folder, 'support_matrix.md')}); refresh it with --write"
        )
    if red:
        sys.exit("not supported everywhere: " + ", ".join(red))
    print(f"support matrix: {len(table)} rows × {len(BACKENDS)} backends, all ✓")


if __name__ == "__main__":
    main()
