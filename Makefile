# keras-adl developer commands. Every dependency is declared in setup.cfg; nothing is installed by hand.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.installed

.PHONY: install test test-slow bench demo clean

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

# Trains the attention seq2seq on date normalisation (under a minute on 2 cores), prints held-out
# exact match and translations, writes runs/dates/attention.png, exports a SavedModel, reloads it
# and predicts from raw strings.
demo: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) examples/seq2seq_dates.py --out runs/dates

clean:
	rm -rf $(VENV) build *.egg-info
