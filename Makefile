# The two commands of the README's quick start are `make run` and `make test`;
# `make install` is the step both share.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install test run lint services bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

# Installs the real services the tests start (Dovecot, PostgreSQL) when they are missing.
services:
	./scripts/ensure-services.sh

lint: install
	$(BIN)/ruff check .

# Two test processes (pytest-xdist; a file's tests stay together, so its fixtures start once): the
# suite waits on real services and browsers as much as it computes, so two use two cores well.
test: install services
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n 2 --dist loadfile

# The main job on embedded defaults: SMTP listener on 127.0.0.1:2525 for pbem@localhost, data and the
# outbox Maildir in ./pbem-data. See the README for playing a game against it with `pbem send`.
run: install
	$(BIN)/pbem serve

# Benchmarks (numbers in the README); they start their own servers and stop by themselves.
bench: install services
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/mail.py
	$(BIN)/python bench/scaling.py
	$(BIN)/python bench/archive.py
	$(BIN)/python bench/mail_volume.py
	$(BIN)/python bench/boards.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .ruff_cache .hypothesis
