"""keras-adl's Sphinx extension: the API pages, cross-links, and what each object uses.

- ``docs/api/<page>.md`` is written at each build from ``public_api.PAGES``.
- A single-backtick name in a docstring (`additive_scores`) links to the public object of that
  name wherever it is documented; a name that is not public stays code, without a warning.
  Inline code in the guides that names a public object links to it too.
- The indented equation block after a docstring's summary is kept as a literal block, so its
  spacing survives; a Keras class shows its ``__init__`` signature.
- Each layer's and builder's entry ends with "Composes" (the public ops and layers its own
  source uses) and each op's and layer's with "Used by" (the layers and builders whose source
  uses it), read from the source so that they cannot drift.
- viewcode's source pages link back to each object's documented name.
"""

import ast
import importlib
import inspect
import os
import re

from docutils import nodes
from public_api import PAGES, public_objects
from sphinx import addnodes
from sphinx.util.inspect import stringify_signature

_SECTION = re.compile(r"^\s*[A-Z][A-Za-z ]*:\s*$")
_PUBLIC = {}
_USES = {}
_USED_BY = {}
_PACKAGES = ("keras_adl.ops", "keras_adl.layers", "keras_adl.models")


def _imports(module):
    """The keras_adl names ``module``'s source imports (``from keras_adl… import name``)."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("keras_adl"):
            names.update(alias.name for alias in node.names)
    return names


def _source_text(obj, module):
    """``obj``'s source, with the module's private helpers it calls (one level deep)."""
    try:
        text = inspect.getsource(obj)
    except (OSError, TypeError):
        return ""
    for helper in set(re.findall(r"\b(_[a-z]\w*)\(", text)):
        function = getattr(module, helper, None)
        if inspect.isfunction(function) or inspect.isclass(function):
            try:
                text += inspect.getsource(function)
            except (OSError, TypeError):
                pass
    return text


def _index_uses():
    """Which public ops, layers and builders each public layer and builder uses: names its
    module imports and its source (or a private helper it calls) mentions."""
    public = {p: set(importlib.import_module(p).__all__) for p in _PACKAGES}
    for package in _PACKAGES:
        exported = importlib.import_module(package)
        for name in exported.__all__:
            obj = getattr(exported, name)
            module = inspect.getmodule(obj)
            text = _source_text(obj, module)
            uses = [
                f"{p}.{used}"
                for used in sorted(_imports(module))
                for p in _PACKAGES
                if used != name and used in public[p] and re.search(rf"\b{used}\b", text)
            ]
            if package != "keras_adl.ops":
                _USES[f"{package}.{name}"] = uses
            for target in uses:
                _USED_BY.setdefault(target, []).append(f"{package}.{name}")


def _links(targets):
    return ", ".join(f":py:obj:`~{t}`" for t in targets)


def _literal_equations(lines):
    """Turn the indented blocks of a docstring's description (before its first section) into
    literal blocks."""
    out, in_block, description = [], False, True
    for i, line in enumerate(lines):
        if _SECTION.match(line):
            description = False
        indented = line.startswith("    ") and not line.lstrip().startswith(">>>")
        start = (
            description
            and indented
            and not in_block
            and i > 0
            and lines[i - 1].strip() == ""
            and any(previous.strip() for previous in lines[:i])
        )
        if start:
            out.extend([".. code-block:: text", ""])
            in_block = True
        elif in_block and line.strip() and not line.startswith("    "):
            in_block = False
        out.append(line)
    return out


def _process_docstring(app, what, name, obj, options, lines):
    if what in ("class", "function", "module"):
        lines[:] = _literal_equations(lines)
    notes = []
    if _USES.get(name):
        notes.append(f"**Composes:** {_links(_USES[name])}.")
    if _USED_BY.get(name):
        notes.append(f"**Used by:** {_links(sorted(set(_USED_BY[name])))}.")
    for note in notes:
        lines.extend(["", note])


_KERAS_MEMBERS = {
    "build",
    "call",
    "get_config",
    "from_config",
    "compute_output_shape",
    "compute_output_spec",
    "compute_mask",
    "get_initial_state",
    "train_step",
    "test_step",
    "compute_loss",
    "compute_metrics",
    "result",
    "reset_state",
    "update_state",
    "get_build_config",
    "build_from_config",
    "on_epoch_begin",
    "on_epoch_end",
    "on_train_begin",
    "on_train_end",
    "on_train_batch_begin",
    "on_train_batch_end",
}


def _skip_member(app, what, name, obj, skip, options):
    """Classes show their own public API, not the Keras methods every layer overrides."""
    if what == "class" and (name in _KERAS_MEMBERS or not getattr(obj, "__doc__", None)):
        return True
    return None


def _class_signature(app, what, name, obj, options, signature, return_annotation):
    """A Keras class's signature is its ``__init__``'s: Keras' ``__new__(*args, **kwargs)``
    hides it from autodoc."""
    if what != "class" or signature not in ("(*args, **kwargs)", None):
        return None
    if "__init__" not in vars(obj) and not any("__init__" in vars(c) for c in obj.__mro__[1:-1]):
        return None
    init = inspect.signature(obj.__init__)
    parameters = list(init.parameters.values())[1:]
    return stringify_signature(init.replace(parameters=parameters), show_annotation=False), None


def _resolve_bare_name(app, env, node, contnode):
    """A ``py`` reference no module path resolves: link it to the public object of that name;
    a default-role name that names nothing public stays code, without a warning."""
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip("~.")
    short = target.rsplit(".", 1)[-1]
    candidates = _PUBLIC.get(short, [])
    if target.startswith("keras_adl."):  # prefer the entry under the module the name gives
        candidates = [c for c in candidates if target.startswith(c.rsplit(".", 1)[0])] or candidates
    domain = env.get_domain("py")
    for candidate in candidates[:1]:
        resolved = domain.resolve_xref(
            env, node["refdoc"], app.builder, "obj", candidate, node, contnode
        )
        if resolved is not None:
            return resolved
    if node.get("reftype") == "obj":
        return contnode if isinstance(contnode, nodes.Node) else None
    return None


def _lookup(dotted):
    """The object a dotted ``keras_adl`` name names, or None."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            obj = getattr(obj, attribute, None)
        return obj
    return None


