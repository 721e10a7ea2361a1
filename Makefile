# Everything runs through the virtualenv's own binaries: no activation needed.
PYTHON3 ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# mypy --strict covers the pure packages; only the ones that exist yet.
MYPY_DIRS := $(wildcard games/rules games/bots)
PYTEST_ARGS ?=

.PHONY: venv run check test clean

venv: $(STAMP)

# Re-installs only when pyproject.toml changes. Every command runs from the repo root, which
# is on sys.path, so packages added after the install (games/, ...) import without one.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON3) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: venv
	$(PY) manage.py migrate --noinput
	$(PY) manage.py ensure_bots
	@echo ""
	@echo "Briscola service on http://127.0.0.1:8000/"
	@echo "  Play:     http://127.0.0.1:8000/play/"
	@echo "  API docs: http://127.0.0.1:8000/api/docs/"
	@echo "  Admin:    http://127.0.0.1:8000/admin/  (create a login: $(PY) manage.py createsuperuser)"
	@echo "  Try:"
	@echo "    curl -X POST http://127.0.0.1:8000/api/v1/auth/register -H 'Content-Type: application/json' -d '{\"username\":\"alice\",\"password\":\"a-long-password-1\"}'"
	@echo ""
	exec $(PY) manage.py runserver 127.0.0.1:8000

check: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	@if [ -n "$(MYPY_DIRS)" ]; then \
		echo "$(VENV)/bin/mypy --strict $(MYPY_DIRS)"; \
		$(VENV)/bin/mypy --strict $(MYPY_DIRS); \
	else \
		echo "mypy: no games/rules or games/bots yet, skipped"; \
	fi

test: check
	$(VENV)/bin/pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis staticfiles build *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
