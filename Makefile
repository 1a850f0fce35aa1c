# keras-adl developer commands. Every dependency is declared in setup.cfg; nothing is installed by hand.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.installed

.PHONY: install test test-slow bench bench-memory demo clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(STAMP): $(PY) setup.cfg pyproject.toml
	$(PIP) install --quiet -e ".[tuner,test,bench]"
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m pytest -q

# pytest exits 5 when no test is marked slow; that is not a failure here.
test-slow: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m pytest -q -m slow || [ $$? -eq 5 ]

bench: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/attention.py
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/attention_vs_length.py
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/memory_speed.py
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/memory_copy.py --cells ntm --seeds 0 1 2

# The long memory figures (about an hour on 2 cores): DNC and LSTM on copy, NTM on recall.
bench-memory: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/memory_copy.py --cells dnc lstm --seeds 0 --max-sequences 60000
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/memory_copy.py --task associative_recall --cells ntm --seeds 0 --max-sequences 60000

# Trains the attention seq2seq on date normalisation (under a minute on 2 cores), prints held-out
# exact match and translations, writes runs/dates/attention.png, exports a SavedModel, reloads it
# and predicts from raw strings.
demo: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) examples/seq2seq_dates.py --out runs/dates

clean:
	rm -rf $(VENV) build *.egg-info
