# keras-adl developer commands. Every dependency is declared in setup.cfg; nothing is installed by hand.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.installed

.PHONY: install install-backends docs docs-pictures test test-slow test-backends bench bench-attention-memory bench-memory bench-vision bench-documents bench-contextual bench-cvt bench-multi-worker demo data lint check-dist clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# all = the plots, data and tuner extras; docs = the documentation's tool chain.
$(STAMP): $(PY) setup.cfg pyproject.toml
	$(PIP) install --quiet -e ".[all,test,bench,docs]"
	touch $(STAMP)

install: $(STAMP)

# The suites run in TEST_JOBS processes (pytest-xdist; most tests use one core, so two
# processes fill a 2-core machine). `make test TEST_JOBS=0` runs them in this process.
TEST_JOBS ?= 2

# The fast suite (the README's test command); the 25 slowest tests are listed at the end.
test: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m pytest -q -n $(TEST_JOBS) --durations=25

# The slow tests run in three parts, each in fresh worker processes: a worker's resident
# memory climbs with every model it builds (TensorFlow's caches; clearing the Keras session
# does not return it), and one worker running all the slow tests reached the machine's 24 GiB.
# pytest exits 5 when a part holds no slow test; that is not a failure here.
SLOW_PARTS := "tests/cli tests/training tests/byod" "tests/models tests/layers tests/text" \
	"tests --ignore=tests/cli --ignore=tests/training --ignore=tests/byod --ignore=tests/models --ignore=tests/layers --ignore=tests/text"
test-slow: $(STAMP)
	status=0; for part in $(SLOW_PARTS); do \
		echo "== $$part"; \
		TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m pytest -q -n $(TEST_JOBS) --dist loadgroup -m slow --durations=10 $$part \
			|| [ $$? -eq 5 ] || status=1; \
	done; exit $$status

# The portable tests (ops, each layer's full harness, RAM's fit, imports) on TensorFlow, JAX
# and PyTorch, each backend loading the .keras files the others saved; then the support
# matrix of docs/backends.md is checked against the results (runs/backends/support_matrix.md).
BACKENDS_STAMP := $(VENV)/.backends
$(BACKENDS_STAMP): $(STAMP)
	$(PIP) install --quiet -e ".[backends]"
	touch $(BACKENDS_STAMP)

install-backends: $(BACKENDS_STAMP)

PORTABLE := tests/ops tests/layers tests/models/test_ram.py tests/models/test_cross_view.py tests/backends tests/test_annotations.py
test-backends: $(BACKENDS_STAMP)
	rm -rf runs/backends && mkdir -p runs/backends
	status=0; for b in tensorflow jax torch; do \
		echo "== $$b"; \
		KERAS_BACKEND=$$b KERAS_ADL_CROSS_BACKEND_DIR=runs/backends/files TF_CPP_MIN_LOG_LEVEL=2 \
			$(PY) -m pytest -q -m "portable and not cross_backend" --junitxml=runs/backends/$$b.xml \
			$(PORTABLE) || status=1; \
	done; \
	for b in tensorflow jax torch; do \
		echo "== $$b loads the others' .keras files"; \
		KERAS_BACKEND=$$b KERAS_ADL_CROSS_BACKEND_DIR=runs/backends/files TF_CPP_MIN_LOG_LEVEL=2 \
			$(PY) -m pytest -q -m cross_backend --junitxml=runs/backends/$$b-load.xml \
			tests/backends/test_cross_backend.py || status=1; \
	done; \
	$(PY) tests/backends/support_matrix.py runs/backends --check docs/backends.md || status=1; \
	exit $$status

# The documentation site, into docs/_build/html (open docs/_build/html/index.html): any Sphinx
# warning fails the build; then the internal links are checked offline.
docs: $(STAMP)
	rm -rf docs/_build
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m sphinx -W --keep-going -n -q -b html docs docs/_build/html
	$(PY) docs/check_links.py docs/_build/html

