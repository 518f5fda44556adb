# The two commands of the README's quick start are `make run` and `make test`;
# `make install` is the step both share.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install catalogs i18n test run lint services bench clean

install: $(STAMP) catalogs

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

# The compiled message catalogs (*.mo, not in git), made from the .po files: the build does it too
# (hatch_build.py), this keeps them fresh after a .po changes without reinstalling.
catalogs: $(STAMP)
	$(BIN)/python -c 'import hatch_build, pathlib; hatch_build.compile_catalogs(pathlib.Path("."))'

# Refresh the catalogs after texts changed: extract the English texts (pbem/locale/pbem.pot), merge
# them into each language's .po (new texts appear untranslated; tests/test_catalogs.py lists them),
# compile. See README "Languages".
I18N_LANGS := de sk
i18n: $(STAMP)
	$(BIN)/pybabel -q extract -F babel.cfg --no-location --sort-output --width 100 \
		--project pbem -o pbem/locale/pbem.pot pbem templates
	if test -d engine/locale; then $(BIN)/pybabel -q extract -F babel.cfg --no-location \
		--sort-output --width 100 --project pbem -o engine/locale/engine.pot engine; fi
	for d in pbem engine; do test -f $$d/locale/$$d.pot || continue; for l in $(I18N_LANGS); do \
		test -f $$d/locale/$$l/LC_MESSAGES/$$d.po || $(BIN)/pybabel -q init -D $$d -l $$l \
			-i $$d/locale/$$d.pot -d $$d/locale; \
		$(BIN)/pybabel -q update -D $$d -l $$l -i $$d/locale/$$d.pot -d $$d/locale \
			--no-fuzzy-matching --width 100 --ignore-obsolete; \
	done; done
	$(MAKE) catalogs

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
	-$(BIN)/python bench/scaling.py --cap 0.15  # needs root and cgroups; says why if it cannot
	$(BIN)/python bench/archive.py
	$(BIN)/python bench/mail_volume.py
	$(BIN)/python bench/boards.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .ruff_cache .hypothesis
