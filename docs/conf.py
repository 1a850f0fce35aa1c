"""Sphinx configuration of the keras-adl documentation (``make docs``).

Sphinx reads the Google-style docstrings through napoleon, the pages are Markdown (MyST) and
the theme is furo. The build runs offline; ``make docs`` turns every warning into an error.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE, os.path.join(HERE, "_ext")]

import keras_adl  # noqa: E402

project = "keras-adl"
author = "The keras-adl authors"
copyright = "2026, The keras-adl authors"
release = version = keras_adl.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "myst_parser",
    "sphinx_copybutton",
    "adl_docs",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path = []

# Single backticks in docstrings name code: `BahdanauAttention`, `precompute_keys`. They link
# when they name a documented object (adl_docs resolves bare public names) and stay code if not.
default_role = "py:obj"
nitpicky = True
# Type hints name Keras, TensorFlow, NumPy and the standard library, documented elsewhere (the
# build is offline: no intersphinx).
nitpick_ignore_regex = [(r"py:.*", r"(?!keras_adl\b).*")]

autodoc_member_order = "bysource"
# Signatures as keras.io writes them: names and defaults; the Args say what each one takes.
autodoc_typehints = "none"
autodoc_inherit_docstrings = False
# undoc-members: a module's constants have entries (their values); adl_docs skips the members
# of a class that have no docstring.
autodoc_default_options = {"members": True, "undoc-members": True}
autodoc_preserve_defaults = True
autoclass_content = "class"
add_module_names = False
# The on-page index says `initial_cache()`, not `TransformerDecoderBlock.initial_cache()`.
toc_object_entries_show_parents = "hide"
python_display_short_literal_types = True

napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
# "Attributes:" as fields of the class entry: dataclass fields are entries of their own already.
napoleon_use_ivar = True
napoleon_custom_sections = [("Call arguments", "params_style"), ("Shapes", "params_style")]

myst_enable_extensions = ["colon_fence", "deflist", "attrs_inline"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = f"keras-adl {release}"
html_static_path = ["_static"]
# The on-page index (furo's right-hand "On this page") stays visible down to 70em (a 1280 px
# window), where furo would hide it below 82em; an output block is labelled as such.
html_css_files = ["adl.css"]
html_show_sourcelink = False
html_copy_source = False
pygments_style = "friendly"
pygments_dark_style = "monokai"

# The copy button of a code block copies the code only: in a block with prompts (a docstring's
# `>>> ` / `... ` example, a console block's `$ `), the prompt lines without their prompts and
# none of the output lines; an ```output block (what the code above it prints) has no button.
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True
copybutton_line_continuation_character = "\\"  # a `$ ` line ending in \ goes on below
copybutton_selector = "div:not(.highlight-output) > div.highlight > pre"