# The guides' pictures (docs/pictures/), from small seeded runs of the recipes (needs make data;
# several minutes). Commit what changed: `make docs` uses the committed pictures.
docs-pictures: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) docs/pictures.py

bench: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/attention.py
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/attention_vs_length.py
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/memory_speed.py
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/memory_copy.py --cells ntm --seeds 0 1 2
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/glimpse.py

# The long memory figures (about four hours on 2 cores): NTM and DNC on copy over 5 seeds at
# the recipe's settings (with the length-30 checkpoint rule), the DNC with sparse links, the
# usage gradient or not (5 seeds each, memory 32), the LSTM baseline, associative recall (5
# seeds each), and the step times against N.
bench-memory: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/memory_copy.py --cells ntm dnc --seeds 0 1 2 3 4 --max-sequences 40000 --lengths 30 50 --select-by-length 30 --out runs/bench/memory_copy.json
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/memory_copy.py --cells dnc --sparse-links 8 --seeds 0 1 2 3 4 --max-sequences 60000 --lengths 30 50 --out runs/bench/memory_copy_sparse.json
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/memory_copy.py --cells dnc --memory-size 32 --keep-usage-gradient --seeds 0 1 2 3 4 --max-sequences 40000 --lengths 30 --out runs/bench/usage_gradient.json
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/memory_copy.py --cells dnc --memory-size 32 --seeds 0 1 2 3 4 --max-sequences 40000 --lengths 30 --out runs/bench/usage_stop.json
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/memory_copy.py --cells lstm --seeds 0 --max-sequences 60000 --out runs/bench/memory_copy_lstm.json
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/memory_copy.py --task associative_recall --cells ntm dnc --seeds 0 1 2 3 4 --max-sequences 60000 --out runs/bench/recall.json
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/memory_speed.py --out runs/bench_memory_speed

# The visual-attention figures (about 2.5 hours on 2 cores; make data for Fashion-MNIST): RAM
# against random glimpses and the whole-image MLP and convnet on translated and cluttered digits
# and cluttered Fashion-MNIST, Show-Attend-Tell with and without the regulariser, and DRAM
# against Show-Attend-Tell on the same strips (of digits over 5 seeds, and of Fashion-MNIST items).
bench-vision: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/ram_digits.py --settings translated --seeds 0 1 2
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/ram_digits.py --settings cluttered --epochs 150 --seeds 0 1 2 --eval-every 50
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/ram_digits.py --settings cluttered cluttered_100 --data /usr/share/datasets/fashion-mnist --samples 12000 --epochs 20 --seeds 0
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/captioning.py --seeds 0 1 2
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/dram_strips.py --epochs 200 --seeds 0 1 2 3 4
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/dram_strips.py --seeds 0 1 --data /usr/share/datasets/fashion-mnist --samples 6000 --epochs 100

# The document figures: HAN on the needle task against bag-of-words logistic regression, on
# Debian's fortunes when installed (`make data`), and the hierarchical encoder's throughput.
# Attention's time and memory against Keras' MHA up to 16k tokens, TensorFlow then JAX and
# PyTorch on the CPU (about an hour; JAX and PyTorch need the `backends` extra).
bench-attention-memory: $(STAMP) $(BACKENDS_STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/attention_memory.py --repeats 3
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/attention_memory.py --backends torch --iters 1 --repeats 3
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/attention_memory.py --backends jax --lengths 512 2048 8192 --iters 1 --repeats 3

bench-documents: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/han.py

# The contextual-embedding figures (about an hour on 2 cores; make data): word2vec, ELMo's biLM
# against a unigram model, characters on unseen inflections, CoVe on gettext:fr, and the four
# kinds of features on the fortune topics with two seeds.
bench-contextual: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/contextual.py --out runs/bench_contextual

# Cross-view training against the labels alone on date_fields, and its views (~45 min).
bench-cvt: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/cvt.py --out runs/bench_cvt

# Steps per second with 1 and 2 worker processes (one core each), one model per family (~10 min).
bench-multi-worker: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/multi_worker.py --out runs/bench_multi_worker

# Trains the attention seq2seq on date normalisation (under a minute on 2 cores), prints held-out
# exact match and translations, writes runs/dates/attention.png, exports a SavedModel, reloads it
# and predicts from raw strings.
demo: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) examples/seq2seq_dates.py --out runs/dates

