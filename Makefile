# One entry point for people and CI. Every target installs what it needs.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8080
MOCK_PORT ?= 8081

.PHONY: install run test test-fast fuzz lint openapi schema config-doc bench bench-e2e screenshots clean

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,interop]'
	touch $(STAMP)

install: $(STAMP)

## make run: install, migrate the SQLite default, start gateway + observer + mock provider
## (AUTH=dev by default: no API keys; AUTH=keys: keys, made for this run and printed in the banner)
AUTH ?= $(or $(JOBGATE_AUTH),dev)
run: $(STAMP)
	$(BIN)/jobgate migrate
	exec env JOBGATE_AUTH=$(AUTH) HOST=$(HOST) PORT=$(PORT) MOCK_PORT=$(MOCK_PORT) \
	  $(BIN)/python -m app.devrun

## make test: the whole suite on the configured database (SQLite unless JOBGATE_DATABASE_URL says otherwise),
## in PYTEST_WORKERS processes (pytest-xdist; 0 runs it in this one process)
PYTEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

## make fuzz: schemathesis against the live gateway in keys mode; prints requests, failures, 5xx
fuzz: $(STAMP)
	$(BIN)/python -m pytest tests/fuzz --run-fuzz -q -s -p no:cacheprovider $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check app jobgate_client jobgate_fakes tests bench
	$(BIN)/ruff format --check app jobgate_client jobgate_fakes tests bench
	$(BIN)/mypy app jobgate_client jobgate_fakes
	$(BIN)/lint-imports

openapi: $(STAMP)
	$(BIN)/python -m app.openapi_dump > openapi/openapi.json

## make schema: the profile JSON Schema (docs/profile.schema.json) and the field reference
## generated from it in docs/profiles.md; tests/unit/test_profile_schema.py checks both
schema: $(STAMP)
	$(BIN)/jobgate profiles schema > docs/profile.schema.json
	$(BIN)/python -m app.providers.authoring.schema_doc docs/profiles.md

## make config-doc: docs/configuration.md from the settings' docstrings (tests/unit/test_configuration_doc.py)
config-doc: $(STAMP)
	$(BIN)/python -m app.core.config_doc docs/configuration.md

bench: $(STAMP)
	$(BIN)/python bench/create_overhead.py

## make bench-e2e: jobgate vs DBOS Transact vs a bare loop, same work (BENCH_ARGS="--rounds 3 ...")
bench-e2e: $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,bench]'
	$(BIN)/python bench/end_to_end.py $(BENCH_ARGS)

## make screenshots: the list, a held create, an attention case and the dashboard in
## headless Chromium, saved in SHOTS (Debian's chromium installed first where apt-get can;
## skipped, saying so, when Chromium is still missing)
SHOTS ?= docs/screenshots
screenshots: $(STAMP)
	command -v chromium >/dev/null || command -v chromium-browser >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get install -y -q chromium; } || true
	$(BIN)/python -m tests.support.screenshots $(SHOTS)

clean:
	rm -rf $(VENV) data .pytest_cache
