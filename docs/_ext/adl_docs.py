"""keras-adl's Sphinx extension: the API pages, cross-links, and what each object uses.

- ``docs/api/<page>.md`` is written at each build from ``public_api.PAGES``; the layers get
  ``docs/api/layers.md``, a page per kind and a page per layer (``public_api.LAYER_KINDS``),
  and the ops and models pages are in sections by kind (``public_api.SECTIONS``).
- A fenced block of language ``output`` shows what the ``python`` block above it prints.
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
from public_api import (
    LAYER_KINDS,
    PAGES,
    layer_file,
    public_names,
    public_objects,
    section_names,
)
from pygments.lexers.special import TextLexer
from sphinx import addnodes
from sphinx.errors import ExtensionError
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
    literal blocks (a block after a ``::`` paragraph is one already)."""
    out, in_block, description = [], False, True
    for i, line in enumerate(lines):
        if _SECTION.match(line):
            description = False
        indented = line.startswith("    ") and not line.lstrip().startswith(">>>")
        above = [previous.strip() for previous in lines[:i] if previous.strip()]
        start = (
            description
            and indented
            and not in_block
            and i > 0
            and lines[i - 1].strip() == ""
            and above
            and not above[-1].endswith("::")
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


def _defined_in(obj):
    """The module that defines the function, method or property ``obj`` (None if unknown)."""
    function = obj.fget if isinstance(obj, property) else inspect.unwrap(obj)
    return getattr(function, "__module__", None) if callable(function) else None


def _skip_member(app, what, name, obj, skip, options):
    """Classes show their own public API, not the Keras methods every layer overrides, nor
    those a layer page's ``:inherited-members:`` would bring from Keras' own classes (a layer
    shows what it inherits from a keras_adl base class, such as `precompute_keys`)."""
    if what != "class":
        return None
    if name in _KERAS_MEMBERS or not getattr(obj, "__doc__", None):
        return True
    module = _defined_in(obj)
    if module is not None and not module.startswith("keras_adl"):
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
        if node.get("refspecific") and isinstance(contnode, nodes.literal):
            # The role took the leading dot of `.keras` for a lookup rule: give it back.
            contnode = nodes.literal("", "." + contnode.astext(), classes=contnode["classes"])
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


def _entry(dotted, value):
    """The autodoc directive of one public name: a class, exception or function gets its own
    documenter; a constant an ``autodata`` entry (autodoc documents a module's constants only
    when they carry a ``#:`` comment), without its value when the value is long."""
    if inspect.isclass(value):
        kind = "exception" if issubclass(value, BaseException) else "class"
        return [f".. auto{kind}:: {dotted}", ""]
    if inspect.isroutine(value):
        return [f".. autofunction:: {dotted}", ""]
    lines = [f".. autodata:: {dotted}"]
    if len(repr(value)) > 60:
        lines.append("   :no-value:")
    return lines + [""]


def _module_docstring(name):
    """The module's entry without its members: its docstring."""
    return ["```{eval-rst}", f".. automodule:: {name}", "   :no-members:", "```", ""]


def _module_entry(name, heading):
    """The Markdown of one module's entry: its docstring and ``__all__``, in the sections of
    `public_api.SECTIONS` (headings one level below ``heading``), or in one run."""
    module = importlib.import_module(name)
    sections = section_names(name)
    if sections == [(None, module.__all__)]:
        lines = ["```{eval-rst}", f".. automodule:: {name}", ""]
        for member in module.__all__:  # autodoc finds the functions and classes
            value = getattr(module, member)
            if _is_constant(value):
                lines += _entry(f"{name}.{member}", value)
        return lines + ["```", ""]
    lines = _module_docstring(name)
    for title, members in sections:
        lines += [f"{heading}# {title}", "", "```{eval-rst}"]
        for member in members:
            lines += _entry(f"{name}.{member}", getattr(module, member))
        lines += ["```", ""]
    return lines


def _summary(obj):
    """The first paragraph of ``obj``'s docstring, on one line (reST)."""
    paragraph = []
    for line in inspect.cleandoc(obj.__doc__ or "").splitlines():
        if not line.strip():
            break
        paragraph.append(line.strip())
    return " ".join(paragraph)


def _layer_table(names):
    """A reST table of ``names``: each layer's link and summary."""
    layers = importlib.import_module("keras_adl.layers")
    lines = ["```{eval-rst}", ".. list-table::", "   :widths: 35 65", ""]
    for name in names:
        lines += [
            f"   * - :py:class:`~keras_adl.layers.{name}`",
            f"     - {_summary(getattr(layers, name))}",
        ]
    return lines + ["```", ""]


def _check_layer_kinds():
    """Each public layer is in one kind of `public_api.LAYER_KINDS`, and each name there is
    public."""
    listed = [name for _, _, _, names in LAYER_KINDS for name in names]
    public = public_names("keras_adl.layers")
    missing = sorted(set(public) - set(listed))
    extra = sorted(set(listed) - set(public))
    twice = sorted({name for name in listed if listed.count(name) > 1})
    if missing or extra or twice:
        raise ExtensionError(
            "docs/public_api.py LAYER_KINDS: "
            f"layers in no kind {missing}, not public {extra}, in two kinds {twice}"
        )


def _layer_page(name, kind, title):
    """The Markdown of one layer's page: where it belongs, its import and its entry (with the
    methods it inherits from a keras_adl base class)."""
    lines = [f"# {name}", ""]
    lines += [f"One of the [{title.lower()}]({kind}.md) of [keras_adl.layers](../layers.md).", ""]
    lines += ["```python", f"from keras_adl.layers import {name}", "```", ""]
    lines += ["```{eval-rst}", f".. autoclass:: keras_adl.layers.{name}", "   :inherited-members:"]
    return "\n".join(lines + ["```", ""])


def layer_pages():
    """``{path under docs/api/: Markdown}`` of the layers: ``layers.md`` (the module, its
    kinds and their layers), a page per kind and a page per layer."""
    _check_layer_kinds()
    pages = {}
    index = ["# Layers", ""] + _module_docstring("keras_adl.layers")
    index += [
        "Each layer has a page of its own, and the layers are grouped by kind, as keras.io "
        "groups its layers API.",
        "",
    ]
    for kind, title, about, names in LAYER_KINDS:
        index += [f"## {title}", "", f"{about} [All {title.lower()}](layers/{kind}.md).", ""]
        index += _layer_table(names)
        kind_page = [f"# {title}", "", about, ""] + _layer_table(names)
        kind_page += ["```{toctree}", ":hidden:", ""]
        for name in names:
            kind_page.append(layer_file(name))
            pages[f"layers/{layer_file(name)}.md"] = _layer_page(name, kind, title)
        pages[f"layers/{kind}.md"] = "\n".join(kind_page + ["```", ""])
    index += ["```{toctree}", ":hidden:", ""]
    index += [f"layers/{kind}" for kind, _, _, _ in LAYER_KINDS] + ["```", ""]
    pages["layers.md"] = "\n".join(index)
    return pages


def api_page(page, modules):
    """The Markdown of ``docs/api/<page>.md``: each module's docstring and ``__all__``."""
    lines = [f"# {_TITLES[page]}", ""]
    for name in modules:
        if len(modules) > 1:
            lines += [f"## `{name}`", ""]
        lines += _module_entry(name, "##" if len(modules) > 1 else "#")
    return "\n".join(lines)


def api_pages():
    """``{path under docs/api/: Markdown}`` of every API page, from `PAGES` and
    `LAYER_KINDS`."""
    pages = {}
    for page, modules in PAGES:
        if modules == ("keras_adl.layers",):
            pages.update(layer_pages())
        else:
            pages[f"{page}.md"] = api_page(page, modules)
    return pages


def _write_api_pages(app):
    """Writes ``docs/api/`` before Sphinx looks for its sources, and deletes the pages of
    ``docs/api/`` that it no longer writes (a renamed layer's)."""
    folder = os.path.join(app.srcdir, "api")
    pages = api_pages()
    for relative, text in pages.items():
        path = os.path.join(folder, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
            # Renamed into place: two builds (the test workers') may write it at once.
            temporary = f"{path}.{os.getpid()}"
            with open(temporary, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(temporary, path)
    for directory, _, files in os.walk(folder):
        for name in files:
            relative = os.path.relpath(os.path.join(directory, name), folder)
            if name.endswith(".md") and relative not in pages:
                try:
                    os.remove(os.path.join(directory, name))
                except FileNotFoundError:  # the other build removed it first
                    pass


def setup(app):
    _PUBLIC.update(public_objects())
    # ```output: what the python block above it prints (plain text; the guides' test compares
    # it with the run).
    app.add_lexer("output", TextLexer)

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
