# Everything a developer or CI runs. `make demo` and `make test` are the README quick start.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install demo test lint bench clean stack-fixtures

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,instrumentation,ray]'
	touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/turnscore demo

test: install
	$(BIN)/python -m pytest -q

# mypy sees the package as installed (turnscore.ingest is ingest/, ...) through a tree of
# links: the editable install's import hook is invisible to it, so `turnscore.*` would be Any.
MYPY_TREE := build/mypy

lint: install
	$(BIN)/ruff check .
	rm -rf $(MYPY_TREE) && mkdir -p $(MYPY_TREE)/turnscore
	for f in turnscore/*.py; do ln -s ../../../$$f $(MYPY_TREE)/turnscore/; done
	for d in ingest scorers warehouse queries cli demo; do ln -s ../../../$$d $(MYPY_TREE)/turnscore/$$d; done
	cd $(MYPY_TREE) && ../../$(BIN)/mypy --config-file ../../pyproject.toml -p turnscore

bench: install
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/parsers.py
	$(BIN)/python bench/ceiling.py
	$(BIN)/python bench/score.py
	$(BIN)/python bench/night.py
	$(BIN)/python bench/faults.py
	$(BIN)/python bench/judge_quality.py
	$(BIN)/python bench/scale.py

# Real exports of agent stacks (tests/fixtures/stacks/), each stack at its newest release in
# its own environment under .stacks/; CI reads the committed files and installs none of them.
STACK_REQS := $(wildcard tests/ingest/instrumented/stacks/requirements-*.txt)
STACK_VENVS := $(STACK_REQS:tests/ingest/instrumented/stacks/requirements-%.txt=.stacks/%/.installed)
# Node stacks: js/<env>/package.json and its lock, installed exactly (npm ci) into .stacks/<env>/.
STACK_PKGS := $(wildcard tests/ingest/instrumented/stacks/js/*/package.json)
STACK_VENVS += $(STACK_PKGS:tests/ingest/instrumented/stacks/js/%/package.json=.stacks/%/.installed)

.stacks/%/.installed: tests/ingest/instrumented/stacks/requirements-%.txt
	$(PYTHON) -m venv .stacks/$*
	.stacks/$*/bin/python -m pip install -q --upgrade pip
	.stacks/$*/bin/python -m pip install -q --upgrade -r $<
	touch $@

.stacks/%/.installed: tests/ingest/instrumented/stacks/js/%/package.json tests/ingest/instrumented/stacks/js/%/package-lock.json
	mkdir -p .stacks/$*
	cp $^ .stacks/$*/
	npm ci --prefix .stacks/$* --no-audit --no-fund --loglevel=error
	touch $@

stack-fixtures: install $(STACK_VENVS)
	$(BIN)/python -m tests.ingest.instrumented.stacks.record

clean:
	rm -rf $(VENV) turnscore-data bench/out
