# Everything runs through the virtualenv's own binaries: no activation needed.
PYTHON3 ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# constraints.txt pins every package installed (dependencies of dependencies included).
CONSTRAINTS := constraints.txt
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
# mypy --strict covers the pure packages; only the ones that exist yet.
MYPY_DIRS := $(wildcard games/rules games/bots)
PYTEST_ARGS ?=
# make run PORT=8101 HOST=0.0.0.0 WEB_WORKERS=2
PORT ?= 8000
HOST ?= 127.0.0.1
WEB_WORKERS ?= 1

.PHONY: venv venv-dev run check test lock clean

# What serving needs, nothing more (no test tools).
venv: $(STAMP)

# ...and the `dev` extra: pytest, mypy, ruff, playwright, schemathesis.
venv-dev: $(DEV_STAMP)

# Re-installs only when pyproject.toml or constraints.txt change. Every command runs from
# the repo root, which is on sys.path, so packages added after the install import without one.
$(STAMP): pyproject.toml $(CONSTRAINTS)
	test -x $(PY) || $(PYTHON3) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) -e .
	touch $(STAMP)

$(DEV_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) -e '.[dev]'
	touch $(DEV_STAMP)

# The service as production serves it (gunicorn + uvicorn workers, WhiteNoise for static
# files), on SQLite with tasks run in-process unless DATABASE_URL / REDIS_URL say otherwise.
run: venv
	$(PY) manage.py migrate --noinput
	$(PY) manage.py ensure_bots
	$(PY) manage.py collectstatic --noinput -v 0
	@echo ""
	@echo "Briscola service on http://$(HOST):$(PORT)/  (gunicorn + uvicorn, $(WEB_WORKERS) worker(s); Ctrl-C stops it)"
	@echo "  Play:     http://$(HOST):$(PORT)/play/"
	@echo "  API docs: http://$(HOST):$(PORT)/api/docs/"
	@echo "  Admin:    http://$(HOST):$(PORT)/admin/  (create a login: $(PY) manage.py createsuperuser)"
	@echo "  Try:"
	@echo "    curl -X POST http://$(HOST):$(PORT)/api/v1/auth/register -H 'Content-Type: application/json' -d '{\"username\":\"alice\",\"password\":\"a-long-password-1\"}'"
	@echo ""
	@# --no-control-socket: gunicorn 25+ would listen on ~/.gunicorn/gunicorn.ctl, one path
	@# for every instance of the user, so a second server took over the first's (signals
	@# still manage it: HUP reloads, TERM stops).
	exec $(VENV)/bin/gunicorn briscola_service.asgi --worker-class briscola_service.serving.Worker \
		--bind $(HOST):$(PORT) --workers $(WEB_WORKERS) --access-logfile - --no-control-socket

check: venv-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	@if [ -n "$(MYPY_DIRS)" ]; then \
		echo "$(VENV)/bin/mypy --strict $(MYPY_DIRS)"; \
		$(VENV)/bin/mypy --strict $(MYPY_DIRS); \
	else \
		echo "mypy: no games/rules or games/bots yet, skipped"; \
	fi

# Three lanes at once (tests/lanes.py): the tests that start services, those that drive
# Chromium, and the rest.
test: check
	$(PY) tests/lanes.py $(PYTEST_ARGS)

# Rewrite constraints.txt from a fresh resolution of pyproject.toml (after changing a pin).
lock:
	rm -rf $(VENV)-lock
	$(PYTHON3) -m venv $(VENV)-lock
	$(VENV)-lock/bin/python -m pip install --quiet --upgrade pip
	$(VENV)-lock/bin/python -m pip install --quiet '.[dev]'
	echo "# Every package installed, pinned: make installs with -c constraints.txt (make lock writes it)." > $(CONSTRAINTS)
	$(VENV)-lock/bin/python -m pip freeze --exclude briscola-service >> $(CONSTRAINTS)
	rm -rf $(VENV)-lock build *.egg-info

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis staticfiles build *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
