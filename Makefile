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

test-slow: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m pytest -q -m slow

bench: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) benchmarks/attention.py

demo: $(STAMP)
	@echo "make demo: the end-to-end demo (train, picture, export, reload) arrives with the model builders;"
	@echo "for now it checks the installation and runs the attention example."
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) examples/attention_layers.py

clean:
	rm -rf $(VENV) build *.egg-info