# Optional real data from Debian (not needed by the tests): the Fashion-MNIST IDX files, in
# /usr/share/datasets/fashion-mnist (keras_adl.data.image_sources.find_fashion_mnist), and the
# fortunes text files, the manual pages of benchmarks/han_length.py, and the part-of-speech tagger
# of keras_adl.data.english_tags (liblingua-en-tagger-perl). sudo only when not root.
data:
	@if command -v apt-get >/dev/null 2>&1; then \
		SUDO=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y dataset-fashion-mnist fortunes dict-gcide wordnet-base wamerican man-db manpages manpages-dev liblingua-en-tagger-perl gettext; \
	else \
		echo "apt-get not found: install Debian's dataset-fashion-mnist, fortunes, dict-gcide, wordnet-base, wamerican, man-db, manpages, manpages-dev, liblingua-en-tagger-perl and gettext (msgfmt) another way," \
			"or pass your own MNIST/Fashion-MNIST IDX files to load_idx_dataset."; \
	fi

# The release check (the last step of CI; it installs TensorFlow into a fresh venv): builds
# the sdist and the wheel into dist/ (the wheel from the sdist), installs the wheel without
# extras into a fresh venv in a temporary folder and times the install, `keras-adl --help` and
# `keras-adl list` there; checks that `tune` names the missing extra, runs the first five
# minutes (docs/getting-started.md) from that venv; unpacks the sdist and checks that
# `make -n test` works there and that its tests collect.
check-dist: SHELL := /bin/bash
check-dist: $(STAMP)
	rm -rf dist
	$(PY) -m build --outdir dist .
	@set -euo pipefail; TIMEFORMAT='%2Rs'; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	export TF_CPP_MIN_LOG_LEVEL=2; \
	echo "== a fresh venv: pip install dist/*.whl"; \
	$(PYTHON) -m venv "$$tmp/venv"; \
	time "$$tmp/venv/bin/python" -m pip install -qq dist/*.whl; \
	echo "== keras-adl --help"; time "$$tmp/venv/bin/keras-adl" --help >/dev/null; \
	echo "== keras-adl list"; time "$$tmp/venv/bin/keras-adl" list >/dev/null; \
	echo "== keras-adl tune without keras-tuner: exit status 2, one line"; \
	status=0; "$$tmp/venv/bin/keras-adl" tune dates --out "$$tmp/tune" || status=$$?; \
	[ "$$status" -eq 2 ]; \
	echo "== the first five minutes (docs/getting-started.md: every python block)"; \
	awk '/^```python/ { p = 1; next } p && /^```/ { p = 0; print ""; next } p' \
		docs/getting-started.md > "$$tmp/quick_start.py"; \
	(cd "$$tmp" && time venv/bin/python quick_start.py 2>quick_start.err) \
		|| { cat "$$tmp/quick_start.err"; exit 1; }; \
	echo "== the sdist: make -n test, and its tests collect"; \
	mkdir "$$tmp/sdist"; tar -xzf dist/*.tar.gz -C "$$tmp/sdist"; \
	make --no-print-directory -C "$$tmp"/sdist/* -n test; \
	(cd "$$tmp"/sdist/* && $(CURDIR)/$(PY) -m pytest -q --collect-only 2>/dev/null | tail -1); \
	echo "check-dist: OK"

# ruff (configured in pyproject.toml): lint, and the formatting the tree keeps; then the public
# docstrings against their signatures (pydoclint, Google style; tests/docstring_lint.py).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) tests/docstring_lint.py

clean:
	rm -rf $(VENV) build *.egg-info
