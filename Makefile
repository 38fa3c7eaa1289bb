# Everything a developer or CI runs. `make demo` and `make test` are the README quick start.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install demo test lint bench clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,instrumentation]'
	touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/turnscore demo

test: install
	$(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy turnscore ingest scorers warehouse queries cli demo

bench: install
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/parsers.py
	$(BIN)/python bench/ceiling.py
	$(BIN)/python bench/score.py
	$(BIN)/python bench/faults.py

clean:
	rm -rf $(VENV) turnscore-data bench/out
