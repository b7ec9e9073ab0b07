# One entry point for a fresh machine with Python 3.11+:
#   make run    create .venv, install the locked dependencies, migrate, create the admin
#               account and start the whole engine (embedded Redis, web, fetchers, queue servers)
#   make test   create .venv with the test tools and run the test suite (about ten minutes;
#               with TEST_POSTGRES_URL and TEST_REDIS_URL, again on those services)
#   make test-slow  the checks make test leaves out: tests/cluster (as root), the long tests
#               (processes killed and restarted, crawls with faults), and the slow tests that
#               touch the services on TEST_POSTGRES_URL/TEST_REDIS_URL
#   make test-cluster  as root: the engine on several machines (network namespaces, its own
#               PostgreSQL and Redis), a crawl checked against a single machine's; about a minute
#               (FAULTS=1: then a crawl with a fetcher unplugged, qs1 killed, Redis stopped)
#   make test-fast  ruff, the import contracts and the unit tests (no services, no sockets,
#               no child processes): the quick check while editing
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check

.PHONY: run test test-slow test-fast test-cluster lock lint clean-venv bytecode

# the project's own modules, compiled once (pip compiles the installed packages): with
# PYTHONDONTWRITEBYTECODE set (as container images often do) every process, each page-processing
# worker included, would otherwise compile them from source at every start (about 0.3 s of CPU)
SOURCES := classifiers crawler indexer linkgraph operations querylog ranking searchindex \
	searchsite bench scripts manage.py

$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed, found " + sys.version.split()[0])'
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.base-installed: requirements/base.txt pyproject.toml | $(VENV)/bin/python
	$(PIP) install -q --require-hashes -r requirements/base.txt
	$(PIP) install -q --no-deps --no-build-isolation -e . 2>/dev/null || $(PIP) install -q --no-deps -e .
	@touch $@

$(VENV)/.dev-installed: requirements/dev.txt $(VENV)/.base-installed
	$(PIP) install -q --require-hashes -r requirements/dev.txt
	@touch $@

bytecode: | $(VENV)/bin/python
	@$(PY) -m compileall -q -j 0 $(SOURCES) >/dev/null

run: $(VENV)/.base-installed bytecode
	$(PY) manage.py migrate --noinput
	$(PY) manage.py ensure_admin
	$(PY) manage.py up

test: $(VENV)/.dev-installed bytecode
	$(PY) scripts/run_tests.py

test-slow: $(VENV)/.dev-installed bytecode
	$(PY) scripts/run_tests.py --slow

test-cluster: $(VENV)/.base-installed
	$(PY) scripts/cluster_test.py $(if $(FAULTS),--faults)

test-fast: lint
	$(PY) -m pytest tests/unit tests/test_lint.py

lint: $(VENV)/.dev-installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

# Re-pin the dependencies after editing pyproject.toml.
lock: $(VENV)/.dev-installed
	$(VENV)/bin/pip-compile -q --generate-hashes --no-emit-index-url --no-emit-find-links --strip-extras --allow-unsafe -o requirements/base.txt pyproject.toml
	$(VENV)/bin/pip-compile -q --generate-hashes --no-emit-index-url --no-emit-find-links --strip-extras --allow-unsafe --extra dev -o requirements/dev.txt pyproject.toml

clean-venv:
	rm -rf $(VENV)