def _source_backlinks(app, pagename, templatename, context, doctree):
    """viewcode links a module's source back to ``<page>#<module>.<name>``, with one module
    for a whole source file; an object documented under its package (``keras_adl.text.
    CopyThrough``) and defined in a documented module (``keras_adl.text.copy_through``) gets
    its documented name back."""
    if not pagename.startswith("_modules/") or "body" not in context:
        return
    objects = app.env.get_domain("py").objects
    source = _lookup(pagename.removeprefix("_modules/").replace("/", "."))

    def fix(match):
        target = match.group(2)
        if target in objects:
            return match.group(0)
        parts = target.split(".")
        for n in range(1, len(parts)):
            obj = source
            for attribute in parts[-n:]:
                obj = getattr(obj, attribute, None)
            if obj is None:
                continue
            tail = "." + ".".join(parts[-n:])
            for candidate in objects:
                if candidate.endswith(tail) and _lookup(candidate) is obj:
                    return match.group(1) + candidate + '"'
        return match.group(0)

    context["body"] = re.sub(r'(href="[^"#]*#)(keras_adl[\w.]+)"', fix, context["body"])


def _link_inline_code(app, doctree, docname):
    """In the guides, inline code that names a public object (```keras_adl.data.date_arrays```,
    ```BahdanauAttention```, ```skipgram_dataset()```) links to its entry. A bare name links
    only if it has an underscore or a capital and names one object: `fit` stays a word."""
    if docname.startswith("api/"):
        return
    objects = app.env.get_domain("py").objects
    for node in list(doctree.findall(nodes.literal)):
        if isinstance(node.parent, (nodes.reference, addnodes.desc_signature)):
            continue
        text = node.astext().strip().removesuffix("()")
        target = text if text in objects else None
        if target is None and re.fullmatch(r"[A-Za-z]\w*", text) and re.search(r"[_A-Z]", text):
            candidates = [c for c in _PUBLIC.get(text, []) if c in objects]
            target = candidates[0] if len(candidates) == 1 else None
        if target is None:
            continue
        entry = objects[target]
        uri = app.builder.get_relative_uri(docname, entry.docname) + "#" + entry.node_id
        reference = nodes.reference("", "", internal=True, refuri=uri, reftitle=target)
        node.replace_self(reference)
        reference.append(node)


_TITLES = {
    "ops": "Ops",
    "layers": "Layers",
    "models": "Models",
    "data": "Data",
    "text": "Text",
    "embeddings": "Word vectors",
    "metrics": "Losses and metrics",
    "conventions": "Conventions",
    "plotting": "Plotting",
    "training": "Training",
    "recipes": "Recipes",
    "cli": "Command line (Python)",
}


def _is_constant(obj):
    return not (inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj))


def api_page(page, modules):
    """The Markdown of ``docs/api/<page>.md``: each module's docstring and ``__all__``;
    autodoc finds functions and classes, and each constant gets an ``autodata`` entry (autodoc
    documents a module's constants only when they carry a ``#:`` comment)."""
    lines = [f"# {_TITLES[page]}", ""]
    for name in modules:
        module = importlib.import_module(name)
        if len(modules) > 1:
            lines += [f"## `{name}`", ""]
        lines += ["```{eval-rst}", f".. automodule:: {name}", ""]
        for member in module.__all__:
            value = getattr(module, member)
            if _is_constant(value):
                lines.append(f".. autodata:: {name}.{member}")
                if len(repr(value)) > 60:
                    lines.append("   :no-value:")
                lines.append("")
        lines += ["```", ""]
    return "\n".join(lines)


def _write_api_pages(app):
    """Writes ``docs/api/`` from `PAGES` before Sphinx looks for its sources."""
    folder = os.path.join(app.srcdir, "api")
    os.makedirs(folder, exist_ok=True)
    for page, modules in PAGES:
        path = os.path.join(folder, f"{page}.md")
        text = api_page(page, modules)
        if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
            # Renamed into place: two builds (the test workers') may write it at once.
            temporary = f"{path}.{os.getpid()}"
            with open(temporary, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(temporary, path)


def setup(app):
    _PUBLIC.update(public_objects())

    _index_uses()
    app.connect("builder-inited", _write_api_pages)
    # Before napoleon (priority 500) turns the sections into reST.
    app.connect("autodoc-process-docstring", _process_docstring, priority=400)
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("autodoc-process-signature", _class_signature)
    app.connect("missing-reference", _resolve_bare_name)
    app.connect("html-page-context", _source_backlinks)
    app.connect("doctree-resolved", _link_inline_code)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
